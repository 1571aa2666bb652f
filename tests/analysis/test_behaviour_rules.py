"""Every rule of patterns.yaml on hand-made turns: its examples fire it, its near misses do not —
through the classifier, by every route its scope has (a shell command; Python inline, in a
here-document and in a script the model wrote and then runs; an editor call). Plus: a malformed
rules file is a one-line error, and docs/behaviour.md shows the table the data makes."""
from __future__ import annotations

import pytest

from lis.analysis.behaviour import classify_episode, load_rules, parse_rules, render_rules_markdown
from lis.errors import LisError
from tests.analysis.behaviour_helpers import bash, edit, episode
from tests.conftest import ROOT

RULES = load_rules()


def routes(scope: str, text: str):
    """(name, episode, index of the turn that must carry the verdict) for one text of a scope."""
    if scope == "bash":
        yield "command", episode(bash(text)), 0
    elif scope == "python":
        yield "heredoc", episode(bash(f"cd /testbed && python3 - <<'PYEOF'\n{text}\nPYEOF")), 0
        yield "script", episode(edit("create", "/testbed/t.py", file_text=text), bash("cd /testbed && python3 t.py")), 1
    else:
        command, path = text.split(" ", 1)
        yield "editor", episode(edit(command, path, file_text="x")), 0


CASES = [(r.id, "example", s, t) for r in RULES.rules for s, t in r.examples] + \
        [(r.id, "near miss", s, t) for r in RULES.rules for s, t in r.near_misses]


@pytest.mark.parametrize("rule_id,kind,scope,text", CASES, ids=[f"{c[0]}:{c[1]}:{i}" for i, c in enumerate(CASES)])
def test_rule_on_hand_made_turns(rule_id, kind, scope, text):
    for name, ep, turn in routes(scope, text):
        verdict = classify_episode(ep, RULES)
        fired = rule_id in verdict.per_turn[turn].rules
        assert fired == (kind == "example"), f"{rule_id} {kind} via {name}: {text!r} -> {verdict.per_turn[turn].rules}"
        if kind == "example":
            cap = next(r.capability for r in RULES.rules if r.id == rule_id)
            assert cap in verdict.per_turn[turn].capabilities
            if name == "script":  # writing the script is not using it; running it is
                assert verdict.per_turn[0].rules == ()


def test_every_rule_has_examples_and_near_misses_and_every_capability_has_rules():
    assert {r.capability for r in RULES.rules} == set(RULES.capability_ids) == {"external", "file", "compute"}
    assert all(r.examples and r.near_misses for r in RULES.rules)
    assert {r.source for r in RULES.rules} == {"paper", "added"}
    # the paper's listed patterns (paper_numbers.md §3, S1's "Table 15") each have a rule that fires
    listed = {"bash": ["pip install x", "apt-get install -y x", "curl -s u", "wget u", "cat f", "grep x f", "find . -name x"],
              "python": ["requests.get(u)", "from bs4 import BeautifulSoup", "import rdkit", "from Bio import SeqIO",
                         "open('f')", "json.load(f)", "pd.read_csv('f')", "os.path.join(a, b)", "import pathlib",
                         "glob.glob('*')", "pickle.load(f)", "np.load('x.npy')", "import scipy.optimize",
                         "fsolve(f, 0)", "minimize(f, x0)", "odeint(f, y0, t)", "solve_ivp(f, t, y)", "quad(f, 0, 1)",
                         "range(3)", "while x:\n    pass", "itertools.permutations(a)", "combinations(a, 2)"]}
    for scope, texts in listed.items():
        for text in texts:
            ep = episode(bash(text)) if scope == "bash" else episode(bash(f"python3 - <<'E'\n{text}\nE"))
            assert classify_episode(ep, RULES).per_turn[0].capabilities, (scope, text)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["rules"][0].pop("pattern"), "missing key 'pattern'"),
    (lambda d: d["rules"][0].update(capability="network"), "unknown capability 'network'"),
    (lambda d: d["rules"][0].update(scopes=["shell"]), "scopes must be a non-empty subset"),
    (lambda d: d["rules"][0].update(pattern="(unclosed"), "pattern does not compile"),
    (lambda d: d["rules"][0].update(pattern="{nope}x"), "unknown macro {nope}"),
    (lambda d: d["rules"].append(dict(d["rules"][0])), "is defined twice"),
    (lambda d: d["rules"][0].update(near_misses=[]), "'near_misses' must be a non-empty list"),
    (lambda d: d["reasoning"]["combined"].update(x=["nope"]), "combined row 'x'"),
])
def test_a_malformed_rules_file_is_a_one_line_error(mutate, message):
    import yaml

    data = yaml.safe_load(RULES_TEXT)
    mutate(data)
    with pytest.raises(LisError) as e:
        parse_rules(data)
    assert message in str(e.value) and "\n" not in e.value.one_line()


RULES_TEXT = (ROOT / "lis/analysis/behaviour/patterns.yaml").read_text()


def test_docs_show_the_table_the_data_makes():
    doc = (ROOT / "docs/behaviour.md").read_text()
    begin, end = "<!-- behaviour-rules:begin -->\n", "<!-- behaviour-rules:end -->"
    assert begin in doc and end in doc
    shown = doc.split(begin, 1)[1].split(end, 1)[0]
    assert shown == render_rules_markdown(RULES), "run: lis behaviour rules --update-doc docs/behaviour.md"
    for r in RULES.rules:
        assert f"`{r.id}`" in shown
