"""The hub source: pinned revisions, one-line errors when the hub is unreachable, the paper's rows."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lis.errors import LisError
from lis.tasks import load_hub, load_samples
from lis.tasks.hub import collapse_repeats, paper_source, paper_tasks
from lis.tasks.hub_access import hub_file, hub_rows


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """HF_HUB_OFFLINE=1 in this process (tests/conftest.py sets it before huggingface_hub is imported)."""
    import huggingface_hub.constants as c

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)


@pytest.mark.parametrize("domain, dataset, name", [
    ("math", "paper", "daixuancheng/llm-in-sandbox-bench (config math)"),
    ("instruct_pretrain", "paper", "daixuancheng/llm-in-sandbox-rl (config instruct_pretrain)"),
    ("biomed", "original", "TsinghuaC3I/MedXpertQA (config Text)"),
    ("long_context", "original", "ArtificialAnalysis/AA-LCR"),
])
def test_offline_hub_is_a_one_line_error_naming_the_dataset(domain, dataset, name):
    with pytest.raises(LisError) as e:
        load_hub(domain, "0123abc", dataset=dataset)
    msg = str(e.value)
    assert name in msg and "revision 0123abc" in msg and "\n" not in msg
    assert "--source samples" in e.value.hint and "\n" not in e.value.one_line()


def test_a_revision_is_required():
    with pytest.raises(LisError, match="no revision given for the hub dataset"):
        hub_rows("daixuancheng/llm-in-sandbox-bench", "math", "test", "")
    with pytest.raises(LisError, match="no revision given"):
        hub_file("ArtificialAnalysis/AA-LCR", "AA-LCR_Dataset.csv", None)


def test_paper_sources():
    assert paper_source("biomed") == ("daixuancheng/llm-in-sandbox-bench", "biomed", "test")
    assert paper_source("instruct_pretrain") == ("daixuancheng/llm-in-sandbox-rl", "instruct_pretrain", "train")
    assert paper_source("instruct_pretrain", "math_mini") == ("daixuancheng/llm-in-sandbox-rl", "math_mini", "test")
    with pytest.raises(LisError, match="unknown config 'math'"):
        paper_source("instruct_pretrain", "math")
    with pytest.raises(LisError, match="no 'demo' config"):
        paper_source("demo")
    with pytest.raises(LisError, match="unknown hub dataset kind"):
        load_hub("math", "main", dataset="mirror")
    with pytest.raises(LisError, match="instruct_pretrain has no original dataset"):
        load_hub("instruct_pretrain", "main", dataset="original")


def _paper_rows(domain, repeats):
    rows = []
    for t in load_samples(domain):
        for r in range(repeats):
            d = t.to_dict()
            d.pop("meta")
            d["id"] = f"{t.id}_{r:02d}"
            d["input_files"] = json.dumps(d["input_files"])  # as stored on the hub
            rows.append(d)
    return rows


def test_repeats_of_the_paper_rows_collapse_to_unique_ids():
    tasks = paper_tasks(_paper_rows("math", 16), "hub:test", "math")
    assert len(tasks) == 30 and tasks[1].id == "aime25_1"
    assert tasks[1].meta["source_ids"] == [f"aime25_1_{r:02d}" for r in range(16)]
    docs = paper_tasks(_paper_rows("long_context", 4), "hub:test", "long_context")
    assert [t.id for t in docs] == ["aalcr_1", "aalcr_2", "aalcr_3"] and all(len(t.input_files) == 4 for t in docs)


def test_duplicate_ids_that_do_not_collapse_are_an_error():
    rows = _paper_rows("biomed", 1)
    rows[1]["id"] = rows[0]["id"]
    with pytest.raises(LisError) as e:
        paper_tasks(rows, "hub:test", "biomed")
    assert "duplicate task ids medxpertqa_Text-20_00" in str(e.value) and "\n" not in str(e.value)


def test_collapse_keeps_differing_repeats_apart():
    tasks = paper_tasks(_paper_rows("math", 2), "hub:test", "math")
    rows = _paper_rows("math", 2)
    rows[-1]["problem_statement"] += " (variant)"  # the last item differs: nothing may be renamed
    kept = paper_tasks(rows, "hub:test", "math")
    assert len(tasks) == 30 and len(kept) == 60
    assert [t.id for t in kept[:2]] == ["aime25_0_00", "aime25_0_01"] and "source_ids" not in kept[0].meta
    assert collapse_repeats([]) == []


def test_paper_rows_get_domain_meta():
    rows = _paper_rows("biomed", 1)
    for r in rows:
        r["domain"] = "biomed_mini"
    tasks = paper_tasks(rows, "hub:test", "instruct_pretrain")
    assert tasks[0].domain == "biomed_mini" and tasks[0].meta["choices"][-1] == "J"
    rows = _paper_rows("instruct_follow", 1)
    for r in rows:
        r["domain"] = "ifbench"
    tasks = paper_tasks(rows, "hub:test", "instruct_follow")
    assert tasks[0].domain == "instruct_follow" and tasks[0].meta["source_domain"] == "ifbench"


def test_rl_row_without_documents_is_an_error():
    row = {"id": "ip_1", "domain": "instruct_pretrain", "problem_statement": "Q?", "ground_truth": "A",
           "input_files": "{}", "qa_type": "multiple choice"}
    with pytest.raises(LisError, match="has no input_files"):
        paper_tasks([row], "hub:test", "instruct_pretrain")
    row["input_files"] = json.dumps({"doc_1.txt": "text"})
    (t,) = paper_tasks([row], "hub:test", "instruct_pretrain")
    assert t.input_files == {"doc_1.txt": "text"} and t.qa_type == "multiple choice"


@pytest.mark.slow
def test_no_network_for_real_is_a_one_line_error(tmp_path):
    """No HF_HUB_OFFLINE: the client really tries an endpoint that refuses connections, retries (5 times,
    LIS_BACKOFF_S=0.01: 0.01 s to 0.08 s apart, not 1 s to 8 s), gives up."""
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    env.update(HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"), LIS_BACKOFF_S="0.01")
    code = ("import sys\nfrom lis.errors import LisError\nfrom lis.tasks import load_hub\n"
            "try:\n    load_hub('biomed', 'main')\nexcept LisError as e:\n"
            "    print('error: ' + e.one_line(), file=sys.stderr); sys.exit(2)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 2, r.stderr[-2000:]
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: cannot load the hub dataset daixuancheng/llm-in-sandbox-bench (config biomed)")
    assert "--source samples" in last and "Traceback" not in r.stderr
    assert "Retrying in 0.01s [Retry 1/5]" in r.stderr and "Retrying in 0.08s [Retry 5/5]" in r.stderr, r.stderr[-2000:]


def test_lis_backoff_s_sets_the_hub_clients_waits(monkeypatch):
    """The client's own waits (1 s doubling to 8 s) unless LIS_BACKOFF_S names the first one."""
    import inspect

    from huggingface_hub.utils import http_backoff, http_stream_backoff

    from lis.tasks.hub_access import client_waits

    def waits():
        return [(f.__kwdefaults__["base_wait_time"], f.__kwdefaults__["max_wait_time"])
                for f in map(inspect.unwrap, (http_backoff, http_stream_backoff))]

    monkeypatch.setenv("LIS_BACKOFF_S", "0.5")
    client_waits()
    assert waits() == [(0.5, 4.0)] * 2
    monkeypatch.delenv("LIS_BACKOFF_S")
    client_waits()
    assert waits() == [(1, 8)] * 2


