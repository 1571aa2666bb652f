"""The classifier on hand-made turns: following the scripts the model writes (editor, here-documents,
echo), edits after creation, paths, shell scripts, local imports, what counts as a turn."""
from __future__ import annotations

from lis.analysis.behaviour import EXCLUDED, classify_episode, parse_command
from lis.analysis.behaviour.shell import Code, Run, Write
from tests.analysis.behaviour_helpers import bash, call, edit, episode, submit

FETCH = "import requests\nr = requests.get('https://example.org')\nprint(r.status_code)\n"


def caps(ep):
    return [t.capabilities for t in classify_episode(ep).per_turn]


def test_editor_created_script_counts_when_it_runs_not_when_it_is_written():
    v = classify_episode(episode(
        edit("create", "/testbed/solve.py", file_text="import itertools\nprint(len(list(itertools.permutations('abc'))))\n"),
        bash("cd /testbed && python3 solve.py"),
        bash("python3 /testbed/solve.py && python3 solve.py"),
        submit()))
    assert [t.capabilities for t in v.per_turn] == [(), ("compute",), ("compute",), ()]
    run = v.per_turn[1]
    # running the script is computation (run-interpreter); what it contains adds its own rules
    assert run.followed == ("/testbed/solve.py",) and run.rules == ("run-interpreter", "itertools")
    assert run.evidence[0].where == "bash" and run.evidence[0].text == "python3"
    assert run.evidence[1].where == "script /testbed/solve.py" and run.evidence[1].text == "itertools"
    assert v.turns_using("compute") == 2  # the third turn runs it twice: one turn, counted once


def test_heredoc_written_script_then_run_in_the_same_and_a_later_turn():
    write = f"cat > /tmp/fetch.py <<'EOF'\n{FETCH}EOF"
    assert caps(episode(bash(write), bash("python3 /tmp/fetch.py"))) == [(), ("external", "compute")]
    assert caps(episode(bash(f"{write}\npython3 /tmp/fetch.py"))) == [("external", "compute")]
    # the body of a here-document that only writes a file is not searched as shell text
    assert caps(episode(bash("cat > notes.md <<'EOF'\ngrep this\ncurl that\nEOF"))) == [()]
    # cat <<EOF > f (operator first), tee, and an unquoted delimiter
    assert caps(episode(bash(f"cat << EOF > /tmp/f.py\n{FETCH}EOF"), bash("cd /tmp; python f.py"))) == \
        [(), ("external", "compute")]
    assert caps(episode(bash(f"cat <<'X' | tee /tmp/g.py\n{FETCH}X"), bash("python3 /tmp/g.py"))) == \
        [(), ("external", "compute")]


def test_script_edited_after_creation_is_followed_as_of_each_run():
    ep = episode(
        edit("create", "/testbed/s.py", file_text="x = 1\nprint(x)\n"),
        bash("python3 /testbed/s.py"),
        edit("str_replace", "/testbed/s.py", old_str="print(x)", new_str=FETCH),
        bash("python3 /testbed/s.py"),
        edit("insert", "/testbed/s.py", insert_line=0, new_str="import itertools"),
        bash("python3 /testbed/s.py"),
        edit("create", "/testbed/s.py", file_text="print('rewritten')\n"),
        bash("python3 /testbed/s.py"))
    # every run is computation; what the file holds at each run decides the rest
    assert caps(ep) == [(), ("compute",), (), ("external", "compute"), (), ("external", "compute"), (), ("compute",)]
    rules = [classify_episode(ep).per_turn[i].rules for i in (1, 3, 5, 7)]
    assert rules == [("run-interpreter",), ("run-interpreter", "http-client"),
                     ("run-interpreter", "http-client", "itertools"), ("run-interpreter",)]


def test_a_refused_edit_does_not_change_the_known_file():
    ep = episode(
        edit("create", "/testbed/s.py", file_text="print(1)\n"),
        call("str_replace_editor", {"command": "str_replace", "path": "/testbed/s.py", "old_str": "nothere",
                                    "new_str": "import itertools"}, error="editor"),
        bash("python3 /testbed/s.py"))
    assert caps(ep) == [(), (), ("compute",)]
    assert classify_episode(ep).per_turn[2].rules == ("run-interpreter",)  # not itertools


