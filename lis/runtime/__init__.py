"""Params → runtime objects: the one place that turns the ``params.yaml`` sections into the objects
a stage runs with.

    from lis.runtime import agent_config, chat_model, episode_seed, model_spec, sandbox_config

    spec = model_spec(params, "sft")                      # a models entry, local paths made absolute
    model = chat_model(params, "sft")                     # ... and the ChatModel it describes
    box = sandbox_config(params, run_id=registry.RUN_ID)  # the sandbox + image sections → SandboxConfig
    cfg = agent_config(params, spec=spec, domain="math", sandbox=box)   # the agent section → AgentConfig
    seed = episode_seed(base, task.id, repeat)            # the seed of one episode

Why a layer: the stages (eval, bench, train, serve) must not import each other, yet they all build
the same objects from the same params. Here they are built once, below the stages and above what they
build (``lis.agent``, ``lis.sandbox``, ``lis.models``), as import-linter's layers contract says.
Builders only: nothing here starts a sandbox, loads weights or runs an episode.

The public names load their modules on first use (:mod:`lis.util.lazy`), so code that only runs
sandboxes (the Inspect AI provider, ``lis sandbox exec``, ``lis bench sandbox``) imports
:func:`sandbox_config` without loading, or depending on, the agent and the model backends.
"""
from lis.util.lazy import lazy_exports

EXPORTS = {
    "agent_config": "lis.runtime.agent",
    "build_judge": "lis.runtime.judge",
    "chat_model": "lis.runtime.models",
    "model_spec": "lis.runtime.models",
    "model_specs": "lis.runtime.models",
    "MODELS_HINT": "lis.runtime.models",
    "sandbox_config": "lis.runtime.sandbox",
    "episode_seed": "lis.runtime.seeds",
}
__all__ = sorted(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
