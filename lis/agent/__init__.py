"""The agent: one episode of the paper's loop — the model calls ``execute_bash``,
``str_replace_editor`` and ``submit`` in a sandbox until it submits or a budget ends it — and its record.

    from lis.agent import AgentConfig, Trajectory, run_task

    record: Trajectory = run_task(task, model, "sandbox", AgentConfig(max_turns=20), pool=pool)
    record.termination, record.answer, record.steps

``run_task`` never raises for a model's or a sandbox's failure: the record says what happened. An
:class:`AgentConfig` from the params' ``agent`` section: :func:`lis.runtime.agent_config`.

The public names load their modules on first use (:mod:`lis.util.lazy`): the behaviour analysis
reads ``lis.agent.trajectory`` without loading the loop, the sandbox or the models.
"""
from lis.util.lazy import lazy_exports

EXPORTS = {
    "AgentConfig": "lis.agent.loop",
    "run_episode": "lis.agent.loop",
    "run_task": "lis.agent.episode",
    "Trajectory": "lis.agent.trajectory",
    "Step": "lis.agent.trajectory",
}
__all__ = sorted(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
