"""GRPO at the paper's scale: the review's findings, each guarded (issue 22).

1. it did not fit: the precision and checkpoint knobs reach TRL (they were hard-coded to fp32, no
   checkpointing, two full checkpoints); the disk is checked before a checkpoint;
4. server mode weighed episodes by TRL's default importance-sampling correction: it is off in TRL,
   and ``grpo.importance_sampling`` (default none, the paper's) is the one correction;
5. over-long prompts became errors: they are dropped up front and counted;
6. errors were a free re-roll: a policy that kills its sandbox keeps its negative advantage, only a
   failure before the policy acted is retried (with the same seed), one after it is not;
7. the step statistics leave infrastructure errors out (and keep policy faults in).
Each test's docstring says what today's code (before this work) did. Real TRL, real sandboxes where
the finding is about them, the tiny random model (no trained agent needed).
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from lis.tasks.schema import Task
from tests import sections
from tests.train.test_grpo_checks import _one_step_advantages, lookup_task

pytestmark = [pytest.mark.training]


def _settings(**kw):
    base = dict(prompts_per_step=2, samples_per_prompt=2, steps=1, lr=1e-4, max_tokens_per_turn=12, max_turns=1,
                max_prompt_tokens=4096, max_episode_tokens=24, save_every=1, threads=2)
    return sections.grpo(**{**base, **kw})


# -- 1. it fits: the knobs reach TRL -------------------------------------------------------------------------
def test_precision_checkpointing_and_the_checkpoint_policy_reach_trl(tmp_path):
    """bf16 (mixed precision), gradient checkpointing, LoRA's bf16 base, checkpoints kept and weights
    only: each param reaches TRL's GRPOConfig. Before: bf16=False, gradient_checkpointing=False and
    save_total_limit=2 with the optimizer state were hard-coded, whatever the params said."""
    from lis.train.grpo.trainer import grpo_config
    from lis.train.precision import Precision, resolve_precision

    s = _settings(precision={"bf16": True, "gradient_checkpointing": True}, checkpoints={"keep": 1, "optimizer": False})
    args = grpo_config(s, tmp_path, precision=Precision(bf16=False, gradient_checkpointing=True), lora=True)
    assert args.gradient_checkpointing and not args.bf16 and args.gradient_checkpointing_kwargs == {"use_reentrant": False}
    assert args.save_total_limit == 1 and args.save_only_model
    assert resolve_precision(s.precision.bf16, s.precision.gradient_checkpointing, cuda=False) == Precision(True, True)
    assert resolve_precision("auto", "auto", cuda=True) == Precision(True, True)
    assert resolve_precision("auto", "auto", cuda=False) == Precision(False, False)
    assert resolve_precision("auto", False, cuda=True) == Precision(True, False)
    lora_bf16 = grpo_config(s, tmp_path, precision=Precision(bf16=True, gradient_checkpointing=False), lora=True)
    assert lora_bf16.model_init_kwargs == {"dtype": "bfloat16"}  # the frozen base in bf16; full FT keeps fp32 masters
    assert grpo_config(s, tmp_path, precision=Precision(True, False), lora=False).model_init_kwargs is None


def test_training_with_the_knobs_on_writes_weights_only_checkpoints_and_a_plain_model(tiny_base_dir, tmp_path):
    """Two steps with gradient checkpointing, bf16 autocast, LoRA rank 4 and weights-only checkpoints
    (keep 1): one checkpoint left, holding the adapters and no optimizer state; the model written is a
    plain transformers model (adapters merged) that the local backend loads."""
    from lis.agent import AgentConfig
    from lis.models.local_hf import LocalHFModel
    from lis.train.grpo.trainer import train_grpo

    s = _settings(steps=2, precision={"bf16": True, "gradient_checkpointing": True},
                  lora={"rank": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]},
                  checkpoints={"keep": 1, "optimizer": False})
    tasks = [lookup_task(i, 100 + i) for i in range(4)]
    out = train_grpo(tiny_base_dir, tasks, tmp_path / "out", s, agent_cfg=AgentConfig(), pool=None, mode="vanilla",
                     ckpt_dir=tmp_path / "ckpt", log_path=tmp_path / "ckpt" / "steps.jsonl")
    assert out["precision"] == {"bf16": True, "gradient_checkpointing": True} and out["lora_rank"] == 4
    kept = sorted(p.name for p in (tmp_path / "ckpt").glob("checkpoint-*"))
    assert kept == ["checkpoint-2"], kept
    files = {p.name for p in (tmp_path / "ckpt" / "checkpoint-2").iterdir()}
    assert "adapter_model.safetensors" in files and "optimizer.pt" not in files, files
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert "model.safetensors" in written and not any(n.startswith("adapter") for n in written), written
    LocalHFModel.load(tmp_path / "out", device="cpu")


def test_a_checkpoint_the_disk_cannot_take_is_refused_in_one_line(tmp_path):
    """The free disk is checked before a checkpoint is written: short of room, one line naming the need,
    the free space and the knobs (nothing was checked before)."""
    import shutil

    from lis.errors import LisError
    from lis.train.grpo.checkpoints import require_disk

    free = shutil.disk_usage(tmp_path).free
    require_disk(tmp_path, 1 << 20, step=10, keep=2)
    with pytest.raises(LisError) as e:
        require_disk(tmp_path, free + (4 << 30), step=10, keep=2)
    assert "no room for checkpoint 10" in str(e.value) and "\n" not in str(e.value)
    assert "grpo.checkpoints.optimizer: false" in e.value.hint


def test_a_trained_model_the_disk_cannot_take_is_refused_before_the_write(tmp_path):
    """The final write of the trained model is checked too (a 4B model's float32 weights after a checkpoint
    with optimizer state filled a 57 GB disk mid-write): one line, before any file is written."""
    import shutil

    import torch

    from lis.errors import LisError
    from lis.train.disk import require_model_room

    def model(n: int) -> torch.nn.Module:
        m = torch.nn.Module()
        m.w = torch.nn.Parameter(torch.empty(n, device="meta"))   # a size without the memory
        return m

    free = shutil.disk_usage(tmp_path).free
    require_model_room(tmp_path / "out", model(1 << 20), "grpo")
    with pytest.raises(LisError) as e:
        require_model_room(tmp_path / "out", model(free // 4 + (1 << 30)), "sft")
    assert str(e.value).startswith("sft: no room for the trained model") and "\n" not in str(e.value)
    assert not any((tmp_path / "out").iterdir())


# -- 4. importance sampling is explicit --------------------------------------------------------------------
def test_server_mode_leaves_importance_sampling_to_the_param():
    """In vLLM server mode TRL's own correction is off (before: TRL's default, on, sequence_mask, C_max 3:
    long episodes silently lost weight); the params' mode is the one correction, none by default (the
    paper's recipe)."""
    from trl import GRPOConfig

    from lis.params import load
    from lis.train.grpo.trainer import grpo_config
    from lis.train.grpo.vllm_server import ServerMode
    from lis.train.precision import Precision
    from tests.conftest import ROOT

    default = GRPOConfig(output_dir="/tmp/unused", use_cpu=True, report_to="none", use_vllm=True, vllm_mode="server")
    assert default.vllm_importance_sampling_correction and default.vllm_importance_sampling_mode == "sequence_mask"
    server = ServerMode.from_settings(sections.vllm(base_url="http://127.0.0.1:8000", sync="trl"))
    args = grpo_config(_settings(), "/tmp/unused", precision=Precision(False, False), server=server)
    assert args.use_vllm and args.vllm_importance_sampling_correction is False
    for profile in ("full", "smoke"):
        s = load(ROOT, profile=profile).settings("grpo")
        assert s.importance_sampling.mode == "none" and s.loss_agg == "seq-mean-token-sum"


