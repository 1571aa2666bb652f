"""Fast failure: a base URL that cannot work fails at configuration time, in one line that names the
problem and the fix (before: 6 attempts over ~30 s); a refused connection or an unknown host is
retried briefly, then fails."""
from __future__ import annotations

import time

import pytest
import yaml

from lis.models.base import ModelError
from lis.models.openai_compat import OpenAIChatModel
from tests.conftest import lis

USER = [{"role": "user", "content": "hi"}]
# "At once": no connection attempted, so none retried. The defect was 6 attempts over ~30 s; the refusal
# itself takes ~0.1 s (in-process). The bound separates the two and leaves room for a loaded machine (at 2 s,
# two pytest workers on 2 busy cores missed it once); how fast the refusal is, is not what this checks.
REFUSED_WITHIN_S = 10


def _one_error_line(r) -> str:
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr[-2000:]
    return lines[0]


def test_lis_run_with_notaurl_fails_at_once(tmp_path):
    t0 = time.monotonic()
    r = lis(["lis", "run", "--profile", "ci", "--model", "m", "--base-url", "notaurl", "--query", "hi",
             "--output-dir", str(tmp_path)], check=False)
    took = time.monotonic() - t0
    print(f"MEASURED lis run --base-url notaurl: exit {r.returncode} after {took:.2f} s")
    assert r.returncode == 2 and took < REFUSED_WITHIN_S, (took, r.stderr[-2000:])
    line = _one_error_line(r)
    assert "'notaurl'" in line and "http://" in line and "--base-url" in line  # the problem and the fix
    assert not any(tmp_path.iterdir())  # nothing started, nothing written


def test_a_models_entry_with_notaurl_fails_when_params_load(repo_copy):
    lis(["lis", "tasks", "--domain", "math", "--limit", "1", "--profile", "ci", "--out", "data/tasks/math.jsonl"],
        cwd=repo_copy)  # everything else is in place: only the URL is wrong
    path = repo_copy / "params.yaml"
    data = yaml.safe_load(path.read_text())
    data["models"]["broken"] = {"backend": "openai", "model": "x", "base_url": "notaurl"}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    t0 = time.monotonic()
    r = lis(["lis", "eval", "run", "--model", "broken", "--domain", "math", "--mode", "vanilla", "--profile", "ci"],
            cwd=repo_copy, check=False)
    took = time.monotonic() - t0
    print(f"MEASURED lis eval run with models.broken.base_url=notaurl: exit {r.returncode} after {took:.2f} s")
    assert r.returncode == 2 and took < REFUSED_WITHIN_S, (took, r.stderr[-2000:])
    line = _one_error_line(r)
    assert "models.broken.base_url 'notaurl'" in line and "http://" in line


@pytest.mark.parametrize("url", ["notaurl", "ftp://host/v1", "http:///v1", "http://host:port/v1", " http://h/v1",
                                 "http://"])
def test_unusable_urls_are_refused_when_the_model_is_made(url):
    with pytest.raises(ModelError, match="is not usable") as err:
        OpenAIChatModel("m", base_url=url)
    assert "e.g. http://127.0.0.1:8000/v1" in err.value.hint


@pytest.mark.parametrize("where", ["refused", "unknown host"])
def test_unreachable_servers_are_retried_briefly_then_fail(where, unused_port):
    """With the default max_retries (5): 3 connection attempts at most, at most 1 s apart."""
    url = f"http://127.0.0.1:{unused_port}/v1" if where == "refused" else "http://no-such-host.invalid/v1"
    model = OpenAIChatModel("m", base_url=url)
    t0 = time.monotonic()
    with pytest.raises(ModelError, match="connection failed.*gave up after 3 attempts") as err:
        model.chat(USER)
    took = time.monotonic() - t0
    print(f"MEASURED {where}: failed after {took:.2f} s")
    assert took < 5 and "start the server or fix models.m.base_url" in err.value.hint
