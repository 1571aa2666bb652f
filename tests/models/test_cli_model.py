"""``lis model card``: the card of a model this pipeline does not train; ``lis train`` lists the stages."""
from __future__ import annotations

import json

import yaml

from tests.conftest import lis


def test_card_records_an_external_model(repo_copy):
    path = repo_copy / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["jobs"]["external"] = ["qwen3-4b-instruct-2507"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    r = lis(["lis", "model", "card", "--model", "qwen3-4b-instruct-2507", "--out", "data/models/qwen3-4b-instruct-2507"],
            cwd=repo_copy)
    card = json.loads((repo_copy / "data/models/qwen3-4b-instruct-2507/card.json").read_text())
    assert card["fingerprint"] == {"model": "Qwen/Qwen3-4B-Instruct-2507", "base_url": "http://localhost:8000/v1"}
    assert card["trained_here"] is False and card["entry"]["backend"] == "openai", r.stderr


def test_card_of_an_unknown_model_is_one_line():
    r = lis(["lis", "model", "card", "--model", "gpt-9", "--out", "/tmp/x"], check=False)
    assert r.returncode == 2 and "no model named 'gpt-9'" in r.stderr and "Traceback" not in r.stderr


def test_train_help_names_every_stage():
    r = lis(["lis", "train", "--help"])
    for cmd in ("base", "teacher", "sft", "grpo", "tiny-agent", "check"):
        assert cmd in r.stdout
