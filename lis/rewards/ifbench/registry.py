"""The instruction registry: IFBench instruction id → a check ``fn(response, **kwargs) -> bool``.

Check functions live in the ``checks_*`` modules, one per id family, and register themselves
with :func:`instruction`. :func:`build_check` turns a dataset row's kwargs into a ready check:
``None`` values are dropped (as the reference does before ``build_description``), keys a check
does not take are ignored, whole-number floats (the dataset stores ``N: 3.0``) become ints, and
``prompt_to_repeat`` falls back to the task's prompt when the row lacks it.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from lis.errors import LisError
from lis.rewards.ifbench import checks  # noqa: F401  (fills REGISTRY)

Check = Callable[..., bool]
REGISTRY: dict[str, Check] = {}


class IFBenchError(LisError):
    """An instruction id is unknown, or a row lacks a kwarg its check needs."""


def instruction(instruction_id: str) -> Callable[[Check], Check]:
    """Register ``fn`` as the check of ``instruction_id`` (a duplicate id is a programming error)."""

    def register(fn: Check) -> Check:
        if instruction_id in REGISTRY:
            raise ValueError(f"instruction {instruction_id} registered twice")
        REGISTRY[instruction_id] = fn
        return fn

    return register


def _coerce(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def build_check(instruction_id: str, kwargs: dict[str, Any] | None, prompt: str | None = None) -> Callable[[str], bool]:
    """A one-argument check for ``instruction_id`` with the row's ``kwargs`` bound.

    Raises :class:`IFBenchError` for an unknown id or a missing required kwarg.
    """
    fn = REGISTRY.get(instruction_id)
    if fn is None:
        raise IFBenchError(f"unknown IFBench instruction id {instruction_id!r}",
                           f"known ids: {len(REGISTRY)} (lis.rewards.ifbench.REGISTRY)")
    params = inspect.signature(fn).parameters
    given = {k: _coerce(v) for k, v in (kwargs or {}).items() if v is not None and k in params}
    if "prompt_to_repeat" in params and not given.get("prompt_to_repeat") and prompt:
        given["prompt_to_repeat"] = prompt
    missing = [name for name, p in params.items()
               if p.kind is p.KEYWORD_ONLY and p.default is p.empty and name not in given]
    if missing:
        raise IFBenchError(f"instruction {instruction_id} needs {', '.join(missing)}",
                           "the ground truth's kwargs for it lack these keys")
    return lambda response: bool(fn(response, **given))
