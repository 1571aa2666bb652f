"""`lis train compare`: two GRPO runs' train_log.csv paired step by step (lis.report.compare)."""
from __future__ import annotations

import csv
import json

from lis.train.grpo.columns import PLOT_COLUMNS
from tests.conftest import lis, one_line_error


def _log(path, rewards, hashes, tasks=None):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=PLOT_COLUMNS)
        w.writeheader()
        for i, (r, h) in enumerate(zip(rewards, hashes)):
            w.writerow({**{k: 0 for k in PLOT_COLUMNS}, "step": i + 1, "reward_mean": r, "episodes_sha256": h,
                        "task_ids": (tasks or [f"t{i};t{i + 1}"] * len(rewards))[i]})
    return path


def test_two_runs_pair_by_step_and_part_where_their_episodes_do(tmp_path):
    a = _log(tmp_path / "a.csv", [0.1, 0.2, 0.3, 0.4], ["h1", "h2", "h3", "h4"])
    b = _log(tmp_path / "b.csv", [0.1, 0.2, 0.5, 0.2], ["h1", "h2", "x3", "x4"],
             tasks=["t0;t1", "t1;t2", "t2;t3", "other"])
    r = lis(["lis", "train", "compare", str(a), str(b), "--name-a", "seed 0", "--name-b", "seed 0 again",
             "--out", str(tmp_path / "fig" / "cmp")])
    s = json.loads(r.stdout)
    assert s["common_steps"] == 4 and s["paired_steps"] == 3 and s["identical_steps"] == 2
    assert s["first_step_with_other_episodes"] == 3
    diff = s["reward_difference"]
    assert diff["n"] == 3 and abs(diff["mean"] - 0.2 / 3) < 1e-9 and diff["ci95"][0] < diff["mean"] < diff["ci95"][1]
    assert (tmp_path / "fig/cmp.png").stat().st_size > 10_000 and (tmp_path / "fig/cmp.pdf").is_file()
    same = json.loads(lis(["lis", "train", "compare", str(a), str(a), "--name-a", "x", "--name-b", "y",
                           "--out", str(tmp_path / "same")]).stdout)
    assert same["identical_steps"] == 4 and same["first_step_with_other_episodes"] is None


def test_compare_refuses_what_it_cannot_read_in_one_line(tmp_path):
    a = _log(tmp_path / "a.csv", [0.1], ["h"])
    one_line_error(lis(["lis", "train", "compare", str(a), str(tmp_path / "missing.csv")], check=False),
                   "no training log", "missing.csv")
    (tmp_path / "other.csv").write_text("x,y\n1,2\n")
    one_line_error(lis(["lis", "train", "compare", str(a), str(tmp_path / "other.csv")], check=False),
                   "not a train_log.csv")
