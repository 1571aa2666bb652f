"""The logit shaping of the local sampler (top-k, top-p, repetition penalty, temperature)."""
from __future__ import annotations

import math

import pytest
import torch

from lis.models.sampler import Rule, pick_tokens, shape_rows


def shape_logits(logits: torch.Tensor, seen: torch.Tensor | None, *settings) -> torch.Tensor:
    """The shaped logits of one row (1-D)."""
    return shape_rows(logits.unsqueeze(0), [seen], *settings)[0]


def kept(x: torch.Tensor) -> list[int]:
    return [i for i, v in enumerate(x.tolist()) if v != float("-inf")]


def test_top_k_keeps_the_k_best():
    x = torch.tensor([1.0, 5.0, 3.0, 4.0])
    assert kept(shape_logits(x, None, 1.0, 2, None, None)) == [1, 3]


def test_top_p_keeps_the_smallest_prefix_reaching_p():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    x = probs.log()
    assert kept(shape_logits(x, None, 1.0, None, 0.5, None)) == [0]
    assert kept(shape_logits(x, None, 1.0, None, 0.8, None)) == [0, 1]
    assert kept(shape_logits(x, None, 1.0, None, 0.81, None)) == [0, 1, 2]


def test_temperature_and_repetition_penalty():
    x = torch.tensor([2.0, -2.0, 1.0])
    out = shape_logits(x, torch.tensor([0, 1]), 0.5, None, None, 2.0)
    assert out.tolist() == [2.0, -8.0, 2.0]  # 2/2/0.5, -2*2/0.5, 1/0.5
    assert x.tolist() == [2.0, -2.0, 1.0]    # input untouched
    assert not math.isinf(shape_logits(x, None, 1.0, 0, 1.0, 1.0).min())  # 0 / 1.0 mean "off"


def naive_shape(x: torch.Tensor, temperature: float, top_k: int | None, top_p: float | None) -> torch.Tensor:
    """The rule written out for one row with a full sort (what shape_rows must equal)."""
    x = x / temperature
    if top_k:
        kth = torch.sort(x, descending=True).values[top_k - 1]
        x = x.masked_fill(x < kth, float("-inf"))
    if top_p:
        sorted_x, order = torch.sort(x, descending=True)
        p = torch.softmax(sorted_x, dim=-1)
        x = x.clone()
        x[order[(p.cumsum(-1) - p) >= top_p]] = float("-inf")
    return x


def test_batched_shaping_equals_the_rule_row_by_row():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(16, 300, generator=g) * 3
    logits[3, :40] = 2.5  # ties at the k-th value: all tied logits stay in the top-k
    for top_k, top_p in [(20, 0.8), (None, 0.8), (20, None), (5, 0.99), (20, 0.05)]:
        got = shape_rows(logits, None, 0.7, top_k, top_p, None)
        for i in range(logits.shape[0]):
            assert kept(got[i]) == kept(naive_shape(logits[i], 0.7, top_k, top_p)), (top_k, top_p, i)


def test_rows_picked_together_equal_rows_picked_alone():
    logits = torch.randn(6, 200, generator=torch.Generator().manual_seed(1))
    settings = [(0.7, 20, 0.8, None), (1.0, None, None, None), (0, None, None, None),
                (0.7, 20, 0.8, None), (1.0, 5, None, 1.3), (0.7, 20, 0.8, None)]
    def rules():
        return [Rule(torch.Generator().manual_seed(10 + i), t, k, p, r, torch.tensor([1, 2, 3]))
                for i, (t, k, p, r) in enumerate(settings)]
    together = pick_tokens(logits, rules())
    alone = [pick_tokens(logits[i:i + 1], [rule])[0] for i, rule in enumerate(rules())]
    assert [t for t, _ in together] == [t for t, _ in alone]
    assert [lp for _, lp in together] == pytest.approx([lp for _, lp in alone], abs=1e-6)
    assert together[2][0] == int(torch.argmax(logits[2]))  # greedy
    assert together[2][1] == pytest.approx(float(torch.log_softmax(logits[2], -1)[together[2][0]]), abs=1e-6)


def test_draws_follow_the_shaped_distribution_and_never_a_removed_token():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05, 0.0])
    x = probs.clamp_min(1e-30).log()
    g = torch.Generator().manual_seed(7)
    n = 20000
    draws = [pick_tokens(x.unsqueeze(0), [Rule(g, 1.0, 3, None)])[0][0] for _ in range(n)]
    counts = [draws.count(i) for i in range(5)]
    assert counts[3] == counts[4] == 0  # outside the top 3
    target = probs[:3] / probs[:3].sum()
    for c, p in zip(counts, target.tolist()):
        assert abs(c / n - p) < 4 * math.sqrt(p * (1 - p) / n), (counts, target)
    again = [pick_tokens(x.unsqueeze(0), [Rule(torch.Generator().manual_seed(7), 1.0, 3, None)])[0][0]]
    assert again[0] == draws[0]  # seeded: the same first draw
