"""lis train plan against measured peaks: real GRPO (TRL) and SFT steps on the CPU, each in a fresh process,
for the tiny model and a 32M-parameter Qwen3 (data/model_configs/qwen3-validate-32m.json): the estimate is
within ±25 % of the measured peak in every case (GRPO and SFT, checkpointing on and off, GRPO padded).
The numbers are in docs/training.md, "Will it fit? `lis train plan`" (`lis train plan --measure FOLDER`)."""
from __future__ import annotations

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.training]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from lis.offline.base import build_base
    from lis.offline.random_model import build_random

    root = tmp_path_factory.mktemp("plan-models")
    build_base(root / "tiny", seed=0, corpus_episodes=50)
    build_random(root / "validate-32m", ROOT / "data/model_configs/qwen3-validate-32m.json",
                 tokenizer_dir=root / "tiny", seed=0)
    return root


@pytest.mark.parametrize("name", ["tiny", "validate-32m"])
def test_the_estimate_is_within_25_percent_of_the_measured_peak(models, name):
    from lis.train.plan.measure import measure_model, render

    rows = measure_model(models / name)
    print(render(rows))
    assert {(r["stage"], r["checkpointing"], r.get("padded", False)) for r in rows} == {
        ("grpo", False, False), ("grpo", True, False), ("grpo", False, True), ("grpo", True, True),
        ("sft", False, False), ("sft", True, False)}
    off = [r for r in rows if 0.75 > r["ratio"] or r["ratio"] > 1.25]
    assert not off, render(off)
    by = {(r["stage"], r["checkpointing"], r.get("padded", False)): r["measured_gb"] for r in rows}
    assert by[("grpo", True, False)] < by[("grpo", False, False)]     # checkpointing saves what it should
    assert by[("grpo", False, True)] > by[("grpo", False, False)]     # the padded micro-batch's masks
