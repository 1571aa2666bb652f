"""``lis bench serve``: a load test of ``lis serve`` on this machine (loopback only, bounded).

N requests at once, through the official OpenAI client, to a real ``lis serve`` process whose
upstream is a one-turn replay model in this process (so the numbers are our overhead) or any model
``lis serve --model`` takes; each answer must echo its task's token (no cross-talk). The baseline
runs the same episodes through ``run_task`` in-process: the difference is what the service adds.
Reported: latency percentiles, throughput, and lost episodes (a wrong answer or a leftover sandbox).
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from lis.agent.episode import run_task
from lis.agent.loop import AgentConfig
from lis.models.base import ChatResult, Usage
from lis.models.scripted import tool_call
from lis.models.server import ChatServer
from lis.sandbox.engine import connect
from lis.sandbox.pool import SandboxPool
from lis.tasks.schema import Task

TOKEN = re.compile(r"token ([0-9a-f]{12})")


class EchoReplay:
    """A replay upstream that answers any task in one turn: write the task's token to the answer
    file, a small report beside it, and submit. Deterministic, with usage counted as characters/4."""

    name = "replay"

    def chat(self, messages, tools=None, sampling=None) -> ChatResult:
        found = TOKEN.findall(" ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user"))
        answer = found[0] if found else "none"
        cmd = (f"mkdir -p /testbed/output && printf %s {answer} > /testbed/output/answer.txt && "
               f"printf 'token %s\\n' {answer} > /testbed/output/report.txt")
        msg = {"role": "assistant", "content": None,
               "tool_calls": [tool_call("execute_bash", {"command": cmd}, "call_1"), tool_call("submit", {}, "call_2")]}
        prompt = sum(len(json.dumps(m)) for m in messages) // 4
        return ChatResult(message=msg, usage=Usage(prompt, len(json.dumps(msg)) // 4, 0), latency_s=0.0,
                          finish_reason="tool_calls")


def _pct(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {}
    xs = sorted(xs)

    def at(q: float) -> float:
        return round(xs[min(len(xs) - 1, max(0, int(round(q * len(xs) + 0.5)) - 1))], 3)  # nearest rank
    return {"p50_s": at(0.5), "p90_s": at(0.9), "p99_s": at(0.99), "min_s": round(xs[0], 3),
            "max_s": round(xs[-1], 3), "mean_s": round(sum(xs) / len(xs), 3)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _containers(run_label: str) -> list[str]:
    return [c["Id"][:12] for c in connect().api.containers(all=True, filters={"label": [f"lis.run={run_label}"]})]


class _Server:
    """``lis serve`` in a subprocess on a free loopback port (stopped with SIGTERM, then SIGKILL)."""

    def __init__(self, args: list[str], workdir: Path, env: dict[str, str], timeout: float = 180):
        self.port = free_port()
        self.run_id = "bench" + uuid.uuid4().hex[:8]
        self.log = workdir / "serve.log"
        cmd = [str(Path(sys.executable).parent / "lis"), "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--files-dir", str(workdir / "files"), *args]
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, env={**os.environ, **env, "LIS_RUN_ID": self.run_id,
                                                   "LIS_SERVE_API_KEY": env.get("LIS_SERVE_API_KEY", "bench-key")},
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"lis serve exited with {self.proc.returncode}: {self.tail()}")
            try:
                if self.health()["status"] == "ok":
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"lis serve not ready within {timeout:.0f}s: {self.tail()}")
            time.sleep(0.2)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def run_label(self) -> str:
        return f"serve-{self.run_id}"

    def health(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as r:
            return json.loads(r.read())

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode


def _fire(base_url: str, key: str, served: str, n: int, concurrent: int, timeout: float,
          tag: str) -> tuple[list[float], list[str], float]:
    """``n`` requests, ``concurrent`` at a time; (latencies of the answered, errors, wall time)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=timeout)
    lat: list[float] = []
    errors: list[str] = []

    def one(i: int) -> None:
        token = uuid.uuid4().hex[:12]
        t0 = time.perf_counter()
        try:
            r = client.chat.completions.create(model=served, messages=[
                {"role": "user", "content": f"Write the token {token} to the answer file ({tag} {i})."}])
            got = r.choices[0].message.content
            lis = (r.model_extra or {}).get("lis") or {}
            if got != token or lis.get("termination") != "submitted" or not lis.get("trajectory_id"):
                errors.append(f"request {i}: answer {got!r} for token {token} ({lis.get('termination')})")
                return
            lat.append(time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 - counted as lost
            errors.append(f"request {i}: {type(e).__name__}: {str(e)[:200]}")

    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrent) as ex:
        list(ex.map(one, range(n)))
    return lat, errors, time.perf_counter() - t0


