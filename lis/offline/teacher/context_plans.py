"""The scripted teacher's tool calls for the RL context tasks (lis.context_tasks): solved episodes.

Unlike the benchmark plans (:mod:`lis.offline.teacher.plans`, the form of an episode with random
answers), these plans answer correctly: the teacher knows the ground truth and the facts the
answer needs (``meta["needs"]``, ``meta["evidence"]``), but every command it issues is one that
would have found them — list the documents, ``grep`` the attribute's keyword or the entity,
read the file (``cat``, editor ``view``), compute with ``python3 -c`` or a small script, write
the answer file — and the values in its computations are the ones those commands showed.

* files variant (mode ``sandbox``): list, find and read, compute when needed, write, (check); half
  of the single-fact lookups write the answer with a pipeline over the document (``grep -i KEYWORD
  FILE | grep -oE '[0-9]+' > /testbed/answer.txt``, or ``sed`` cutting the value out) instead of
  typing it: two ways to the same answer, of which GRPO can learn to prefer the one that works;
* prompt variant (mode ``sandbox_inline``, documents in the prompt): compute when needed, write;
* math variant (domain ``math``): compute with Python, write ``\\boxed{answer}``.

A plan is at most five tool calls before ``submit`` (the smoke profile's six turns). The
surface varies with the seeded ``rng``: grep or cat or the editor, echo or printf or the
editor, inline Python or a script. Every step carries the observation the real tool prints
(:mod:`lis.offline.teacher.sim_sandbox`); the tests replay plans in a real sandbox.
"""
from __future__ import annotations

import posixpath
import random
import re

from lis.prompts.layout import Layout
from lis.tasks.schema import Task
from lis.offline.teacher.plans import MAX_STEPS, Plan, check_answer, write_answer
from lis.offline.teacher.sim_sandbox import SimSandbox, Step, bash_step
from lis.offline.teacher.text import keywords


def _eval(expr: str) -> str:
    """What ``python3 -c 'print(EXPR)'`` prints for the generator's expressions (without its newline)."""
    return str(eval(expr, {"__builtins__": {"round": round, "sum": sum, "max": max, "min": min,  # noqa: S307
                                            "range": range}}))


def _docs(box: SimSandbox, lay: Layout) -> list[str]:
    return box.in_folder(lay.input_dir)


def _path(lay: Layout, name: str) -> str:
    return posixpath.join(lay.input_dir, name)


# -- reading --------------------------------------------------------------------------------------
def _read_file(box: SimSandbox, path: str, rng: random.Random, line: int | None = None,
               keyword: str | None = None) -> Step:
    """One look at one file: grep the keyword in it, cat it, or view it (a range around ``line``)."""
    text = box.files[path]
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    r = rng.random()
    if keyword and r < 0.4:
        return box.grep(keyword, [path], path)
    if n_lines <= 60 and len(text) < 6000 and r < 0.75:
        return box.cat(path)
    if line is None:
        return box.view_file(path, 1, min(n_lines, 40))
    first = max(1, line - rng.randint(0, 5))
    return box.view_file(path, first, min(n_lines, line + rng.randint(1, 10)))


