"""Where a params value comes from: ``params.yaml``, a profile overlay (or the overlay it extends), or
the section model's default. ``lis params show KEY`` prints it, so an edit that the active overlay overrides
is visible before a run.

    from lis.params_source import lookup
    found = lookup(params, "agent.episode_timeout_s")
    found.value, found.sources      # 600, ["workflow/params/smoke.yaml"]
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lis.errors import ParamsError
from lis.params import PARAMS_FILE, Params, _read_yaml, _unwrap, overlay_chain

_MISSING = object()


@dataclass(frozen=True)
class Found:
    key: str
    value: Any
    sources: list[str]  # the files that set it, last one wins (a mapping merges all of them)
    default: bool = False  # no file sets it: the section model's default
    overridden: tuple[tuple[str, Any], ...] = ()  # a leaf: (file, value) of the files whose value lost

    def note(self) -> str:
        """One line: which file set the value (and what it overrode), for a reader of the value."""
        if self.default:
            return f"{self.key}: no file sets it; the section model's default"
        if not self.sources:
            return f"{self.key}: set by no file"
        line = f"{self.key}: set by {' + '.join(self.sources)}"
        if self.overridden:
            line += "; it overrides " + ", ".join(f"{f} ({v!r})" for f, v in self.overridden)
        return line


def _split(data: Any, dotted: str) -> tuple[str, ...] | None:
    """``dotted`` as a path of keys of ``data`` (a key may hold dots: ``models.deepseek-v3.2``)."""
    if dotted == "":
        return ()
    if not isinstance(data, dict):
        return None
    for key in sorted((k for k in data if dotted == k or dotted.startswith(f"{k}.")), key=len, reverse=True):
        rest = _split(data[key], dotted[len(key) + 1:])
        if rest is not None:
            return (key, *rest)
    return None


def _get(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return _MISSING
        data = data[key]
    return data


def _default(params: Params, key: str) -> Any:
    """The section model's value of ``key`` where no file sets it (its default), or _MISSING. A block that
    params leave out is read from its model's class (``models.base.serve.startup_timeout_s``)."""
    head, *rest = key.split(".")
    try:
        node: Any = params.settings(head)
    except ParamsError:
        return _MISSING
    while rest:
        if isinstance(node, Mapping):  # the models entries: a name may hold dots
            dotted = ".".join(rest)
            name = next((k for k in sorted(node, key=len, reverse=True) if dotted == k or dotted.startswith(f"{k}.")), None)
            if name is None:
                return _MISSING
            node, rest = node[name], rest[len(name.split(".")):]
            continue
        part = rest.pop(0)
        fields = getattr(node if isinstance(node, type) else type(node), "model_fields", None)
        if not fields or part not in fields:
            return _MISSING
        value = None if isinstance(node, type) else getattr(node, part)
        if value is None:
            if rest:
                node = _unwrap(fields[part].annotation)  # the block's model: its defaults
                continue
            return _MISSING if fields[part].is_required() else fields[part].default
        node = value
    return node.model_dump(mode="json") if hasattr(node, "model_dump") else node


def lookup(params: Params, key: str) -> Found:
    """The effective value of ``key`` (dotted) under ``params``'s profile, and the files that set it.
    Raises ParamsError naming the nearest keys when ``key`` is not a params key."""
    path = _split(params.data, key)
    if path is None:
        head, _, _ = key.partition(".")
        keys = sorted(params.data.get(head, {})) if isinstance(params.data.get(head), dict) else sorted(params.data)
        default = _default(params, key)
        if default is not _MISSING:
            return Found(key, default, [], default=True)
        raise ParamsError(f"params has no key {key!r} (under {head!r}: {', '.join(map(str, keys))[:300]})",
                          "name a key as `lis params show` prints it, dotted: section.key")
    files = [(PARAMS_FILE, _read_yaml(params.root / PARAMS_FILE))] + overlay_chain(params.root, params.profile)
    sources = [name for name, data in files if _get(data, path) is not _MISSING]
    value = _get(params.data, path)
    if isinstance(value, dict) or not sources:
        return Found(key, value, sources)
    lost = tuple((name, _get(data, path)) for name, data in files if name in sources[:-1])
    return Found(key, value, sources[-1:], overridden=lost)  # a leaf: the last file wins
