"""What context-task construction starts from: a context (documents) and its question/answer pairs.

A :class:`Context` is one reading material of a source: one document (a single-document
context: an article, a story, an entity's record) or several (a multi-document context), and
the QA pairs asked about it, in their original order (earlier pairs become in-prompt examples
of later ones). :class:`QA` kinds map onto the ``qa_type`` values the official reward routes
on (``lis.rewards.route``): single and multiple choice are both ``"multiple choice"`` (a
comma in the gold letters selects set F1), free form is ``"free-form"``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SINGLE, MULTIPLE, FREE = "single_choice", "multiple_choice", "free_form"
KINDS = (SINGLE, MULTIPLE, FREE)
QA_TYPES = {SINGLE: "multiple choice", MULTIPLE: "multiple choice", FREE: "free-form"}
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Document:
    """One document of a context: ``name`` is the stem its files are named after (an entity, a
    title, or empty for a neutral name); ``text`` is the whole document."""
    name: str
    text: str


@dataclass
class QA:
    """One question about a context.

    ``answer`` is the gold as the answer file must hold it: the text of a free-form answer, one
    letter for a single choice, letters joined by ``", "`` for a multiple choice. ``options``
    are the option texts of a choice question (lettered A, B, ... in this order). ``needs``
    (optional) says how the answer is derived: the facts read (``inputs``: entity, attribute,
    value, the sentence holding it) and the operation (``op``), for the scripted teacher.
    """
    question: str
    answer: str
    kind: str
    options: list[str] = field(default_factory=list)
    needs: dict[str, Any] = field(default_factory=dict)

    @property
    def qa_type(self) -> str:
        return QA_TYPES[self.kind]

    def correct_options(self) -> list[str]:
        """The option texts the gold letters name (empty for free form)."""
        if self.kind == FREE:
            return []
        return [self.options[LETTERS.index(x.strip())] for x in self.answer.split(",") if x.strip()]


@dataclass
class Context:
    """A reading material with its questions. ``source`` names where it came from
    (``generated``, ``seed:<config>``); ``meta`` keeps source facts (kind, region, row index)."""
    id: str
    source: str
    documents: list[Document]
    qas: list[QA]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def single_document(self) -> bool:
        return len(self.documents) == 1
