"""Tasks for the tiny model's warm-up: the offline sample tasks of every domain, and variations.

The warm-up shows the model the *real* first-turn prompts (``lis.prompts.render_prompts``) of
each domain and mode, so it learns to act under the prompts the evaluation sends. Its prompts
come from two sources:

* the sample tasks in ``data/samples`` (the smoke profile evaluates these very tasks), with
  ``ground_truth`` blanked: the scripted episodes never read it, and their answers are random
  values of the right form (a number in ``\\boxed{}``, a letter, a phrase). The warm-up teaches
  the *form* of an episode, it never sees an evaluation answer, so it cannot memorise one;
* synthetic variations: sample statements with their numbers and sentence order changed,
  multiple-choice questions with shuffled options, and template tasks for the domains without an
  offline sample (chem, instruct_pretrain) or with few (long_context, demo), with small
  synthetic documents.

Same seed → same tasks.
"""
from __future__ import annotations

import dataclasses
import logging
import random
import string

from lis.errors import LisError
from lis.tasks import load_samples
from lis.tasks.chem import format_statement
from lis.offline.teacher import text as st
from lis.tasks.schema import Task

log = logging.getLogger("lis.offline.teacher")

SAMPLE_DOMAINS = ("math", "physics", "biomed", "long_context", "instruct_follow", "demo")
KINDS = ("math", "physics", "chem", "biomed", "long_context", "instruct_follow", "instruct_pretrain", "demo")
SUBJECTS = ("Classical Mechanics", "Thermodynamics", "Electrodynamics", "Quantum Mechanics", "Optics",
            "Atomic Physics", "Solid State Physics", "Statistical Mechanics")
ANSWER_TYPES = ("a numerical value", "an expression", "an equation", "True or False", "an interval")
CHEM_QUESTIONS = ("Which solvent is most suitable for the reaction {s}?", "What is the product of the reaction {s}?",
                  "Which reagent converts {s} into the target compound?", "What is the yield class of {s}?",
                  "Which molecule matches the description of {s}?")
SMILES = ("CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "O=C(O)c1ccccc1", "CC(C)O", "ClCCl", "C1CCOC1", "CS(C)=O",
          "CC#N", "OCC(O)CO", "Nc1ccccc1")
IF_FORMS = ("a short poem", "a product description", "an email to a colleague", "a blog post", "a summary",
            "a letter of complaint", "a list of tips", "a story for children")
IF_RULES = ("Include keyword {w} once in your response.", "Include keyword {w} twice in your response.",
            "Your response must contain exactly {n} bullet points.", "Answer in fewer than {n} words.",
            "Do not use any commas in your response.", "End your response with the phrase 'Is there anything else?'",
            "Write your entire response in lowercase letters.", "Include exactly {n} numbers in the response.")
DEMO_FORMS = ("What is {a} + {b}? Write only the number.", "What is {a} * {b}? Write only the number.",
              "How many letters are in the word '{w}'? Write only the number.",
              "Write the word '{w}' in upper case. Write only the word.",
              "Write a Python script that prints '{w}' and save it to /testbed/output/{w}.py. Then write 'done' to "
              "answer.txt")


def sample_tasks() -> dict[str, list[Task]]:
    """The offline sample tasks per domain, ``ground_truth`` blanked (never used for training).

    A domain whose samples cannot be loaded (no checkout with data/samples) is left out with a
    warning; the manifest of the build records which domains were used.
    """
    out: dict[str, list[Task]] = {}
    for domain in SAMPLE_DOMAINS:
        try:
            tasks = load_samples(domain)
        except LisError as e:
            log.warning("tiny model warm-up: no samples of %s (%s)", domain, e.one_line())
            continue
        out[domain] = [dataclasses.replace(t, ground_truth="", meta=dict(t.meta)) for t in tasks]
    return out


def _options(rng: random.Random, pool: list[str], n: int) -> dict[str, str]:
    texts = rng.sample(pool, n) if len(pool) >= n else [rng.choice(pool) for _ in range(n)]
    return dict(zip(string.ascii_uppercase, texts))


def _docs(rng: random.Random) -> dict[str, str]:
    names = st.document_names(rng, rng.randint(1, 4))
    return {n: st.document(rng, rng.randint(8, 40)) for n in names}


def _math(rng: random.Random, samples: list[Task]) -> Task:
    if samples and rng.random() < 0.7:
        text = st.vary_sentences(rng.choice(samples).problem_statement, rng)
    else:
        n, m = rng.randint(10, 2025), rng.randint(2, 99)
        text = rng.choice((f"Find the number of positive integers $n \\le {n}$ such that $n^2 + {m}$ is divisible "
                           f"by {m}.",
                           f"Let $S$ be the sum of all divisors of ${n}$. Find the remainder when $S$ is divided "
                           f"by {m}.",
                           f"A sequence satisfies $a_1 = {m}$ and $a_{{k+1}} = a_k + {m}k$. Find $a_{{{n % 50 + 2}}}$.",
                           f"How many ordered pairs $(x, y)$ of integers satisfy $x^2 + y^2 = {n}$?"))
    return Task(id="", domain="math", problem_statement=text, ground_truth="")