# -- 5. prompts over the budget --------------------------------------------------------------------------
def _long_task(i: int) -> Task:
    doc = "\n".join(f"Line {k}: the archive of Town{i} records nothing of note for year {1900 + k}." for k in range(400))
    return Task(id=f"long{i}", domain="instruct_pretrain", problem_statement=f"What is the population of Town{i}?",
                ground_truth="5", input_files={f"town{i}.txt": doc}, qa_type="free-form")


def test_prompts_over_the_budget_are_dropped_up_front_and_counted(tiny_base_dir, tmp_path):
    """The LLM-RL baseline (vanilla: documents in the prompt) with two of six tasks over the prompt
    budget: both dropped before training and counted; no step draws them; no error. Before: each of
    their episodes was an error (and counted overlong too), forwarded with its whole prompt."""
    from transformers import AutoTokenizer

    from lis.agent import AgentConfig
    from lis.train.grpo.trainer import StepLog, train_grpo
    from lis.train.rollout.budget import first_prompt_ids

    tok = AutoTokenizer.from_pretrained(tiny_base_dir)
    short = [lookup_task(i, 100 + i) for i in range(4)]
    long = [_long_task(0), _long_task(1)]
    budget = 1024
    assert all(len(first_prompt_ids(t, tok, "vanilla", AgentConfig())) > budget for t in long)
    assert all(len(first_prompt_ids(t, tok, "vanilla", AgentConfig())) <= budget for t in short)
    assert all(len(first_prompt_ids(t, tok, "sandbox", AgentConfig())) <= budget for t in long)  # files: they fit
    s = _settings(steps=2, max_prompt_tokens=budget)
    out = train_grpo(tiny_base_dir, short[:2] + long + short[2:], tmp_path / "out", s, agent_cfg=AgentConfig(),
                     pool=None, mode="vanilla", ckpt_dir=tmp_path / "ckpt", log_path=tmp_path / "ckpt" / "steps.jsonl")
    assert out["prompts_dropped"] == 2 and sorted(out["prompts_dropped_ids"]) == ["long0", "long1"]
    assert out["tasks"] == 4
    rows = StepLog(tmp_path / "ckpt" / "steps.jsonl").rows()
    assert len(rows) == 2 and all(r["errors"] == 0 for r in rows)
    assert all(set(r["task_ids"]) <= {t.id for t in short} for r in rows), [r["task_ids"] for r in rows]


