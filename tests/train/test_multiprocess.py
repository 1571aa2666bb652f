"""Training on more than one process, for real on the CPU (gloo): the SFT stage under Lightning DDP
(2 ranks), and GRPO under ``accelerate launch --num_processes 2`` (each rank its own rollouts and
sandboxes; rank 0 alone writes the outputs)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import BIN, ROOT, run

pytestmark = [pytest.mark.training]


# -- SFT: Lightning DDP over 2 processes -----------------------------------------------------------------
def _sft_project(tmp: Path) -> Path:
    """A folder with the project's params (the ci profile, SFT on 2 DDP processes) and trajectory
    records (the simulated teacher episodes: no sandbox needed to train)."""
    from lis.offline.teacher.episodes import episodes

    proj = tmp / "proj"
    (proj / "workflow").mkdir(parents=True)
    shutil.copy(ROOT / "params.yaml", proj / "params.yaml")
    shutil.copytree(ROOT / "workflow/schemas", proj / "workflow/schemas")
    shutil.copytree(ROOT / "workflow/params", proj / "workflow/params")
    ci = proj / "workflow/params/ci.yaml"
    data = yaml.safe_load(ci.read_text())
    data["sft"].update(steps=8, batch_size=4, checkpoint_every=4, held_out=0.1, seed=3, devices=2, strategy="ddp",
                       accelerator="cpu")
    ci.write_text(yaml.safe_dump(data, sort_keys=False))
    rows = [{"episode_id": f"e{i}", "messages": ep.messages, "mode": ep.mode, "domain": ep.domain,
             "teacher": {"success": True, "no_loss_turns": []}} for i, ep in enumerate(episodes(48, 11))]
    (proj / "trajectories.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return proj


def _sft(proj: Path, base: Path, out: str) -> tuple[dict, str]:
    r = run(["lis", "train", "sft", "--base", str(base), "--data", "trajectories.jsonl", "--out", out,
             "--params", "params.yaml", "--profile", "ci"], cwd=proj, env={"PYTHONPATH": str(ROOT)}, timeout=600)
    return json.loads(r.stdout), r.stderr


@pytest.mark.slow
def test_sft_trains_on_two_ddp_processes(tiny_base_dir, tmp_path):
    """`lis train sft` with sft.devices 2, strategy ddp on the CPU: both ranks train every step on their
    own batches, the loss falls, rank 0 alone writes the model (it loads in the local backend), and
    the same seed gives the same weights."""
    from lis.models import Sampling
    from lis.models.local_hf import LocalHFModel

    proj = _sft_project(tmp_path)
    printed, err = _sft(proj, tiny_base_dir, "models/a")
    assert printed["world_size"] == 2 and "world size 2" in err
    ranks = sorted(printed["ranks"], key=lambda r: r["rank"])
    assert [(r["rank"], r["steps"]) for r in ranks] == [(0, 8), (1, 8)], ranks
    assert ranks[0]["loss_first"] != ranks[1]["loss_first"]  # different batches on the two ranks
    assert all(r["loss_last"] < r["loss_first"] for r in ranks), ranks
    m = json.loads((proj / "models/a/manifest.json").read_text())
    assert m["steps_done"] == 8 and m["loss"]["final"] < m["loss"]["first"], m["loss"]
    assert m["settings"]["devices"] == 2 and m["world_size"] == 2
    # written once, by rank 0: one model folder, no temporary left, the checkpoints removed when done
    assert sorted(p.name for p in (proj / "models").iterdir()) == ["a"]
    assert not list((proj / "data/train/checkpoints").glob("sft-*"))
    assert sum(1 for line in err.splitlines() if "SFT: 8 steps" in line) == 1, err[-2000:]
    assert "rank 1 of 2" in err
    model = LocalHFModel.load(proj / "models/a", name="ddp", device="cpu", seed=0)
    res = model.chat([{"role": "user", "content": "hi"}], None, Sampling(max_tokens=4, seed=1))
    assert res.completion_ids
    # deterministic: a second run with the same seed gives the very same weights
    again, _ = _sft(proj, tiny_base_dir, "models/b")
    m2 = json.loads((proj / "models/b/manifest.json").read_text())
    assert m2["weights_sha256"] == m["weights_sha256"] and again["ranks"] == printed["ranks"]


# -- GRPO: accelerate launch, 2 processes on the CPU -------------------------------------------------------
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.docker
def test_grpo_runs_under_accelerate_on_two_processes(repo_copy, tiny_dir, docker_client):
    """`accelerate launch` (workflow/accelerate/cpu_2proc.yaml: 2 processes, gloo) runs 2 GRPO steps of the ci
    recipe: each rank runs its own half of every step's episodes in its own sandboxes (none twice), rank 0
    alone writes the model, manifest, metrics.json and train_log.csv; no sandbox is left; the model loads."""
    import os

    from tests.train.test_grpo import _grpo_repo

    from lis.models.local_hf import LocalHFModel

    _grpo_repo(repo_copy, tiny_dir)
    ci = repo_copy / "workflow/params/ci.yaml"
    data = yaml.safe_load(ci.read_text())
    data["grpo"].update(steps=2, save_every=1, prompts_per_step=2, samples_per_prompt=2, threads=1)
    ci.write_text(yaml.safe_dump(data, sort_keys=False))
    run_id = f"pytest-mp-{os.getpid()}"
    cmd = ["accelerate", "launch", "--config_file", "workflow/accelerate/cpu_2proc.yaml", "--main_process_port",
           str(_free_port()), str(BIN / "lis"), "train", "grpo", "--init", "data/models/sft", "--data", "files",
           "--out", "data/models/grpo-files", "--logs", "data/train/runs/grpo-files", "--profile", "ci"]
    r = run(cmd, cwd=repo_copy, env={"ACCELERATE_USE_CPU": "1", "LIS_RUN_ID": run_id, "PYTHONPATH": str(repo_copy),
                                     "HF_HUB_OFFLINE": "1"}, timeout=600)
    err = r.stderr
    # both ranks ran, each its share of every step (2 of the 4 episodes), and say the world size
    for rank in (0, 1):
        assert f"rank {rank} of 2 (world size 2" in err, err[-3000:]
        for step in (1, 2):
            assert f"step {step}: rank {rank} of 2 ran 2 episodes" in err, err[-3000:]
    printed = json.loads(r.stdout)  # one JSON document: rank 0's (the other rank prints nothing)
    metrics = json.loads((repo_copy / "data/train/runs/grpo-files/metrics.json").read_text())
    assert printed["world_size"] == metrics["world_size"] == 2
    assert metrics["steps"] == 2 and metrics["episodes"] == 8 and metrics["episodes_by_rank"] == [4, 4]
    assert metrics["duplicate_episodes"] == 0 and metrics["errors"] == 0
    # rank 0 alone wrote the outputs, once
    rows = (repo_copy / "data/train/runs/grpo-files/train_log.csv").read_text().splitlines()
    assert [x.split(",")[0] for x in rows[1:]] == ["1", "2"]
    manifest = json.loads((repo_copy / "data/models/grpo-files/manifest.json").read_text())
    assert manifest["written_by_rank"] == 0 and manifest["world_size"] == 2 and manifest["steps"] == 2
    assert sum(1 for line in err.splitlines() if "grpo-files: done in" in line) == 1
    assert "rank 1 of 2 done; rank 0 writes the outputs" in err
    assert sorted(p.name for p in (repo_copy / "data/models").iterdir()) == ["grpo-files", "sft"]
    assert not list((repo_copy / "data/train/checkpoints").glob("grpo-files-*"))
    left = run(["docker", "ps", "-a", "-q", "--filter", "label=lis.managed=true", "--filter",
                f"label=lis.run={run_id}"]).stdout.split()
    assert not left, f"{len(left)} sandbox(es) left behind"
    LocalHFModel.load(repo_copy / "data/models/grpo-files", device="cpu")