def _physics(rng: random.Random, samples: list[Task]) -> Task:
    if samples and rng.random() < 0.7:
        text = st.vary_numbers(rng.choice(samples).problem_statement, rng)
    else:
        body = (f"A body of mass {rng.randint(1, 50)} kg moves at {rng.randint(1, 30)} m/s on a surface with friction "
                f"coefficient 0.{rng.randint(1, 9)}. Find the distance it travels before it stops.")
        text = (f"The following is an open-ended problem from {rng.choice(SUBJECTS)} of undergraduate-level Physics.\n"
                f"The answer of the problem should be {rng.choice(ANSWER_TYPES)}.\nPlease calculate the answer "
                "according to the given requirements and the information provided. Please use LaTeX format to "
                "represent the variables and formulas used in the solution process and results.\nPlease end your "
                'solution with "So the final answer is \\boxed{answer}." and give the result explicitly.\n\n' + body)
    return Task(id="", domain="physics", problem_statement=text, ground_truth="")


def _biomed(rng: random.Random, samples: list[Task]) -> Task:
    pool = sorted({o for t in samples for o in (t.meta.get("options") or {}).values()}) or list(st.WORDS)
    stem = st.paragraph(rng, 3) + " What is the most likely diagnosis?"
    tail = ""
    if samples and rng.random() < 0.8:
        head, _, rest = rng.choice(samples).problem_statement.rpartition("Answer Choices:")
        stem, tail = st.vary_numbers(head.rstrip(), rng), rest.partition("\n\n")[2]
    options = _options(rng, pool, rng.choice((5, 10, 10)))
    line = "Answer Choices: " + " ".join(f"({k}) {v}" for k, v in options.items())
    text = f"{stem}\n{line}" + (f"\n\n{tail}" if tail else "")
    return Task(id="", domain="biomed", problem_statement=text, ground_truth="", meta={"choices": list(options)})


def _chem(rng: random.Random) -> Task:
    options = _options(rng, list(SMILES), 4)
    text = format_statement(rng.choice(CHEM_QUESTIONS).format(s=rng.choice(SMILES)), options)
    return Task(id="", domain="chem", problem_statement=text, ground_truth="", meta={"choices": list(options)})


def _long_context(rng: random.Random, samples: list[Task]) -> Task:
    if samples and rng.random() < 0.4:
        question = st.vary_sentences(rng.choice(samples).problem_statement, rng)
    else:
        question = rng.choice((f"Based on the provided documents, what was the {rng.choice(st.WORDS)} figure in "
                               f"{rng.randint(1990, 2025)}?",
                               f"Which sections of the documents discuss the {rng.choice(st.WORDS)}? List them.",
                               f"Summarise how the {rng.choice(st.TOPICS)} sector changed, according to the "
                               "documents."))
    return Task(id="", domain="long_context", problem_statement=question, ground_truth="", input_files=_docs(rng))


def _instruct_follow(rng: random.Random, samples: list[Task]) -> Task:
    if samples and rng.random() < 0.6:
        text = st.vary_numbers(rng.choice(samples).problem_statement, rng)
    else:
        rules = [r.format(w=rng.choice(st.WORDS), n=rng.randint(2, 9)) for r in rng.sample(IF_RULES, rng.randint(1, 2))]
        text = f"Write {rng.choice(IF_FORMS)} about {rng.choice(st.TOPICS)}. " + " ".join(rules)
    return Task(id="", domain="instruct_follow", problem_statement=text, ground_truth="")


def _instruct_pretrain(rng: random.Random) -> Task:
    docs = _docs(rng)
    qa_type = rng.choice(("multiple choice", "single choice", "free-form"))
    question = f"According to the documents, which statement about the {rng.choice(st.WORDS)} is correct?"
    if qa_type != "free-form":
        question += "\n" + "\n".join(f"{k}. {st.sentence(rng)}" for k in "ABCD")
    return Task(id="", domain="instruct_pretrain", problem_statement=question, ground_truth="", input_files=docs,
                qa_type=qa_type)


def _demo(rng: random.Random, samples: list[Task]) -> Task:
    if samples and rng.random() < 0.3:
        t = rng.choice(samples)
        return Task(id="", domain="demo", problem_statement=st.vary_numbers(t.problem_statement, rng), ground_truth="",
                    input_files=dict(t.input_files))
    if rng.random() < 0.3:
        a, b = rng.randint(1, 99), rng.randint(1, 99)
        return Task(id="", domain="demo", ground_truth="", input_files={"numbers.txt": f"{a}\n{b}"},
                    problem_statement="Read the file /testbed/input/numbers.txt which contains two numbers on separate "
                                      "lines. Calculate their sum and write only the result.")
    text = rng.choice(DEMO_FORMS).format(a=rng.randint(1, 999), b=rng.randint(1, 99), w=rng.choice(st.WORDS))
    return Task(id="", domain="demo", problem_statement=text, ground_truth="")


def synthetic_task(kind: str, rng: random.Random, samples: dict[str, list[Task]]) -> Task:
    """One synthetic task of ``kind`` (a domain of :data:`KINDS`), varied from ``samples`` where they exist."""
    pool = samples.get(kind, [])
    if kind == "chem":
        return _chem(rng)
    if kind == "instruct_pretrain":
        return _instruct_pretrain(rng)
    make = {"math": _math, "physics": _physics, "biomed": _biomed, "long_context": _long_context,
            "instruct_follow": _instruct_follow, "demo": _demo}[kind]
    return make(rng, pool)
