"""The rules of the behaviour analysis, read from ``patterns.yaml`` (the single source).

    rules = load_rules()                 # the packaged file (validated, regexes compiled)
    rules.for_scope("bash")              # the rules searched in a shell text
    rules.reasoning                      # Table 9 rows
    render_rules_markdown(rules)         # the table of docs/behaviour.md
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from lis.errors import LisError

PATTERNS_FILE = Path(__file__).with_name("patterns.yaml")
SCOPES = ("bash", "python", "editor")
SOURCES = ("paper", "added")
_MACRO = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Rule:
    id: str
    capability: str
    scopes: tuple[str, ...]
    pattern: str              # as written in the file ({cmd} macros unexpanded)
    regex: re.Pattern
    source: str
    note: str
    examples: tuple[tuple[str, str], ...]      # (scope, text)
    near_misses: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ReasoningRow:
    id: str
    group: str                # verification | structure
    structure: bool           # counted outside ``` code fences
    pattern: str
    regex: re.Pattern
    source: str
    note: str
    examples: tuple[str, ...]
    near_misses: tuple[str, ...]


@dataclass(frozen=True)
class Rules:
    path: str
    sha256: str
    version: int
    capabilities: dict[str, dict[str, str]]    # id -> {title, description}
    rules: tuple[Rule, ...]
    reasoning: tuple[ReasoningRow, ...]
    combined: dict[str, tuple[str, ...]]      # Table 9's combined rows
    _by_scope: dict[str, tuple[Rule, ...]] = field(default_factory=dict, repr=False)

    def for_scope(self, scope: str) -> tuple[Rule, ...]:
        return self._by_scope.get(scope, ())

    @property
    def capability_ids(self) -> tuple[str, ...]:
        return tuple(self.capabilities)


def _need(obj: dict, key: str, where: str, kind: type | tuple = str) -> Any:
    if key not in obj:
        raise LisError(f"behaviour rules: {where}: missing key '{key}'", f"add it to {PATTERNS_FILE.name}")
    value = obj[key]
    if not isinstance(value, kind):
        raise LisError(f"behaviour rules: {where}: '{key}' must be {getattr(kind, '__name__', kind)}, "
                       f"got {type(value).__name__}", f"fix {PATTERNS_FILE.name}")
    return value


def _compile(pattern: str, where: str, macros: dict[str, str]) -> re.Pattern:
    def expand(m: re.Match) -> str:
        if m.group(1) not in macros:
            raise LisError(f"behaviour rules: {where}: unknown macro {{{m.group(1)}}} in pattern",
                           f"macros: {', '.join(macros) or 'none'}")
        return macros[m.group(1)]

    expanded = _MACRO.sub(expand, pattern) if macros else pattern
    try:
        return re.compile(expanded, re.MULTILINE)
    except re.error as e:
        raise LisError(f"behaviour rules: {where}: pattern does not compile: {e}", "fix the regular expression") from None


def _examples(items: Any, where: str, key: str, scopes: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    if not isinstance(items, list) or not items:
        raise LisError(f"behaviour rules: {where}: '{key}' must be a non-empty list", "give at least one")
    out = []
    for e in items:
        if not isinstance(e, dict) or not isinstance(e.get("text"), str) or e.get("in") not in scopes:
            raise LisError(f"behaviour rules: {where}: each of '{key}' must be {{in: <one of {list(scopes)}>, "
                           f"text: ...}}, got {e!r}"[:300], f"fix {PATTERNS_FILE.name}")
        out.append((e["in"], e["text"]))
    return tuple(out)


def parse_rules(data: Any, path: str = str(PATTERNS_FILE), sha256: str = "") -> Rules:
    if not isinstance(data, dict):
        raise LisError(f"behaviour rules: {path} is not a mapping", "see lis/analysis/behaviour/patterns.yaml")
    caps = _need(data, "capabilities", "top level", dict)
    macros = data.get("macros") or {}
    if not isinstance(macros, dict) or not all(isinstance(v, str) for v in macros.values()):
        raise LisError("behaviour rules: 'macros' must map names to regex strings", f"fix {PATTERNS_FILE.name}")
    rules, seen = [], set()
    for i, r in enumerate(_need(data, "rules", "top level", list)):
        where = f"rule {i + 1}"
        if not isinstance(r, dict):
            raise LisError(f"behaviour rules: {where} is not a mapping", f"fix {PATTERNS_FILE.name}")
        rid = _need(r, "id", where)
        where = f"rule '{rid}'"
        if rid in seen:
            raise LisError(f"behaviour rules: {where} is defined twice", "rule ids must be unique")
        seen.add(rid)
        cap = _need(r, "capability", where)
        if cap not in caps:
            raise LisError(f"behaviour rules: {where}: unknown capability '{cap}'", f"one of {', '.join(caps)}")
        scopes = tuple(_need(r, "scopes", where, list))
        bad = [s for s in scopes if s not in SCOPES]
        if not scopes or bad:
            raise LisError(f"behaviour rules: {where}: scopes must be a non-empty subset of {list(SCOPES)}, "
                           f"got {list(scopes)}", f"fix {PATTERNS_FILE.name}")
        source = _need(r, "source", where)
        if source not in SOURCES:
            raise LisError(f"behaviour rules: {where}: source must be one of {list(SOURCES)}, got '{source}'",
                           f"fix {PATTERNS_FILE.name}")
        pattern = _need(r, "pattern", where)
        rules.append(Rule(id=rid, capability=cap, scopes=scopes, pattern=pattern,
                          regex=_compile(pattern, where, macros), source=source, note=_need(r, "note", where),
                          examples=_examples(r.get("examples"), where, "examples", scopes),
                          near_misses=_examples(r.get("near_misses"), where, "near_misses", scopes)))
    reasoning = _need(data, "reasoning", "top level", dict)
    rows = []
    for i, r in enumerate(_need(reasoning, "rows", "reasoning", list)):
        rid = _need(r, "id", f"reasoning row {i + 1}")
        where = f"reasoning row '{rid}'"
        rows.append(ReasoningRow(id=rid, group=_need(r, "group", where), structure=bool(r.get("structure", False)),
                                 pattern=_need(r, "pattern", where), regex=_compile(r["pattern"], where, {}),
                                 source=_need(r, "source", where), note=_need(r, "note", where),
                                 examples=tuple(_need(r, "examples", where, list)),
                                 near_misses=tuple(_need(r, "near_misses", where, list))))
    ids = {r.id for r in rows}
    combined = {}
    for name, parts in (reasoning.get("combined") or {}).items():
        if not isinstance(parts, list) or not parts or any(p not in ids for p in parts):
            raise LisError(f"behaviour rules: reasoning combined row '{name}' must list reasoning row ids, "
                           f"got {parts!r}", f"row ids: {', '.join(sorted(ids))}")
        combined[name] = tuple(parts)
    by_scope = {s: tuple(r for r in rules if s in r.scopes) for s in SCOPES}
    return Rules(path=path, sha256=sha256, version=int(data.get("version", 1)),
                 capabilities={k: dict(v or {}) for k, v in caps.items()}, rules=tuple(rules),
                 reasoning=tuple(rows), combined=combined, _by_scope=by_scope)


def load_rules(path: str | Path | None = None) -> Rules:
    """The rules of ``path`` (default: the packaged patterns.yaml)."""
    return _load(str(Path(path) if path is not None else PATTERNS_FILE))


@lru_cache(maxsize=8)
def _load(path: str) -> Rules:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise LisError(f"behaviour rules file {p} cannot be read: {e.strerror or e}",
                       "give a patterns.yaml (the packaged one is lis/analysis/behaviour/patterns.yaml)") from None
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as e:
        raise LisError(f"behaviour rules file {p} is not valid YAML: {' '.join(str(e).split())[:200]}",
                       "fix the file") from None
    shown = p.name if p == PATTERNS_FILE else str(p)
    return parse_rules(data, shown, hashlib.sha256(raw).hexdigest())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_rules_markdown(rules: Rules) -> str:
    """The rules table of docs/behaviour.md (generated; `lis behaviour rules --update-doc`)."""
    lines = ["| capability | rule | scope | pattern | source | example | not counted (near miss) | note |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rules.rules:
        ex = "<br>".join(f"`{_cell(t)}`" for _, t in r.examples[:2])
        nm = "<br>".join(f"`{_cell(t)}`" for _, t in r.near_misses[:2])
        lines.append(f"| {rules.capabilities[r.capability].get('title', r.capability)} | `{r.id}` | "
                     f"{', '.join(r.scopes)} | `{_cell(r.pattern)}` | {r.source} | {ex} | {nm} | {_cell(r.note)} |")
    lines += ["", "| Table 9 row | group | pattern | counted | source | note |", "|---|---|---|---|---|---|"]
    for r in rules.reasoning:
        where = "outside code fences" if r.structure else "everywhere"
        lines.append(f"| `{r.id}` | {r.group} | `{_cell(r.pattern)}` | {where} | {r.source} | {_cell(r.note)} |")
    for name, parts in rules.combined.items():
        lines.append(f"| `{name}` | structure (paper's row) | sum of {', '.join(f'`{p}`' for p in parts)} | | paper | |")
    return "\n".join(lines) + "\n"
