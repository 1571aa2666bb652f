"""Hand-made turns and episodes for the behaviour tests (our trajectory record, as the runner writes it)."""
from __future__ import annotations

from lis.agent import Step, Trajectory
from lis.agent.trajectory import ToolCallRecord


def call(tool: str | None, arguments: dict | None, error: str | None = None, observation: str = "") -> ToolCallRecord:
    return ToolCallRecord(id="c", tool=tool, arguments=arguments, raw_arguments=None, observation=observation,
                          exit_code=0, exec_time_s=0.01, error=error)


def bash(command: str) -> ToolCallRecord:
    return call("execute_bash", {"command": command})


def edit(command: str, path: str, **kw) -> ToolCallRecord:
    return call("str_replace_editor", {"command": command, "path": path, **kw})


def submit() -> ToolCallRecord:
    return call("submit", {})


def step(i: int, *calls: ToolCallRecord, content: str | None = None) -> Step:
    return Step(index=i, content=content, reasoning=None, calls=list(calls), llm_latency_s=0.1,
                prompt_tokens=10, completion_tokens=5, cached_tokens=0)


def episode(*turns, model: str = "m", domain: str = "math", mode: str = "sandbox", task_id: str = "t1",
            termination: str = "submitted", repeat: int = 0) -> Trajectory:
    """turns: each a ToolCallRecord, a tuple of them (one multi-call turn), or a str (a turn without calls)."""
    steps = []
    for i, t in enumerate(turns):
        if isinstance(t, str):
            steps.append(step(i, content=t))
        elif isinstance(t, tuple):
            steps.append(step(i, *t))
        else:
            steps.append(step(i, t))
    rec = Trajectory(task_id=task_id, model=model, mode=mode, domain=domain, steps=steps, termination=termination,
                     repeat=repeat)
    rec.totals()
    return rec
