"""The log-probability :func:`lis.models.sampler.pick_tokens` reports under top-k / top-p / temperature /
repetition penalty: the drawn token's under the *shaped* distribution (vLLM's ``processed_logprobs``),
computed here by hand in float64 (the kept set, renormalised), never the unshaped ``log_softmax(x / T)``."""
from __future__ import annotations

import math

import pytest
import torch

from lis.models.sampler import Rule, pick_tokens

# (temperature, top_k, top_p, repetition_penalty): the settings the rollouts and evaluations use
SETTINGS = [(0.7, 20, None, None), (1.0, None, 0.8, None), (0.7, 20, 0.8, None), (1.3, 7, 0.95, None),
            (1.0, None, None, 1.3), (0.7, 20, 0.8, 1.3)]
SEEN = torch.tensor([0, 3, 5, 8, 13, 21, 34, 55, 89])  # the ids so far, for the repetition penalty


def fixed_logits(rows: int = 5, vocab: int = 150) -> torch.Tensor:
    logits = torch.randn(rows, vocab, generator=torch.Generator().manual_seed(2024)) * 2.5
    logits[1, :30] = 1.75       # ties at the k-th value (all tied logits stay in the top-k)
    logits[2] = logits[2] * 0.1  # nearly flat: top-p keeps most of the vocabulary
    logits[3, 7] = 12.0         # one token dominates: top-p keeps it alone
    return logits


def by_hand(row: torch.Tensor, temperature: float, top_k: int | None, top_p: float | None,
            penalty: float | None, seen: torch.Tensor | None) -> tuple[torch.Tensor, list[int], float]:
    """(the penalised logits / T, the kept token ids, the kept mass of softmax(penalised / T)), in
    float64 with a plain sort: repetition penalty (divide positive logits, multiply negative ones of the
    seen ids), temperature, then top-k (every logit >= the k-th largest), then top-p (the smallest
    prefix of the sorted kept tokens whose renormalised mass reaches p)."""
    x = row.double().clone()
    if penalty is not None and seen is not None:
        for i in seen.tolist():
            x[i] = x[i] / penalty if x[i] > 0 else x[i] * penalty
    x = x / temperature
    order = sorted(range(len(x)), key=lambda i: -float(x[i]))
    keep = order
    if top_k is not None:
        kth = float(x[order[top_k - 1]])
        keep = [i for i in order if float(x[i]) >= kth]
    if top_p is not None:
        probs = torch.softmax(x[keep], dim=0).tolist()
        cut, total = [], 0.0
        for i, p in zip(keep, probs):
            cut.append(i)
            total += p
            if total >= top_p:
                break
        keep = cut
    mass = float(torch.softmax(x, dim=0)[keep].sum())
    return x, keep, mass


@pytest.mark.parametrize("temperature,top_k,top_p,penalty", SETTINGS)
def test_the_reported_logprob_is_the_drawn_tokens_under_the_shaped_distribution(temperature, top_k, top_p, penalty):
    """Every row, many seeded draws: the token is in the kept set, its log-prob equals the hand-computed
    ``x_t / T - logsumexp_kept(x / T)`` within 1e-6, and it differs from ``log_softmax(x / T)`` (penalised
    logits) by exactly ``-log(kept mass)``.

    Catches (checked by making each change in pick_tokens): reporting ``log_softmax(x / temperature)`` of
    the unshaped logits (every setting fails: off by log(kept mass), or by the penalty's effect, up to
    several nats here); drawing from the unshaped distribution (a token outside the kept set)."""
    logits = fixed_logits()
    rows = logits.shape[0]
    seen = SEEN if penalty is not None else None
    hand = [by_hand(logits[i], temperature, top_k, top_p, penalty, seen) for i in range(rows)]
    drawn: set[tuple[int, int]] = set()
    off = 0.0  # the largest gap to the raw log_softmax(logits / T): what the regression would report
    for draw in range(60):
        rules = [Rule(torch.Generator().manual_seed(1000 * draw + i), temperature, top_k, top_p, penalty, seen)
                 for i in range(rows)]
        for i, (tok, lp) in enumerate(pick_tokens(logits, rules)):
            x, keep, mass = hand[i]
            assert tok in keep, (i, tok, len(keep))
            want = float(x[tok] - torch.logsumexp(x[keep], dim=0))
            assert lp == pytest.approx(want, abs=1e-6), (i, tok)
            unshaped = float(torch.log_softmax(x, dim=0)[tok])  # the penalised logits / T, the whole vocabulary
            assert lp - unshaped == pytest.approx(-math.log(mass), abs=1e-6), (i, tok)
            off = max(off, abs(lp - float(torch.log_softmax(logits[i].double() / temperature, dim=0)[tok])))
            drawn.add((i, tok))
    assert off > 0.1, "the settings must change some reported log-prob (else the test shows nothing)"
    assert len(drawn) > 2 * rows  # the seeds spread the draws over the kept sets


def test_a_hand_tabulated_row():
    """Probabilities 0.5 / 0.3 / 0.15 / 0.05: top-p 0.8 keeps the first two (mass 0.8), so token 0 is
    reported as log(0.5 / 0.8) and token 1 as log(0.3 / 0.8); with top-k 3 the mass is 0.95. The same
    regressions fail here (the unshaped report gives log(0.5), log(0.3))."""
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    x = probs.log().unsqueeze(0)
    for top_k, top_p, kept_mass in ((None, 0.8, 0.8), (3, None, 0.95), (3, 0.8, 0.8)):
        seen_tokens = set()
        for seed in range(40):
            tok, lp = pick_tokens(x, [Rule(torch.Generator().manual_seed(seed), 1.0, top_k, top_p)])[0]
            assert lp == pytest.approx(math.log(float(probs[tok]) / kept_mass), abs=1e-6)
            seen_tokens.add(tok)
        assert seen_tokens == ({0, 1} if top_p else {0, 1, 2})
