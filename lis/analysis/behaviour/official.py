"""Importers: the authors' trajectory files → our Trajectory records (lis/agent/trajectory.py), so
that the behaviour analysis runs on episodes made with their package.

    records = import_official([Path("output")], model="their-model", domain="chem")
    records = import_rl_jsonl([Path("exp/…/chat_completions/150.jsonl")], model="grpo")

The three layouts read (CLI episode, benchmark run, RL rollouts) and how their fields map onto a
record are in docs/behaviour-authors.md.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from lis.agent.trajectory import SCHEMA_VERSION, Step, ToolCallRecord, Trajectory
from lis.errors import LisError
from lis.util.jsonl import iter_jsonl

_EXIT = re.compile(r"\AExit code: (?:Error: Exit code )?(-?\d+)")
_EDITOR_REFUSED = re.compile(r"\A(?:Execution output of \\?\[str_replace_editor\]:\s*)?(?:ERROR|Error)\b|"
                             r"No replacement was performed|did not appear verbatim", re.M)
_BENCH_DIR = re.compile(r"^\d{8}_\d{6}_(?P<task>.+?)_(?P<llm>.+)_(?P<mode>LLMinSandbox|vanillaLLM)$")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LisError(f"trajectory file {path} does not exist", "give trajectory.json files or their folders") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LisError(f"cannot read trajectory file {path}: {type(e).__name__}: {e}", "check the file") from None
    except json.JSONDecodeError as e:
        raise LisError(f"trajectory file {path} is not JSON: {e.msg} at line {e.lineno}", "check the file") from None


def official_files(paths: Iterable[Path]) -> list[Path]:
    """The trajectory.json files that ``paths`` name: a file itself; a folder's own trajectory.json;
    else the CLI layout's ``<folder>/<timestamp>/trajectory.json`` one level down (sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            if (p / "trajectory.json").is_file():
                out.append(p / "trajectory.json")
                continue
            found = sorted(q for q in p.glob("*/trajectory.json") if q.is_file())
            if not found:
                raise LisError(f"{p} holds no trajectory.json (nor <run>/trajectory.json one level down)",
                               "give the CLI's output folder, a run folder, or trajectory.json files")
            out += found
        else:
            raise LisError(f"trajectory input {p} does not exist", "give trajectory.json files or their folders")
    return out


def _exit_code(observation: str) -> int | None:
    m = _EXIT.match(observation or "")
    return int(m.group(1)) if m else None


def _step(i: int, s: dict, where: str) -> Step:
    if not isinstance(s, dict):
        raise LisError(f"{where}: step {i + 1} is not an object", "is this an llm-in-sandbox trajectory.json?")
    action = s.get("action") or {}
    func = action.get("function") if isinstance(action, dict) else None
    params = action.get("parameters") if isinstance(action, dict) else None
    obs = s.get("observation") if isinstance(s.get("observation"), str) else ""
    meta = s.get("metadata") if isinstance(s.get("metadata"), dict) else {}
    calls = []
    if func:
        args = params if isinstance(params, dict) else None
        error = None if args is not None else "bad_arguments"
        exit_code = None
        if func == "execute_bash":
            exit_code = _exit_code(obs)
        elif func == "str_replace_editor" and _EDITOR_REFUSED.search(obs[:400]):
            error = "editor"
        calls.append(ToolCallRecord(id=f"call_{i + 1}", tool=str(func), arguments=args,
                                    raw_arguments=None if args is not None else json.dumps(params, default=str),
                                    observation=obs, exit_code=exit_code, exec_time_s=0.0, error=error,
                                    observation_chars=len(obs)))
    latency = meta.get("exec_time")
    return Step(index=int(meta.get("step", i + 1)) - 1 if isinstance(meta.get("step"), int) else i,
                content=s.get("thought") if isinstance(s.get("thought"), str) else None,
                reasoning=s.get("reasoning_content") or None, calls=calls,
                llm_latency_s=float(latency) if isinstance(latency, (int, float)) else 0.0,
                prompt_tokens=None, completion_tokens=None, cached_tokens=None)


def _record(task_id: str, problem: str, steps: list, *, model: str, domain: str, mode: str, source: str,
            answer: str = "", reward: Any = None) -> Trajectory:
    where = f"{source} ({task_id})" if task_id not in source else source
    if not isinstance(steps, list):
        raise LisError(f"{where}: 'steps' is not a list", "is this an llm-in-sandbox trajectory.json?")
    rec = Trajectory(task_id=task_id, model=model, mode=mode, domain=domain, run_id=f"official:{source}",
                     backend="official", messages=[{"role": "user", "content": problem}] if problem else [],
                     steps=[_step(i, s, where) for i, s in enumerate(steps)], answer=answer,
                     reward=float(reward) if isinstance(reward, (int, float)) else None,
                     schema_version=SCHEMA_VERSION)
    if mode == "vanilla" and not rec.steps and answer:
        rec.steps = [Step(index=0, content=answer, reasoning=None, calls=[], llm_latency_s=0.0, prompt_tokens=None,
                          completion_tokens=None, cached_tokens=None)]
    rec.termination = "submitted" if any(c.tool == "submit" for s in rec.steps for c in s.calls) else (
        "answered" if mode == "vanilla" else "truncated")
    rec.task_hash = hashlib.sha256(problem.encode()).hexdigest()[:16]
    rec.episode_id = hashlib.sha256(f"{source}#{task_id}".encode()).hexdigest()[:32]
    rec.totals()
    return rec


