"""The sandbox as a TRL ``environment_factory``: TRL's standard multi-turn path, for TRL users.

    from lis.train.grpo.environment import EnvironmentSpec, SandboxEnvironmentFactory, environment_dataset
    factory = SandboxEnvironmentFactory(EnvironmentSpec(sandbox=config, max_turns=20))
    trainer = GRPOTrainer(model=..., args=GRPOConfig(max_tool_calling_iterations=20, ...),
                          train_dataset=environment_dataset(tasks), environment_factory=factory)
    trainer.train()
    factory.close()          # or at interpreter exit: no sandbox is left behind either way

TRL builds one environment per rollout, calls ``reset(**row)``, exposes every public method as a tool
(schema from the type hints and docstring) and asks ``get_reward()`` at the end.
:class:`SandboxEnvironment`'s public methods are exactly the paper's three tools, with our agent
loop's schemas and observations. TRL has no teardown hook, so a sandbox goes back to its per-process
pool in ``get_reward`` and the next ``reset``, and the pools close in :meth:`SandboxEnvironmentFactory.close`
or at exit (every sandbox also carries the labels ``lis sandbox cleanup`` sweeps). Environments pickle
without their live sandbox (TRL's async trainer ships them to workers).

TRL resets a batch's environments one after another in one thread, so with fewer sandboxes per process
(``max_sandboxes``) than rollouts a ``reset`` would wait forever: it waits ``acquire_timeout_s``, then
raises a one-line LisError naming the limit and the fix.

Unlike ``lis train grpo``'s token-exact ``rollout_func`` (docs/training-grpo.md), TRL re-renders tool
results through the chat template, ``submit`` cannot end a rollout, tool calls run one rollout after
another, and an over-long episode is not set to reward 0.
"""
from __future__ import annotations

import atexit
import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from lis.agent.episode import prepare_sandbox
from lis.agent.tools.dispatch import ToolSettings, execute_tool_call
from lis.errors import LisError
from lis.prompts import layout, render_prompts
from lis.rewards import score
from lis.sandbox.base import SandboxConfig, SandboxError
from lis.sandbox.pool import PoolTimeout, SandboxPool
from lis.tasks.schema import Task
from lis.util.hashing import hash_obj

log = logging.getLogger("lis.train.grpo.environment")

_POOLS: dict[str, Any] = {}
_POOLS_LOCK = threading.Lock()


@dataclass(frozen=True)
class EnvironmentSpec:
    """Everything an environment needs (picklable): where sandboxes start, the tools' settings, the
    episode's mode and turn budget, and how many sandboxes a process may hold at once."""

    sandbox: SandboxConfig
    tools: ToolSettings = field(default_factory=ToolSettings)
    mode: str = "sandbox"                # sandbox (documents as files) | sandbox_inline
    max_turns: int = 100                 # for "Steps Remaining" (give TRL max_tool_calling_iterations the same)
    max_sandboxes: int = 64              # per process (a generation batch's rollouts at once)
    acquire_timeout_s: float | None = 600.0  # reset waits this long for a free sandbox, then raises (None: forever)
    warm: int = 0
    answer_max_bytes: int = 1 << 20

    def key(self) -> str:
        return hash_obj({"sandbox": self.sandbox.__dict__ | {"limits": self.sandbox.limits.__dict__},
                         "max": self.max_sandboxes, "warm": self.warm})


def _pool(spec: EnvironmentSpec):
    with _POOLS_LOCK:
        pool = _POOLS.get(spec.key())
        if pool is None:
            pool = _POOLS[spec.key()] = SandboxPool(spec.sandbox, max_concurrent=spec.max_sandboxes, warm=spec.warm)
        return pool


