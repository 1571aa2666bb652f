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


def resolve(argv: list[str]) -> list[str]:
    """``argv`` with a leading ``vllm`` replaced by :func:`program`; any other command unchanged."""
    if argv and argv[0] == "vllm":
        return program() + list(argv[1:])
    return list(argv)


def available() -> bool:
    """Whether :func:`program` finds vLLM."""
    try:
        program()
    except ModelError:
        return False
    return True
