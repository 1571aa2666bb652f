"""The ``sandbox_memory`` stage (lis/stages/sandbox_memory.py): its ``resolve`` puts the command's
options over the params section, its ``run`` fails as the command does, and the declaration is what
dvc.yaml and the Snakemake rule use. The measurement itself (Docker) is tests/bench/test_memory.py."""
from __future__ import annotations

import pytest

from lis.errors import LisError
from lis.params import load
from lis.stages import registry
from lis.stages import sandbox_memory as stage
from tests.conftest import ROOT, lis


def test_an_option_wins_over_the_section_and_the_section_fills_the_rest():
    p = load(ROOT, profile="ci")
    s = stage.resolve(p)
    assert (s.memory.n, s.memory.settle_s, s.memory.interval_s, s.backend) == (1, 1.0, 0.02, None)
    s = stage.resolve(p, backend="bwrap", n=2, interval_s=0.5)
    assert (s.memory.n, s.memory.settle_s, s.memory.interval_s, s.backend) == (2, 1.0, 0.5, "bwrap")
    assert s.params is p
    with pytest.raises(LisError, match="sandbox_memory"):
        stage.resolve(p, n=0)


def test_the_command_runs_the_stage(tmp_path):
    """An image manifest that is not there: the command's one-line error is the one ``run`` raises,
    before any sandbox starts (no Docker needed), and nothing is written."""
    missing, out = tmp_path / "manifest.json", tmp_path / "memory.json"
    r = lis(["lis", "bench", "memory", "--profile", "ci", "--image-manifest", str(missing), "--out", str(out)],
            check=False)
    with pytest.raises(LisError) as e:
        stage.run(stage.resolve(load(ROOT, profile="ci")), {"image_manifest": missing}, {"out": out})
    assert r.returncode == 2 and r.stderr.strip() == f"error: {e.value.one_line()}" and not out.exists()


def test_the_registry_reads_the_declaration_the_module_holds():
    """The registry reads STAGE without importing the module; importing it gives the same object."""
    assert registry.stage("sandbox_memory") == stage.STAGE
    assert stage.STAGE.metrics == ("data/bench/sandbox_memory.json",)
