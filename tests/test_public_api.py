"""The public names of lis.sandbox, lis.agent and lis.runtime (lis.util.lazy): each resolves to the
object its module defines, none loads before it is asked for, and the pipeline's code dependencies
follow them (lis.pipeline.code_deps), since static import graphs do not see a lazy load."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from lis.pipeline.code_deps import closure, lazy_exports, lazy_loads

PACKAGES = ("lis.sandbox", "lis.agent", "lis.runtime")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_is_the_object_its_module_defines(package):
    pkg = importlib.import_module(package)
    assert pkg.EXPORTS and pkg.__all__ == sorted(pkg.EXPORTS)
    assert lazy_exports(package) == pkg.EXPORTS  # what code_deps reads from the source is the table
    for name, module in pkg.EXPORTS.items():
        # inside the package: a lazy load is invisible to import-linter, so it must not cross a layer
        assert module.startswith(package + "."), (name, module)
        assert getattr(pkg, name) is getattr(importlib.import_module(module), name)
        assert name in dir(pkg)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        pkg.nothing_here  # noqa: B018


def test_a_package_loads_nothing_it_exports_until_asked():
    code = """
import json, sys
import lis.agent.trajectory, lis.runtime, lis.sandbox.labels
before = sorted(m for m in sys.modules if m.startswith(("lis.", "docker", "torch")))
from lis.runtime import sandbox_config
after = sorted(m for m in sys.modules if m.startswith(("lis.", "docker", "torch")))
print(json.dumps([before, after]))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    before, after = json.loads(r.stdout)
    for heavy in ("lis.agent.loop", "lis.agent.episode", "lis.sandbox.pool", "lis.sandbox.factory",
                  "lis.runtime.agent", "lis.runtime.models", "lis.models.base", "docker", "torch"):
        assert heavy not in before, heavy
    # sandbox_config brings its own module and the sandbox's config, not the agent or a model backend
    assert "lis.runtime.sandbox" in after and "lis.sandbox.base" in after
    assert not [m for m in after if m.startswith(("lis.agent.loop", "lis.models", "lis.runtime.agent", "torch"))]


def test_code_deps_follow_the_public_names_a_module_imports():
    # lis/cli/sandbox.py: `from lis.runtime import sandbox_config` and `from lis.sandbox import make_sandbox, registry`
    assert lazy_loads("lis.cli.sandbox", "lis.runtime") == {"lis.runtime.sandbox"}
    assert lazy_loads("lis.cli.sandbox", "lis.sandbox") == {"lis.sandbox.factory"}
    code = closure("lis.cli.sandbox")
    assert {"lis.runtime", "lis.runtime.sandbox", "lis.sandbox.factory", "lis.sandbox.base"} <= code
    # ... and not what the package exports beside them: the agent, the model backends
    assert not {"lis.runtime.agent", "lis.runtime.models", "lis.agent.loop"} & code
    assert not [m for m in code if m.startswith("lis.models")]
    # a module importing the episode runner runs the loop (here by its module: grimp's own edges)
    assert {"lis.agent.episode", "lis.agent.loop"} <= closure("lis.eval.runner")


def _library_example() -> str:
    """The python block under "Use lis as a library" in docs/architecture.md."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Use lis as a library", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.docker
def test_the_documented_episode_runs_as_written(image_tag, root, monkeypatch, capsys):
    monkeypatch.chdir(root)
    exec(compile(_library_example(), "docs/architecture.md", "exec"), {"__name__": "example"})
    assert capsys.readouterr().out.strip() == "submitted \\boxed{42} 1.0"
    code = [ln for ln in _library_example().splitlines() if ln.strip() and not ln.startswith((" ", "#"))]
    assert len(code) <= 6, code  # a scored episode in six statements


def test_the_root_exports_the_everyday_names_lazily():
    code = """
import json, sys
import lis
before = sorted(m for m in sys.modules if m.startswith(("lis.", "docker", "torch")))
names = [n for n in ("load_params", "load_samples", "build_model", "run_task", "score", "Task", "SandboxConfig",
                     "Trajectory", "LisError") if getattr(lis, n, None) is not None]
print(json.dumps([before, names]))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    before, names = json.loads(r.stdout)
    assert len(names) == 9, names
    assert not [m for m in before if m.startswith(("lis.agent", "lis.sandbox", "lis.models", "lis.api", "docker", "torch"))]
    import lis
    from lis.rewards.route import score
    assert lis.score is score and set(lis.EXPORTS) <= set(lis.__all__)


def test_run_task_takes_a_models_entry_by_name_and_scores_it(repo_copy):
    """`lis.run_task(task, "<entry>")`: the entry is built from params (its spec), the episode runs and
    is scored on the host (vanilla here: no sandbox needed)."""
    import yaml

    import lis

    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["models"]["answers-42"] = {"backend": "scripted", "replies": [{"role": "assistant", "content": "\\boxed{42}"}]}
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    task = lis.Task(id="six-seven", domain="math", problem_statement="What is 6*7?", ground_truth="42")
    record = lis.run_task(task, "answers-42", "vanilla", params=lis.load_params(repo_copy, profile="ci"))
    assert (record.termination, record.answer, record.reward) == ("answered", "\\boxed{42}", 1.0)
    assert record.seed is not None and record.score["scorer"] == "math_verify"
