"""The classifier against hand labels of the authors' published episodes (docs/behaviour-authors.md).

    labels = load_labels(path)                       # tests/analysis/fixtures/official_labels/…jsonl
    scores = agreement(records, labels)              # records: import_official(...) of the episodes
    scores["compute"]                                # {n, agree, tp, fp, fn, tn, agreement, precision, recall}

A label names its episode, 0-based step and the sha256 of the step's action; a turn whose action
does not hash to the label's is an error (the labels belong to other episodes).
``python -m lis.analysis.behaviour.agreement LABELS TRAJECTORY...`` prints the table.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Iterable

from lis.agent.trajectory import Trajectory
from lis.analysis.behaviour.classify import classify_episode
from lis.analysis.behaviour.rules import Rules, load_rules
from lis.errors import LisError
from lis.util.jsonl import iter_jsonl, read_text
from lis.analysis.behaviour.official import import_official

CATEGORIES = ("external", "file", "compute")


def action_sha256(function: str | None, parameters: Any) -> str:
    """The hash a label line carries for an action ``{function, parameters}`` (the authors' format)."""
    blob = json.dumps({"function": function, "parameters": parameters}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def load_labels(path: str | Path) -> list[dict]:
    """The label lines of ``path`` (JSONL; lines starting with ``_about`` keys are skipped)."""
    out = []
    for n, d in iter_jsonl(read_text(path), mode="strict", where=str(path), hint="see the labels' README"):
        if "_about" in d:
            continue
        missing = [k for k in ("episode", "step", "action_sha256", *CATEGORIES) if k not in d]
        if missing:
            raise LisError(f"{path} line {n}: missing {', '.join(missing)}", "see the labels' README")
        out.append(d)
    return out


def episode_name(rec: Trajectory) -> str:
    """The label's episode name of a record imported from ``trajectory_<name>.json`` (else its task id)."""
    tid = rec.task_id
    return tid[len("trajectory_"):] if tid.startswith("trajectory_") else tid


def _verdicts(records: Iterable[Trajectory], rules: Rules) -> dict[tuple[str, int], tuple[frozenset, str]]:
    out = {}
    for rec in records:
        v = classify_episode(rec, rules)
        for step, turn in zip(rec.steps, v.per_turn):
            call = step.calls[0] if step.calls else None
            digest = action_sha256(call.tool, call.arguments) if call else ""
            out[(episode_name(rec), step.index)] = (frozenset(turn.capabilities), digest)
    return out


def agreement(records: Iterable[Trajectory], labels: list[dict], rules: Rules | None = None) -> dict[str, dict]:
    """Per category: n labelled turns found in ``records``, agreement, precision and recall of the
    classifier (its ``compute`` capability against the ``compute`` label, and so on)."""
    verdicts = _verdicts(records, rules or load_rules())
    counts = {c: {"tp": 0, "fp": 0, "fn": 0, "tn": 0} for c in CATEGORIES}
    for lab in labels:
        key = (lab["episode"], int(lab["step"]))
        if key not in verdicts:
            continue
        caps, digest = verdicts[key]
        if digest != lab["action_sha256"]:
            raise LisError(f"label {key}: the action's sha256 is not the labelled one", "wrong episode files?")
        for c in CATEGORIES:
            got, want = c in caps, bool(lab[c])     # label categories are the capability ids
            counts[c][("t" if got == want else "f") + ("p" if got else "n")] += 1
    out = {}
    for c, k in counts.items():
        n = sum(k.values())
        out[c] = {**k, "n": n, "agree": k["tp"] + k["tn"],
                  "agreement": (k["tp"] + k["tn"]) / n if n else None,
                  "precision": k["tp"] / (k["tp"] + k["fp"]) if k["tp"] + k["fp"] else None,
                  "recall": k["tp"] / (k["tp"] + k["fn"]) if k["tp"] + k["fn"] else None}
    return out


def disagreements(records: Iterable[Trajectory], labels: list[dict], rules: Rules | None = None) -> list[dict]:
    """The labelled turns where classifier and label differ in some category."""
    verdicts = _verdicts(records, rules or load_rules())
    out = []
    for lab in labels:
        key = (lab["episode"], int(lab["step"]))
        if key in verdicts:
            caps = verdicts[key][0]
            diff = {c: (c in caps, bool(lab[c])) for c in CATEGORIES if (c in caps) != bool(lab[c])}
            if diff:
                out.append({"episode": key[0], "step": key[1], "classifier": sorted(caps), "reason": lab["reason"],
                            "differs": diff})
    return out


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    show_diff = "--diff" in args
    args = [a for a in args if a != "--diff"]
    if len(args) < 2:
        print("usage: python -m lis.analysis.behaviour.agreement LABELS.jsonl TRAJECTORY.json|FOLDER ... [--diff]", file=sys.stderr)
        return 2
    labels = load_labels(args[0])
    records = import_official([Path(p) for p in args[1:]])
    scores = agreement(records, labels)
    print("| category | n | agree | agreement | precision | recall | tp | fp | fn |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c, s in scores.items():
        print(f"| {c} | {s['n']} | {s['agree']} | {_fmt(s['agreement'])} | {_fmt(s['precision'])} | "
              f"{_fmt(s['recall'])} | {s['tp']} | {s['fp']} | {s['fn']} |")
    if show_diff:
        for d in disagreements(records, labels):
            diff = ", ".join(f"{c}: classifier {'yes' if got else 'no'}, label {'yes' if want else 'no'}"
                             for c, (got, want) in d["differs"].items())
            print(f"- {d['episode']} {d['step']}: {diff} — {d['reason']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