def test_the_budget_counts_the_prompt_the_episode_really_starts_with(tiny_base_dir, base_config):
    """The measured prompt is the session's first prompt, id for id, in sandbox mode (tools, "Steps
    Remaining") and in vanilla mode."""
    from transformers import AutoTokenizer

    from lis.agent import AgentConfig
    from lis.sandbox import SandboxPool
    from lis.train.rollout.budget import first_prompt_ids
    from lis.train.rollout.group import RolloutSettings, run_episode
    from tests.train.test_token_exact import ReplayPolicy
    from lis.models.scripted import assistant, tool_call

    tok = AutoTokenizer.from_pretrained(tiny_base_dir)
    task, cfg = lookup_task(0, 7), AgentConfig(max_turns=5)
    settings = RolloutSettings(overlong_reward=0.0, max_prompt_tokens=20000, max_episode_tokens=20000, retries=0)
    with SandboxPool(base_config, max_concurrent=1) as pool:
        policy = ReplayPolicy(tok, [assistant("Done.", tool_call("submit", {}, "s1"))])
        r = run_episode(task, policy, cfg, settings, pool=pool)
    assert r.sample["prompt_ids"] == first_prompt_ids(task, tok, "sandbox", cfg)
    vanilla = run_episode(task, ReplayPolicy(tok, [assistant("7")]), cfg,
                          dataclasses.replace(settings, mode="vanilla"))
    assert vanilla.sample["prompt_ids"] == first_prompt_ids(task, tok, "vanilla", cfg)


