"""Shared fixtures. Tests use the real Docker engine, real Snakemake and DVC; nothing is mocked."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
# Under pytest-xdist (`make test-fast` runs `pytest -n 2`) each worker gets its share of the cores for torch's
# and OpenMP's threads, and so do the `lis` processes its tests start: two workers on 2 cores with torch's
# default of one thread per core each run 4 threads on 2 cores (tests/models under `-n 2`: 83 s so, 74 s with
# one thread each; one A/B). Set before any test module imports torch; an OMP_NUM_THREADS already in the
# environment is kept. Serial runs (`make test`) are untouched.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, len(os.sched_getaffinity(0))
                                                     // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(cmd, cwd=ROOT, check=True, env=None, timeout=600) -> subprocess.CompletedProcess:
    """Run a command with the venv's bin first on PATH; return the completed process."""
    full_env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {})}
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=full_env, timeout=timeout,
                       shell=isinstance(cmd, str))
    if check and r.returncode != 0:
        raise AssertionError(f"{cmd} exited {r.returncode}\nstdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}")
    return r


def lis(args, cwd=ROOT, check=True, env=None) -> subprocess.CompletedProcess:
    """Run ``lis <args>`` in this process, through the CLI's error boundary (``lis.cli.run_cli``, what
    the ``lis`` program runs after installing its signal handlers), and return it as a completed process:
    the same exit status and the same lines on stdout and stderr, without starting an interpreter and
    importing the command's modules again (~0.8 s of CPU per ``lis`` process, half of `make test-fast`'s
    CPU when every command was its own process). ``env``: set for the call, then restored, with the
    venv's bin first on PATH as :func:`run` has it. The ``lis`` program itself (its entry point, its
    signals, a second process) is tested through :func:`run` (tests/test_cli.py, tests/cli/test_signals.py)."""
    import contextlib
    import io
    import logging

    from lis.cli import run_cli

    args = [str(a) for a in args]
    if args[:1] == ["lis"]:
        args = args[1:]
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    root_log = logging.getLogger()
    saved_log = (list(root_log.handlers), root_log.level)
    threads = (sys.modules["torch"].get_num_threads() if "torch" in sys.modules  # torch's default when not yet imported:
               else int(os.environ.get("OMP_NUM_THREADS") or len(os.sched_getaffinity(0))))
    os.environ.update({"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(env or {})})
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_cli(args)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for handler in list(root_log.handlers):  # the command's own (its log file, its stream): closed; pytest's back
            if handler not in saved_log[0]:
                handler.close()
        root_log.handlers[:] = saved_log[0]
        root_log.setLevel(saved_log[1])
        if "torch" in sys.modules:  # a command's --threads is its own: the next test gets the worker's share back
            torch = sys.modules["torch"]
            torch.set_num_threads(threads)
    r = subprocess.CompletedProcess(["lis", *args], code, out.getvalue(), err.getvalue())
    if check and code != 0:
        raise AssertionError(f"lis {args} exited {code}\nstdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}")
    return r


# -- markers for the fast loop (`make test-fast` deselects them; `make test` runs everything) ----------
# A module says what it runs in its own `pytestmark` (a single test: a decorator), so that renaming or
# moving a test keeps its tier. One rule is kept here because it cannot go stale: a test needs Docker
# (or training) when it uses a fixture that connects to the engine (or trains the tiny model); the
# closure of its fixtures is searched, so base_config, tiny_dir, sb, ... count. tests/test_markers.py
# checks that these fixtures exist and that every module under tests/train/ is marked training.
DOCKER_FIXTURES = {"docker_client", "image_tag"}
TRAINING_FIXTURES = {"tiny_base_dir", "tiny_dir"}  # build and train a tiny model (the agent: ~11 min once)


def pytest_itemcollected(item):
    # per item as it is collected: before any collection_modifyitems hook, pytest-xdist's reading of the
    # xdist_group marks among them
    names = set(getattr(item, "fixturenames", ()))
    if names & DOCKER_FIXTURES:
        item.add_marker("docker")
    if names & TRAINING_FIXTURES:
        item.add_marker("training")
    item.add_marker(pytest.mark.xdist_group(worker_group(item)))


# -- two workers: `make test` runs `pytest -n 2 --dist loadgroup` ----------------------------------------------
# A group is one unit of work for one worker, its tests in order. Every test that trains or runs the pipeline
# (marker training) is in one group, HEAVY, so that two of them never share the 2 cores, and the session
# fixtures they share (the tiny agent, the pipeline run) are made once, by that worker. The Inspect tests are
# one group: their leak checks count every sandbox of Inspect's runs on the machine. Every other test is
# grouped with its module: a module's fixtures and run ids stay in one process, as they were written for.
# pytest 9 and pytest-xdist 3.8 need tests/xdist_groups.py for --dist loadgroup to group at all.
HEAVY = "heavy"
INSPECT = "inspect"
VLLM = "vllm"  # last: it waits for the tiny agent, which the heavy group builds first


def pytest_configure(config):
    # the mark this file adds, registered also where pytest-xdist is not loaded (`-p no:xdist`)
    config.addinivalue_line("markers", "xdist_group(name): tests/conftest.py's worker group of a test")
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from tests.xdist_groups import controller_setup

        controller_setup()


def pytest_unconfigure(config):
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from tests.xdist_groups import controller_teardown

        controller_teardown()


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):
        from tests.xdist_groups import record

        record(config.workerinput["workerid"], items)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from tests.xdist_groups import GroupScheduling

    sched = GroupScheduling(config, log)
    sched.first = HEAVY  # the longest unit starts at once
    sched.last = VLLM
    return sched


def worker_group(item) -> str:
    if item.nodeid.startswith("tests/vllm/"):
        return VLLM  # one vLLM server for the whole group (tests/vllm/conftest.py), though some tests train
    if item.get_closest_marker("training") is not None:
        return HEAVY
    module = item.nodeid.split("::")[0]
    if module.startswith(("tests/inspect_provider/", "tests/inspect_tasks/")):
        return INSPECT
    return module


def params_project(tmp_path: Path, section: str, values: dict) -> Path:
    """A folder with the repository's params (section ``section`` updated with ``values``; profile full, whose
    overlay leaves it as it is), schema and overlays: a project a stage's ``resolve`` and command can read."""
    import yaml

    root = tmp_path / "proj"
    (root / "workflow").mkdir(parents=True)
    for sub in ("schemas", "params"):
        shutil.copytree(ROOT / "workflow" / sub, root / "workflow" / sub)
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["profile"] = "full"
    data[section].update(values)
    (root / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def one_line_error(r, *needles):
    """A command refused its input the CLI's way: exit 2, stderr one `error:` line (no traceback) naming each needle."""
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def docker_client():
    """The real engine; set up by `make test` (scripts/setup.sh). Fails, never skips, when absent."""
    from lis.sandbox.engine import connect

    return connect()


@pytest.fixture(scope="session")
def params():
    from lis.params import load

    return load(ROOT)


@pytest.fixture(scope="session")
def image_tag(docker_client, params) -> str:
    """The sandbox image of the current params (built by `make test`'s set-up if missing)."""
    from lis.sandbox.image import ensure_image

    return ensure_image(params.section("image"), params.root)["tag"]


def copy_repo(dest: Path) -> Path:
    """A fresh git + DVC checkout of the tracked files (plus uncommitted edits) at ``dest``."""
    files = run(["git", "ls-files", "-co", "--exclude-standard"]).stdout.split()
    for f in files:
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)
    run(["git", "init", "-q"], cwd=dest)
    run(["git", "add", "-A"], cwd=dest)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"], cwd=dest)
    return dest


def small_matrix(repo: Path, external: Path | None = None) -> None:
    """Shrink a repository copy's pipeline to what the pipeline tests need, on the ci profile.

    ``external``: the copy evaluates that local model folder as an external model (no training
    stage runs: the re-run rules are tested without re-training on every code edit); None: the
    trained matrix, GRPO on the files variant and the LLM-RL baseline (every training stage runs).
    Both keep math and long context (with the documents-in-prompt ablation)."""
    import yaml

    path = repo / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["profile"] = "ci"
    if external is not None:
        data["models"]["ext"] = {"backend": "local", "path": str(external),
                                 "sampling": {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "max_tokens": 192}}
        data["jobs"] = {"models": ["ext"], "external": ["ext"], "domains": ["math", "long_context"],
                        "long_context_ablation": ["ext"], "grpo_data": [], "replicates": []}
        data["throughput"]["model"] = "ext"
        data["behaviour"]["rl_pairs"] = []
    else:
        data["jobs"] = {"models": ["grpo-files", "llm-rl"], "external": [], "domains": ["math", "long_context"],
                        "long_context_ablation": ["grpo-files"], "grpo_data": ["files"], "replicates": []}
        data["behaviour"]["rl_pairs"] = [{"before": "llm-rl", "after": "grpo-files", "label": "GRPO vs LLM-RL"}]
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture
def proj(tmp_path) -> Path:
    """A project folder with the repository's params, overlays and schema (for params tests)."""
    shutil.copy2(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "workflow/params", tmp_path / "workflow/params")
    shutil.copytree(ROOT / "workflow/schemas", tmp_path / "workflow/schemas")
    return tmp_path


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    return copy_repo(tmp_path / "repo")


# -- the tiny agent (shared by the model, train and eval tests) ---------------------------------
@pytest.fixture(scope="session")
def tiny_dir(image_tag) -> Path:
    """The tiny agent of the smoke recipe (built once per machine; see tests/serving.py)."""
    from tests.serving import tiny_model_dir

    return tiny_model_dir()


@pytest.fixture(scope="session")
def tiny_manifest(tiny_dir) -> dict:
    return json.loads((tiny_dir / "manifest.json").read_text())


@pytest.fixture(scope="session")
def tiny_model(tiny_dir):
    """The tiny agent loaded through the local transformers backend (shared across tests)."""
    from lis.models.local_hf import LocalHFModel

    return LocalHFModel.load(tiny_dir, name="tiny", device="cpu", seed=0)


@pytest.fixture
def prompt() -> list[dict]:
    """The first turn of a real sandbox episode: the math sample's system and user prompts, with the
    ``Steps Remaining`` line the agent loop adds (the smoke profile's 6 turns)."""
    from lis.prompts import render_prompts
    from lis.tasks import load_samples

    messages = render_prompts(load_samples("math")[0], "sandbox")
    messages[-1]["content"] += "\nSteps Remaining: 6"
    return messages


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Where the suite's time went: minutes per test folder (set-up, call and teardown), slowest first.
    Under pytest-xdist only the controller prints it, from every worker's reports: the minutes are then
    the workers' time added up, more than the wall time."""
    from collections import defaultdict

    if hasattr(config, "workerinput"):
        return

    spent: dict[str, float] = defaultdict(float)
    count: dict[str, set] = defaultdict(set)
    for reports in terminalreporter.stats.values():
        for rep in reports:
            nodeid, duration = getattr(rep, "nodeid", ""), getattr(rep, "duration", None)
            if not nodeid or duration is None:
                continue
            parts = nodeid.split("::")[0].split("/")
            folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
            spent[folder] += duration
            count[folder].add(nodeid)
    if spent:
        workers = getattr(config.option, "numprocesses", None)
        terminalreporter.write_sep("=", "time per test folder" + (f" (added over {workers} workers)" if workers else ""))
        for folder, s in sorted(spent.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(f"{s / 60:7.1f} min  {len(count[folder]):5d} tests  {folder}")
