"""What lis does when the model server misbehaves (tests/hostile_server.py), through the real commands:
`lis run`, `lis eval run` and `lis serve` against a stdlib server that trickles, hangs, fails, answers
garbage or too much. Each case: the outcome, the steps kept, bounded time, and no sandbox left."""
from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request

import pytest
import yaml

from tests.conftest import run
from tests.hostile_server import HostileServer
from tests.wait import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.slow]

NO_WAIT = {"LIS_BACKOFF_S": "0.01"}  # a retry is still made and logged, 0.01 s after the failure, not 1 s
STALL_LIMIT_S = 2  # an episode's time limit where the server stalls: the test waits this long, not 20 s

# behaviour → (termination, turns) of `lis run` when the behaviour answers the first call and a valid
# reply (write the answer, submit) every later one
AFTER_ONE = {
    "500": ("submitted", 1),            # retried, then answered
    "invalid_json": ("submitted", 1),   # retried like a 5xx (it used to end `lis run` as a user's bad input)
    "empty": ("submitted", 1),
    "empty_choices": ("submitted", 1),
    "huge": ("submitted", 2),           # 20 MB: not read past the cap, the turn says so, the next one submits
    "many_calls": ("submitted", 2),     # 200 calls in one turn: each runs
    "bad_arguments": ("submitted", 2),  # the model is told its arguments are not JSON
    "non_utf8": ("submitted", 2),       # invalid UTF-8 replaced and counted
    "text": ("submitted", 2),           # no tool call: the reminder
    "submit": ("submitted", 1),
}


def _lis_run(url: str, tmp_path, *extra: str, timeout: int = 120):
    t0 = time.monotonic()
    r = run(["lis", "run", "--model", "hostile", "--base-url", url, "--profile", "ci", "--query", "write 42",
             "--output-dir", str(tmp_path), *extra], check=False, timeout=timeout, env=NO_WAIT)
    wall = time.monotonic() - t0
    (run_dir,) = list(tmp_path.iterdir())
    return r, wall, json.loads((run_dir / "trajectory.json").read_text()), run_dir


@pytest.mark.parametrize("behaviour", sorted(AFTER_ONE))
def test_lis_run_survives_a_bad_first_reply(behaviour, tmp_path, image_tag):
    with HostileServer([behaviour, "submit"]) as srv:
        r, wall, traj, run_dir = _lis_run(srv.base_url, tmp_path)
    termination, turns = AFTER_ONE[behaviour]
    assert r.returncode == 0, r.stdout + r.stderr
    assert (traj["termination"], traj["turns"]) == (termination, turns), (traj["termination"], traj["turns"], traj["error"])
    assert traj["answer"] == "42" and wall < 60
    first = traj["steps"][0]
    if behaviour in ("500", "invalid_json", "empty", "empty_choices"):
        assert srv.served[:2] == [behaviour, "submit"]
        assert "retrying" in r.stderr and srv.base_url in r.stderr, r.stderr  # the warning names the server
    if behaviour == "huge":
        assert first["reply_cut"] > 16 << 20 and "was cut" in first["content"]
        assert (run_dir / "trajectory.json").stat().st_size < 1 << 20  # not kept, not sent back
    if behaviour == "many_calls":
        assert len(first["calls"]) == 200 and all(c["exit_code"] == 0 for c in first["calls"])
    if behaviour == "bad_arguments":
        assert first["calls"][0]["error"] == "bad_json" and "not valid JSON" in first["calls"][0]["observation"]
    if behaviour == "non_utf8":
        assert first["invalid_text"] > 0 and "\ufffd" in first["content"]