# -- 6. outcomes: who failed -------------------------------------------------------------------------------
class Flaky:
    """A real policy (the tiny model through the local backend) whose model server fails on chosen calls
    (an infrastructure error), before or after the policy has sampled anything."""

    def __init__(self, inner, fail_calls: set[int]):
        self.inner, self.fail_calls, self.calls = inner, set(fail_calls), 0
        self.tokenizer, self.stop_ids = inner.tokenizer, inner.stop_ids

    def render(self, messages, tools=None):
        return self.inner.render(messages, tools)

    def parse(self, completion_ids, prompt_ids, tools=None):
        return self.inner.parse(completion_ids, prompt_ids, tools)

    def generate_ids(self, prompt_ids, max_new, sampling):
        from lis.models.base import ModelError

        self.calls += 1
        if self.calls in self.fail_calls:
            raise ModelError("model 'policy': the server answered 502", "check the server")
        return self.inner.generate_ids(prompt_ids, max_new, sampling)


def test_an_infrastructure_error_before_the_policy_acted_is_retried_with_the_same_seed(tiny_base_dir):
    """The first model call fails (nothing sampled yet): the episode runs again, with the same seed, so
    it is exactly the episode a clean run gives. Before: retried with seed + 7919 x attempt, another
    draw, chosen because the first try failed."""
    from lis.agent import AgentConfig
    from lis.models.base import Sampling
    from lis.models.local_hf import LocalHFModel
    from lis.train.rollout.group import RolloutSettings, run_episode

    model = LocalHFModel.load(tiny_base_dir, name="policy", device="cpu", seed=0)
    settings = RolloutSettings(overlong_reward=0.0, mode="vanilla", max_prompt_tokens=4096, max_episode_tokens=48, retries=2,
                               sampling=Sampling(temperature=1.0, top_p=1.0, top_k=0, max_tokens=48, seed=0))
    task = lookup_task(0, 7)
    clean = run_episode(task, model, AgentConfig(), settings, seed=123)
    flaky = Flaky(model, {1})
    again = run_episode(task, flaky, AgentConfig(), settings, seed=123)
    assert flaky.calls == 2 and again.attempts == 2 and again.outcome != "infra_error"
    assert again.sample == clean.sample  # the same ids, masks and log-probs


@pytest.mark.docker
def test_an_infrastructure_error_after_the_policy_acted_is_not_retried(tiny_base_dir, base_config):
    """The policy ran a command, then the model server failed on its second turn: an infrastructure
    error (out of the loss and its group's baseline), not run again: a retry now would be a resample
    chosen by how the episode went. Before: retried up to grpo.retries times."""
    from transformers import AutoTokenizer

    from lis.agent import AgentConfig
    from lis.models.scripted import assistant, tool_call
    from lis.sandbox import SandboxPool
    from lis.train.rollout.group import RolloutSettings, run_episode
    from tests.train.test_token_exact import ReplayPolicy

    tok = AutoTokenizer.from_pretrained(tiny_base_dir)
    replay = ReplayPolicy(tok, [assistant(None, tool_call("execute_bash", {"command": "ls"}, "c1")),
                                assistant("Done.", tool_call("submit", {}, "c2"))])
    flaky = Flaky(replay, {2})
    settings = RolloutSettings(overlong_reward=0.0, max_prompt_tokens=20000, max_episode_tokens=20000, retries=2)
    with SandboxPool(base_config, max_concurrent=1) as pool:
        r = run_episode(lookup_task(0, 7), flaky, AgentConfig(max_turns=4), settings, pool=pool)
    assert flaky.calls == 2 and r.attempts == 1, (flaky.calls, r.attempts)
    assert r.outcome == "infra_error" and r.error and r.record.termination == "model_error"
    assert sum(r.sample["env_mask"]) == 0