def _bench_meta(folder: Path) -> dict[str, str]:
    meta: dict[str, str] = {}
    m = _BENCH_DIR.match(folder.name)
    if m:
        meta = {"domain": m.group("task"), "model": m.group("llm"),
                "mode": "vanilla" if m.group("mode") == "vanillaLLM" else "sandbox"}
    results = folder / "results.json"
    if results.is_file():
        r = _read_json(results)
        cfg = r.get("config") if isinstance(r, dict) and isinstance(r.get("config"), dict) else {}
        if isinstance(r, dict) and isinstance(r.get("task"), str):
            meta["domain"] = r["task"]
        if isinstance(cfg.get("llm_name"), str):
            meta["model"] = cfg["llm_name"].replace("/", "_")
        if isinstance(cfg.get("mode"), str):
            meta["mode"] = "vanilla" if cfg["mode"] in ("llm", "vanilla", "vanillaLLM") else "sandbox"
    return meta


def import_official(paths: Iterable[Path], *, model: str | None = None, domain: str | None = None,
                    mode: str | None = None, root: Path | None = None) -> list[Trajectory]:
    """Trajectory records from the authors' trajectory.json files (CLI episodes or benchmark runs).
    ``model``/``domain``/``mode`` override what the files say; ``run_id`` is relative to ``root`` under it."""
    out: list[Trajectory] = []
    for f in official_files(paths):
        data = _read_json(f)
        try:
            source = f.resolve().relative_to((root or Path.cwd()).resolve()).as_posix()
        except ValueError:
            source = f.as_posix()
        if isinstance(data, dict) and "steps" in data:  # one CLI episode
            answer_file = f.parent / "files" / "answer.txt"
            answer = answer_file.read_text(encoding="utf-8", errors="replace").strip() if answer_file.is_file() else ""
            task_id = f.parent.name if f.name == "trajectory.json" else f.stem
            out.append(_record(task_id, str(data.get("problem_statement") or ""), data["steps"],
                               model=model or "official", domain=domain or "", mode=mode or "sandbox",
                               source=source, answer=answer))
        elif isinstance(data, dict) and data and all(isinstance(v, dict) and "trajectory" in v for v in data.values()):
            meta = _bench_meta(f.parent)
            for pid, item in data.items():
                out.append(_record(str(pid), str(item.get("problem_statement") or ""), item.get("trajectory") or [],
                                   model=model or meta.get("model", "official"),
                                   domain=domain or meta.get("domain", ""),
                                   mode=mode or meta.get("mode", "sandbox"), source=source,
                                   answer=str(item.get("agent_answer") or ""), reward=item.get("reward")))
        else:
            raise LisError(f"{f} is not an llm-in-sandbox trajectory (expected {{problem_statement, steps}} of the "
                           f"CLI or {{problem_id: {{trajectory, ...}}}} of the benchmark runner)",
                           "give the authors' trajectory.json files")
    return out


# -- RL rollouts (llm-in-sandbox-rl: chat_completions/<step>.jsonl) -------------------------------
def _rl_lines(path: Path) -> Iterator[tuple[int, dict]]:
    if not path.is_file():
        raise LisError(f"RL rollout file {path} does not exist", "give chat_completions/<step>.jsonl files")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LisError(f"cannot read RL rollout file {path}: {type(e).__name__}: {e}", "check the file") from None
    for n, d in iter_jsonl(text, mode="strict", where=str(path), hint="give chat_completions JSONL files"):
        if not isinstance(d.get("chat_completions"), list):
            raise LisError(f"{path} line {n} has no chat_completions list", "give chat_completions JSONL files")
        yield n, d


def _rl_steps(messages: list) -> list[dict]:
    """The authors' step format from a chat transcript: one step per assistant message, its first
    tool call as the action (their loop runs only that one), the matching tool message as observation."""
    tool_msgs = {m.get("tool_call_id"): m for m in messages if isinstance(m, dict) and m.get("role") == "tool"}
    steps, i = [], 0
    for j, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        i += 1
        action: dict = {}
        obs = ""
        calls = m.get("tool_calls") or []
        if calls and isinstance(calls[0], dict):
            fn = calls[0].get("function") or {}
            args = fn.get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except json.JSONDecodeError:
                    args = None
            action = {"function": fn.get("name"), "parameters": args}
            reply = tool_msgs.get(calls[0].get("id"))
            if reply is None and j + 1 < len(messages) and isinstance(messages[j + 1], dict) \
                    and messages[j + 1].get("role") == "tool":
                reply = messages[j + 1]
            obs = str((reply or {}).get("content") or "")
        steps.append({"thought": m.get("content") or "", "reasoning_content": m.get("reasoning") or
                      m.get("reasoning_content") or "", "action": action, "observation": obs,
                      "metadata": {"step": i}})
    return steps


def import_rl_jsonl(paths: Iterable[Path], *, model: str | None = None, domain: str | None = None,
                    mode: str | None = None) -> list[Trajectory]:
    """Trajectory records from llm-in-sandbox-rl's chat_completions JSONL (one episode per line); domain
    and task id from the line's ``entry`` unless given."""
    out = []
    for path in map(Path, paths):
        for n, d in _rl_lines(path):
            entry = d.get("entry") if isinstance(d.get("entry"), dict) else {}
            msgs = d["chat_completions"]
            problem = next((str(m.get("content") or "") for m in msgs if isinstance(m, dict) and m.get("role") == "user"), "")
            task_id = str(entry.get("id") or entry.get("problem_id") or f"{path.name}:{n}")
            dom = domain or str(entry.get("domain") or entry.get("data_source") or "")
            out.append(_record(task_id, problem, _rl_steps(msgs), model=model or "official-rl", domain=dom,
                               mode=mode or "sandbox", source=f"{path.as_posix()}:{n}",
                               reward=d.get("trajectory_reward")))
    return out