def read_facts(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """Steps that show every fact ``meta["needs"]`` lists: one file read directly (it is named
    after the entity, or found by grepping the entity's name first), else a ``grep`` of each
    attribute's keyword across the documents, then a read of any file still needed."""
    needs = task.meta.get("needs") or {}
    facts = needs.get("inputs") or []
    where = {e["text"]: (e["file"], e["line"]) for e in task.meta.get("evidence", [])}
    sentences = [f["sentence"] for f in facts]
    docs = _docs(box, lay)
    files = list(dict.fromkeys(_path(lay, where[s][0]) for s in sentences if s in where))
    keywords = list(dict.fromkeys(f["keyword"] for f in facts))
    named = task.meta.get("knobs", {}).get("file_names") == "entity"
    if len(files) == 1 and (len(keywords) > 1 or (named and rng.random() < 0.6) or rng.random() < 0.3):
        steps: Plan = []
        if not named:  # find the file by the entity's name first
            steps.append(box.grep(facts[0]["entity"], docs, f"{lay.input_dir}/*"))
        line = where[sentences[0]][1] if sentences[0] in where else None
        step = _read_file(box, files[0], rng, line, keywords[0] if len(keywords) == 1 else None)
        return steps + [step if all(s in step.observation for s in sentences) else box.cat(files[0])]
    steps = []
    left = list(sentences)
    for kw in sorted(keywords, key=lambda k: -sum(f["keyword"] == k for f in facts)):
        step = box.grep(kw, docs, f"{lay.input_dir}/*")
        if any(s in step.observation for s in left):
            steps.append(step)
            left = [s for s in left if s not in step.observation]
        if not left:
            return steps
    for f in dict.fromkeys(_path(lay, where[s][0]) for s in left if s in where):
        steps.append(box.cat(f))
    return steps


def find_answer(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """For tasks without ``needs`` (seed rows, the paper's set): grep a word of the question in
    the documents, then read the file that holds the answer (when one holds it verbatim)."""
    docs = _docs(box, lay)
    golds = _answer_texts(task)
    hit = next(((p, i, line) for g in golds if g for p in docs
                for i, line in enumerate(box.files[p].split("\n"), 1) if g.lower() in line.lower()), None)
    steps: Plan = []
    question = _question(task.problem_statement)
    words = [w for w in keywords(question, rng, 6) if len(w) >= 5]
    if hit:
        inline = [w for w in words if w in hit[2].lower()]
        if inline:
            step = box.grep(inline[0], docs, f"{lay.input_dir}/*")
            if hit[2][:150] in step.observation:
                return [step]
        if words and rng.random() < 0.5:
            steps.append(box.grep(words[0], docs, f"{lay.input_dir}/*"))
        return steps + [_read_file(box, hit[0], rng, hit[1])]
    if words:
        steps.append(box.grep(words[0], docs, f"{lay.input_dir}/*"))
    biggest = max(docs, key=lambda p: len(box.files[p]))
    return steps + [box.head(biggest, 40) if rng.random() < 0.5 else box.view_file(biggest, 1, 40)]


def _answer_texts(task: Task) -> list[str]:
    """The texts that answer ``task``: the free-form gold, or the correct options' texts."""
    if task.qa_type != "multiple choice":
        return [task.ground_truth.strip()]
    options = dict(re.findall(r"(?m)^([A-Z])\. (.+)$", _question(task.problem_statement)))
    return [options[x.strip()] for x in task.ground_truth.split(",") if x.strip() in options]


def _question(statement: str) -> str:
    """The asked question of a statement: its last paragraph (in-prompt examples come before it,
    separated by blank lines; a question and its option lines are one paragraph)."""
    return statement.strip().rsplit("\n\n", 1)[-1]


# -- computing ------------------------------------------------------------------------------------
def compute_step(box: SimSandbox, lay: Layout, expr: str, rng: random.Random, script: bool | None = None
                 ) -> tuple[Plan, str]:
    """``expr`` evaluated in the sandbox: ``python3 -c 'print(EXPR)'`` (one step) or a script
    written with the editor or a here-document, then run (two steps; ``script`` None: drawn);
    returns the steps and what they print."""
    out = _eval(expr)
    if script is None:
        script = "'" in expr or rng.random() < 0.4
    if not script:
        return [bash_step(f"python3 -c 'print({expr})'", out + "\n")], out
    code = f"result = {expr}\nprint(result)\n"
    path = posixpath.join(lay.working_dir, rng.choice(("solve.py", "compute.py", "calc.py")))
    if rng.random() < 0.6:
        first = box.create(path, code)
    else:
        first = box.write(f"cat > {path} << 'EOF'\n{code}EOF", path, code)
    run = rng.choice((f"python3 {path}", f"cd {lay.working_dir} && python3 {posixpath.basename(path)}"))
    return [first, bash_step(run, out + "\n")], out


# -- writing the answer with the tools ------------------------------------------------------------------
EXTRACT_SHARE = 0.5      # share of single-fact lookups whose answer the teacher writes by a pipeline


def _pipelines(keyword: str, target: str) -> list[tuple[str, str]]:
    """Pipelines that print the value of the lines of ``target`` (a file or a glob) that contain
    ``keyword``, with the name of the rule :func:`_extract` computes their output by."""
    kw = keyword.replace("'", "")
    grep = f"grep -i -h -m 1 '{kw}' {target}"
    return [(f"{grep} | grep -oE '[0-9]+([.][0-9]+)?'", "numbers"),
            (f"{grep} | sed -E 's/.* is (.*)[.]$/\\1/'", "after_is"),
            (f"{grep} | sed -E 's/^[^:]*: *//'", "after_colon")]


def _extract(kind: str, lines: list[str]) -> list[str]:
    """What a pipeline of :func:`_pipelines` prints for the matching ``lines`` (one per file, -m 1)."""
    out: list[str] = []
    for line in lines:
        if kind == "numbers":
            out += re.findall(r"[0-9]+(?:[.][0-9]+)?", line)
        elif kind == "after_is":
            out.append(re.sub(r".* is (.*)[.]$", r"\1", line))
        else:
            out.append(re.sub(r"^[^:]*: *", "", line))
    return out


def extract_answer(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Step | None:
    """A single-fact lookup's answer written by a pipeline over the documents (grep the keyword's
    line, cut the value out with grep -o or sed) instead of typed from what was read: nothing to
    copy by hand, which is what a small model gets wrong. Over every document (``documents/*``)
    when that prints exactly the gold, else over the file that holds the fact; None when no
    pipeline prints exactly the gold."""
    needs = task.meta.get("needs") or {}
    facts = needs.get("inputs") or []
    if needs.get("expr") or len(facts) != 1 or task.qa_type == "multiple choice":
        return None
    keyword, gold = facts[0]["keyword"], task.ground_truth.strip()
    where = {e["text"]: e["file"] for e in task.meta.get("evidence", [])}
    docs = _docs(box, lay)
    targets = [(f"{lay.input_dir}/*", docs)]
    if where.get(facts[0]["sentence"]):
        path = _path(lay, where[facts[0]["sentence"]])
        targets.append((path, [path]))
    for target, files in targets:
        lines = []
        for f in files:
            hit = [ln for ln in box.files.get(f, "").split("\n") if keyword.lower() in ln.lower()]
            lines += hit[:1]
        for command, kind in _pipelines(keyword, target):
            if lines and _extract(kind, lines) == [gold]:
                return box.write(f"{command} > {lay.answer_path}", lay.answer_path, gold + "\n")
    return None


# -- plans ----------------------------------------------------------------------------------------
def files_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """Documents as files: (list them,) find and read the facts, (compute,) write the answer, (check)."""
    read = read_facts(task, lay, box, rng) if task.meta.get("needs") else find_answer(task, lay, box, rng)
    shown = "\n".join(step.observation for step in read)
    missing = [f["sentence"] for f in (task.meta.get("needs") or {}).get("inputs", []) if f["sentence"] not in shown]
    if missing:
        raise ValueError(f"context plan of {task.id} reads no line stating {missing[0]!r}")
    expr = (task.meta.get("needs") or {}).get("expr")
    room = MAX_STEPS - 1 - len(read)  # steps left besides the answer
    work: Plan = []
    if expr:
        work, out = compute_step(box, lay, expr, rng, script=False if room < 2 else None)
        _agree(task, out)
        room -= len(work)
    steps: Plan = []
    if room > 0 and rng.random() < 0.7:
        steps.append(box.ls(lay.input_dir) if rng.random() < 0.75 else box.view_dir(lay.input_dir))
        room -= 1
    steps += read + work
    extracted = extract_answer(task, lay, box, rng) if rng.random() < EXTRACT_SHARE else None
    steps.append(extracted or write_answer(box, lay, task.ground_truth, rng, "letter" if task.qa_type ==
                                           "multiple choice" else "text"))
    if room > 0 and rng.random() < 0.25:
        steps.append(check_answer(box, lay, rng))
    return steps


def inline_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """Documents in the prompt: compute when needed, write the answer, (check)."""
    steps: Plan = []
    expr = (task.meta.get("needs") or {}).get("expr")
    if expr:
        work, out = compute_step(box, lay, expr, rng)
        _agree(task, out)
        steps += work
    steps.append(write_answer(box, lay, task.ground_truth, rng, "letter" if task.qa_type == "multiple choice"
                              else "text"))
    if rng.random() < 0.3:
        steps.append(check_answer(box, lay, rng))
    return steps


def math_plan(task: Task, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """Math problems: compute with Python, write ``\\boxed{answer}``, (check)."""
    expr = (task.meta.get("needs") or {}).get("expr")
    steps: Plan = []
    if expr:
        work, out = compute_step(box, lay, expr, rng)
        if out != task.ground_truth:
            raise ValueError(f"math task {task.id}: the computation prints {out!r}, the gold is {task.ground_truth!r}")
        steps += work
    steps.append(write_answer(box, lay, f"\\boxed{{{task.ground_truth}}}", rng, "boxed"))
    if rng.random() < 0.3:
        steps.append(check_answer(box, lay, rng))
    return steps


def _agree(task: Task, out: str) -> None:
    """The computation must print the gold (or, for a single choice, the text of the correct option)."""
    if out != task.ground_truth and out not in _answer_texts(task):
        raise ValueError(f"context task {task.id}: the computation prints {out!r}, the gold is {task.ground_truth!r}")


def plan(task: Task, mode: str, lay: Layout, box: SimSandbox, rng: random.Random) -> Plan:
    """The steps (before ``submit``) of the teacher's episode of context task ``task`` in ``mode``
    (the planner :func:`lis.offline.teacher.episodes.planned_turns` takes)."""
    if task.domain.startswith("math"):
        steps = math_plan(task, lay, box, rng)
    elif mode == "sandbox_inline":
        steps = inline_plan(task, lay, box, rng)
    else:
        steps = files_plan(task, lay, box, rng)
    if len(steps) > MAX_STEPS:
        raise ValueError(f"context plan of {task.id} has {len(steps)} steps (at most {MAX_STEPS})")
    return steps
