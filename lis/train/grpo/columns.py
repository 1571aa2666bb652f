"""The columns of GRPO's per-step log (``train_log.csv``: DVC plots, ``lis train compare``, the report),
and how a step's list is written in one cell."""
from __future__ import annotations

from typing import Any

PLOT_COLUMNS = ("step", "reward_mean", "reward_std", "raw_reward_mean", "groups_with_variance", "solve_all",
                "solve_none", "turns_mean", "tool_calls_mean", "episode_tokens_mean", "masked_fraction",
                "drift_episodes", "errors", "overlong", "submitted_rate", "wrong_rate", "policy_fault_rate",
                "infra_error_rate", "command_timeouts", "malformed_calls", "turns_cut", "oom_commands",
                "retried_episodes", "loss", "loss_value", "grad_norm", "learning_rate", "is_ratio_min",
                "is_ratio_mean", "is_ratio_max", "logprob_diff_mean", "logprob_diff_max", "is_masked_fraction", "seq_logratio_mean",
                "seq_logratio_min", "seq_logratio_per_1k_tokens", "trained_tokens", "loss_calls",
                "loss_calls_eval_mode", "wall_clock_limited", "concurrent_output", "unordered_output", "task_ids", "group_rewards", "episodes_sha256", "rollout_s",
                "longest_episode_s", "step_s")
TIME_COLUMNS = ("rollout_s", "longest_episode_s", "step_s")  # what differs between two runs of the same seed


def cell(value: Any) -> Any:
    """A train_log.csv cell: a step's list (its prompts' task ids, its groups' mean rewards) as one
    ';'-joined field, so that two runs' logs pair step by step (``lis report``, the rerun tests)."""
    if isinstance(value, (list, tuple)):
        return ";".join("" if v is None else str(v) for v in value)
    return value