# -- unpinned and pinned revisions, the commit read (a real datasets cache, offline) ----------------------

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "89abcdef0123456789abcdef0123456789abcdef"


def datasets_cache(cache, repo: str, config: str, rows: list[dict], commit: str, work) -> None:
    """The datasets cache a machine with network leaves after reading ``repo`` (config ``config``) at
    ``commit``: written by the real library from a local folder in the hub repo's layout (README
    configs + a JSONL per config), then placed where a hub read keeps it,
    ``<namespace>___<name>/<config>/0.0.0/<commit>/``. Offline, ``load_dataset(repo, ...)`` reads it."""
    import shutil

    folder = work / repo.split("/")[-1]
    (folder / config).mkdir(parents=True)
    (folder / config / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "README.md").write_text(f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: test\n"
                                      f"    path: {config}/test.jsonl\n---\n", encoding="utf-8")
    code = ("import sys\nfrom datasets import load_dataset\n"
            "ds = load_dataset(sys.argv[1], sys.argv[2], split='test', cache_dir=sys.argv[3])\n"
            "print(ds.cache_files[0]['filename'])\n")
    r = subprocess.run([sys.executable, "-c", code, str(folder), config, str(work / "build")], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    built = os.path.dirname(r.stdout.strip().splitlines()[-1])
    owner, name = repo.split("/")
    shutil.copytree(built, cache / f"{owner}___{name}" / config / "0.0.0" / commit)


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory):
    """HF_DATASETS_CACHE holding the paper's math config at COMMIT and a mirror's at OTHER."""
    work = tmp_path_factory.mktemp("hubcache")
    cache = work / "datasets"
    datasets_cache(cache, "daixuancheng/llm-in-sandbox-bench", "math", _paper_rows("math", 2), COMMIT, work / "a")
    datasets_cache(cache, "someone/bench-mirror", "math", _paper_rows("math", 1), OTHER, work / "b")
    return cache


