#!/usr/bin/env bash
# The tests of trained behaviour (pytest marker `trained_behaviour`: what the tiny agent does once trained)
# over tiny agents trained with other seeds: for each seed k, the agent is built with every training seed
# (base model, teacher episodes, SFT) set to k (tests/serving.py, $LIS_TEST_TRAINING_SEED), then those tests
# run against it. A test of trained behaviour must hold on any machine: this measures how often each holds
# over training runs, which float rounding on another machine is one more of (docs/training-results.md).
#
#   bash scripts/trained-behaviour-seeds.sh            # seeds 1..10 (about 6 min each on 2 cores)
#   bash scripts/trained-behaviour-seeds.sh 1 2 3      # those seeds
#
# Writes logs/trained-behaviour-seeds/<seed>.log (with every test's measured values: the lines starting
# MEASURED) and prints one line per seed and a summary. A seed's agent is built once (the cache folder);
# a second run only re-runs the tests.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${LIS_VENV:-.venv}/bin/python
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4 5 6 7 8 9 10)
out=logs/trained-behaviour-seeds
mkdir -p "$out"
failed=0
for k in "${seeds[@]}"; do
  t0=$(date +%s)
  LIS_TEST_TRAINING_SEED=$k "$PY" -m pytest -q -rA -p no:cacheprovider -m trained_behaviour -o addopts="" \
      --timeout 3000 tests > "$out/$k.log" 2>&1
  rc=$?
  summary=$(grep -E "^[0-9]+ (passed|failed)|passed|failed" "$out/$k.log" | tail -1)
  printf 'seed %s: exit %s, %s (%ss)\n' "$k" "$rc" "$summary" "$(( $(date +%s) - t0 ))"
  grep -E "^FAILED" "$out/$k.log" | sed 's/^/    /'
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
done
echo "seeds with a failing test: $failed of ${#seeds[@]}"
[ "$failed" -eq 0 ]
