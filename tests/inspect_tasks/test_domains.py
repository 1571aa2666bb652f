"""Every lis Inspect task (``lis/<domain>``, looked up through Inspect's registry as ``inspect eval`` does)
in both modes, with ``mockllm/model`` scripted to answer (tests/inspect_tasks/oracle.py), real
sandboxes, and lis's scorers; then what an Inspect user expects of a task: ids and metadata,
the sample order, ``--limit``, ``--epochs``, seeds, the judge role, one-line errors, and no
network at import time."""
from __future__ import annotations

import subprocess
import sys

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from lis.inspect.dataset import load_task_set
from lis.inspect.settings import load_params
from lis.tasks import write_tasks
from tests.conftest import ROOT, run
from tests.inspect_tasks.oracle import Oracle, judge

pytestmark = [pytest.mark.docker]

# task name → (lis domain, its modes, the scorer lis routes it to)
TASKS = {
    "math": ("math", ("sandbox", "vanilla"), "math_verify"),
    "physics": ("physics", ("sandbox", "vanilla"), "math_verify"),
    "chemistry": ("chem", ("sandbox", "vanilla"), "choice"),
    "biomed": ("biomed", ("sandbox", "vanilla"), "choice"),
    "long_context": ("long_context", ("sandbox", "vanilla", "sandbox_inline"), None),
    "instruct_follow": ("instruct_follow", ("sandbox", "vanilla"), "ifbench_loose"),
    "held_out_context": ("instruct_pretrain", ("sandbox", "vanilla", "sandbox_inline"), None),
}
CASES = [(name, mode) for name, (_, modes, _) in TASKS.items() for mode in modes]


def chem_tasks_file(folder) -> str:
    """ChemBench4K has no redistributable sample (data/samples/README.md): three rows written here in
    its raw format, turned into tasks by lis's own loader, stand in for it."""
    from lis.tasks.chem import from_raw

    rows = [{"question": "Which element has the symbol Na?", "A": "Nitrogen", "B": "Sodium", "C": "Neon",
             "D": "Nickel", "answer": "B"},
            {"question": "What is the molar mass of H2O in g/mol, to the nearest integer?", "A": "16", "B": "17",
             "C": "18", "D": "20", "answer": "C"},
            {"question": "Which of these is a noble gas?", "A": "Argon", "B": "Oxygen", "C": "Chlorine",
             "D": "Sulfur", "answer": "A"}]
    path = folder / "chem.jsonl"
    write_tasks(path, [from_raw(r, "Handwritten_Test", i) for i, r in enumerate(rows)])
    return str(path)


def _eval(name: str, tmp_path, oracle: Oracle, **task_args):
    logs = inspect_eval(f"lis/{name}", model=get_model("mockllm/model", custom_outputs=oracle, memoize=False),
                        task_args={"profile": "ci", **task_args}, log_dir=str(tmp_path / "logs"), display="none",
                        log_format="json")
    (log,) = logs
    assert log.status == "success", log.error
    return log


@pytest.mark.parametrize(("name", "mode"), CASES)
def test_every_task_runs_in_each_mode_and_is_scored_by_lis(name, mode, tmp_path):
    domain, _, scorer = TASKS[name]
    args = {"mode": mode}
    if name == "chemistry":
        args["tasks_file"] = chem_tasks_file(tmp_path)
    tasks = load_task_set(load_params(None, "ci"), domain, tasks_file=args.get("tasks_file"))
    log = _eval(name, tmp_path, Oracle(tasks), **args)
    assert log.eval.task == f"lis/{name}" and log.eval.task_args["mode"] == mode
    assert [s.id for s in log.samples] == [t.id for t in tasks]  # every task, in the set's order
    for sample, task in zip(log.samples, tasks):
        score = sample.scores["lis_scorer"]
        assert score.metadata["details"]["domain"] == domain.removesuffix("_mini")
        if domain != "instruct_follow":  # IFBench's details use "mode" for loose / strict
            assert score.metadata["details"]["mode"] == mode
        if scorer:
            assert score.metadata["scorer"] == scorer, score
        kept = sample.store["lis:trajectory"]
        if mode == "vanilla":
            assert kept["termination"] == "answered" and kept["turns"] == 1 and sample.metadata["domain"] == domain
            assert not [m for m in sample.messages if m.role == "tool"]
        else:
            assert kept["termination"] == "submitted" and kept["backend"] == "docker", kept
            observation = next(m for m in sample.messages if m.role == "tool").text
            assert observation.startswith("Exit code: 0\nExecution output of [execute_bash]:\n[STDOUT]\n")
            if task.input_files and mode == "sandbox":  # the documents are in place
                assert sorted(task.input_files)[0] in observation, observation
    if name not in ("instruct_follow",):  # the oracle's answers are right (IFBench: not attempted)
        metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
        assert metrics["accuracy"] == 1.0, metrics
        assert metrics["ci95_low"] == metrics["ci95_high"] == 1.0


