"""data/reference/paper_numbers.yaml: its schema, its lookups, and the arithmetic the reference notes
state about the numbers (a typo in a cell breaks one of these)."""
from __future__ import annotations

import copy
import statistics

import pytest
import yaml

from lis.errors import LisError
from lis.report.paper_numbers import CONFIDENCE, DATA_FILE, load, lookup, validate

TABLES = ["table2", "table3", "table4", "figure2", "table5", "table6", "table7", "table8", "table9", "table10",
          "table11", "table12", "section5_memory", "rl_recipe"]
MODELS6 = ["claude-sonnet-4.5-thinking", "gpt-5", "deepseek-v3.2", "minimax-m2", "kimi-k2",
           "qwen3-coder-30b-a3b-instruct"]
DOMAINS = ["math", "physics", "chem", "biomed", "long_context", "instruct_follow"]


@pytest.fixture(scope="module")
def pn():
    return load()


def test_the_file_validates_and_has_every_table(pn):
    assert DATA_FILE.is_file() and DATA_FILE.parent.name == "reference"
    assert pn.tables == TABLES
    for t in TABLES:
        cells = pn.cells(t)
        assert cells, t
        assert all(c.confidence in CONFIDENCE and c.version in ("v1", "v2", "v3") and c.unit for c in cells)
        assert all((c.value is None) == (not c.found) for c in cells)


def test_table2_vanilla_plus_delta_is_sandbox_in_every_cell(pn):
    checked = 0
    for version in ("v1", "v2"):
        for m in MODELS6:
            for d in DOMAINS:
                v, s, delta = (lookup("table2", model=m, domain=d, mode=mode, version=version)
                               for mode in ("vanilla", "sandbox", "delta"))
                assert v.confidence == "derived" and s.confidence == "PRIMARY" and delta.confidence == "PRIMARY"
                assert s.sources == [f"P-fig-{version}"]
                assert v.value + delta.value == pytest.approx(s.value, abs=0.051), (version, m, d)
                checked += 1
    assert checked == 72


def test_table2_what_the_notes_say_about_the_versions(pn):
    v1 = {(c.keys["model"], c.keys["domain"], c.keys["mode"]): c.value for c in pn.cells("table2", "v1")}
    v2 = {(c.keys["model"], c.keys["domain"], c.keys["mode"]): c.value for c in pn.cells("table2", "v2")}
    changed = {k for k in v2 if v2[k] != v1[k]}
    # only the Physics column and the Qwen3-Coder row differ from v1
    assert changed and all(k[1] == "physics" or k[0] == "qwen3-coder-30b-a3b-instruct" for k in changed)
    assert all(v2[k] < v1[k] for k in changed if k[1] == "physics" and k[2] == "sandbox")  # physics is lower
    # "up to +24.2% (Qwen3-Coder math)" in v1; "up to 15.5%" in the v3 abstract (v2's Figure 1)
    deltas = lambda t: {k: v for k, v in t.items() if k[2] == "delta" and k[0] in MODELS6}  # noqa: E731
    assert max(deltas(v1).values()) == 24.2 and max(deltas(v1), key=deltas(v1).get)[:2] == (MODELS6[-1], "math")
    assert max(deltas(v2).values()) == 15.5 and max(deltas(v2), key=deltas(v2).get)[:2] == (MODELS6[-1], "math")
    assert v1[(MODELS6[-1], "math", "vanilla")] == 17.9 and v2[(MODELS6[-1], "math", "vanilla")] == 26.0


def test_table2_qwen3_4b_row_keeps_its_gaps(pn):
    q = "Qwen3-4B"  # an alias
    assert lookup("table2", model=q, domain="math", mode="delta").value == -5.9          # v1 by default
    v3 = lookup("table2", model=q, domain="math", mode="delta", version="v3")
    assert v3.value == -13.5 and "unverified" in v3.flags and v3.sources == ["S5"]
    for d, mode in (("instruct_follow", "vanilla"), ("instruct_follow", "sandbox"), ("long_context", "vanilla"),
                    ("biomed", "sandbox")):
        ref = lookup("table2", model=q, domain=d, mode=mode)
        assert ref is not None and not ref.found and ref.value is None and ref.confidence == "not found"
    chem = lookup("table2", model=q, domain="chem", mode="sandbox")
    assert chem.value == 50.7 and chem.confidence == "low confidence" and "inferred_column" in chem.flags


def test_table3_averages_and_differences(pn):
    rows = {c.keys["model"]: {} for c in pn.cells("table3")}
    for c in pn.cells("table3"):
        rows[c.keys["model"]][c.keys["mode"]] = c.value
    models = [m for m in rows if m != "average"]
    assert len(models) == 7
    for m, r in rows.items():
        assert r["sandbox"] - r["sandbox_inline"] == pytest.approx(r["delta"], abs=0.051), m
    for mode in ("sandbox_inline", "sandbox"):
        assert statistics.mean(rows[m][mode] for m in models) == pytest.approx(rows["average"][mode], abs=0.05)
    # the files column equals Figure 1's v1 long-context sandbox value for the six models in it
    for m in MODELS6:
        assert rows[m]["sandbox"] == lookup("table2", model=m, domain="long_context", mode="sandbox").value


