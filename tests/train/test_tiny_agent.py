"""The tiny offline model: the base build (deterministic, its tokenizer), the Lightning SFT warm start
on the teacher's real-sandbox episodes (loss falls, resume, the checkpoint loads in the local backend),
and the SFT'd agent under the real prompts."""
from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from lis.agent.tools.schemas import TOOLS
from lis.models import Sampling
from lis.models.toolcalls import check_tool_call
from lis.records import NO_LOSS
from tests import sections

pytestmark = [pytest.mark.training]

PAPER_SAMPLING = dict(temperature=0.7, top_p=0.8, top_k=20)


def file_hashes(folder: Path) -> dict[str, str]:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(folder.iterdir()) if f.is_file()}


# -- the base ------------------------------------------------------------------------------------
def test_base_builds_are_identical_and_describe_themselves(tiny_base_dir, tmp_path):
    from lis.offline.base import build_base
    from lis.util.files import sha256_file

    again = build_base(tmp_path / "again", seed=0, corpus_episodes=100)
    assert file_hashes(tmp_path / "again").keys() == file_hashes(tiny_base_dir).keys()
    assert {k: v for k, v in file_hashes(tmp_path / "again").items() if k != "manifest.json"} == \
        {k: v for k, v in file_hashes(tiny_base_dir).items() if k != "manifest.json"}
    m = json.loads((tiny_base_dir / "manifest.json").read_text())
    assert m["weights_sha256"] == again["weights_sha256"] == sha256_file(tiny_base_dir / "model.safetensors")
    assert (m["kind"], m["source"], m["hidden_size"], m["num_hidden_layers"]) == ("base", "tiny", 64, 2)
    assert 100_000 < m["params"] < 1_000_000 and 2_000 < m["vocab"] <= 5_000
    other = build_base(tmp_path / "other", seed=1, corpus_episodes=100)
    assert other["weights_sha256"] != m["weights_sha256"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_chat_template_is_trls_and_parses_tool_calls(tiny_base_dir):
    from transformers import AutoTokenizer
    from trl.chat_template_utils import (is_chat_template_prefix_preserving, qwen3_instruct_2507_chat_template,
                                         supports_tool_calling)

    tok = AutoTokenizer.from_pretrained(tiny_base_dir)
    assert tok.chat_template == qwen3_instruct_2507_chat_template
    assert supports_tool_calling(tok) and is_chat_template_prefix_preserving(tok)
    assert tok.response_template is not None  # saved with the tokenizer: no TRL needed to parse


def test_tokenizer_compresses_the_prompts(tiny_model, prompt):
    """Merges cross words: the long real prompt (tools included) is a few hundred tokens, a role
    header is one token, the head of a tool call three (the comma is a token of its own, like digits,
    `.` and `'`, so that a value read in a document has the same ids when the model writes it)."""
    tok = tiny_model.tokenizer
    n = len(tiny_model.render(prompt, TOOLS))
    assert n < sum(len(m["content"]) for m in prompt) / 6, n
    assert "assistantĊ" in tok.get_vocab()
    head = '{"name": "execute_bash", "arguments": {"command": "'
    ids = tok(head, add_special_tokens=False)["input_ids"]
    assert len(ids) <= 3 and tok.convert_ids_to_tokens(ids).count(",") == 1, tok.convert_ids_to_tokens(ids)


# -- SFT (Lightning) ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def suite_teacher(image_tag) -> Path:
    """The base and the teacher's records of the suite's tiny agent (tests/serving.py): built once per machine
    into the cache, shared with the agent (no teacher run of this module's own)."""
    from tests.serving import tiny_teacher_dir

    return tiny_teacher_dir()


@pytest.fixture(scope="module")
def teacher_records(suite_teacher):
    """The first 24 of the suite agent's teacher episodes (real sandboxes, the smoke recipe's benchmark episodes)."""
    from lis.train.tiny_agent import teacher_records

    return teacher_records(suite_teacher)[:24]


def test_teacher_episodes_run_in_the_real_sandbox(teacher_records, suite_teacher):
    ok = [r for r in teacher_records if r["teacher"]["success"]]
    assert len(ok) >= 0.8 * len(teacher_records)
    # in the sandbox the teacher ran them in: a real backend (the Docker engine, or bubblewrap where it runs here)
    backend = json.loads((suite_teacher / "manifest.json").read_text())["backend"]
    sandboxed = [r for r in ok if r["mode"] != "vanilla"]
    assert backend in ("docker", "bwrap")
    assert sandboxed and all(r["termination"] == "submitted" and r["backend"] == backend for r in sandboxed)
    # the observations are the real sandbox's: exit-code lines of the real tool
    obs = [c["observation"] for r in sandboxed for s in r["steps"] for c in s["calls"] if c["tool"] == "execute_bash"]
    assert obs and all(o.startswith("Exit code:") for o in obs)
    bad = [r for r in teacher_records if r["teacher"]["no_loss_turns"]]
    for r in bad:  # a planned bad turn is answered by the loop itself (reminder or parse error)
        k = r["teacher"]["no_loss_turns"][0]
        assert r["steps"][k]["calls"] == [] or r["steps"][k]["calls"][0]["error"] == "bad_json"


def test_the_agents_cache_key_is_what_sft_consumes(suite_teacher, tmp_path, monkeypatch):
    """The tiny agent's cache in two parts (lis/train/tiny_agent.py): an edit of code that builds the base or
    runs the teacher changes the teacher's key (the teacher runs again), but while the base and the records
    come out the same the agent's key stays (its SFT is reused); what SFT trains on, its settings and its code
    change it. Fields SFT does not read (times, paths, ids) and records it skips do not. Nothing is trained."""
    from lis.train.tiny_agent import RECORDS, agent_key, teacher_key, teacher_records
    from lis.util.code_version import PACKAGE_ROOT
    from lis.tasks.samples import samples_dir
    from lis.util.jsonl import write_jsonl
    from tests.serving import _suite_sandbox, suite_params

    p = suite_params()
    sb, sft = _suite_sandbox(p), p.settings("sft")
    teacher = tmp_path / "teacher"  # the suite's base and 12 of its records (one unsuccessful): quicker to encode
    shutil.copytree(suite_teacher / "base", teacher / "base")
    shutil.copy(suite_teacher / "manifest.json", teacher)
    every = teacher_records(suite_teacher)
    first_failed = next(i for i, r in enumerate(every) if not r["teacher"]["success"])
    records = every[:12] if first_failed < 12 else every[:11] + [every[first_failed]]
    write_jsonl(teacher / RECORDS, records)
    src = tmp_path / "src"  # a copy of this checkout's code, to edit
    shutil.copytree(PACKAGE_ROOT / "lis", src / "lis", ignore=shutil.ignore_patterns("__pycache__"))

    def key(folder=teacher, section=sft):
        return agent_key(section, folder, root=src)

    t0, a0 = teacher_key(p, sb, root=src), key()
    assert t0 == teacher_key(p, sb) and a0 == agent_key(sft, teacher)  # the copy's keys are the checkout's
    with open(src / "lis/agent/loop.py", "a") as f:  # the agent loop edited: the teacher re-runs ...
        f.write("\nEDITED = True\n")
    assert teacher_key(p, sb, root=src) != t0
    assert key() == a0  # ... and, its records the same, the agent is reused
    samples = tmp_path / "samples"  # the sample tasks the teacher reads are in the teacher's key
    shutil.copytree(samples_dir(), samples)
    with open(samples / "README.md", "a") as f:
        f.write("\nedited\n")
    monkeypatch.setenv("LIS_SAMPLES_DIR", str(samples))
    assert teacher_key(p, sb) != t0
    monkeypatch.delenv("LIS_SAMPLES_DIR")
    # what SFT does not read: the teacher's manifest and the base's (build times), records' times, paths, ids,
    # and the episodes it skips (unsuccessful)
    other = tmp_path / "other"
    shutil.copytree(teacher, other)
    m = json.loads((other / "base/manifest.json").read_text())
    (other / "base/manifest.json").write_text(json.dumps({**m, "timings_s": {"total": 0.0}}))
    failed = next(i for i, r in enumerate(records) if not r["teacher"]["success"])
    changed = [{**r, "wall_s": 0.0, "image": "/elsewhere", "episode_id": f"other-{i}"} for i, r in enumerate(records)]
    changed[failed] = {**changed[failed], "messages": changed[failed]["messages"][:2]}
    write_jsonl(other / RECORDS, changed)
    assert key(other) == a0
    # what SFT trains on: a successful episode's assistant turn, or the records it trains on
    ok = next(i for i, r in enumerate(records) if r["teacher"]["success"])
    turn = next(k for k, msg in enumerate(records[ok]["messages"]) if msg["role"] == "assistant")
    edited = [dict(r) for r in records]
    edited[ok]["messages"] = [dict(msg) for msg in records[ok]["messages"]]
    edited[ok]["messages"][turn]["content"] = (edited[ok]["messages"][turn].get("content") or "") + " And more."
    write_jsonl(other / RECORDS, edited)
    assert key(other) != a0
    write_jsonl(other / RECORDS, records[:ok] + records[ok + 1:])
    assert key(other) != a0
    # the SFT settings, and the SFT code
    assert key(section=sft.model_copy(update={"steps": sft.steps + 1})) != a0
    assert key(section=sft.model_copy(update={"seed": sft.seed + 1})) != a0
    with open(src / "lis/train/sft/module.py", "a") as f:
        f.write("\nEDITED = True\n")
    assert key() != a0


def test_sft_lowers_the_loss_resumes_and_loads_in_the_local_backend(tiny_base_dir, teacher_records, tmp_path):
    from lis.models.local_hf import LocalHFModel
    from lis.train.sft.run import train_sft
    from lis.train.sft.stage import successful_records

    records = successful_records(teacher_records)
    s = sections.sft(steps=60, batch_size=4, lr=5e-3, checkpoint_every=20, held_out=0.1, seed=0, max_tokens=8192)
    ckpt = tmp_path / "ckpt"
    m = train_sft(tiny_base_dir, records, tmp_path / "sft", s, ckpt_dir=ckpt)
    assert m["steps_done"] == 60 and m["loss"]["final"] < m["loss"]["first"] / 2, m["loss"]
    assert m["data"]["trained_tokens"] < m["data"]["tokens"] / 3  # assistant turns only
    assert (tmp_path / "sft" / "logs" / "metrics.csv").is_file() and not ckpt.exists()
    model = LocalHFModel.load(tmp_path / "sft", name="sft", device="cpu", seed=0)
    res = model.chat([{"role": "user", "content": "hi"}], TOOLS, Sampling(max_tokens=8, seed=1))
    assert res.completion_ids and len(res.completion_ids) <= 8
    # a run killed after a checkpoint resumes from it and ends with the very weights of an uninterrupted run (the
    # same batches in the same order; optimizer, scheduler and losses restored), killed at three steps in the
    # middle of a pass of the data and before the run's middle (where resuming used to replay some batches)
    import pytorch_lightning as pl

    from lis.train.sft.module import LengthBatches
    from lis.train.sft.data import examples_from_records

    s40 = s.model_copy(update={"steps": 40, "checkpoint_every": 1})

    class Killed(Exception):
        pass

    class Kill(pl.Callback):
        def __init__(self, at: int):
            self.at = at

        def on_train_batch_end(self, trainer, *a):
            if trainer.global_step >= self.at:  # after the checkpoint of step `at` (every step has one)
                raise Killed

    straight = train_sft(tiny_base_dir, records, tmp_path / "straight", s40, ckpt_dir=tmp_path / "ck-straight")
    from transformers import AutoTokenizer

    import random

    order = random.Random(s40.seed).sample(range(len(records)), len(records))  # train_sft's held-out split
    train_recs = [records[i] for i in order[int(len(records) * s40.held_out):]]
    train, _ = examples_from_records(train_recs, AutoTokenizer.from_pretrained(tiny_base_dir), s40.max_tokens)
    per_pass = len(LengthBatches(train, s40.batch_size, s40.steps, s40.seed).batches)
    # three steps in the middle of a pass (not a multiple of the pass's length) and before the run's middle
    middle = [k for k in range(2, s40.steps // 2) if k % per_pass]
    kills = (middle[len(middle) // 4], middle[len(middle) // 2], middle[-1])
    assert per_pass < s40.steps // 2 and len(set(kills)) == 3, per_pass  # at least one pass ends before them
    for k in kills:
        ck = tmp_path / f"ck{k}"
        with pytest.raises(Killed):
            _train_with_callback(tiny_base_dir, records, tmp_path / f"killed{k}", s40, ck, Kill(k))
        assert (ck / "last.ckpt").is_file() and not (tmp_path / f"killed{k}").exists()
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*dataloader is not resumable.*")  # Lightning's warning: gone
            resumed = train_sft(tiny_base_dir, records, tmp_path / f"killed{k}", s40, ckpt_dir=ck)
        assert resumed["resumed"] and resumed["weights_sha256"] == straight["weights_sha256"], k
        # the manifest counts the whole run: every step and its losses, not only the resumed process's
        assert resumed["steps_done"] == 40 and resumed["loss"] == straight["loss"], (k, resumed["loss"])


def test_sft_is_bit_reproducible_with_the_same_seed_and_threads(tiny_base_dir, teacher_records, tmp_path):
    """Same machine, same seed, same thread count: a rerun writes the very same weights (sha256 of the
    safetensors file); another seed does not. What this does not promise: the same weights on another CPU
    (other vector kernels round differently) or with another thread count (docs/training.md)."""
    from lis.train.sft.run import train_sft
    from lis.train.sft.stage import successful_records

    records = successful_records(teacher_records)
    s = sections.sft(steps=30, batch_size=4, lr=5e-3, checkpoint_every=100, held_out=0.1, seed=3, threads=2,
                     max_tokens=8192)
    runs = [train_sft(tiny_base_dir, records, tmp_path / f"run{i}", s, ckpt_dir=tmp_path / f"ck{i}") for i in range(2)]
    other = train_sft(tiny_base_dir, records, tmp_path / "other", s.model_copy(update={"seed": 4}),
                      ckpt_dir=tmp_path / "ck-other")
    assert runs[0]["weights_sha256"] == runs[1]["weights_sha256"]
    assert runs[0]["loss"] == runs[1]["loss"]
    assert other["weights_sha256"] != runs[0]["weights_sha256"]


def _train_with_callback(base, records, out, settings, ckpt, callback):
    """train_sft with an extra Lightning callback (here: one that kills the run)."""
    import pytorch_lightning as pl

    orig = pl.Trainer.__init__

    def init(self, *a, callbacks=None, **kw):
        orig(self, *a, callbacks=[*(callbacks or []), callback], **kw)

    pl.Trainer.__init__ = init
    try:
        from lis.train.sft.run import train_sft

        return train_sft(base, records, out, settings, ckpt_dir=ckpt)
    finally:
        pl.Trainer.__init__ = orig


def tool_call_rate(chat_model: Any, episodes: list[Any], seed: int, sampling: Sampling | None = None,
                   max_turns: int | None = None) -> dict[str, Any]:
    """The fraction of sampled assistant turns that parse into valid tool calls (a measure of the SFT'd model).

    ``episodes`` have ``messages`` and ``tools`` (:class:`~lis.offline.teacher.episodes.Episode`);
    those without tools (vanilla) are skipped. Each trained-on assistant turn is a test, up to
    ``max_turns`` in all: the model gets the conversation before it and samples one turn with
    ``sampling`` (default: temperature 1, at most 96 tokens), seeded ``seed + k``; the turn counts
    as valid when it has at least one tool call and every call passes :func:`check_tool_call`.
    """
    base = Sampling(temperature=1.0, max_tokens=96).override(sampling)
    valid = total = 0
    reasons: dict[str, int] = {}
    for ep in episodes:
        if not ep.tools:
            continue
        for i, m in enumerate(ep.messages):
            if m["role"] != "assistant" or m.get(NO_LOSS) or (max_turns is not None and total >= max_turns):
                continue
            res = chat_model.chat(ep.messages[:i], tools=ep.tools, sampling=base.override(Sampling(seed=seed + total)))
            calls = res.message.get("tool_calls") or []
            why = "no tool call parsed" if not calls else next(
                (r for r in (check_tool_call(c, ep.tools) for c in calls) if r), None)
            total += 1
            if why is None:
                valid += 1
            else:
                key = why[:60]
                reasons[key] = reasons.get(key, 0) + 1
    sampled = {k: v for k, v in base.__dict__.items() if v not in (None, {})}
    return {"valid": valid, "turns": total, "rate": round(valid / total, 4) if total else 0.0,
            "sampling": sampled, "failures": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:5])}


# -- the tiny agent (smoke recipe) -----------------------------------------------------------------------
@pytest.mark.trained_behaviour
def test_tiny_agent_manifest(tiny_manifest):
    m = tiny_manifest
    assert m["kind"] == "sft" and m["steps_done"] == m["settings"]["steps"]
    assert m["teacher"]["successful"] >= 0.8 * m["teacher"]["episodes"]
    assert m["loss"]["final"] < m["loss"]["first"] / 4


@pytest.mark.trained_behaviour
def test_saved_model_emits_valid_tool_calls(tiny_model):
    """On simulated episodes the SFT never saw."""
    from lis.offline.teacher.episodes import episodes

    res = tool_call_rate(tiny_model, episodes(8, 777), seed=5, sampling=Sampling(**PAPER_SAMPLING))
    print("MEASURED tool_call_rate", res)
    assert res["turns"] >= 12 and res["rate"] >= 0.8, res


@pytest.mark.trained_behaviour
def test_first_turn_of_a_real_prompt_is_a_tool_call(tiny_model):
    """Real sandbox prompts of six samples (two each of math, biomed and long context; the recipe's
    192-token turns): at least two thirds of the sampled first turns are valid calls that do something in
    the sandbox (a command, a file), none a submit.

    Six prompts, not six samples of one prompt: the first turn on one prompt is nearly deterministic for a
    trained agent, and a training run can get one prompt wrong every time (training seed 5 closes the
    math sample's editor call before its path, 5 samples of 6). Pass rate over training seeds: see
    tests/train/test_agent_check.py::test_answers_have_the_domain_form."""
    from lis.models.toolcalls import check_tool_call
    from lis.prompts import render_prompts
    from lis.tasks import load_samples

    prompts = []
    for domain in ("math", "biomed", "long_context"):
        for task in load_samples(domain)[:2]:
            messages = render_prompts(task, "sandbox")
            messages[-1]["content"] += "\nSteps Remaining: 6"
            prompts.append(messages)
    names = []
    for seed, messages in enumerate(prompts):
        msg = tiny_model.chat(messages, TOOLS, Sampling(**PAPER_SAMPLING, max_tokens=192, seed=seed)).message
        calls = msg.get("tool_calls") or []
        if calls and all(check_tool_call(c, TOOLS) is None for c in calls):
            names.append(calls[0]["function"]["name"])
    print("MEASURED first_turns", names)
    assert len(names) >= 4 and set(names) <= {"execute_bash", "str_replace_editor"}, names


@pytest.mark.trained_behaviour
def test_vanilla_answers_have_the_domain_form(tiny_model):
    """No tools, the real vanilla prompts: math and physics answers in \\boxed{}, biomed answers one letter,
    in at least a third of 12 (four a domain). The form is learnt, not reliable: over 11 training seeds
    (scripts/trained-behaviour-seeds.sh, 2026-11-26) 5 to 10 of 12 answers had it (seed 6: 5; an untrained
    model: 0), so the bar it had — half, of 8 answers of math and biomed — failed with seeds 4 and 6.
    Pass rate over training seeds: see tests/train/test_agent_check.py::test_answers_have_the_domain_form."""
    from lis.prompts import render_prompts
    from lis.tasks import load_samples
    from lis.offline.agent_check import answer_has_form

    ok = total = 0
    for domain in ("math", "physics", "biomed"):
        for i, task in enumerate(load_samples(domain)[:4]):
            res = tiny_model.chat(render_prompts(task, "vanilla"), None, Sampling(**PAPER_SAMPLING, max_tokens=192,
                                                                                  seed=i))
            ok += answer_has_form(task, res.message.get("content") or "")
            total += 1
    print("MEASURED vanilla_form", ok, total)
    assert ok >= total / 3, f"{ok}/{total}"
