"""Params → runtime objects: the one place that turns the ``params.yaml`` sections into the objects
a stage runs with.

    from lis.runtime import agent_config, chat_model, episode_seed, model_spec, sandbox_config

    spec = model_spec(params, "sft")                      # a models entry, local paths made absolute
    model = chat_model(params, "sft")                     # ... and the ChatModel it describes
    box = sandbox_config(params, run_id=registry.RUN_ID)  # the sandbox + image sections → SandboxConfig
    cfg = agent_config(params, spec=spec, domain="math", sandbox=box)   # the agent section → AgentConfig
    seed = episode_seed(base, task.id, repeat)            # the seed of one episode

Why a layer: the stages (eval, bench, train, serve) must not import each other, yet they all build
the same objects from the same params; each used to keep its own copy of these builders (and a test
kept the copies equal). Here they are built once, below the stages and above what they build
(``lis.agent``, ``lis.sandbox``, ``lis.models``): import-linter's layers contract in pyproject.toml
says so. Builders only: nothing here starts a sandbox, loads weights or runs an episode.

Modules: ``models`` (a models entry → spec, ChatModel), ``agent`` (→ AgentConfig), ``sandbox``
(→ SandboxConfig), ``judge`` (the scoring section → the LLM judge), ``seeds`` (episode seeds).

The public names load their modules on first use (:mod:`lis.util.lazy`): code that only runs
sandboxes — the Inspect AI provider, ``lis sandbox exec``, ``lis bench sandbox`` and ``lis bench memory``
(the ``sandbox_memory`` stage) — imports :func:`sandbox_config` without loading the agent or the model
backends, and without making them code its pipeline stage depends on.
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