def test_rl_and_behaviour_tables_hold_what_the_notes_state(pn):
    assert lookup("table6", model="qwen3-4b", training="llm_rl", domain="math", mode="vanilla").value == 44.0
    assert not lookup("table6", model="qwen3-4b", training="llm_rl", domain="physics", mode="sandbox").found
    assert lookup("table6", model="qwen3-coder", training="sandbox_rl", domain="swe", mode="sandbox").value == 48.0
    assert all(c.confidence in ("low confidence", "not found") for c in pn.cells("table6", model="qwen3-4b")
               if c.keys["domain"] != "long_context")
    # Table 7's base and general-in-files rows are Table 6's base and LLM-in-Sandbox-RL rows
    for d, mode in (("math", "vanilla"), ("math", "sandbox"), ("physics", "sandbox"), ("column7", "unknown")):
        assert lookup("table7", training_data="none", domain=d, mode=mode).value == \
            lookup("table6", model="qwen3-4b", training="base", domain=d, mode=mode).value
        assert lookup("table7", training_data="general_files", domain=d, mode=mode).value == \
            lookup("table6", model="qwen3-4b", training="sandbox_rl", domain=d, mode=mode).value
    turns = lookup("table8", model="qwen3-4b", training="sandbox_rl", metric="avg_turns")
    assert turns.value == 7.0 and turns.unit == "turns" and "corroborated" in turns.flags
    assert lookup("table4", group="weak", metric="avg_turns").value == \
        lookup("table8", model="qwen3-4b", training="base", metric="avg_turns").value == 23.7
    assert lookup("table11", model="minimax-m2", metric="qpm_ratio").value == 2.2
    assert lookup("table12", system="swe-gym").value == 6000
    assert lookup("rl_recipe", item="learning_rate", model="all").value == 1e-6
    assert lookup("rl_recipe", item="steps", model="Qwen/Qwen3-Coder-30B-A3B-Instruct").value == 50
    assert not lookup("rl_recipe", item="dataset_size", model="all").found
    assert lookup("table5", paradigm="swe_rl", property="general_domain").value is False


def test_lookup_misses_and_misuses(pn):
    assert lookup("table2", model="nobody", domain="math", mode="sandbox") is None
    with pytest.raises(LisError, match="no table 'table99'"):
        lookup("table99", model="gpt-5")
    with pytest.raises(LisError, match="has no key colour"):
        lookup("table2", colour="red")
    with pytest.raises(LisError, match="18 cells of 'table2' match") as e:
        lookup("table2", model="gpt-5")   # the default version (v1) leaves 6 domains × 3 modes
    assert e.value.hint == "name domain, mode as well"
    assert len(pn.cells("table2", model="gpt-5")) == 36  # 6 domains × 3 modes × 2 versions
    ref = lookup("table2", model="GPT-5", domain="AIME25", mode="sandbox")
    assert ref.value == 97.9 and ref.label() == "paper v1 · PRIMARY · P-fig-v1"


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["tables"]["table2"]["cells"][0].update(confidence="sure"), "is not one of"),
    (lambda d: d["tables"]["table2"]["cells"][1].update(value=None), "value is null exactly when"),
    (lambda d: d["tables"]["table3"]["cells"][0].update(sources=["S99"]), "unknown tag 'S99'"),
    (lambda d: d["tables"]["table3"]["cells"][0].update(confidence="PRIMARY"), "PRIMARY needs a PRIMARY source"),
    (lambda d: d["tables"]["table4"]["cells"].append(dict(d["tables"]["table4"]["cells"][0])), "a second cell"),
    (lambda d: d["tables"]["table4"]["cells"][0].pop("metric"), "keys must be exactly"),
    (lambda d: d["tables"]["table2"]["cells"][0].update(model="gpt-6"), "'gpt-6' is not in models"),
    (lambda d: d["tables"]["table2"]["cells"][0].update(version="v9"), "is not a version"),
    (lambda d: d["tables"]["table2"]["cells"][0].update(flags=["shiny"]), "unknown flag 'shiny'"),
    (lambda d: d["tables"]["table2"]["cells"][0].pop("value"), "no value"),
    (lambda d: d.update(schema_version=2), "schema_version 2"),
    (lambda d: d["tables"]["table9"].pop("units"), r"missing \['units'\]"),
])
def test_validation_names_what_is_wrong(edit, message):
    data = yaml.safe_load(DATA_FILE.read_text(encoding="utf-8"))
    validate(copy.deepcopy(data))  # the shipped file is valid
    edit(data)
    with pytest.raises(LisError, match=message) as e:
        validate(data)
    assert "\n" not in e.value.one_line()


def test_a_broken_file_is_a_one_line_error(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("tables: [\n")
    with pytest.raises(LisError, match="not valid YAML"):
        load(bad)
    with pytest.raises(LisError, match="no paper-numbers file"):
        load(tmp_path / "missing.yaml")
