"""The raw Instruction Pre-Training seed data (``instruction-pretrain/ft-instruction-synthesizer-collection``).

One config per source dataset (``squad``, ``race``, ``HotpotQA``, ...), split ``train``, JSONL
shards whose rows are a reading material and its comprehension tasks::

    {"context": "<text>", "QA_list": [{"Q": "<question>", "A": "<answer>"}, ...],
     "QA_type": "...", "rc_name": "<source dataset>"}

(``QA_list`` may also come as a JSON string.) A question with options lists them after
``\\nOptions:\\n- `` one per ``\\n- `` line and its answer is the text of the correct option; a
question with a rationale ends with ``\\nLet's think step by step.`` and its answer is the
rationale, ``\\nTherefore, the answer is ``, the final answer (the format the collection's own
reader, LMOps ``instruction_pretrain/utils/read_compre_pt.py``, parses). Here each row becomes a
single-document :class:`~lis.context_tasks.records.Context`; a question whose answer is one
option becomes a single choice (options shuffled, seeded), one whose answer lists two or more
options (joined by ``, ``, ``; `` or `` and ``) a multiple choice, anything else free form with
the final answer only (the rationale is dropped).
"""
from __future__ import annotations

import json
import logging
import random
import re
from pathlib import Path
from typing import Any

from lis.context_tasks.records import FREE, LETTERS, MULTIPLE, QA, SINGLE, Context, Document
from lis.config.tasks import SeedCollection
from lis.errors import LisError
from lis.tasks.hub_access import hub_rows
from lis.util.jsonl import read_jsonl

log = logging.getLogger("lis.context_tasks")
OPTIONS = "\nOptions:\n- "
COT_Q = "\nLet's think step by step."
COT_A = "\nTherefore, the answer is "
_LETTER = re.compile(r"^\(?([A-Z])\)?\.?$")
_JOIN = re.compile(r"\s*(?:,|;|\band\b)\s*")


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def _final_answer(q: str, a: str) -> tuple[str, str] | None:
    """(question without the rationale cue, final answer), or None when a rationale is malformed."""
    if COT_Q in q or COT_A in a:
        if not q.endswith(COT_Q) or a.count(COT_A) != 1:
            return None
        q = q[: -len(COT_Q)].strip()
        a = a.split(COT_A)[1].strip()
    return q.strip(), a.strip()


def parse_qa(entry: Any, rng: random.Random) -> QA | None:
    """One ``{"Q": ..., "A": ...}`` entry as a :class:`QA`; None when it is malformed or empty."""
    if not isinstance(entry, dict) or not isinstance(entry.get("Q"), str) or not isinstance(entry.get("A"), str):
        return None
    got = _final_answer(entry["Q"], entry["A"])
    if got is None or not got[0] or not got[1]:
        return None
    q, a = got
    if OPTIONS not in q:
        return QA(q, a, FREE)
    question, opt_text = q.split(OPTIONS, 1)
    options = [o.strip() for o in opt_text.split("\n- ")]
    if not question.strip() or not all(options) or not 2 <= len(options) <= len(LETTERS):
        return QA(q, a, FREE)
    norm = [_norm(o) for o in options]
    m = _LETTER.match(a)
    if _norm(a) in norm:
        correct = [norm.index(_norm(a))]
    elif m and LETTERS.index(m.group(1)) < len(options):
        correct = [LETTERS.index(m.group(1))]
    else:
        parts = [p for p in _JOIN.split(a) if p]
        correct = [norm.index(_norm(p)) for p in parts if _norm(p) in norm]
        if len(parts) < 2 or len(correct) != len(parts) or len(set(correct)) != len(correct):
            return QA(q, a, FREE)  # the answer is not (a list of) the options: keep it as free text
    order = list(range(len(options)))
    rng.shuffle(order)
    shown = [options[i] for i in order]
    letters = sorted(LETTERS[order.index(i)] for i in correct)
    return QA(question.strip(), ", ".join(letters), SINGLE if len(letters) == 1 else MULTIPLE, shown)


def parse_row(row: dict[str, Any], index: int, config: str, seed: int = 0) -> Context | None:
    """One row of the collection as a single-document context (None when it has no usable text or QA)."""
    text = row.get("context")
    qa_list = row.get("QA_list")
    if isinstance(qa_list, str):
        try:
            qa_list = json.loads(qa_list)
        except json.JSONDecodeError:
            return None
    if not isinstance(text, str) or not text.strip() or not isinstance(qa_list, list):
        return None
    name = str(row.get("rc_name") or config)
    rng = random.Random(f"lis.data.context.seed:{seed}:{name}:{index}")
    qas = [qa for qa in (parse_qa(e, rng) for e in qa_list) if qa is not None]
    if not qas:
        return None
    body = text.strip() + "\n"
    slug = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_").lower() or "rows"
    return Context(id=f"seed-{slug}-{index:06d}", source=f"seed:{name}", documents=[Document("", body)],
                   qas=qas, meta={"rc_name": name, "row": index, "QA_type": row.get("QA_type")})


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a local JSONL file in the collection's format, read strictly: LisError when it is
    missing or a line is not a JSON object."""
    if not Path(path).exists():
        raise LisError(f"seed collection file {path} does not exist",
                       "fix tasks.context.seed_collection.path (relative to the repository root)")
    return read_jsonl(path, mode="strict", hint="give a JSONL file of seed rows, one JSON object per line")


def load_seed_contexts(sc: SeedCollection, root: Path, seed: int = 0) -> list[Context]:
    """Contexts from the seed rows: the local file ``sc.path`` (relative to ``root``) or each of
    ``sc.configs`` of ``sc.dataset`` on the hub at ``sc.revision`` (None: the current main, with a
    warning); at most ``sc.max_contexts`` of them (a seeded draw, order kept). Raises LisError
    when the hub cannot be reached and the revision is not cached, or when no row is usable."""
    batches: list[tuple[str, list[dict[str, Any]]]] = []
    if sc.path:
        batches.append(("rows", read_rows(root / sc.path)))
        where = sc.path
    else:
        if not sc.revision:
            log.warning("%s: no revision pinned (tasks.context.seed_collection.revision is null): reading its current "
                        "main", sc.dataset)
        for cfg in sc.configs:
            batches.append((cfg, hub_rows(sc.dataset, cfg, "train", sc.revision or "main")))
        where = f"{sc.dataset} ({', '.join(sc.configs)})"
    contexts = []
    for cfg, rows in batches:
        for i, row in enumerate(rows):
            ctx = parse_row(row, i, str(row.get("rc_name") or cfg), seed)
            if ctx is not None:
                contexts.append(ctx)
    if not contexts:
        raise LisError(f"no usable row (context with QA pairs) in {where}",
                       "check the rows' format: context, QA_list of {Q, A}")
    if sc.max_contexts and sc.max_contexts < len(contexts):
        keep = sorted(random.Random(f"lis.data.context.seed-subset:{seed}").sample(range(len(contexts)),
                                                                                   sc.max_contexts))
        contexts = [contexts[i] for i in keep]
    return contexts
