"""The problem statement of a context task: earlier questions with their answers, then the question.

The instance prompt (``lis/prompts/templates/sandbox/instance_instruct_pretrain.txt``) wraps the
statement in ``<problem>`` tags and adds the answer-format rule (a letter, letters separated
by commas, or plain text), so the statement holds only the question, its options (``A. ...``
lines) and, when the context had earlier questions, those as worked examples (Figure 4 of
the paper: earlier tasks of the same context and their answers come first). The authors'
exact wording of that block is not public; ours is in :data:`EXAMPLES_INTRO` and :data:`ASK`.
"""
from __future__ import annotations

from lis.context_tasks.records import LETTERS, QA

EXAMPLES_INTRO = "Here are earlier questions about the same documents, with their answers:"
ASK = "Now answer the following question."


def question_text(qa: QA) -> str:
    """The question with its options, one ``A. text`` line each."""
    if not qa.options:
        return qa.question
    return qa.question + "\n" + "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(qa.options))


def problem_statement(qa: QA, examples: list[QA]) -> str:
    if not examples:
        return question_text(qa)
    shown = "\n\n".join(f"Question: {question_text(e)}\nAnswer: {e.answer}" for e in examples)
    return f"{EXAMPLES_INTRO}\n\n{shown}\n\n{ASK}\n\n{question_text(qa)}"
