#!/usr/bin/env bash
# Should CI run the Slurm cluster test (`make test-cluster`)? Exit 0 = yes, 1 = no; one line says why.
#
# The rule: yes unless the watched files — workflow/ (rules, profiles, params overlays), the cluster
# script and the cluster tests — are exactly those the cluster test last passed on. `make
# test-cluster` records that state in .ci/cluster-tested (a SHA-256 over the tracked watched files'
# names and contents) when it passes; commit the file with the change. So however many commits land
# at once, a change to workflow/ that the cluster test has not passed on runs it in CI; a missing
# or unreadable record means yes. `--record` writes the record (make test-cluster calls it).
# LIS_CI_CLUSTER=always|never overrides.
set -euo pipefail
cd "$(dirname "$0")/.."

WATCHED=(workflow/ scripts/slurm-cluster.sh tests/cluster/)
RECORD=.ci/cluster-tested
say() { printf '[ci-cluster-rule] %s\n' "$*" >&2; }

state() {  # names and contents of the tracked watched files, hashed
  git ls-files -z -- "${WATCHED[@]}" | LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-64
}

if [ "${1:-}" = "--record" ]; then
  mkdir -p "$(dirname "$RECORD")"
  state > "$RECORD"
  say "recorded the cluster-tested state $(cut -c1-12 "$RECORD") in $RECORD (commit it)"
  exit 0
fi

case "${LIS_CI_CLUSTER:-}" in
  always) say "LIS_CI_CLUSTER=always: run"; exit 0 ;;
  never) say "LIS_CI_CLUSTER=never: skip"; exit 1 ;;
  "") ;;
  *) say "error: LIS_CI_CLUSTER must be always or never (got '${LIS_CI_CLUSTER}')"; exit 2 ;;
esac

now=$(state)
if [ ! -r "$RECORD" ]; then
  say "no record of a passed cluster test ($RECORD): run"
  exit 0
fi
was=$(tr -d '[:space:]' < "$RECORD")
if [ "$was" = "$now" ]; then
  say "${WATCHED[*]} are as the cluster test last passed on them (${now:0:12}): skip"
  exit 1
fi
say "${WATCHED[*]} changed since the cluster test last passed (${was:0:12} -> ${now:0:12}): run"
exit 0
