"""The tool calls of a scripted warm-up episode, per domain: look around, compute or read, write the
answer file, (check it), submit.

A plan is a short list of :class:`~lis.offline.teacher.sim_sandbox.Step` (at most five before ``submit``,
so an episode fits the smoke profile's six turns). The answer written is whatever the episode's
own computation printed or a random value of the right form: a number in ``\\boxed{}`` (math,
physics), a letter (chem, biomed, choice questions), a phrase from a document or a few sentences
(long context, instruction following), never a task's ground truth.
"""
from __future__ import annotations

import posixpath
import random
import re

from lis.prompts import choice_letters, prompt_kind
from lis.offline.teacher import text as st
from lis.offline.teacher.sim_sandbox import BASH, EDITOR, SimSandbox, Step, bash_step
from lis.prompts.layout import Layout
from lis.tasks.schema import Task

Plan = list[Step]
MAX_STEPS = 5   # tool calls before submit: an episode fits the smoke profile's 6 turns


# -- computations: a program and exactly what it prints ------------------------------------------
def _number_program(rng: random.Random, physics: bool) -> tuple[str, str]:
    a, b, c = rng.randint(2, 99), rng.randint(2, 99), rng.randint(1, 999)
    n, m, k = rng.randint(10, 500), rng.randint(2, 9), rng.randint(2, 6)
    if physics and rng.random() < 0.6:
        h = rng.randint(2, 80)
        return (f"g = 9.81\nh = {h}.0\nv = (2 * g * h) ** 0.5\nprint(round(v, 3))\n",
                str(round((2 * 9.81 * float(h)) ** 0.5, 3)))
    form = rng.randrange(4)
    if form == 0:
        return f"a = {a}\nb = {b}\nprint(a * b + {c})\n", str(a * b + c)
    if form == 1:
        return (f"total = 0\nfor i in range(1, {n} + 1):\n    if i % {m} == 0:\n        total += i\nprint(total)\n",
                str(sum(i for i in range(1, n + 1) if i % m == 0)))
    if form == 2:
        from math import comb

        return f"from math import comb\n\nprint(comb({n % 40 + k}, {k}))\n", str(comb(n % 40 + k, k))
    count = sum(1 for x in range(1, n + 1) if (x * x + c) % m == 0)
    code = (f"count = 0\nfor x in range(1, {n} + 1):\n    if (x * x + {c}) % {m} == 0:\n        count += 1\n"
            "print(count)\n")
    return code, str(count)