def _filling(tokenizer, fill: str):
    from lis.models.scripted import assistant, tool_call
    from tests.train.test_token_exact import ReplayPolicy

    return ReplayPolicy(tokenizer, [assistant(None, tool_call("execute_bash", {"command": "echo start"}, "f1")),
                                    assistant("filling", tool_call("execute_bash", {"command": fill}, "f2")),
                                    assistant("Done.", tool_call("submit", {}, "f3"))])


@pytest.mark.docker
def test_a_policy_that_kills_its_sandbox_keeps_its_negative_advantage(tiny_base_dir, base_config):
    """A group of 4: two right answers, one wrong, and one episode whose command fills the sandbox's
    memory until the kernel kills its supervisor (quotas larger than the memory limit, as in
    tests/sandbox/test_disk_memory.py). That episode is a policy fault (oom): reward 0, not retried,
    its tokens trained on, and TRL gives it the negative advantage 0 - 1/2. Before: a sandbox error,
    an infrastructure error: retried with another seed, then advantage 0 — the policy escaped."""
    from transformers import AutoTokenizer

    from lis.sandbox import SandboxPool
    from tests.train.test_grpo_checks import _answering

    tok = AutoTokenizer.from_pretrained(tiny_base_dir)
    cfg = dataclasses.replace(base_config, command_timeout_s=60,
                              limits=dataclasses.replace(base_config.limits, memory_mb=128, testbed_mb=200,
                                                         tmp_mb=200, home_mb=200))
    fill = "for d in /testbed /tmp $HOME; do head -c 190M /dev/zero > $d/fill; done; echo survived"
    task = lookup_task(0, 4242)
    with SandboxPool(cfg, max_concurrent=2) as pool:
        policies = [_answering(tok, 4242), _answering(tok, 1), _answering(tok, 4242), _filling(tok, fill)]
        advantages, rollouts = _one_step_advantages(tiny_base_dir, tok, task, policies, pool, retries=2)
    bad = rollouts[3]
    assert bad.record.termination == "sandbox_error" and "out of memory" in bad.record.error, bad.record.error
    assert (bad.outcome, bad.fault, bad.error, bad.attempts, bad.reward) == ("policy_fault", "oom", False, 1, 0.0)
    assert sum(bad.sample["env_mask"]) > 0
    assert [r.outcome for r in rollouts[:3]] == ["submitted", "wrong", "submitted"]
    assert advantages == pytest.approx([0.5, -0.5, 0.5, -0.5], abs=1e-6), advantages


# -- 7. the step statistics --------------------------------------------------------------------------------
def _r(reward, outcome, fault=None):
    stats = {"episode_tokens": 10, "sampled_tokens": 4, "turns": 2, "tool_calls": 1, "outcome": outcome,
             "fault": fault, "termination": "x"}
    return SimpleNamespace(reward=reward, raw_reward=reward, error=outcome == "infra_error", drift=False,
                           stats=stats)


def test_step_statistics_leave_infrastructure_errors_out_and_keep_policy_faults():
    """Rewards, solve rates and variance over the episodes that ran: an infrastructure error's reward
    (whatever it holds) is not counted; a policy fault's 0 is. Outcome rates and faults are counted."""
    from lis.train.grpo.trainer import group_stats

    group = [_r(1.0, "submitted"), _r(1.0, "infra_error"), _r(0.0, "policy_fault", "oom"), _r(1.0, "submitted"),
             _r(1.0, "submitted"), _r(1.0, "submitted"), _r(1.0, "infra_error"), _r(1.0, "submitted")]
    st = group_stats(group, samples_per_prompt=4)
    assert st["reward_mean"] == pytest.approx(5 / 6, abs=1e-4)
    assert st["errors"] == 2 and st["outcomes"] == {"submitted": 5, "wrong": 0, "policy_fault": 1, "infra_error": 2}
    assert st["solve_all"] == 0.5 and st["groups_with_variance"] == 0.5 and st["faults"] == {"oom": 1}
    assert st["policy_fault_rate"] == 0.125 and st["infra_error_rate"] == 0.25