def test_echo_and_printf_written_scripts_and_copies_are_followed():
    assert caps(episode(bash("echo 'import sympy' > /testbed/e.py && python3 /testbed/e.py"))) == [("compute",)]
    assert caps(episode(bash("printf 'for i in range(3):\\n    print(i)\\n' > p.py"), bash("python3 p.py"))) == \
        [(), ("compute",)]
    assert caps(episode(edit("create", "/testbed/a.py", file_text=FETCH), bash("cp /testbed/a.py /tmp/b.py"),
                        bash("python3 /tmp/b.py"))) == [(), ("file",), ("external", "compute")]
    v = classify_episode(episode(bash("printf 'for i in range(3):\\n    print(i)\\n' > p.py"), bash("python3 p.py")))
    assert v.per_turn[1].rules == ("run-interpreter", "range")


def test_paths_resolve_against_the_working_directory_across_turns():
    ep = episode(bash("mkdir -p /testbed/work && cd /testbed/work"),
                 edit("create", "/testbed/work/x.py", file_text="import glob\nprint(glob.glob('*'))\n"),
                 bash("python3 x.py"),
                 bash("cd /tmp && python3 ../testbed/work/x.py"))
    assert caps(ep) == [("file",), (), ("file", "compute"), ("file", "compute")]


def test_shell_scripts_run_by_bash_source_and_path_are_followed():
    sh = "#!/bin/bash\ngrep -c Franks /testbed/documents/a.txt\npython3 -c \"import sympy; print(sympy.sqrt(8))\"\n"
    for run in ("bash run.sh", "sh /testbed/run.sh", "source run.sh", "chmod +x run.sh && ./run.sh",
                "chmod +x /testbed/run.sh && /testbed/run.sh"):
        v = classify_episode(episode(edit("create", "/testbed/run.sh", file_text=sh), bash(f"cd /testbed && {run}")))
        assert v.per_turn[1].capabilities == ("file", "compute"), run
        assert {e.where for e in v.per_turn[1].evidence} == {"bash", "script /testbed/run.sh",
                                                             "script /testbed/run.sh: python -c"}
    # a python file run by its path is read as Python (extension or shebang)
    v = classify_episode(episode(edit("create", "/testbed/go", file_text="#!/usr/bin/env python3\nimport itertools\n"),
                                 bash("/testbed/go")))
    assert v.per_turn[1].capabilities == ("compute",)


def test_local_imports_of_a_followed_script_are_followed_and_recursion_ends():
    ep = episode(edit("create", "/testbed/helper.py", file_text="from scipy.optimize import brentq\n"),
                 edit("create", "/testbed/main.py", file_text="import helper\nprint(helper.brentq)\n"),
                 bash("python3 /testbed/main.py"))
    v = classify_episode(ep)
    assert v.per_turn[2].capabilities == ("compute",)
    assert v.per_turn[2].followed == ("/testbed/main.py", "/testbed/helper.py")
    loop = episode(edit("create", "/testbed/a.sh", file_text="ls /testbed\nbash /testbed/a.sh\n"), bash("bash /testbed/a.sh"))
    assert caps(loop) == [(), ("file", "compute")]


def test_a_script_never_seen_counts_only_its_command_and_a_partial_edit_counts_what_it_added():
    assert classify_episode(episode(bash("python3 /testbed/unknown.py"))).per_turn[0].rules == ("run-interpreter",)
    ep = episode(edit("str_replace", "/testbed/pre.py", old_str="pass", new_str="import itertools"),
                 bash("python3 /testbed/pre.py"))
    assert caps(ep) == [(), ("compute",)] and classify_episode(ep).per_turn[1].rules == ("run-interpreter", "itertools")


def test_inline_python_is_python_and_its_text_is_not_shell():
    assert caps(episode(bash('python3 -c "import itertools; print(1 << 3)"\nls'))) == [("file", "compute")]
    # grep inside Python code is not the grep command; the find method is not find(1)
    assert caps(episode(bash("python3 -c \"import re; print('grep'.find('e'))\""))) == [("compute",)]
    assert caps(episode(bash("python3 - <<'EOF'\nwith open('/testbed/a.txt') as f:\n    print(f.read())\nEOF"))) == \
        [("file", "compute")]
    assert caps(episode(bash("cat <<'EOF' | python3\nimport itertools\nEOF"))) == [("compute",)]


