"""The paper's published numbers (data/reference/paper_numbers.yaml), to put beside ours.

    from lis.report.paper_numbers import lookup
    ref = lookup("table2", model="GPT-5", domain="math", mode="sandbox")   # version v1 by default
    ref.value, ref.unit, ref.confidence, ref.sources, ref.flags          # 97.9, 'accuracy (%)', 'PRIMARY', ['P-fig-v1'], []
    lookup("table2", model="qwen3-4b", domain="instruct_follow", mode="vanilla").found   # False: "not found"
    lookup("table2", model="nobody", domain="math", mode="sandbox")      # None: no such cell

The schema is documented at the top of the data file; :func:`validate` checks it (and is run on
every load, so a hand edit that breaks it is one clear error). Model and domain keys accept the
aliases the file lists (a display name, a hub id) and are matched case-insensitively.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lis.errors import LisError

DATA_FILE = Path(__file__).resolve().parents[2] / "data" / "reference" / "paper_numbers.yaml"
SCHEMA_VERSION = 1
CONFIDENCE = ("PRIMARY", "derived", "SECONDARY", "low confidence", "not found")
CELL_FIELDS = {"value", "unit", "version", "confidence", "sources", "flags", "note"}
TABLE_FIELDS = {"title", "paper_ref", "units", "keys", "default_version", "note", "not_found", "claims", "cells"}
TOP_FIELDS = {"schema_version", "paper", "versions", "confidence_levels", "flags", "sources", "models", "domains", "tables"}
ALIASED = ("model", "domain")  # keys whose values are ids of the top-level models / domains maps


@dataclass(frozen=True)
class Reference:
    """One published number (or the record that it was not found)."""

    table: str
    keys: dict[str, str]
    value: Any
    unit: str
    version: str
    confidence: str
    sources: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    note: str | None = None

    @property
    def found(self) -> bool:
        return self.confidence != "not found"

    def label(self) -> str:
        """A short provenance label for a table cell: ``paper v1 · PRIMARY · P-fig-v1``."""
        parts = [f"paper {self.version}", self.confidence]
        if self.sources:
            parts.append(", ".join(self.sources))
        if self.flags:
            parts.append(", ".join(self.flags))
        return " · ".join(parts)


class PaperNumbers:
    """The loaded, validated file: tables of cells, looked up by their keys."""

    def __init__(self, data: dict[str, Any], path: Path):
        self.path = path
        self.data = data
        validate(data, str(path))
        self._alias: dict[str, dict[str, str]] = {}
        for kind in ALIASED:
            m: dict[str, str] = {}
            for cid, spec in data[kind + "s"].items():
                for name in [cid, spec.get("name") or "", *(spec.get("aliases") or [])]:
                    if name:
                        m.setdefault(name.lower(), cid)
            self._alias[kind] = m

    @property
    def tables(self) -> list[str]:
        return list(self.data["tables"])

    def table(self, table: str) -> dict[str, Any]:
        try:
            return self.data["tables"][table]
        except KeyError:
            raise LisError(f"no table {table!r} in {self.path.name}",
                           f"one of: {', '.join(self.data['tables'])}") from None

    def canonical(self, key: str, value: Any) -> str:
        """The id a model or domain name stands for (aliases, any case); other keys as given."""
        s = str(value)
        return self._alias[key].get(s.lower(), s) if key in self._alias else s

    def cells(self, table: str, version: str | None = None, **keys: Any) -> list[Reference]:
        """Every cell of ``table`` matching the given keys (all of them when none are given);
        ``version=None`` means every version."""
        spec = self.table(table)
        unknown = sorted(set(keys) - set(spec["keys"]))
        if unknown:
            raise LisError(f"table {table!r} has no key {', '.join(unknown)}", f"its keys: {', '.join(spec['keys'])}")
        want = {k: self.canonical(k, v) for k, v in keys.items()}
        out = []
        for c in spec["cells"]:
            if version is not None and c["version"] != version:
                continue
            if all(str(c[k]) == v for k, v in want.items()):
                out.append(self._ref(table, spec, c))
        return out

    def lookup(self, table: str, version: str | None = None, **keys: Any) -> Reference | None:
        """The one cell with these keys, or None; without ``version`` the table's default version is
        preferred. More than one match (keys left out) is an error naming what tells them apart."""
        found = self.cells(table, version, **keys)
        if len(found) > 1 and version is None:
            default = self.table(table)["default_version"]
            preferred = [r for r in found if r.version == default]
            found = preferred or found
        if not found:
            return None
        if len(found) > 1:
            spec = self.table(table)
            differ = [k for k in [*spec["keys"], "version"]
                      if len({(r.keys.get(k) if k != "version" else r.version) for r in found}) > 1]
            raise LisError(f"{len(found)} cells of {table!r} match {keys}", f"name {', '.join(differ)} as well")
        return found[0]

    def _ref(self, table: str, spec: dict, c: dict) -> Reference:
        return Reference(table=table, keys={k: str(c[k]) for k in spec["keys"]}, value=c["value"],
                         unit=c.get("unit") or spec["units"], version=c["version"], confidence=c["confidence"],
                         sources=list(c.get("sources") or []), flags=list(c.get("flags") or []), note=c.get("note"))


def validate(data: Any, where: str = "paper_numbers.yaml") -> None:
    """Check the file against its schema; raise LisError naming the first problem and where."""
    def fail(msg: str) -> None:
        raise LisError(f"{where}: {msg}", "fix the file (its schema is documented at its top)")

    if not isinstance(data, dict):
        fail("not a mapping")
    extra, missing = set(data) - TOP_FIELDS, TOP_FIELDS - set(data)
    if extra or missing:
        fail(f"top-level keys: unknown {sorted(extra)}, missing {sorted(missing)}")
    if data["schema_version"] != SCHEMA_VERSION:
        fail(f"schema_version {data['schema_version']!r}, this code reads {SCHEMA_VERSION}")
    if set(data["confidence_levels"]) != set(CONFIDENCE):
        fail(f"confidence_levels must be exactly {list(CONFIDENCE)}")
    for name in ("versions", "flags", "sources", "models", "domains", "tables"):
        if not isinstance(data[name], dict) or not data[name]:
            fail(f"{name}: must be a non-empty mapping")
    for tag, s in data["sources"].items():
        if not isinstance(s, dict) or s.get("type") not in ("PRIMARY", "SECONDARY") or not s.get("what"):
            fail(f"sources.{tag}: needs type PRIMARY|SECONDARY and what")
    for kind in ("models", "domains"):
        for cid, spec in data[kind].items():
            if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) \
                    or not isinstance(spec.get("aliases", []), list):
                fail(f"{kind}.{cid}: needs name and a list of aliases")
    for tid, t in data["tables"].items():
        at = f"tables.{tid}"
        if not isinstance(t, dict):
            fail(f"{at}: not a mapping")
        extra, missing = set(t) - TABLE_FIELDS, {"title", "paper_ref", "units", "keys", "default_version", "cells"} - set(t)
        if extra or missing:
            fail(f"{at}: unknown {sorted(extra)}, missing {sorted(missing)}")
        keys = t["keys"]
        if not isinstance(keys, list) or not keys or len(set(keys)) != len(keys) or set(keys) & CELL_FIELDS:
            fail(f"{at}.keys: a non-empty list of distinct names other than {sorted(CELL_FIELDS)}")
        if t["default_version"] not in data["versions"]:
            fail(f"{at}.default_version {t['default_version']!r} is not a version")
        for i, claim in enumerate(t.get("claims") or []):
            if not isinstance(claim, dict) or not claim.get("text") or claim.get("confidence") not in CONFIDENCE \
                    or any(s not in data["sources"] for s in claim.get("sources") or []):
                fail(f"{at}.claims[{i}]: needs text, known sources and a confidence level")
        if not isinstance(t["cells"], list) or not t["cells"]:
            fail(f"{at}.cells: a non-empty list")
        seen: set[tuple] = set()
        for i, c in enumerate(t["cells"]):
            ca = f"{at}.cells[{i}]"
            if not isinstance(c, dict):
                fail(f"{ca}: not a mapping")
            if set(c) - CELL_FIELDS - set(keys) or set(keys) - set(c):
                fail(f"{ca}: keys must be exactly {keys} (plus {sorted(CELL_FIELDS)}); has {sorted(c)}")
            for k in keys:
                if not isinstance(c[k], str) or not c[k]:
                    fail(f"{ca}.{k}: a non-empty string")
                if k in ALIASED and c[k] not in data[k + "s"]:
                    fail(f"{ca}.{k}: {c[k]!r} is not in {k}s")
            if c.get("version") not in data["versions"]:
                fail(f"{ca}.version: {c.get('version')!r} is not a version")
            conf = c.get("confidence")
            if conf not in CONFIDENCE:
                fail(f"{ca}.confidence: {conf!r} is not one of {list(CONFIDENCE)}")
            v = c.get("value", "missing")
            if v == "missing":
                fail(f"{ca}: no value (write null for a number not found)")
            if (v is None) != (conf == "not found"):
                fail(f"{ca}: value is null exactly when confidence is 'not found'")
            if isinstance(v, float) and not math.isfinite(v):
                fail(f"{ca}.value: not a finite number")
            if v is not None and not isinstance(v, (int, float, str, bool)):
                fail(f"{ca}.value: a number, string, boolean or null")
            if conf not in ("not found",) and not c.get("sources"):
                fail(f"{ca}: a number needs its sources")
            for s in c.get("sources") or []:
                if s not in data["sources"]:
                    fail(f"{ca}.sources: unknown tag {s!r}")
            if conf == "PRIMARY" and not any(data["sources"][s]["type"] == "PRIMARY" for s in c["sources"]):
                fail(f"{ca}: PRIMARY needs a PRIMARY source")
            for f in c.get("flags") or []:
                if f not in data["flags"]:
                    fail(f"{ca}.flags: unknown flag {f!r}")
            ident = (*(c[k] for k in keys), c["version"])
            if ident in seen:
                fail(f"{ca}: a second cell with keys {dict(zip(keys, ident))}, version {c['version']}")
            seen.add(ident)


@functools.lru_cache(maxsize=4)
def _load(path: Path, mtime_ns: int) -> PaperNumbers:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise LisError(f"{path.name}: not valid YAML ({' '.join(str(e).split())[:200]})", "fix the file") from None
    return PaperNumbers(data, path)


def load(path: Path | str | None = None) -> PaperNumbers:
    """The validated file (cached until it changes)."""
    p = Path(path) if path is not None else DATA_FILE
    if not p.is_file():
        raise LisError(f"no paper-numbers file at {p}", "it ships with the repository: data/reference/paper_numbers.yaml")
    return _load(p.resolve(), p.stat().st_mtime_ns)


def lookup(table: str, version: str | None = None, path: Path | str | None = None, **keys: Any) -> Reference | None:
    """The published cell of ``table`` with these keys (see :meth:`PaperNumbers.lookup`)."""
    return load(path).lookup(table, version, **keys)