def test_scores_are_lis_scores_wrong_answers_included(tmp_path):
    tasks = load_task_set(load_params(None, "ci"), "math")
    wrong = {tasks[0].id: "\\boxed{-1}"}
    log = _eval("math", tmp_path, Oracle(tasks, wrong), mode="sandbox")
    values = {s.id: s.scores["lis_scorer"].value for s in log.samples}
    assert values == {t.id: (0.0 if t.id in wrong else 1.0) for t in tasks}
    first = next(s for s in log.samples if s.id == tasks[0].id)
    assert first.scores["lis_scorer"].answer == "-1"  # what math-verify extracted from the answer file
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert metrics["accuracy"] == pytest.approx(0.5) and metrics["ci95_low"] == 0.0 and metrics["ci95_high"] == 1.0


def test_the_judge_role_scores_physics(tmp_path):
    tasks = load_task_set(load_params(None, "ci"), "physics")
    logs = inspect_eval("lis/physics", model=get_model("mockllm/model", custom_outputs=Oracle(tasks, {
        tasks[0].id: "\\boxed{0}"}), memoize=False),
        model_roles={"judge": get_model("mockllm/model", custom_outputs=judge("CORRECT"), memoize=False)},
        task_args={"profile": "ci", "mode": "vanilla"}, log_dir=str(tmp_path), display="none")
    (sample,) = logs[0].samples
    score = sample.scores["lis_scorer"]
    # a wrong boxed answer, judged CORRECT by the role model, 4 times: the judge scored, not the rule
    assert score.value == 1.0 and score.metadata["scorer"] == "judge:mockllm/model", score
    assert score.metadata["details"]["individual_verdicts"] == ["CORRECT"] * 4, score.metadata


def test_limit_epochs_and_seeds(tmp_path):
    tasks = load_task_set(load_params(None, "smoke"), "math")  # 3 tasks
    oracle = Oracle(tasks)
    logs = inspect_eval("lis/math", model=get_model("mockllm/model", custom_outputs=oracle, memoize=False),
                        task_args={"profile": "smoke", "mode": "vanilla"}, limit=2, epochs=2,
                        log_dir=str(tmp_path), display="none")
    log = logs[0]
    assert log.eval.config.epochs == 2 and log.eval.dataset.samples == 3
    assert sorted((s.id, s.epoch) for s in log.samples) == sorted((t.id, e) for t in tasks[:2] for e in (1, 2))
    from lis.runtime import episode_seed

    want = {episode_seed(0, t.id, e) for t in tasks[:2] for e in (0, 1)}  # eval.seed 0, repeat = epoch - 1
    assert set(oracle.seeds) == want and len(want) == 4


def test_a_bad_task_argument_is_one_line_without_traceback(tmp_path):
    r = run(["inspect", "eval", "lis/math", "--model", "mockllm/model", "-T", "mode=inline", "--log-dir", str(tmp_path)],
            check=False)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "error: lis/math: unknown mode 'inline'" in out and "Traceback" not in out, out
    r = run(["inspect", "eval", "lis/chemistry", "--model", "mockllm/model", "-T", "source=samples",
             "--log-dir", str(tmp_path)], check=False)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "no offline sample for chem" in out and "Traceback" not in out, out
    r = run(["inspect", "eval", "lis/math", "--model", "mockllm/model", "-T", "source=hub", "--log-dir", str(tmp_path)],
            check=False, env={"HF_HUB_OFFLINE": "1"})  # no hub here: the loader's one line, its hint as -T
    out = " ".join((r.stdout + r.stderr).split())
    assert r.returncode != 0 and "Couldn't reach" in out and "-T source=samples" in out and "Traceback" not in out, out


def test_importing_the_tasks_reads_nothing_and_opens_no_socket():
    code = ("import socket, time\n"
            "def refuse(*a, **k):\n    raise OSError('network at import time')\n"
            "socket.socket.connect = refuse\nsocket.create_connection = refuse\n"
            "t0 = time.perf_counter()\n"
            "from inspect_ai._util.entrypoints import ensure_entry_points\nensure_entry_points('lis')\n"
            "from inspect_ai._util.registry import registry_lookup\n"
            "names = ['math', 'physics', 'chemistry', 'biomed', 'long_context', 'instruct_follow', 'held_out_context']\n"
            "assert all(registry_lookup('task', 'lis/' + n) for n in names)\n"
            "print(round(time.perf_counter() - t0, 2))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