@pytest.mark.parametrize("behaviour", ["trickle", "hang"])
def test_a_stalling_server_cannot_hold_lis_run_past_its_time(behaviour, tmp_path, image_tag):
    """One byte every 0.5 s (a read timeout, the time left, never fires), or no answer at all: the episode
    ends at its time limit as model_timeout (the server's failure, not the model's: `lis run` exits 3), with
    its record and answer file kept."""
    with HostileServer([behaviour], gap_s=0.5) as srv:
        r, wall, traj, run_dir = _lis_run(srv.base_url, tmp_path, "--timeout-s", str(STALL_LIMIT_S))
    assert r.returncode == 3, r.stdout + r.stderr
    assert traj["termination"] == "model_timeout" and "deadline" in traj["error"], traj
    assert STALL_LIMIT_S - 1 <= traj["wall_s"] <= STALL_LIMIT_S + 5 and wall <= STALL_LIMIT_S + 10, \
        (traj["wall_s"], wall)
    assert (run_dir / "answer.txt").exists()


def test_a_server_that_never_answers_well_ends_lis_run_as_a_model_error(tmp_path, repo_copy, image_tag):
    """Garbage on every attempt: a model error naming the server, exit 3, the record written."""
    with HostileServer(["invalid_json"]) as srv:
        params = yaml.safe_load((repo_copy / "params.yaml").read_text())
        params["models"]["hostile"] = {"backend": "openai", "model": "hostile", "base_url": srv.base_url,
                                       "api_key_env": "NO_KEY", "max_retries": 2, "backoff_s": 0.1}
        (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        r = run(["lis", "run", "--model", "hostile", "--profile", "ci", "--query", "write 42", "--output-dir",
                 str(tmp_path / "out")], cwd=repo_copy, check=False, timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    (run_dir,) = list((tmp_path / "out").iterdir())
    traj = json.loads((run_dir / "trajectory.json").read_text())
    assert traj["termination"] == "model_error" and "is not JSON" in traj["error"] and srv.base_url in traj["error"]
    assert "start the server" not in r.stderr and "the server runs" in r.stderr, r.stderr  # it is running
    assert srv.served == ["invalid_json"] * 3  # 1 + max_retries attempts


def test_lis_eval_run_keeps_going_past_a_bad_upstream(repo_copy, image_tag):
    """Two tasks, one at a time: the first meets garbage on every attempt (a model error), the second a
    trickle that outlasts the episode (model_timeout): both errors, the job still finishes with both recorded
    (max_error_share 1) and no accuracy from them; the next run retries both, only them, and they answer."""
    run(["lis", "tasks", "--domain", "math", "--profile", "ci", "--limit", "2", "--out", "data/tasks/math.jsonl"],
        cwd=repo_copy)
    with HostileServer(["invalid_json", "invalid_json", "trickle", "submit", "submit"], gap_s=0.5) as srv:
        params = yaml.safe_load((repo_copy / "params.yaml").read_text())
        params["models"]["hostile"] = {"backend": "openai", "model": "hostile", "base_url": srv.base_url,
                                       "api_key_env": "NO_KEY", "max_retries": 1, "backoff_s": 0.1}
        params["eval"]["max_error_share"] = 1.0
        (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        overlay = repo_copy / "workflow/params/ci.yaml"  # the profile's episode time wins over params.yaml's
        ci = yaml.safe_load(overlay.read_text())
        ci["agent"]["episode_timeout_s"] = 4  # the trickle outlasts it; a good answer fits in it
        overlay.write_text(yaml.safe_dump(ci, sort_keys=False))
        job = ["lis", "eval", "run", "--model", "hostile", "--domain", "math", "--mode", "sandbox", "--profile", "ci",
               "--workers", "1"]
        t0 = time.monotonic()
        run(job, cwd=repo_copy, timeout=180)
        wall = time.monotonic() - t0
        m = json.loads((repo_copy / "data/eval/hostile/math/sandbox/metrics.json").read_text())
        assert m["n"] == 2 and m["terminations"] == {"model_error": 1, "model_timeout": 1}, m
        assert m["errors"] == 2 and m["scored"] == 0 and m["accuracy"] is None and wall < 60, (m, wall)
        run(job, cwd=repo_copy, timeout=180)  # the errored episodes run again (and get answers), only they
        assert srv.served == ["invalid_json", "invalid_json", "trickle", "submit", "submit"], srv.served
    m = json.loads((repo_copy / "data/eval/hostile/math/sandbox/metrics.json").read_text())
    assert m["terminations"] == {"submitted": 2} and m["errors"] == 0, m


@pytest.mark.parametrize("behaviour", ["hang", "trickle", "500"])
def test_an_outage_is_reported_as_errors_and_the_job_refuses_to_publish(behaviour, repo_copy, image_tag):
    """A server that never answers, one that stalls, one that answers 500 forever: every episode is an error
    (model_timeout, or model_error after its retries), not a wrong answer; the job fails at
    eval.max_error_share in one line and publishes no accuracy."""
    run(["lis", "tasks", "--domain", "math", "--profile", "ci", "--limit", "2", "--out", "data/tasks/math.jsonl"],
        cwd=repo_copy)
    with HostileServer([behaviour], gap_s=0.5) as srv:
        params = yaml.safe_load((repo_copy / "params.yaml").read_text())
        params["models"]["hostile"] = {"backend": "openai", "model": "hostile", "base_url": srv.base_url,
                                       "api_key_env": "NO_KEY", "max_retries": 1, "backoff_s": 0.01}
        (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        overlay = repo_copy / "workflow/params/ci.yaml"
        ci = yaml.safe_load(overlay.read_text())
        ci["agent"]["episode_timeout_s"] = STALL_LIMIT_S
        overlay.write_text(yaml.safe_dump(ci, sort_keys=False))
        r = run(["lis", "eval", "run", "--model", "hostile", "--domain", "math", "--mode", "sandbox", "--profile",
                 "ci", "--workers", "2"], cwd=repo_copy, check=False, timeout=180)
    kind = "model_error" if behaviour == "500" else "model_timeout"
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr  # the job's progress lines, then one error
    (error,) = [x for x in r.stderr.splitlines() if x.startswith("error: ")]
    assert all(n in error for n in ("2 of 2 episodes are errors", f"{kind} 2", "no accuracy published")), error
    job = repo_copy / "data/eval/hostile/math/sandbox"
    assert not (job / "metrics.json").exists()
    recs = [json.loads(x) for x in (repo_copy / "data/journal").rglob("*.jsonl") for x in x.read_text().splitlines()
            if '"termination"' in x]
    assert sorted(r["termination"] for r in recs) == [kind, kind], [r["termination"] for r in recs]


def _script(behaviours: list[str]) -> list[str]:
    """Each behaviour answers one episode's first call, a valid reply the next (as in lis run's test)."""
    return [x for b in behaviours for x in ([b] if b == "submit" else [b, "submit"])]


def test_lis_eval_run_meets_every_bad_reply_and_keeps_each_episode(repo_copy, image_tag):
    """Every turn type of the hostile server, one per task of one eval job (one worker, so in order):
    each episode ends as lis run's does, with its answer and steps; the job finishes with no error."""
    names = sorted(AFTER_ONE)
    run(["lis", "tasks", "--domain", "math", "--profile", "ci", "--limit", str(len(names)), "--out",
         "data/tasks/math.jsonl"], cwd=repo_copy)
    with HostileServer(_script(names)) as srv:
        params = yaml.safe_load((repo_copy / "params.yaml").read_text())
        params["models"]["hostile"] = {"backend": "openai", "model": "hostile", "base_url": srv.base_url,
                                       "api_key_env": "NO_KEY", "max_retries": 2, "backoff_s": 0.1}
        params["eval"].update({"max_error_share": 1.0, "repeats": {"math": 1}})
        (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        t0 = time.monotonic()
        run(["lis", "eval", "run", "--model", "hostile", "--domain", "math", "--mode", "sandbox", "--profile", "ci",
             "--workers", "1"], cwd=repo_copy, timeout=300)
        wall = time.monotonic() - t0
        assert srv.served == _script(names), srv.served  # each reply asked for once, none after
    job = repo_copy / "data/eval/hostile/math/sandbox"
    recs = [json.loads(x) for x in (job / "trajectories.jsonl").read_text().splitlines()]
    assert sorted((r["termination"], r["turns"]) for r in recs) == sorted(AFTER_ONE.values())
    assert all(r["answer"] == "42" for r in recs) and wall < 180, wall
    m = json.loads((job / "metrics.json").read_text())
    assert m["n"] == len(names) and m["errors"] == 0 and m["terminations"] == {"submitted": len(names)}
    steps = [s for r in recs for s in r["steps"]]
    assert any(s["reply_cut"] > 16 << 20 for s in steps)               # huge: cut, and not kept
    assert (job / "trajectories.jsonl").stat().st_size < 4 << 20
    assert any(len(s["calls"]) == 200 for s in steps)                   # many_calls: each ran
    assert any(c["error"] == "bad_json" for s in steps for c in s["calls"])
    assert any(s["invalid_text"] > 0 for s in steps)                    # non_utf8: replaced, counted


def test_lis_serve_meets_every_bad_reply(tmp_path, image_tag):
    """The same turn types through lis serve, one request each: every answer is the episode's, as in
    lis run; the server stays healthy with nothing running after."""
    from tests.serve.server import serving

    names = sorted(AFTER_ONE)
    with HostileServer(_script(names)) as srv, serving(srv.base_url, tmp_path, env=NO_WAIT) as served:
        url = f"{served.base_url}/chat/completions"
        got = {}
        for name in names:
            out = _post(url, {"model": "lis-agent", "messages": [{"role": "user", "content": "write 42"}]},
                        timeout=120)
            tid = out["lis"]["trajectory_id"]
            with urllib.request.urlopen(f"{served.base_url}/trajectories/{tid}", timeout=10) as r:
                traj = json.loads(r.read())
            got[name] = (traj["termination"], traj["turns"])
            assert traj["answer"] == "42", (name, traj["error"])
        assert srv.served == _script(names), srv.served
        health = served.health()
        assert health["running"] == 0 and health["status"] == "ok", health
    assert got == AFTER_ONE


def _post(url: str, body: dict, timeout: float) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def test_lis_serve_applies_the_requests_timeout_and_frees_a_left_slot(tmp_path, image_tag):
    from tests.serve.server import serving

    with HostileServer(["trickle", "hang", "invalid_json", "submit"], gap_s=0.5) as srv, \
            serving(srv.base_url, tmp_path, env=NO_WAIT) as served:
        url = f"{served.base_url}/chat/completions"
        ask = {"model": "lis-agent", "messages": [{"role": "user", "content": "write 42"}]}
        t0 = time.monotonic()
        with pytest.raises(urllib.error.HTTPError) as e:  # upstream trickles: a gateway timeout, with the record
            _post(url, {**ask, "lis": {"timeout_s": STALL_LIMIT_S}}, timeout=60)
        assert time.monotonic() - t0 < STALL_LIMIT_S + 6, time.monotonic() - t0
        body = json.loads(e.value.read())
        assert e.value.code == 504 and body["error"]["code"] == "model_timeout", body
        assert body["lis"]["termination"] == "model_timeout" and body["lis"]["trajectory_id"], body
        # a client that leaves while the upstream hangs: its slot is free again within seconds
        conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=3)
        try:
            conn.request("POST", "/v1/chat/completions", body=json.dumps({**ask, "lis": {"timeout_s": 300}}),
                         headers={"Content-Type": "application/json"})
            wait_until(lambda: srv.requests >= 2, 60, "the episode's model call reaching the hanging upstream")
            conn.sock.settimeout(0.5)
            with pytest.raises(OSError):
                conn.getresponse()  # the upstream hangs: no answer
        finally:
            conn.close()  # the client leaves
        wait_until(lambda: not served.health()["running"], 15, "the abandoned episode ending", interval=0.2, fail=False)
        assert served.health()["running"] == 0, served.health()
        out = _post(url, ask, timeout=60)  # garbage, retried, then an answer
        assert out["lis"]["termination"] == "submitted", out["lis"]