@atexit.register
def close_pools() -> None:
    """Close every environment pool of this process (its warm sandboxes are destroyed)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()


def environment_dataset(tasks: list[Task], mode: str = "sandbox"):
    """The ``datasets.Dataset`` TRL trains on: per task the first-turn messages (``prompt``, without
    tool schemas: TRL adds the environment's) and the task itself (``task``, JSON), which ``reset`` reads."""
    from datasets import Dataset

    return Dataset.from_list([{"prompt": render_prompts(t, mode), "task": json.dumps(t.to_dict())} for t in tasks])


class SandboxEnvironment:
    """One rollout's computer: a sandbox with the task's files and the paper's three tools, its only public
    methods besides TRL's hooks ``reset`` and ``get_reward`` (TRL exposes every public method as a tool)."""

    def __init__(self, spec: EnvironmentSpec):
        self._spec = spec
        self._sb = None
        self._sb_pool = None                  # the pool the sandbox came from (it goes back there)
        self._task: Task | None = None
        self._calls = 0
        self._submitted: str | None = None    # the answer file's text at submit
        self._error: str | None = None        # an infrastructure error of this rollout (no reward)

    # -- TRL's hooks -------------------------------------------------------------------------------
    def reset(self, **row: Any) -> None:
        """Start the next rollout: give back the last sandbox, take a fresh one, place the task's files. Raises
        LisError when none comes free in time (one that fails to start is this rollout's error: no reward)."""
        self._release()
        task = row.get("task")
        self._task = Task.from_dict(json.loads(task) if isinstance(task, str) else task)
        self._calls, self._submitted, self._error = 0, None, None
        try:
            self._sb_pool = _pool(self._spec)
            self._sb = self._acquire(self._sb_pool)
            prepare_sandbox(self._sb, self._task, self._spec.mode)
        except SandboxError as e:
            self._error = e.one_line()
            log.warning("environment for %s: no sandbox (%s)", self._task.id, self._error)
        return None

    def get_reward(self) -> float | None:
        """The episode's reward (our scorer, on the host); None when the sandbox failed (TRL leaves the
        rollout out of its group's baseline). Gives the sandbox back."""
        try:
            if self._task is None:
                return None
            answer = self._submitted if self._submitted is not None else self._read_answer()
            if self._error is not None:
                return None
            try:
                return float(score(self._task, answer, mode=self._spec.mode).value)
            except Exception as e:  # noqa: BLE001 - a task no scorer knows: no learning signal
                log.warning("environment for %s: not scored (%s)", self._task.id, e)
                return None
        finally:
            self._release()

    # -- the paper's three tools ---------------------------------------------------------------------
    def execute_bash(self, command: str) -> str:
        """Execute a bash command in the sandbox's terminal and return its exit code, stdout and stderr.

        The shell session persists between calls: the working directory, exported variables and shell
        functions carry over. Each command is limited to 120 seconds; a command that runs longer is
        killed. Commands do not read from stdin. Output longer than 80 lines keeps its first and last
        40 lines.

        Args:
            command: The bash command (may span several lines) to execute.
        """
        return self._tool("execute_bash", {"command": command})

    def str_replace_editor(self, command: str, path: str, file_text: str | None = None, old_str: str | None = None,
                           new_str: str | None = None, insert_line: int | None = None,
                           view_range: list[int] | None = None) -> str:
        """View, create and edit files in the sandbox.

        `view` of a file shows it with line numbers; `view` of a directory lists it two levels deep.
        `create` writes `file_text` to `path`, creating parent directories. `str_replace` replaces
        `old_str` with `new_str`; `old_str` must occur exactly once in the file. `insert` inserts
        `new_str` after line `insert_line`. Paths are absolute.

        Args:
            command: The operation: view, create, str_replace or insert.
                (choices: ["view", "create", "str_replace", "insert"])
            path: Absolute path of the file or directory, e.g. /testbed/answer.txt.
            file_text: Content of the file for `create`.
            old_str: For `str_replace`: the exact text to replace.
            new_str: For `str_replace`: the replacement (empty when omitted). For `insert`: the text to insert.
            insert_line: For `insert`: insert after this line (0 = before the first line).
            view_range: For `view` of a file: [start, end], 1-based, end -1 = to the end.
        """
        args = {"command": command, "path": path, "file_text": file_text, "old_str": old_str, "new_str": new_str,
                "insert_line": insert_line, "view_range": view_range}
        return self._tool("str_replace_editor", {k: v for k, v in args.items() if v is not None})

    def submit(self) -> str:
        """Finish the task. Write the answer to the answer file first: it is read after you submit."""
        if self._submitted is None and self._sb is not None:
            self._submitted = self._read_answer()
        return self._tool("submit", {})

    # -- internals ------------------------------------------------------------------------------------
    def _tool(self, name: str, args: dict[str, Any]) -> str:
        if self._sb is None:
            return f"Error: the sandbox is not available ({self._error or 'no task was set'})."
        if self._calls and self._submitted is not None and name != "submit":
            return "Error: the task was already submitted; nothing more runs."
        self._calls += 1
        try:
            out = execute_tool_call(self._sb, name, args, self._spec.tools)
        except SandboxError as e:
            self._error = e.one_line()
            return f"Error: the sandbox failed ({self._error})."
        return f"{out.observation}\nSteps Remaining: {max(0, self._spec.max_turns - self._calls)}"

    def _acquire(self, pool):
        spec = self._spec
        try:
            return pool.acquire(timeout=spec.acquire_timeout_s)
        except PoolTimeout:
            n = spec.max_sandboxes
            held = "is held by another rollout" if n == 1 else "are all held by other rollouts"
            raise LisError(f"environment for task {self._task.id}: no sandbox came free within "
                           f"{spec.acquire_timeout_s:g} s: the {n} sandbox{'es' if n != 1 else ''} this process may "
                           f"hold (EnvironmentSpec.max_sandboxes={n}) {held}",
                           "raise max_sandboxes to at least the rollouts one process runs at once (a generation "
                           "batch), or run fewer rollouts at once per process") from None

    def _read_answer(self) -> str:
        if self._sb is None:
            return ""
        try:
            path = layout(self._task, self._spec.mode).answer_path
            data = self._sb.read_file(path, max_bytes=self._spec.answer_max_bytes)
            return data.decode("utf-8", "replace").strip()
        except (OSError, SandboxError):
            return ""

    def _release(self) -> None:
        sb, pool, self._sb, self._sb_pool = self._sb, self._sb_pool, None, None
        if sb is not None:
            try:
                pool.release(sb)
            except Exception as e:  # noqa: BLE001 - a sandbox that cannot be destroyed is swept by its labels
                log.warning("environment: could not give a sandbox back (%s)", e)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_sb"] = state["_sb_pool"] = None  # a live sandbox stays in its process: the copy takes its own
        return state

    def __del__(self) -> None:
        try:
            self._release()
        except Exception:  # noqa: BLE001 - interpreter shutdown: the pools' atexit closes what is left
            pass


class SandboxEnvironmentFactory:
    """TRL's ``environment_factory``: ``factory()`` is a new :class:`SandboxEnvironment` (picklable)."""

    def __init__(self, spec: EnvironmentSpec):
        self.spec = spec

    def __call__(self) -> SandboxEnvironment:
        return SandboxEnvironment(self.spec)

    def close(self) -> None:
        """Destroy this process's sandboxes of this spec (the end of training: TRL has no teardown hook)."""
        with _POOLS_LOCK:
            pool = _POOLS.pop(self.spec.key(), None)
        if pool is not None:
            pool.close()