def _number_inline(rng: random.Random) -> tuple[str, str]:
    a, b, n = rng.randint(2, 999), rng.randint(2, 999), rng.randint(5, 300)
    form = rng.randrange(3)
    if form == 0:
        return f"print({a} * {b} + {n})", str(a * b + n)
    if form == 1:
        return f"print(sum(range(1, {n} + 1)))", str(n * (n + 1) // 2)
    from math import gcd

    return f"import math; print(math.gcd({a}, {b}))", str(gcd(a, b))


def _letter_program(rng: random.Random, letters: list[str]) -> tuple[str, str]:
    values = rng.sample(range(1, 100), len(letters))
    scores = ", ".join(f"'{k}': {v}" for k, v in zip(letters, values))
    best = letters[values.index(max(values))]
    return f"scores = {{{scores}}}\nbest = max(scores, key=scores.get)\nprint(best)\n", best


def compute(box: SimSandbox, lay: Layout, rng: random.Random, program: tuple[str, str]) -> tuple[Plan, str]:
    """Run ``program`` (code, its output): written with the editor or a here-document, then run."""
    code, out = program
    path = posixpath.join(lay.working_dir, rng.choice(("solve.py", "solution.py", "compute.py", "main.py")))
    run = rng.choice((f"python3 {path}", f"cd {lay.working_dir} && python3 {posixpath.basename(path)}"))
    if rng.random() < 0.6:
        first = box.create(path, code)
    else:
        first = box.write(f"cat > {path} << 'EOF'\n{code}EOF", path, code)
    return [first, bash_step(run, out + "\n")], out


def compute_inline(rng: random.Random) -> tuple[Plan, str]:
    code, out = _number_inline(rng)
    return [bash_step(f"python3 -c '{code}'", out + "\n")], out


# -- looking around and reading -------------------------------------------------------------------
def explore(box: SimSandbox, lay: Layout, rng: random.Random) -> Step:
    r = rng.random()
    if r < 0.5:
        return box.ls(lay.working_dir)
    if r < 0.7:
        return box.ls(lay.working_dir, shown=".") if rng.random() < 0.5 else bash_step(
            "pwd && ls", f"{lay.working_dir}\n" + "".join(n + "\n" for n in box.entries(lay.working_dir)))
    if r < 0.85:
        return box.view_dir(lay.working_dir)
    return box.ls(lay.input_dir)


def list_docs(box: SimSandbox, lay: Layout, rng: random.Random) -> Step:
    docs = box.in_folder(lay.input_dir)
    r = rng.random()
    if r < 0.55:
        return box.ls(lay.input_dir)
    if r < 0.75:
        return box.view_dir(lay.input_dir)
    return box.wc(rng.choice(("-c", "-l")), docs, f"{lay.input_dir}/*")


def read_docs(box: SimSandbox, lay: Layout, task: Task, rng: random.Random) -> tuple[Plan, str]:
    """One or two reads of the documents (grep for a word of the question, head, editor view);
    returns the steps and some text they showed (for the answer)."""
    docs = box.in_folder(lay.input_dir)
    doc = rng.choice(docs)
    steps: Plan = []
    if rng.random() < 0.6:
        word = st.keywords(task.problem_statement, rng)[0]
        steps.append(box.grep(word, docs, f"{lay.input_dir}/*"))
    if not steps or rng.random() < 0.4:
        big = len(box.files[doc]) > 4000
        r = rng.random()
        if big or r < 0.4:
            steps.append(box.head(doc, rng.choice((10, 20, 30))) if rng.random() < 0.7
                         else box.head_bytes(doc, rng.choice((1000, 2000))))
        elif r < 0.7:
            steps.append(box.cat(doc))
        else:
            steps.append(box.view_file(doc, 1, rng.choice((20, 40))))
    return steps, steps[-1].observation


def phrase(text: str, rng: random.Random) -> str:
    """A few words from ``text`` (an observation), else random words: a plain-text answer."""
    words = [w for w in text.replace("\n", " ").split() if w.isalnum() and len(w) > 2
             and w not in ("Exit", "code", "STDOUT", "Execution", "output")]
    if len(words) >= 3 and rng.random() < 0.8:
        i = rng.randrange(len(words) - 2)
        return " ".join(words[i:i + rng.randint(1, 3)])
    return " ".join(rng.sample(st.WORDS, 2))


# -- the answer file ------------------------------------------------------------------------------
def write_answer(box: SimSandbox, lay: Layout, text: str, rng: random.Random, form: str) -> Step:
    """Write ``text`` to the answer file: ``form`` is boxed, letter or text (how the prompts ask)."""
    path = lay.answer_path
    r = rng.random()
    if r < 0.4:
        return box.create(path, text + "\n")
    if form == "boxed" and r < 0.8:
        return box.write(f"printf '%s\\n' '{text}' > {path}", path, text + "\n")
    if form != "boxed" and r < 0.8 and "'" not in text and "\n" not in text:
        return box.write(f"echo '{text}' > {path}" if form == "text" else f"echo {text} > {path}", path, text + "\n")
    return box.write(f"cat > {path} << 'EOF'\n{text}\nEOF", path, text + "\n")


def check_answer(box: SimSandbox, lay: Layout, rng: random.Random) -> Step:
    text = box.files[lay.answer_path]
    if rng.random() < 0.7:
        return bash_step(f"cat {lay.answer_path}", text)
    return box.wc("-w", [lay.answer_path], lay.answer_path)


def _maybe(rng: random.Random, p: float, make) -> Plan:
    return [make()] if rng.random() < p else []


# -- plans per domain -----------------------------------------------------------------------------
def boxed_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """math / physics: compute, write ``\\boxed{value}``."""
    steps = _maybe(rng, 0.3, lambda: explore(box, lay, rng))
    if rng.random() < 0.4:
        work, value = compute_inline(rng)
    else:
        work, value = compute(box, lay, rng, _number_program(rng, task.domain.startswith("physics")))
    if rng.random() < 0.15:
        value = st.boxed_value(rng)  # sometimes the answer is not what the computation printed
    steps += work + [write_answer(box, lay, f"\\boxed{{{value}}}", rng, "boxed")]
    return steps + _maybe(rng, 0.3, lambda: check_answer(box, lay, rng))


def choice_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random, letters: list[str]) -> Plan:
    """chem / biomed: score the options in a script (or not), write one letter."""
    steps = _maybe(rng, 0.25, lambda: explore(box, lay, rng))
    letter = rng.choice(letters)
    r = rng.random()
    if r < 0.6:
        work, letter = compute(box, lay, rng, _letter_program(rng, letters))
        steps += work
    elif r < 0.8:
        n = rng.randint(1, 999)
        letter = letters[n % len(letters)]
        steps.append(bash_step(f"python3 -c \"print('{''.join(letters)}'[{n} % {len(letters)}])\"", letter + "\n"))
    steps.append(write_answer(box, lay, letter, rng, "letter"))
    return steps + _maybe(rng, 0.3, lambda: check_answer(box, lay, rng))


