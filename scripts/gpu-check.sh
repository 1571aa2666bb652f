#!/usr/bin/env bash
# The checks a GPU makes possible, in one call (scripts/gpu_check.py says what each one measures):
#   1. the batch engine on CUDA vs CPU (same ids under a fixed seed where exact; log-prob parity),
#   2. 3 GRPO steps on CUDA with the tiny model in vanilla mode (no Docker there),
#   3. Lightning SFT on CUDA.
#
#   bash scripts/gpu-check.sh fetch     # here, with PyPI: the wheels the GPU machine lacks -> .gpu-wheels/
#   bash scripts/gpu-check.sh           # on the GPU machine (offline): install them to /tmp/site, run the checks,
#                                       # write $OUT/gpu-check.json (or ./gpu-check.json) and print it
#   bash scripts/gpu-check.sh self-test # the same checks on this machine's CPU, with the project's venv
#   bash scripts/gpu-check.sh paper     # on the GPU machine: the paper-shape check instead (random Qwen3-4B, bf16 +
#                                       # checkpointing, 2 GRPO steps of 8 x 8 in vanilla mode: peak memory against
#                                       # `lis train plan`, tokens/s; then vLLM beside the in-process engine when
#                                       # vLLM is installed there) -> $OUT/gpu-check-paper.json
#
# With the device tool (docs/training.md, "Ready for a GPU"): fetch here, then
#   run(command="bash scripts/gpu-check.sh", carry=[".gpu-wheels"], timeout_s=600)
# What travels: lis itself (the working tree) and the wheels of scripts/gpu-wheels.txt (about 9 MB: TRL,
# datasets, the scorers' packages, pydantic); the image's own torch, transformers, accelerate and Lightning are used.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=.gpu-wheels

fetch() {
  mkdir -p "$WHEELS"
  grep -E -v '^\s*(#|$)' scripts/gpu-wheels.txt | while read -r req; do
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 --platform any -d "$WHEELS" "$req" 2>/dev/null \
      || python3 -m pip wheel -q --no-deps -w "$WHEELS" "$req"   # sdist only (pure Python): build the wheel here
  done
  du -sh "$WHEELS"
  ls "$WHEELS"
}

case "${1:-run}" in
  fetch) fetch ;;
  self-test)
    PY=${LIS_VENV:-.venv}/bin/python
    "$PY" scripts/gpu_check.py --device cpu --out "${OUT:-.}/gpu-check-cpu.json" ;;
  run|paper)
    if ! ls "$WHEELS"/*.whl >/dev/null 2>&1; then
      echo "gpu-check: no wheels in $WHEELS: run 'bash scripts/gpu-check.sh fetch' where PyPI is reachable and carry $WHEELS" >&2
      exit 2
    fi
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHEELS"/*.whl
    export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
    if [ "${1:-run}" = paper ]; then
      shift
      exec python3 scripts/gpu_check.py --device cuda --paper --vllm --out "${OUT:-.}/gpu-check-paper.json" "$@"
    else  # exec: a time limit's SIGTERM reaches the check, which then writes what it measured
      exec python3 scripts/gpu_check.py --device cuda --out "${OUT:-.}/gpu-check.json"
    fi ;;
  *) echo "usage: bash scripts/gpu-check.sh [fetch|run|paper|self-test]" >&2; exit 2 ;;
esac
