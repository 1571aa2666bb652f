"""The tiny model builder: what it writes, that it is deterministic, that the warm-up works under
the real prompts."""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest

from lis.agent.tools.schemas import TOOLS
from lis.errors import LisError
from lis.models import Sampling, build_tiny
from lis.train.tiny.build import DEFAULT_SFT_STEPS, MAX_CONTEXT, PAPER_SAMPLING, default_path, sha256_file


def file_hashes(folder: Path) -> dict[str, str]:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(folder.iterdir())}


def test_manifest_describes_the_build(tiny_dir, tiny_manifest):
    from lis.train.teacher.tasks import SAMPLE_DOMAINS

    m = tiny_manifest
    assert (m["seed"], m["sft_steps"], m["hidden_size"], m["num_hidden_layers"]) == (0, DEFAULT_SFT_STEPS, 64, 2)
    assert 100_000 < m["params"] < 1_000_000 and 2_000 < m["vocab"] <= 5_000 and m["max_context"] == MAX_CONTEXT
    assert m["weights_sha256"] == sha256_file(tiny_dir / "model.safetensors")
    assert m["tokenizer_sha256"] == sha256_file(tiny_dir / "tokenizer.json")
    assert m["warmup"]["final_loss"] < m["warmup"]["first_loss"] / 4
    data = m["data"]
    assert data["sample_domains"] == sorted(SAMPLE_DOMAINS) and set(data["by_mode"]) == {
        "sandbox", "sandbox_inline", "vanilla"}
    assert {"math", "physics", "chem", "biomed", "long_context", "instruct_follow", "demo"} <= set(data["by_domain"])
    assert 0 < data["trained_tokens"] < data["tokens"] / 4  # the loss is on assistant turns only
    assert {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
            "model.safetensors", "manifest.json"} <= {f.name for f in tiny_dir.iterdir()}
    assert not [p for p in tiny_dir.parent.iterdir() if p.is_dir() and p.name.startswith(".tiny.")]  # no temporary


def test_default_path_names_the_recipe_version():
    assert default_path(0, DEFAULT_SFT_STEPS).name == f"tiny-v2-seed0-sft{DEFAULT_SFT_STEPS}"


def test_warmup_raises_the_valid_tool_call_rate(tiny_manifest):
    rates = tiny_manifest["tool_call_rate"]
    before, after, paper = rates["before"], rates["after"], rates["after_paper_sampling"]
    assert before["turns"] >= 8 and after["turns"] == paper["turns"] >= 24
    assert before["rate"] <= 0.1
    assert after["rate"] >= 0.8 and paper["rate"] >= 0.8 and paper["sampling"]["top_k"] == 20


def test_saved_model_emits_valid_tool_calls(tiny_model):
    """The folder (not the in-memory model of the build) on episodes the build never saw."""
    from lis.train.teacher.episodes import episodes
    from lis.train.tiny.warmup import tool_call_rate

    res = tool_call_rate(tiny_model, episodes(8, 777), seed=5, sampling=Sampling(**PAPER_SAMPLING))
    assert res["turns"] >= 12 and res["rate"] >= 0.8, res


def test_first_turn_of_a_real_prompt_is_a_tool_call(tiny_model, prompt):
    """The math sample's real sandbox prompt: most sampled first turns are valid calls that do
    something in the sandbox (a command, a file), not a submit."""
    from lis.models.toolcalls import check_tool_call

    names = []
    for seed in range(6):
        msg = tiny_model.chat(prompt, TOOLS, Sampling(**PAPER_SAMPLING, max_tokens=160, seed=seed)).message
        calls = msg.get("tool_calls") or []
        if calls and all(check_tool_call(c, TOOLS) is None for c in calls):
            names.append(calls[0]["function"]["name"])
    assert len(names) >= 5 and set(names) <= {"execute_bash", "str_replace_editor"}, names


