"""Who an RL episode's ending belongs to (lis/train/rollout/outcome.py): the endings of the agent loop mapped
to outcomes, the server's failures never the policy's."""
from __future__ import annotations

import pytest

from lis.agent.trajectory import FINISHED, INFRA, Trajectory
from lis.train.rollout.outcome import classify

pytestmark = [pytest.mark.training]  # tests/train's rule (tests/test_markers.py); it trains nothing


@pytest.mark.parametrize("termination, reward, want", [
    ("submitted", 1.0, ("submitted", None)),
    ("submitted", 0.0, ("wrong", None)),
    ("submitted", None, ("infra_error", None)),          # no scorer: nothing to learn from
    ("max_turns", None, ("policy_fault", "turn_budget")),
    ("token_budget", None, ("policy_fault", "token_budget")),
    ("timeout", None, ("policy_fault", "episode_timeout")),   # its commands used the time
    ("model_timeout", None, ("infra_error", None)),       # the server gave no answer in time
    ("model_error", None, ("infra_error", None)),
    ("sandbox_error", None, ("infra_error", None)),
    ("interrupted", None, ("infra_error", None)),
])
def test_each_ending_has_its_outcome(termination, reward, want):
    rec = Trajectory(task_id="t", model="m", mode="sandbox", termination=termination)
    assert classify(rec, acted=True, reward=reward) == want


def test_an_ending_is_either_finished_or_an_error():
    assert not FINISHED & INFRA and "model_timeout" in INFRA and "timeout" in FINISHED