def documents_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random, letters: list[str] | None) -> Plan:
    """long_context / instruct_pretrain with documents as files: list, read or grep, answer."""
    steps = [list_docs(box, lay, rng)] if rng.random() < 0.85 else []
    reads, seen = read_docs(box, lay, task, rng)
    steps += reads
    answer = rng.choice(letters) if letters else phrase(seen, rng)
    steps.append(write_answer(box, lay, answer, rng, "letter" if letters else "text"))
    return steps + _maybe(rng, 0.2, lambda: check_answer(box, lay, rng))


def inline_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random, letters: list[str] | None) -> Plan:
    """Documents in the prompt (the Table 3 ablation): maybe look around, answer from the prompt."""
    steps = _maybe(rng, 0.3, lambda: explore(box, lay, rng))
    if rng.random() < 0.3:
        work, _ = compute_inline(rng)
        steps += work
    docs = "\n".join(task.input_files.values())
    answer = rng.choice(letters) if letters else phrase(docs, rng)
    steps.append(write_answer(box, lay, answer, rng, "letter" if letters else "text"))
    return steps + _maybe(rng, 0.2, lambda: check_answer(box, lay, rng))


def text_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """instruct_follow: write a short text (directly, or from a script), maybe count its words."""
    steps = _maybe(rng, 0.2, lambda: explore(box, lay, rng))
    words = st.keywords(task.problem_statement, rng, rng.randint(1, 3))
    text = st.short_text(rng, words, rng.randint(1, 3))
    if rng.random() < 0.7:
        steps.append(write_answer(box, lay, text, rng, "text"))
    else:
        items = text.rstrip(".").split()
        code = (f"words = {items!r}\ntext = ' '.join(words) + '.'\nwith open('{lay.answer_path}', 'w') as f:\n"
                f"    f.write(text + '\\n')\nprint(len(words))\n")
        work, _ = compute(box, lay, rng, (code, str(len(items))))
        box.put(lay.answer_path, " ".join(items) + ".\n")
        steps += work
    return steps + _maybe(rng, 0.4, lambda: check_answer(box, lay, rng))


def general_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """General tasks (demo rows, ``lis run``): look in the input folder, compute, answer in the output folder."""
    steps = _maybe(rng, 0.7, lambda: box.ls(lay.input_dir))
    inputs = box.in_folder(lay.input_dir)
    if inputs:
        steps.append(box.cat(inputs[0]))
    target = re.search(re.escape(lay.output_dir) + r"/[\w.-]+?\.py", task.problem_statement)
    printed = re.search(r"prints '([^']*)'", task.problem_statement)
    if target:
        word = printed.group(1) if printed else "done"
        steps.append(box.create(target.group(0), f"print({word!r})\n"))
        steps.append(bash_step(f"python3 {target.group(0)}", word + "\n"))
        answer = "done"
    elif rng.random() < 0.6:
        work, answer = compute_inline(rng)
        steps += work
    else:
        answer = rng.choice((str(rng.randint(0, 999)), rng.choice(st.WORDS)))
    steps.append(write_answer(box, lay, answer, rng, "text"))
    return steps + (_maybe(rng, 0.2, lambda: check_answer(box, lay, rng)) if len(steps) < 5 else [])


def plan(task: Task, mode: str, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """The steps (before ``submit``) of a scripted episode of ``task`` in ``mode``."""
    kind = prompt_kind(task)
    letters = None
    if kind in ("chem", "biomed") or (kind == "instruct_pretrain" and task.qa_type != "free-form"):
        letters = choice_letters(task) if kind != "instruct_pretrain" else list("ABCD")
    if kind in ("math", "physics"):
        steps = boxed_plan(task, lay, box, rng)
    elif kind in ("chem", "biomed"):
        steps = choice_plan(task, lay, box, rng, letters or ["A"])
    elif kind in ("long_context", "instruct_pretrain"):
        make = inline_plan if mode == "sandbox_inline" else documents_plan
        steps = make(task, lay, box, rng, letters)
    elif kind == "instruct_follow":
        steps = text_plan(task, lay, box, rng)
    else:
        steps = general_plan(task, lay, box, rng)
    if len(steps) > MAX_STEPS or any(s.tool not in (BASH, EDITOR) for s in steps):
        raise ValueError(f"scripted plan of {task.domain} has {len(steps)} steps or a non-tool step")
    return steps
