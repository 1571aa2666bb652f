"""`lis train sft` under signals: SIGTERM → 143 and SIGINT → 130 with one line "interrupted at SFT step
N/M ...; run again to resume", no half-trained model, and the next run resumes from the checkpoint. It
used to exit 0 on SIGTERM (Lightning's SIGTERMException is a SystemExit without a code) and 1 on SIGINT."""
from __future__ import annotations

import signal

import pytest
import yaml

from tests.cli.test_signals import _last_line, _signal_when, _start

pytestmark = [pytest.mark.slow, pytest.mark.training]


def test_sft_stops_with_130_or_143_and_resumes(tiny_base_dir, tmp_path):
    from tests.train.test_multiprocess import _sft_project

    proj = _sft_project(tmp_path)
    ci = proj / "workflow/params/ci.yaml"
    data = yaml.safe_load(ci.read_text())
    data["sft"].update(steps=5000, checkpoint_every=20, devices=1, strategy="auto")
    ci.write_text(yaml.safe_dump(data, sort_keys=False))
    cmd = ["lis", "train", "sft", "--base", str(tiny_base_dir), "--data", "trajectories.jsonl", "--out", "models/s",
           "--params", "params.yaml", "--profile", "ci"]
    ckpts = proj / "data/train/checkpoints"
    has_ckpt = lambda: any(ckpts.glob("sft-*/last.ckpt"))  # noqa: E731
    code, err = _signal_when(_start(cmd, proj), has_ckpt, signal.SIGTERM)
    line = _last_line(err)
    assert code == 143 and line.startswith("interrupted at SFT step ") and line.endswith("run again to resume"), err[-2000:]
    assert "Traceback" not in err and not (proj / "models/s").exists()  # no half-trained model written
    proc = _start(cmd, proj)
    code, err = _signal_when(proc, lambda: any(ckpts.glob("sft-*/logs/run1")), signal.SIGINT)
    assert code == 130 and "resuming SFT from" in err and _last_line(err).startswith("interrupted at SFT step "), \
        err[-2000:]


