"""A ``lis eval`` job as an Inspect log, so that Inspect View browses lis runs.

    lis export inspect data/eval/sft/math/sandbox --out inspect_logs      # one job
    lis export inspect data/eval --out inspect_logs                       # every job below a folder
    inspect view --log-dir inspect_logs

A job folder (``data/eval/<model>/<domain>/<mode>``) becomes one ``.eval`` log written with
Inspect's own ``write_eval_log``: the domain's lis task with the job's mode, the model
``lis/<model>``, one sample per episode (epoch = repeat + 1) with its conversation, score, usage,
times, ``lis:trajectory`` summary and transcript events; an infrastructure error is a sample with an
error. The results are the job's own metrics.json numbers, so the viewer shows what lis's report
shows.
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from inspect_ai.log import (EvalConfig, EvalDataset, EvalError, EvalLog, EvalMetric, EvalPlan, EvalResults,
                            EvalSample, EvalScore, EvalSpec, EvalStats, write_eval_log)
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score

from lis.agent.trajectory import INFRA, Trajectory
from lis.errors import LisError
from lis.inspect.dataset import problem_messages
from lis.inspect.events import model_event, tool_events
from lis.inspect.messages import to_inspect, usage_to_inspect
from lis.inspect.solver import STORE_KEY, summary
from lis.inspect.tasks import DOMAINS
from lis.manifest import read_json
from lis.prompts import render_prompts
from lis.records import MetricsRecord, check
from lis.tasks import read_tasks
from lis.tasks.schema import Task
from lis.util.hashing import hash_obj
from lis.util.jsonl import iter_jsonl, read_text

TRAJECTORIES = "trajectories.jsonl"
METRICS = "metrics.json"
TASK_NAMES = {domain: name for name, domain in DOMAINS.items()}
SCORER = "lis_scorer"


def job_folders(paths: list[Path]) -> list[Path]:
    """The job folders given, or found below the folders given, sorted; LisError for a path that holds no job."""
    found: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise LisError(f"{p} does not exist", "give an eval job folder (data/eval/<model>/<domain>/<mode>) or a "
                                                  "folder above such folders (data/eval)")
        if (p / TRAJECTORIES).is_file():
            found.append(p)
            continue
        below = sorted(t.parent for t in p.rglob(TRAJECTORIES) if t.is_file()) if p.is_dir() else []
        if not below:
            raise LisError(f"no eval job in {p} (no {TRAJECTORIES} in it or below it)",
                           "run `lis eval run` (or `make paper`) first, or give the job's folder")
        found += below
    return sorted(dict.fromkeys(found))


def _time(text: str) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def _records(job: Path) -> list[Trajectory]:
    text = read_text(job / TRAJECTORIES, hint=f"give a job folder that `lis eval run` wrote ({TRAJECTORIES})")
    records = []
    for n, row in iter_jsonl(text, mode="strict", where=str(job / TRAJECTORIES),
                             hint="the file is not one `lis eval run` wrote"):
        try:
            records.append(Trajectory.from_dict(row, where=f"{job / TRAJECTORIES} line {n}"))
        except (TypeError, ValueError, KeyError) as e:
            raise LisError(f"{job / TRAJECTORIES} line {n} is not a trajectory record ({type(e).__name__}: {e})",
                           "give a job folder that `lis eval run` wrote") from None
    return records


def default_tasks_file(job: Path, domain: str) -> Path | None:
    """``data/tasks/<domain>.jsonl`` of the project the job folder lies in (``<root>/data/eval/m/d/mode``)."""
    parts = job.resolve().parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "eval" and parts[i - 1] == "data":
            candidate = Path(*parts[:i]) / "tasks" / f"{domain}.jsonl"
            return candidate if candidate.is_file() else None
    return None


def _prompt(rec: Trajectory, task: Task | None) -> list[dict[str, Any]]:
    """The sample's input: the task's first-turn problem as the lis Inspect task renders it, else the
    messages before the first reply; no system prompt (the sample's messages carry it)."""
    if task is not None:
        try:
            return problem_messages(render_prompts(task, rec.mode))
        except LisError:
            pass
    first = next((i for i, m in enumerate(rec.messages) if m.get("role") == "assistant"), len(rec.messages))
    return problem_messages(rec.messages[:first]) or [{"role": "user", "content": ""}]


def _events(rec: Trajectory, model: str) -> list[Any]:
    events: list[Any] = []
    where = [i for i, m in enumerate(rec.messages) if m.get("role") == "assistant"]
    for step, at in zip(rec.steps, where):
        events.append(model_event(model, rec.messages[:at + 1], step, vanilla=rec.mode == "vanilla"))
        events += tool_events(step)
    return events


def _score(rec: Trajectory) -> dict[str, Score] | None:
    if rec.reward is None:
        return None
    s = rec.score or {}
    return {SCORER: Score(value=float(rec.reward), answer=s.get("extracted") if s.get("extracted") is not None
                          else rec.answer, explanation=f"{s.get('scorer', '?')} (lis eval)",
                          metadata={"scorer": s.get("scorer"), "details": s.get("details") or {}})}


def _sample(rec: Trajectory, task: Task | None, model: str) -> EvalSample:
    messages = to_inspect(rec.messages, model=model) if rec.messages else to_inspect(_prompt(rec, task))
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    output = ModelOutput(model=model)
    if last is not None:
        output = ModelOutput.from_message(last, stop_reason="tool_calls" if last.tool_calls else "stop")
        output.model = model
    usage = usage_to_inspect(rec.prompt_tokens, rec.completion_tokens, rec.cached_tokens)
    output.usage = usage
    error = None
    if rec.termination in INFRA or (rec.termination == "interrupted"):
        error = EvalError(message=f"{rec.termination}: {rec.error or 'no detail'}", traceback="", traceback_ansi="")
    started = _time(rec.started_utc)
    return EvalSample(
        id=rec.task_id, epoch=rec.repeat + 1, input=to_inspect(_prompt(rec, task)),
        target=task.ground_truth if task is not None else "", messages=messages, output=output,
        scores=_score(rec),
        metadata={"domain": rec.domain, "mode": rec.mode, "termination": rec.termination, "seed": rec.seed,
                  "task_hash": rec.task_hash, "backend": rec.backend, "image": rec.image},
        store={STORE_KEY: summary(rec)}, events=_events(rec, model), model_usage={model: usage},
        started_at=started, completed_at=started + dt.timedelta(seconds=rec.wall_s) if started else None,
        total_time=round(rec.wall_s, 3), working_time=round(rec.llm_s + rec.env_s, 3),
        uuid=rec.episode_id or None, error=error)


def _metric(name: str, value: Any) -> EvalMetric | None:
    return EvalMetric(name=name, value=float(value)) if isinstance(value, (int, float)) else None


def eval_log(job: Path, tasks_file: Path | None = None) -> EvalLog:
    """The Inspect log of one job folder (see the module doc). Raises LisError for a folder that is
    not a job, a record that is not a trajectory, or a task file that cannot be read."""
    job = Path(job)
    records = _records(job)
    if not records:
        raise LisError(f"{job / TRAJECTORIES} holds no episode", "run the job first")
    metrics = read_json(job / METRICS, expect=dict) if (job / METRICS).is_file() else {}
    if metrics:
        check(MetricsRecord, metrics, where=f"{job / METRICS} is not a job's metrics")
    model_name = str(metrics.get("model") or records[0].model)
    domain = str(metrics.get("domain") or records[0].domain)
    mode = str(metrics.get("mode") or records[0].mode)
    tasks_file = tasks_file or default_tasks_file(job, domain)
    tasks = {t.id: t for t in read_tasks(tasks_file)} if tasks_file else {}
    model = f"lis/{model_name}"
    samples = []
    for n, r in enumerate(records, 1):
        try:
            samples.append(_sample(r, tasks.get(r.task_id), model))
        except (AttributeError, TypeError, ValueError, KeyError) as e:  # a record with fields of the wrong shape
            raise LisError(f"{job / TRAJECTORIES} line {n} ({r.task_id}) cannot be exported: "
                           f"{type(e).__name__}: {' '.join(str(e).split())[:200]}",
                           "give a job folder that `lis eval run` wrote") from None
    starts = [t for t in (_time(r.started_utc) for r in records) if t]
    ends = [t + dt.timedelta(seconds=r.wall_s) for r, t in ((r, _time(r.started_utc)) for r in records) if t]
    created = min(starts) if starts else dt.datetime.now(dt.timezone.utc)
    scored = [r.reward for r in records if r.reward is not None]
    accuracy = metrics.get("accuracy", sum(scored) / len(scored) if scored else None)
    ci = metrics.get("ci95") or [None, None]
    found = [m for m in (_metric("accuracy", accuracy), _metric("ci95_low", ci[0]), _metric("ci95_high", ci[1])) if m]
    total = usage_to_inspect(sum(r.prompt_tokens for r in records), sum(r.completion_tokens for r in records),
                             sum(r.cached_tokens for r in records))
    task_name = f"lis/{TASK_NAMES.get(domain, domain)}"
    # stable ids: the same job exports under the same names (a re-export replaces its log)
    eval_id = hash_obj({"job": str(job.resolve()), "model": model_name, "domain": domain, "mode": mode})[:22]
    spec = EvalSpec(
        eval_id=eval_id, run_id=eval_id, task_id=hash_obj({"task": task_name, "mode": mode})[:22],
        created=created.isoformat(), task=task_name, task_registry_name=task_name,
        task_args={"mode": mode}, task_args_passed={"mode": mode}, solver="lis_agent",
        dataset=EvalDataset(name=task_name, location=str(tasks_file) if tasks_file else None,
                            samples=len({r.task_id for r in records}),
                            sample_ids=list(dict.fromkeys(r.task_id for r in records)), shuffled=False),
        model=model, config=EvalConfig(epochs=max(r.repeat for r in records) + 1),
        metadata={"exported_from": str(job), "lis_domain": domain, "mode": mode,
                  "settings_hash": metrics.get("settings_hash"), "scoring_hash": metrics.get("scoring_hash"),
                  "n": metrics.get("n", len(records)), "errors": metrics.get("errors"),
                  "terminations": metrics.get("terminations")})
    results = EvalResults(total_samples=len(records), completed_samples=len(scored),
                          scores=[EvalScore(name=SCORER, scorer=SCORER, metrics={m.name: m for m in found})])
    stats = EvalStats(started_at=created.isoformat(), completed_at=(max(ends) if ends else created).isoformat(),
                      model_usage={model: total})
    return EvalLog(status="success", eval=spec, plan=EvalPlan(name="lis_agent"), results=results, stats=stats,
                   samples=samples)


def _file_name(log: EvalLog) -> str:
    """Inspect's own pattern, ``<created>_<task>_<eval id>.eval`` (Inspect View reads the task from it)."""
    stamp = re.sub(r"[:]", "-", log.eval.created[:19]) + "+00-00"
    task = log.eval.task.split("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._+-]", "-", f"{stamp}_{task}_{log.eval.eval_id}") + ".eval"


def export_jobs(paths: list[Path], out: Path, tasks_file: Path | None = None) -> list[Path]:
    """Write one ``.eval`` log per job folder found in ``paths`` into ``out``; return their paths."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise LisError(f"{out} is a file, not a folder", "give --out a folder for the logs")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for job in job_folders(paths):
        log = eval_log(job, tasks_file)
        path = out / _file_name(log)
        write_eval_log(log, str(path), format="eval")
        written.append(path)
    return written
