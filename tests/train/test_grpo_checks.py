"""What a GRPO step must get right beyond running: every loss computation in train mode (TRL weighs a
micro-batch by the accumulation count only then), errored episodes out of their group's baseline,
one sampling policy for every engine and for TRL, and the rollout's log-probabilities equal to the
ones TRL recomputes for the same ids. Real TRL GRPOTrainer, the tiny models, real sandboxes."""
from __future__ import annotations

import json
import shutil

import pytest

from lis.tasks.schema import Task
from tests import sections

pytestmark = [pytest.mark.training]


def lookup_task(i: int, value: int) -> Task:
    return Task(id=f"t{i}", domain="instruct_pretrain", problem_statement=f"What is the population of Town{i}?",
                ground_truth=str(value), input_files={f"town{i}.txt": f"Town: Town{i}\nPopulation: {value}\n"},
                qa_type="free-form")


def _steps(path) -> list[dict]:
    from lis.train.grpo.trainer import StepLog

    return StepLog(path).rows()


def test_every_loss_computation_runs_in_train_mode_on_the_first_step_and_after_a_resume(tiny_base_dir, tmp_path):
    """Two steps, then the same run resumed from its checkpoint for a third: each step's micro-batches
    (2 prompts x 2 samples, micro-batch 1: 4 loss computations) all run with the model in train mode.
    Before the fix, the first step of a process built the policy (which switched the model to eval) and
    TRL computed micro-batch 0 in eval mode: weighed 4x the others here, 64x at paper scale."""
    from lis.agent import AgentConfig
    from lis.train.grpo.trainer import train_grpo

    tasks = [lookup_task(i, 100 + i) for i in range(4)]
    s = sections.grpo(prompts_per_step=2, samples_per_prompt=2, steps=2, lr=1e-4, max_tokens_per_turn=12,
                      max_turns=1, max_prompt_tokens=4096, max_episode_tokens=24, save_every=1, threads=2)
    kw = dict(agent_cfg=AgentConfig(), pool=None, mode="vanilla", ckpt_dir=tmp_path / "ckpt",
              log_path=tmp_path / "ckpt" / "steps.jsonl")
    first = train_grpo(tiny_base_dir, tasks, tmp_path / "out", s, **kw)
    assert first["resumed_from"] is None and first["steps"] == 2
    again = train_grpo(tiny_base_dir, tasks, tmp_path / "out", s.model_copy(update={"steps": 3}), **kw)
    assert again["resumed_from"] and again["resumed_from"].endswith("checkpoint-2")
    rows = _steps(tmp_path / "ckpt" / "steps.jsonl")
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert [(r["loss_calls"], r["loss_calls_eval_mode"]) for r in rows] == [(4, 0)] * 3, rows


# -- errored episodes ------------------------------------------------------------------------------------
class KillOwnSandbox:
    """A replayed policy whose episode loses its sandbox: its first command prints the container's id
    (from /proc/1/cgroup); before its second turn the policy kills that container through the Docker
    engine, as a crashed container or a lost node would. The episode's next command then fails: a
    sandbox error (an infrastructure error, not the policy's doing)."""

    def __init__(self, tokenizer, docker_client):
        from lis.models.scripted import assistant, tool_call
        from tests.train.test_token_exact import ReplayPolicy

        self.docker = docker_client
        self.inner = ReplayPolicy(tokenizer, [
            assistant(None, tool_call("execute_bash", {"command": "head -1 /proc/1/cgroup"}, "k1")),
            assistant(None, tool_call("execute_bash", {"command": "echo 1 > /testbed/answer.txt"}, "k2")),
            assistant("Done.", tool_call("submit", {}, "k3"))])
        self.tokenizer, self.stop_ids = tokenizer, self.inner.stop_ids
        self.killed: str | None = None

    def render(self, messages, tools=None):
        return self.inner.render(messages, tools)

    def parse(self, completion_ids, prompt_ids, tools=None):
        return self.inner.parse(completion_ids, prompt_ids, tools)

    def generate_ids(self, prompt_ids, max_new, sampling):
        import re

        if len(self.inner.replies) == 2:  # the id is in the observation of the first command
            cid = re.findall(r"/docker/([0-9a-f]{64})", self.tokenizer.decode(prompt_ids))[-1]
            self.docker.containers.get(cid).kill()
            self.killed = cid
        return self.inner.generate_ids(prompt_ids, max_new, sampling)


def _answering(tokenizer, value: int):
    from lis.models.scripted import assistant, tool_call
    from tests.train.test_token_exact import ReplayPolicy

    return ReplayPolicy(tokenizer, [
        assistant(None, tool_call("execute_bash", {"command": f"echo {value} > /testbed/answer.txt"}, "a1")),
        assistant("Done.", tool_call("submit", {}, "a2"))])


