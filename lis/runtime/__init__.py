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
(→ SandboxConfig), ``seeds`` (episode seeds).

Who does not use it, on purpose: code that runs sandboxes only — the Inspect AI provider
(``lis.inspect``, which import-linter keeps free of agent and model code), ``lis sandbox exec``,
``lis bench sandbox`` and ``lis bench memory`` (the ``sandbox_memory`` stage) — calls
:func:`lis.sandbox.factory.config_from_params` itself: importing this package runs its
``__init__``, which imports the agent and the model backends, and would make them code those
commands (and their pipeline stages) depend on.
"""
from lis.runtime.agent import agent_config
from lis.runtime.models import MODELS_HINT, chat_model, model_spec
from lis.runtime.sandbox import sandbox_config
from lis.runtime.seeds import episode_seed

__all__ = ["MODELS_HINT", "agent_config", "chat_model", "episode_seed", "model_spec", "sandbox_config"]