def test_vanilla_answers_have_the_domain_form(tiny_model):
    """No tools, the real vanilla prompts: math answers in \\boxed{}, biomed answers one letter."""
    from lis.train.agent_check import answer_has_form
    from lis.prompts import render_prompts
    from lis.tasks import load_samples

    ok = total = 0
    for domain in ("math", "biomed"):
        for i, task in enumerate(load_samples(domain)[:4]):
            res = tiny_model.chat(render_prompts(task, "vanilla"), None, Sampling(**PAPER_SAMPLING, max_tokens=160,
                                                                                  seed=i))
            ok += answer_has_form(task, res.message.get("content") or "")
            total += 1
    assert ok >= 0.75 * total, f"{ok}/{total}"


def test_chat_template_is_trls_and_parses_tool_calls(tiny_model):
    from trl.chat_template_utils import (is_chat_template_prefix_preserving, qwen3_instruct_2507_chat_template,
                                         supports_tool_calling)

    tok = tiny_model.tokenizer
    assert tok.chat_template == qwen3_instruct_2507_chat_template
    assert supports_tool_calling(tok) and is_chat_template_prefix_preserving(tok)
    assert tok.response_template is not None  # saved with the tokenizer: no TRL needed to parse


def test_tokenizer_compresses_the_prompts(tiny_model, prompt):
    """Merges cross words: the long real prompt (tools included) is a few hundred tokens, a role
    header and the head of a tool call are one token each."""
    tok = tiny_model.tokenizer
    n = len(tiny_model.render(prompt, TOOLS))
    assert n < sum(len(m["content"]) for m in prompt) / 6, n
    assert "assistantĊ" in tok.get_vocab()
    head = '{"name": "execute_bash", "arguments": {"command": "'
    assert len(tok(head, add_special_tokens=False)["input_ids"]) <= 2


def test_two_builds_are_identical(small_build, tmp_path, tiny_manifest):
    """Same arguments → the same files, byte for byte (a short warm-up keeps this test fast)."""
    folder, manifest = small_build
    again = build_tiny(tmp_path / "again", seed=3, sft_steps=8, measure=False)
    assert again["weights_sha256"] == manifest["weights_sha256"] != tiny_manifest["weights_sha256"]
    assert file_hashes(tmp_path / "again") == file_hashes(folder)


def test_an_existing_build_is_reused(tiny_dir, tiny_manifest):
    before = (tiny_dir / "model.safetensors").stat().st_mtime_ns
    t0 = time.monotonic()
    again = build_tiny(tiny_dir, seed=0)
    assert time.monotonic() - t0 < 2 and again == tiny_manifest
    assert (tiny_dir / "model.safetensors").stat().st_mtime_ns == before


def test_changed_training_data_rebuilds(small_build, tmp_path):
    """A build whose recorded episodes differ from today's (an edited prompt template, new
    samples) is rebuilt in place, and comes out as a fresh build does."""
    folder, manifest = small_build
    stale = tmp_path / "stale"
    shutil.copytree(folder, stale)
    edited = {**manifest, "data": {**manifest["data"], "sha256": "0" * 64}}
    edited.pop("timings_s", None)
    (stale / "manifest.json").write_text(json.dumps(edited, indent=2) + "\n")
    rebuilt = build_tiny(stale, seed=3, sft_steps=8, measure=False)
    assert rebuilt["data"]["sha256"] == manifest["data"]["sha256"]
    assert file_hashes(stale) == file_hashes(folder)


def test_refuses_to_overwrite_a_foreign_folder(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(LisError) as err:
        build_tiny(tmp_path / "mine", sft_steps=1, measure=False)
    assert "not a tiny-model build" in str(err.value)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_manifest_is_json_without_timings(tiny_dir):
    saved = json.loads((tiny_dir / "manifest.json").read_text())
    assert "timings_s" not in saved and "path" not in saved  # so that two builds write the same file