def _one_step_advantages(model_dir, tokenizer, task, policies, pool, retries: int = 0) -> tuple[list[float], list]:
    """One real GRPOTrainer step whose single group is the episodes of ``policies`` (one each, run in
    real sandboxes through our rollout and reward functions); returns TRL's advantages and the rollouts."""
    from datasets import Dataset
    from trl import GRPOConfig

    from lis.agent import AgentConfig
    from lis.prompts import render_prompts
    from lis.train.grpo.checked_trainer import CheckedGRPOTrainer
    from lis.train.grpo.trainer import rollout_output, sandbox_reward
    from lis.train.rollout.group import RolloutSettings, run_episode

    n = len(policies)
    seen: list = []

    def rollout_func(prompts, trainer):
        settings = RolloutSettings(overlong_reward=0.0, max_prompt_tokens=20000, max_episode_tokens=20000, retries=retries)
        rollouts = [run_episode(task, p, AgentConfig(max_turns=4), settings, pool=pool, seed=i)
                    for i, p in enumerate(policies)]
        seen.extend(rollouts)
        return rollout_output(rollouts)

    args = GRPOConfig(output_dir=str(model_dir.parent / f"trl-{n}"), max_steps=1, per_device_train_batch_size=n,
                      gradient_accumulation_steps=1, num_generations=n, learning_rate=1e-5, beta=0.0,
                      scale_rewards="none", loss_type="dr_grpo", max_completion_length=20000, use_cpu=True,
                      bf16=False, report_to="none", save_strategy="no", logging_steps=1, disable_tqdm=True,
                      remove_unused_columns=False, dataloader_num_workers=0, seed=0)
    trainer = CheckedGRPOTrainer(model=str(model_dir), reward_funcs=[sandbox_reward], args=args,
                                 train_dataset=Dataset.from_list([{"prompt": render_prompts(task, "sandbox")}]),
                                 processing_class=tokenizer, rollout_func=rollout_func)
    trainer.train()
    return list(trainer._logs["advantages"]), seen


@pytest.mark.docker
def test_an_errored_episode_leaves_the_advantages_of_its_group_as_if_it_had_not_run(tiny_base_dir, base_config,
                                                                                    docker_client):
    """A group of 8: four right answers, three wrong, and one episode whose sandbox is killed under it
    (a real sandbox error, not retried). TRL's advantages of the seven that ran equal, exactly, those of
    the same seven run as a group of their own; the errored one gets advantage 0 and no trained token.
    Before the fix its reward 0 entered the group mean (0.5 instead of 4/7): every advantage shifted."""
    from transformers import AutoTokenizer

    from lis.sandbox import SandboxPool

    tok = AutoTokenizer.from_pretrained(tiny_base_dir)
    task = lookup_task(0, 4242)
    values = [4242, 1, 4242, 2, 4242, 3, 4242]

    with SandboxPool(base_config, max_concurrent=2) as pool:
        killer = KillOwnSandbox(tok, docker_client)
        policies = [_answering(tok, v) for v in values]
        policies.insert(2, killer)
        with_error, rollouts = _one_step_advantages(tiny_base_dir, tok, task, policies, pool)
        alone, clean = _one_step_advantages(tiny_base_dir, tok, task, [_answering(tok, v) for v in values], pool)
    assert killer.killed, "the killing episode never reached its second turn"
    bad = rollouts[2]
    assert bad.error and bad.record.termination == "sandbox_error" and sum(bad.sample["env_mask"]) == 0, bad.record
    assert [r.raw_reward for r in clean] == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    assert with_error[2] == 0.0
    assert with_error[:2] + with_error[3:] == pytest.approx(alone, abs=1e-7), (with_error, alone)
    assert alone == pytest.approx([3 / 7, -4 / 7, 3 / 7, -4 / 7, 3 / 7, -4 / 7, 3 / 7], abs=1e-6)


# -- one sampling policy, and the rollout's log-probs equal TRL's recomputation ---------------------------------
QWEN3_INSTRUCT_GENERATION = {"do_sample": True, "temperature": 0.7, "top_p": 0.8, "top_k": 20}


@pytest.mark.trained_behaviour
@pytest.mark.docker
def test_rollout_logprobs_equal_trls_recomputation_under_one_explicit_sampling_policy(tiny_dir, base_config,
                                                                                      tmp_path):
    """Real rollouts of the tiny agent in real sandboxes, one GRPO step (2 prompts x 4 samples). The model's
    generation config says what Qwen3-4B-Instruct's does (T 0.7, top-p 0.8, top-k 20); the RL recipe says
    T 1.0, top-p 1, no top-k. The engine must sample with the recipe's policy (not fall back to the
    generation config) and TRL must be told the same; then, on every trained token (sampled, mask 1), the
    log-probability TRL recomputes in its loss equals the engine's within 1e-4 (fp32): importance
    ratio 1. Before the fix the engine drew with top-k 20 while TRL assumed none."""
    from lis.agent import AgentConfig
    from lis.sandbox import SandboxPool
    from lis.train.grpo.trainer import train_grpo

    model = tmp_path / "policy"
    shutil.copytree(tiny_dir, model)
    gen = json.loads((model / "generation_config.json").read_text()) if (model / "generation_config.json").is_file() \
        else {}
    (model / "generation_config.json").write_text(json.dumps({**gen, **QWEN3_INSTRUCT_GENERATION}))
    tasks = [lookup_task(i, 5000 + i) for i in range(2)]
    s = sections.grpo(prompts_per_step=2, samples_per_prompt=4, steps=1, lr=1e-4, max_tokens_per_turn=96,
                      max_turns=3, max_prompt_tokens=6144, max_episode_tokens=1024, save_every=10, threads=2,
                      top_k=None)
    with SandboxPool(base_config, max_concurrent=8, warm=8) as pool:
        summary = train_grpo(model, tasks, tmp_path / "out", s, agent_cfg=AgentConfig(), pool=pool, mode="sandbox",
                             ckpt_dir=tmp_path / "ckpt", log_path=tmp_path / "ckpt" / "steps.jsonl")
    recipe = {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "repetition_penalty": 1.0}
    assert summary["sampling"] == {"engine": recipe, "trl": recipe}, summary["sampling"]
    (row,) = _steps(tmp_path / "ckpt" / "steps.jsonl")
    assert row["errors"] == 0 and row["turns_mean"] > 1 and row["tool_calls_mean"] > 0, row
    assert row["trained_tokens"] > 100, row
    assert row["logprob_diff_max"] <= 1e-4, row
    assert 1 - 1e-4 <= row["is_ratio_min"] <= row["is_ratio_max"] <= 1 + 1e-4, row