def lis_tasks(hub_cache, tmp_path, *args, cwd=None):
    from tests.conftest import ROOT, run

    out = tmp_path / "math.jsonl"
    env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(hub_cache), "HF_HOME": str(tmp_path / "hf")}
    r = run(["lis", "tasks", "--domain", "math", "--out", str(out), *args], cwd=cwd or ROOT, check=False, env=env)
    manifest = tmp_path / "math.manifest.json"
    return r, (json.loads(manifest.read_text()) if r.returncode == 0 else None)


def test_the_full_profile_reads_an_unpinned_dataset_with_a_warning_and_records_the_commit(hub_cache, tmp_path):
    r, m = lis_tasks(hub_cache, tmp_path, "--profile", "full")
    assert r.returncode == 0, r.stderr[-2000:]
    warnings = [line for line in r.stderr.splitlines() if "WARNING" in line and "lis." in line]
    assert len(warnings) == 1, r.stderr
    assert "daixuancheng/llm-in-sandbox-bench" in warnings[0] and "resolved commit is recorded" in warnings[0]
    assert (m["revision"], m["pinned"], m["resolved_commit"]) == (None, False, COMMIT)
    assert m["commits"] == {"daixuancheng/llm-in-sandbox-bench": COMMIT} and m["count"] == 30
    first = json.loads((tmp_path / "math.jsonl").read_text().splitlines()[0])
    assert first["meta"]["source"] == f"hub:daixuancheng/llm-in-sandbox-bench/math@{COMMIT}"


def test_require_pinned_keeps_the_refusal(hub_cache, tmp_path):
    r, _ = lis_tasks(hub_cache, tmp_path, "--profile", "full", "--require-pinned")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(
        "error: no revision pinned for the hub dataset daixuancheng/llm-in-sandbox-bench (math)")
    assert not (tmp_path / "math.jsonl").exists()


def test_a_pinned_commit_is_read_without_a_warning(hub_cache, tmp_path):
    r, m = lis_tasks(hub_cache, tmp_path, "--source", "hub", "--revision", COMMIT, "--require-pinned")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "no revision pinned" not in r.stderr and "WARNING lis." not in r.stderr
    assert (m["revision"], m["pinned"], m["resolved_commit"]) == (COMMIT, True, COMMIT)


def test_a_pinned_commit_the_cache_does_not_hold_is_an_error(hub_cache, tmp_path):
    """Offline, datasets serves the latest cached copy whatever revision is asked: that is caught."""
    r, _ = lis_tasks(hub_cache, tmp_path, "--source", "hub", "--revision", OTHER)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert f"was read at commit {COMMIT}, not at the pinned revision {OTHER}" in last
    assert not (tmp_path / "math.jsonl").exists()


def test_commits_of_cache_paths():
    from lis.tasks.hub_access import file_commit, recording_commits

    assert file_commit(Path(f"/c/datasets--a--b/snapshots/{COMMIT}/sub/f.csv")) == COMMIT
    assert file_commit(Path("/c/somewhere/f.csv")) is None
    with recording_commits() as outer, recording_commits() as inner:
        assert outer is inner


def test_bench_dataset_names_the_papers_benchmark_repo(hub_cache, repo_copy, tmp_path):
    """tasks.bench_dataset (params) and --bench-dataset choose the hub repo of the paper's benchmark."""
    import yaml

    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["tasks"]["bench_dataset"] = "someone/bench-mirror"
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    r, m = lis_tasks(hub_cache, tmp_path, "--profile", "full", "--revision", OTHER, cwd=repo_copy)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (m["bench_dataset"], m["resolved_commit"], m["count"]) == ("someone/bench-mirror", OTHER, 30)
    assert m["commits"] == {"someone/bench-mirror": OTHER}
    r, m = lis_tasks(hub_cache, tmp_path, "--profile", "full", "--bench-dataset", "daixuancheng/llm-in-sandbox-bench",
                     cwd=repo_copy)  # the flag wins over params
    assert r.returncode == 0 and m["commits"] == {"daixuancheng/llm-in-sandbox-bench": COMMIT}, r.stderr[-2000:]
    with pytest.raises(LisError, match=r"hub dataset nobody/none \(config math\) at revision main"):
        load_hub("math", None, bench_dataset="nobody/none")