def test_what_a_turn_is_and_which_calls_count():
    v = classify_episode(episode(
        "I think the answer is 4.",                                          # a turn without a tool call
        (bash("ls /testbed"), bash("python3 -c 'import itertools'"), bash("grep -r x /testbed")),  # one turn, 3 calls
        call("execute_bash", None, error="bad_json"),                        # did not run
        call("delete_everything", {"command": "curl x"}, error="unknown_tool"),
        call("execute_bash", {}, error="missing_argument"),
        submit()))
    assert v.turns == 6 and v.calls == 7
    assert [t.capabilities for t in v.per_turn] == [(), ("file", "compute"), (), (), (), ()]
    assert v.per_turn[1].calls == 3 and v.per_turn[1].rules == ("shell-list", "run-interpreter", "itertools", "grep")
    assert v.turns_using("file") == 1 and v.turns_using_any() == 1


def test_vanilla_and_error_episodes():
    v = classify_episode(episode("Let's verify: \\boxed{4}", mode="vanilla", termination="answered"))
    assert v.turns == 1 and v.turns_using_any() == 0 and v.included
    for term in ("model_error", "sandbox_error", "error", "interrupted"):
        assert not classify_episode(episode(bash("ls"), termination=term)).included


def test_excluded_endings_are_the_journals():
    from lis.eval.journal import INFRA, INTERRUPTED

    assert EXCLUDED == INFRA | {INTERRUPTED}


def test_parse_command_events():
    p = parse_command("cd /testbed && cat > x.py <<'EOF'\nprint(1)\nEOF\npython3 x.py 2>&1 | tail -3")
    assert p.shell_text == "cd /testbed && cat > x.py <<'EOF'\npython3 x.py 2>&1 | tail -3"
    kinds = [type(e).__name__ for e in p.events]
    assert kinds == ["Cd", "Write", "Run"]
    assert p.events[1] == Write("x.py", "print(1)\n", False, "heredoc", p.events[1].pos)
    assert isinstance(p.events[2], Run) and p.events[2].runner == "python"
    p = parse_command("python3 -m pip install x; python -u y.py; sh -c 'ls'")
    assert [(type(e).__name__, getattr(e, "path", None)) for e in p.events] == [("Run", "y.py")]
    p = parse_command("python3 -c 'print(\"a\")' && python3 -c \"print('it'\\''s')\"")
    assert [e.text for e in p.events if isinstance(e, Code)] == ['print("a")', "print('it'\\''s')"]


def test_scripts_are_followed_three_levels_deep_and_no_deeper():
    """A turn runs s1.sh, which runs s2.sh, which runs s3.sh, which runs s4.sh: the first three are read
    (MAX_DEPTH 3: their rules count), the fourth is not (its curl is not evidence); the same for imports."""
    files = [edit("create", f"/testbed/s{k}.sh", file_text=f"grep -c x /testbed/f{k}\nbash /testbed/s{k + 1}.sh\n")
             for k in (1, 2, 3)]
    files.append(edit("create", "/testbed/s4.sh", file_text="curl https://example.org\n"))
    v = classify_episode(episode(*files, bash("bash /testbed/s1.sh")))
    last = v.per_turn[-1]
    assert last.followed == ("/testbed/s1.sh", "/testbed/s2.sh", "/testbed/s3.sh")
    assert {e.where for e in last.evidence} >= {"script /testbed/s3.sh"}
    assert "external" not in last.capabilities and "file" in last.capabilities
    mods = [edit("create", f"/testbed/m{k}.py", file_text=f"import m{k + 1}\n") for k in (1, 2, 3)]
    mods.append(edit("create", "/testbed/m4.py", file_text="import requests\nrequests.get('https://example.org')\n"))
    v = classify_episode(episode(*mods, bash("python3 /testbed/m1.py")))
    assert v.per_turn[-1].followed == ("/testbed/m1.py", "/testbed/m2.py", "/testbed/m3.py")
    assert "external" not in v.per_turn[-1].capabilities
    # one level less deep, the fourth file is read: its request is evidence
    v = classify_episode(episode(*mods, bash("python3 /testbed/m2.py")))
    assert v.per_turn[-1].followed == ("/testbed/m2.py", "/testbed/m3.py", "/testbed/m4.py")
    assert "external" in v.per_turn[-1].capabilities