def _baseline(upstream_url: str, config, n: int, concurrent: int, profile_args: dict) -> dict[str, Any]:
    """The same episodes in-process: run_task on a pool of ``concurrent`` sandboxes, the same upstream."""
    # lazy: loads the openai SDK (~1.5 s); importing this module does not
    from lis.models.openai_compat import OpenAIChatModel

    model = OpenAIChatModel("replay", model="replay", base_url=upstream_url, api_key_env="LIS_BENCH_NO_KEY",
                            max_retries=0)
    lat: list[float] = []
    errors: list[str] = []
    with SandboxPool(config, max_concurrent=concurrent) as pool:
        def one(i: int) -> None:
            token = uuid.uuid4().hex[:12]
            task = Task(id=f"bench-{i}", domain="general", ground_truth="",
                        problem_statement=f"Write the token {token} to the answer file (baseline {i}).")
            t0 = time.perf_counter()
            rec = run_task(task, model, "sandbox", AgentConfig(**profile_args), pool=pool)
            if rec.answer != token or rec.termination != "submitted":
                errors.append(f"baseline {i}: {rec.termination} {rec.error or rec.answer!r}")
                return
            lat.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        with ThreadPoolExecutor(concurrent) as ex:
            list(ex.map(one, range(n)))
        wall = time.perf_counter() - t0
    return {"latency": _pct(lat), "wall_s": round(wall, 2), "throughput_rps": round(len(lat) / wall, 2),
            "errors": len(errors), "first_errors": errors[:3]}


def bench_serve(workdir: Path, *, requests: int = 64, concurrent: int = 64, max_concurrent: int = 64,
                sequential: int = 5, serve_args: list[str] | None = None, upstream_model: str | None = None,
                sandbox_config=None, baseline: bool = True, timeout_s: float = 600,
                progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Run the load test; return one JSON-able dict. ``upstream_model`` (a models entry or a model folder)
    replaces the replay upstream; ``sandbox_config`` (the server's sandbox settings) is for the baseline."""
    workdir.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"requests": requests, "concurrent": concurrent, "server_max_concurrent": max_concurrent,
                           "sequential": sequential,
                           "upstream": upstream_model or "replay (lis.models.ChatServer, one turn per episode)",
                           "cpus": os.cpu_count(), "load_avg_1m_before": round(os.getloadavg()[0], 1)}
    key = "bench-" + uuid.uuid4().hex[:8]
    with ChatServer(EchoReplay()) as up:
        args = ["--max-concurrent", str(max_concurrent), "--max-queue", str(requests), *(serve_args or [])]
        args += ["--model", upstream_model] if upstream_model else ["--model", "replay", "--base-url", up.base_url]
        progress("starting lis serve")
        srv = _Server(args, workdir, {"LIS_SERVE_API_KEY": key})
        try:
            h = srv.health()
            res["backend"], res["served_name"], res["warm"] = h["backend"], h["served_name"], h.get("warm", 0)
            ready_by = time.monotonic() + 60
            while h.get("warm_ready", 0) < h.get("warm", 0) and time.monotonic() < ready_by:  # a full warm pool
                time.sleep(0.2)
                h = srv.health()
            progress(f"{sequential} requests one at a time")
            lat1, err1, _ = _fire(srv.base_url, key, h["served_name"], sequential, 1, timeout_s, "sequential")
            res["single"] = {**_pct(lat1), "errors": len(err1)}
            progress(f"{requests} requests, {concurrent} at once")
            lat, errors, wall = _fire(srv.base_url, key, h["served_name"], requests, concurrent, timeout_s, "load")
            deadline = time.monotonic() + 60
            while srv.health()["running"] and time.monotonic() < deadline:
                time.sleep(0.2)
            left_running = _containers(srv.run_label)
            end = srv.health()
            counts = end["counts"]
            res["sandboxes"] = end.get("sandboxes")
        finally:
            status = srv.stop()
        left_after_stop = _containers(srv.run_label)
        res["load"] = {**_pct(lat), "wall_s": round(wall, 2), "throughput_rps": round(len(lat) / wall, 2),
                       "answered": len(lat), "errors": len(errors), "first_errors": errors[:3]}
        res["lost_episodes"] = len(errors) + len(err1)
        res["sandboxes_left"] = {"after_load": len(left_running), "after_sigterm": len(left_after_stop)}
        res["server"] = {"counts": counts, "exit_status": status}
        if baseline and not upstream_model and sandbox_config is not None:
            progress(f"baseline: the same {requests} episodes through run_task in-process")
            import dataclasses

            cfg = dataclasses.replace(sandbox_config, run_id=f"bench-base-{uuid.uuid4().hex[:8]}")
            res["baseline_in_process"] = _baseline(up.base_url, cfg, requests, min(concurrent, max_concurrent),
                                                   {"max_turns": 4})
            b = res["baseline_in_process"]["latency"]
            if b and res["load"].get("p50_s"):
                res["service_overhead_p50_s"] = round(res["load"]["p50_s"] - b["p50_s"], 3)
    res["load_avg_1m_after"] = round(os.getloadavg()[0], 1)  # other work on the machine skews every number
    return res
