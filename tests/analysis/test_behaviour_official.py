"""The importers from the authors' formats, on an excerpt of two published episodes (both
observation styles, the CLI's output/<timestamp>/trajectory.json layout; provenance in each file)
and on hand-made benchmark-runner and RL-rollout files; then the classifier on what they made."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lis.analysis.behaviour import classify_episode, import_official, import_rl_jsonl, official_files
from lis.errors import LisError

FIXTURES = Path(__file__).parent / "fixtures" / "official"
OUTPUT = FIXTURES / "output"


def test_the_fixture_excerpts_say_where_they_come_from():
    for f in OUTPUT.glob("*/trajectory.json"):
        prov = json.loads(f.read_text())["_provenance"]
        assert "llm-in-sandbox/llm-in-sandbox.github.io@ab2c2c9f8462c91bf2c7c9e25f4368635ec9cea4" in prov


def test_cli_layout_both_observation_styles():
    assert [p.parent.name for p in official_files([OUTPUT])] == ["20260119_123000", "20260119_124500"]
    math, music = import_official([OUTPUT], model="authors", domain="demo")
    # style 1 (math): "Exit code: 0\nExecution output of \[execute_bash]:\n\[STDOUT]...", reasoning_content
    assert math.task_id == "20260119_123000" and math.model == "authors" and math.domain == "demo"
    assert math.mode == "sandbox" and math.termination == "submitted" and math.answer == "\\boxed{588}"
    assert [c.tool for s in math.steps for c in s.calls] == ["str_replace_editor", "execute_bash",
                                                              "str_replace_editor", "submit"]
    run = math.steps[1].calls[0]
    assert run.arguments == {"command": "cd /testbed && python compute.py"}
    assert run.observation.startswith("Exit code: 0\nExecution output of \\[execute_bash]:") and run.exit_code == 0
    assert math.steps[0].reasoning and math.steps[0].llm_latency_s == pytest.approx(37.25501871109009)
    assert math.turns == 4 and math.messages[0]["role"] == "user"
    # style 2 (music): raw output, thought; no submit in the excerpt
    assert music.steps[2].calls[0].observation == "(no output)" and music.steps[2].calls[0].exit_code is None
    assert music.steps[0].content and music.termination == "truncated"
    # one folder, one file: the same record
    [again] = import_official([OUTPUT / "20260119_123000"])
    [file] = import_official([OUTPUT / "20260119_123000" / "trajectory.json"])
    assert again.to_dict() == file.to_dict() and again.model == "official"


def test_classifier_on_the_published_excerpt():
    math, music = import_official([OUTPUT])
    vm = classify_episode(math)
    assert [t.capabilities for t in vm.per_turn] == [(), ("compute",), (), ()]
    assert vm.per_turn[1].followed == ("/testbed/compute.py",) and vm.per_turn[1].rules == ("run-interpreter", "range")
    vs = classify_episode(music)
    assert [t.capabilities for t in vs.per_turn] == [("file",), (), ("external",), ("file", "compute")]
    assert vs.per_turn[0].rules == ("editor-view",) and vs.per_turn[2].rules == ("pip-install",)
    assert vs.per_turn[3].followed == ("/testbed/compose_music.py",)


def _step(n, function, parameters, observation, thought=""):
    return {"thought": thought, "reasoning_content": "", "action": {"function": function, "parameters": parameters},
            "observation": observation, "metadata": {"step": n, "exec_time": 1.5}}


def test_benchmark_layout_with_results_json(tmp_path):
    run = tmp_path / "20260120_101500_math_Qwen_Qwen3-4B_LLMinSandbox"
    run.mkdir()
    steps = [_step(1, "execute_bash", {"command": "python3 -c 'import sympy'"},
                   "Exit code: Error: Exit code 1\nExecution output of \\[execute_bash]:\n\\[STDOUT]\n"),
             _step(2, "str_replace_editor", {"command": "str_replace", "path": "/testbed/a.py", "old_str": "x",
                                             "new_str": "y"},
                   "ERROR: No replacement was performed, old_str `x` did not appear verbatim in /testbed/a.py."),
             _step(3, "", {}, "You forgot to use a function call"),
             _step(4, "submit", {}, "<<< Finished >>>")]
    (run / "trajectory.json").write_text(json.dumps({
        "p1": {"problem_statement": "2+2?", "trajectory": steps, "reward": 1.0, "agent_answer": "4", "ground_truth": "4"},
        "p2": {"problem_statement": "3+3?", "trajectory": steps[:1], "reward": 0.0, "agent_answer": "", "ground_truth": "6"}}))
    (run / "results.json").write_text(json.dumps({"task": "math", "config": {"mode": "sandbox", "llm_name": "Qwen/Qwen3-4B"}}))
    p1, p2 = import_official([run])
    assert (p1.task_id, p1.model, p1.domain, p1.mode, p1.reward, p1.answer) == ("p1", "Qwen_Qwen3-4B", "math", "sandbox", 1.0, "4")
    assert p1.steps[0].calls[0].exit_code == 1 and p1.steps[1].calls[0].error == "editor"
    assert p1.steps[2].calls == [] and p1.termination == "submitted" and p2.termination == "truncated"
    assert [t.capabilities for t in classify_episode(p1).per_turn] == [("compute",), (), (), ()]
    # a vanilla benchmark run: the answer is the response
    van = tmp_path / "20260120_101600_math_m_vanillaLLM"
    van.mkdir()
    (van / "trajectory.json").write_text(json.dumps({"p1": {"problem_statement": "2+2?", "trajectory": [],
                                                            "agent_answer": "Let's verify: 4", "reward": 1}}))
    [v] = import_official([van])
    assert v.mode == "vanilla" and v.model == "m" and v.steps[0].content == "Let's verify: 4" and v.termination == "answered"


def test_rl_chat_completions(tmp_path):
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Q?"},
            {"role": "assistant", "content": "look", "reasoning": "hmm",
             "tool_calls": [{"id": "a1", "type": "function",
                             "function": {"name": "execute_bash", "arguments": json.dumps({"command": "ls /testbed/documents"})}}]},
            {"role": "tool", "tool_call_id": "a1", "content": "Exit code: 0\nExecution output of [execute_bash]:\n[STDOUT]\ndoc1.txt"},
            {"role": "assistant", "content": "no call"},
            {"role": "user", "content": "You forgot to use a function call"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "a2", "type": "function",
                                                                  "function": {"name": "submit", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a2", "content": "<<< Finished >>>"}]
    f = tmp_path / "150.jsonl"
    f.write_text(json.dumps({"chat_completions": msgs, "trajectory_reward": 1.0,
                             "entry": {"id": "q7", "domain": "instruct_pretrain"}}) + "\n")
    [rec] = import_rl_jsonl([f], model="grpo")
    assert (rec.task_id, rec.domain, rec.model, rec.turns, rec.termination) == ("q7", "instruct_pretrain", "grpo", 3, "submitted")
    assert rec.steps[0].calls[0].exit_code == 0 and "doc1.txt" in rec.steps[0].calls[0].observation
    assert rec.steps[0].reasoning == "hmm" and rec.steps[1].calls == []
    assert [t.capabilities for t in classify_episode(rec).per_turn] == [("file",), (), ()]


def test_bad_inputs_are_one_line_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    cases = [([tmp_path / "nope"], "does not exist"),
             ([tmp_path / "empty"], "holds no trajectory.json")]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "trajectory.json").write_text("{not json")
    cases.append(([bad], "is not JSON"))
    other = tmp_path / "other"
    other.mkdir()
    (other / "trajectory.json").write_text(json.dumps({"hello": 1}))
    cases.append(([other], "is not an llm-in-sandbox trajectory"))
    for paths, message in cases:
        with pytest.raises(LisError) as e:
            import_official(paths)
        assert message in str(e.value) and "\n" not in e.value.one_line()
    rl = tmp_path / "x.jsonl"
    rl.write_text('{"entry": {}}\n')
    with pytest.raises(LisError, match="line 1 has no chat_completions"):
        import_rl_jsonl([rl])
