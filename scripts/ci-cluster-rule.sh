#!/usr/bin/env bash
# Should CI run the Slurm cluster test (`make test-cluster`)? Exit 0 = yes, 1 = no; one line says why.
#
# The rule: yes when the commits CI checks change workflow/ (rules, profiles, params overlays), the
# cluster script or the cluster tests; yes when that cannot be known. "The commits CI checks" are
# BASE..HEAD where BASE is, in order:
#   1. $LIS_CI_BASE: the commit main pointed to before this push, when the CI system says so
#      (GitHub Actions: github.event.before; GitLab: CI_COMMIT_BEFORE_SHA). Use it when a push can
#      land several commits at once;
#   2. otherwise HEAD's first parent: the previous commit on main (commits land one at a time here;
#      for a merge commit, the first parent is main before the merge, so the diff is the whole branch).
# Unknown — no such commit in the clone (a shallow clone, the first commit, a BASE that is not an
# ancestor of HEAD, e.g. after a force push) — means yes. LIS_CI_CLUSTER=always|never overrides.
set -euo pipefail
cd "$(dirname "$0")/.."

WATCHED=(workflow/ scripts/slurm-cluster.sh tests/cluster/)
say() { printf '[ci-cluster-rule] %s\n' "$*" >&2; }

case "${LIS_CI_CLUSTER:-}" in
  always) say "LIS_CI_CLUSTER=always: run"; exit 0 ;;
  never) say "LIS_CI_CLUSTER=never: skip"; exit 1 ;;
  "") ;;
  *) say "error: LIS_CI_CLUSTER must be always or never (got '${LIS_CI_CLUSTER}')"; exit 2 ;;
esac

base=${LIS_CI_BASE:-}
if [ -n "$base" ]; then
  if ! git rev-parse -q --verify "$base^{commit}" >/dev/null || ! git merge-base --is-ancestor "$base" HEAD; then
    say "LIS_CI_BASE=$base is not an ancestor of HEAD in this clone: unknown, run"
    exit 0
  fi
  from="LIS_CI_BASE"
else
  if ! base=$(git rev-parse -q --verify 'HEAD^1^{commit}'); then
    say "HEAD has no parent in this clone (first commit or shallow clone): unknown, run"
    exit 0
  fi
  from="HEAD^1"
fi

changed=$(git diff --name-only "$base" HEAD -- "${WATCHED[@]}")
short=$(git rev-parse --short "$base")
if [ -n "$changed" ]; then
  say "$(printf '%s\n' "$changed" | wc -l) watched file(s) changed since $from ($short), e.g. $(printf '%s\n' "$changed" | head -n 1): run"
  exit 0
fi
say "nothing under ${WATCHED[*]} changed since $from ($short): skip"
exit 1
