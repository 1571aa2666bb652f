"""Contexts with QA pairs → context tasks (the paper's Figures 3 and 4).

For each QA pair of a context, one :class:`~lis.tasks.schema.Task` of domain
``instruct_pretrain``:

* **files** (``input_files``, placed under ``/testbed/documents`` by the prompt layout): every
  document of the context, a long one split into parts (:mod:`lis.context_tasks.files`); a
  single-document context also gets ``distractor_files`` documents of *other* contexts of the
  same split that do not give the answer away (:mod:`lis.context_tasks.distractors`). Files are
  named after their entity (``file_names: entity``) or ``doc_1.txt, doc_2.txt, ...`` in a
  shuffled order (``neutral``; always so for sources without entity names);
* **statement**: up to ``max_examples`` earlier QA pairs of the same context with their
  answers, then the question and its options (:mod:`lis.context_tasks.statement`);
* **ground truth and qa_type** as the official reward expects them: a letter, letters joined
  by ``", "``, or the free-form text; ``"multiple choice"`` or ``"free-form"``;
* **meta**: where the task came from, the knobs it drew, and where each fact the answer needs is
  (``evidence``: file, line, text) for the scripted teacher.

Everything is drawn from ``random.Random`` seeded with (seed, context id, question index): the
same settings give the same tasks in any order, another seed gives others.
"""
from __future__ import annotations

import random
from typing import Any

from lis.context_tasks.distractors import pick_distractors
from lis.context_tasks.files import file_names, locate, slug, split_text
from lis.context_tasks.records import LETTERS, Context, Document
from lis.config.tasks import ContextSection
from lis.context_tasks.settings import span
from lis.context_tasks.statement import problem_statement
from lis.tasks.schema import Task

DOMAIN = "instruct_pretrain"


def _files(ctx_docs: list[Document], extra: list[Document], s: ContextSection, named: bool,
           rng: random.Random) -> tuple[dict[str, str], list[str], list[str]]:
    """(files in shown order, names of the context's files, names of the distractor files)."""
    parts: list[tuple[bool, str, list[str]]] = []
    for own, docs in ((True, ctx_docs), (False, extra)):
        for d in docs:
            texts = split_text(d.text, s.max_file_chars)
            if not own and len(texts) > 1:  # a distractor contributes one of its parts
                texts = [rng.choice(texts)]
            parts.append((own, d.name, texts))
    items: list[tuple[bool, str, str]] = []  # (own, name, text)
    taken: set[str] = set()
    if named:
        for own, name, texts in parts:
            stem = slug(name)
            while f"{stem}.txt" in taken or f"{stem}_part1.txt" in taken:
                stem += "_2"
            for fname, text in zip(file_names(stem, len(texts)), texts):
                taken.add(fname)
                items.append((own, fname, text))
        rng.shuffle(items)
    else:
        flat = [(own, text) for own, _, texts in parts for text in texts]
        rng.shuffle(flat)
        items = [(own, f"doc_{i}.txt", text) for i, (own, text) in enumerate(flat, 1)]
    files = {name: text for _, name, text in items}
    return files, [n for own, n, _ in items if own], [n for own, n, _ in items if not own]


def construct_task(ctx: Context, k: int, pool: list[tuple[str, Document]], s: ContextSection,
                   split: str) -> Task:
    """The task of QA pair ``k`` of ``ctx``; distractors come from ``pool``."""
    qa = ctx.qas[k]
    rng = random.Random(f"lis.data.context.construct:{s.seed}:{ctx.id}:{k}")
    extra: list[Document] = []
    if ctx.single_document:
        extra = [d for _, d in pick_distractors(pool, ctx.id, qa, rng.randint(*span(s.distractor_files)), rng)]
    named = s.file_names == "entity" and all(d.name for d in ctx.documents)
    files, own, distract = _files(ctx.documents, extra, s, named, rng)
    examples = ctx.qas[max(0, k - s.max_examples):k] if s.max_examples else []
    evidence = []
    for fact in qa.needs.get("inputs", []):
        at = locate(files, fact["sentence"])
        if at is not None:
            evidence.append({"file": at[0], "line": at[1], "text": fact["sentence"]})
    meta: dict[str, Any] = {
        "context_id": ctx.id, "split": split, "variant": "files", "source": ctx.source,
        "question_kind": qa.kind, "question_index": k,
        "knobs": {"seed": s.seed, "files": len(files), "distractor_files": len(distract), "examples": len(examples),
                  "max_file_chars": s.max_file_chars, "file_names": "entity" if named else "neutral",
                  "answer_position": s.answer_position if ctx.source == "generated" else None,
                  "computation": qa.needs.get("op", "lookup") not in ("lookup", "statements")},
        "context_files": sorted(own), "distractor_files": sorted(distract), "evidence": evidence,
    }
    if qa.options:
        meta["choices"] = list(LETTERS[:len(qa.options)])
    if qa.needs:
        meta["needs"] = qa.needs
    return Task(id=f"{ctx.id}-q{k}", domain=DOMAIN, problem_statement=problem_statement(qa, examples),
                ground_truth=qa.answer, input_files=files, qa_type=qa.qa_type, meta=meta)


def construct_tasks(contexts: list[Context], s: ContextSection, split: str) -> list[Task]:
    """The tasks of every QA pair of ``contexts`` (one split: distractors come from it alone)."""
    pool = [(c.id, d) for c in contexts for d in c.documents]  # every document of the split, with its context
    return [construct_task(c, k, pool, s, split) for c in contexts for k in range(len(c.qas))]
