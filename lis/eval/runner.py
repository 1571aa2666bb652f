"""``lis eval run``: every episode of one (model, domain, mode) job, concurrently, resumable.

Episodes run on worker threads through the sandbox pool; each is appended to the job's journal the
moment it ends, so a crash or a SIGINT loses nothing that finished. Scoring is its own pass
(:mod:`lis.eval.scoring`). Infrastructure errors are left out of the accuracy, counted, and retried on
later runs up to ``eval.max_attempts``; a job whose error share passes ``eval.max_error_share`` fails
instead of publishing a number. Ctrl-C starts nothing new and records what was in flight as
interrupted (retried next time). Outputs: ``trajectories.jsonl`` (sorted by episode key, with
rewards) and ``metrics.json``.
"""
from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from lis.agent.episode import run_task
from lis.agent.trajectory import Trajectory, concurrent_output, episode_key, unordered_output, wall_clock_limited
from lis.errors import LisError
from lis.eval.jobs import EvalJob, repeats_for, settings_hash, task_hash
from lis.eval.journal import INFRA, INTERRUPTED, Journal
from lis.eval.metrics import compute_metrics
from lis.eval.scoring import Scorer
from lis.manifest import write_json
from lis.models.registry import build_model
from lis.runtime import agent_config, episode_seed, model_spec, sandbox_config
from lis.sandbox import registry
from lis.sandbox.pool import SandboxPool
from lis.tasks.domains import base_domain
from lis.tasks.schema import Task
from lis.util import cancel
from lis.util.log import console
from lis.util.progress import at as note_progress
from lis.util.slots import SlotExecutor
from lis.util.jsonl import iter_jsonl, read_text, write_jsonl

log = logging.getLogger("lis.eval")


class _Progress:
    """A rich progress bar on a terminal; a log line every ~5% otherwise (Snakemake/DVC logs)."""

    def __init__(self, name: str, total: int, done: int):
        self.name, self.total, self.done = name, total, done
        self.rewards: list[float] = []
        self.errors = 0
        self.t0 = time.monotonic()
        self.bar = None
        if console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("acc {task.fields[acc]}"), TextColumn("err {task.fields[err]}"),
                                TimeRemainingColumn(), console=console)
            self.bar.start()
            self.task = self.bar.add_task(name, total=total, completed=done, acc="-", err=0)

    def update(self, rec: Trajectory) -> None:
        if rec.termination == INTERRUPTED:
            return
        self.done += 1
        note_progress(f"{self.name}: episode {self.done}/{self.total}")
        if rec.reward is not None:
            self.rewards.append(rec.reward)
        else:
            self.errors += 1
        acc = f"{sum(self.rewards) / len(self.rewards):.3f}" if self.rewards else "-"
        if self.bar:
            self.bar.update(self.task, completed=self.done, acc=acc, err=self.errors)
        elif self.total and (self.done == self.total or self.done % max(1, self.total // 20) == 0):
            rate = (time.monotonic() - self.t0) / max(1, len(self.rewards) + self.errors)
            log.info("%s: %d/%d episodes, accuracy %s, errors %d, ETA %.0fs", self.name, self.done, self.total, acc,
                     self.errors, rate * (self.total - self.done))

    def close(self) -> None:
        if self.bar:
            self.bar.stop()


def _error_record(task: Task, job: EvalJob, termination: str, error: str | None = None, **meta: Any) -> Trajectory:
    known = set(Trajectory.__dataclass_fields__)
    return Trajectory(task_id=task.id, model=job.model, mode=job.mode, domain=task.domain, termination=termination,
                      error=error, **{k: v for k, v in meta.items() if k in known})


def read_task_rows(path: Path, domain: str | None = None) -> tuple[list[Task], list[tuple[str, str]]]:
    """Tasks of a JSONL, leniently: a row that is not a valid Task, a second row with an id already seen,
    or (``domain`` given) a task of another domain becomes (id, problem) instead of ending the job.
    Raises LisError only when the file itself is missing or not text."""
    if not Path(path).is_file():
        raise LisError(f"no task file {path}", "run `lis tasks` (or the pipeline) first")
    text = read_text(path, hint="give a JSONL file written by `lis tasks`")
    good, bad, skipped = [], [], []
    seen: set[str] = set()
    for n, row in iter_jsonl(text, mode="tolerant", where=str(path), skipped=skipped):
        rid = row.get("id")
        rid = str(rid) if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid) else f"line{n}"
        try:
            task = Task.from_dict(row, where=f"line {n}")
        except Exception as e:  # noqa: BLE001 - any malformed row
            why = str(e) if isinstance(e, LisError) else f"line {n}: {type(e).__name__}: {e}"
            bad.append((n, rid if rid not in seen else f"line{n}", why))
            continue
        if task.id in seen:
            bad.append((n, f"line{n}", f"line {n}: task id {task.id!r} repeats an earlier row (repeats are a runner "
                                       f"setting, not rows)"))
            continue
        if domain is not None and base_domain(task.domain) != base_domain(domain):
            bad.append((n, task.id, f"line {n}: a {task.domain} task in the {domain} job"))
            continue
        seen.add(task.id)
        good.append(task)
    bad += [(n, f"line{n}", f"line {n}: {why}") for n, why in skipped]  # not JSON objects: kept as errors, not dropped
    return good, [(rid, why) for _, rid, why in sorted(bad, key=lambda b: b[0])]


def run_job(params, job: EvalJob, tasks_path: Path, *, out_dir: Path, journal_path: Path,
            image_manifest: dict | None = None, limit: int | None = None, workers: int | None = None,
            wait: bool = False) -> dict:
    """Run (or resume) one job and write its outputs; return its metrics. Raises LisError while another
    process runs the job (``wait``: waits for it), and when the share of errors passes
    ``eval.max_error_share`` (no metrics are published then; the journal keeps every episode)."""
    journal = Journal(journal_path)
    with journal.lock(job.name, wait=wait):
        return _run_locked(params, job, tasks_path, journal, out_dir, image_manifest, limit, workers)


def _run_locked(params, job: EvalJob, tasks_path: Path, journal: Journal, out_dir: Path,
                image_manifest: dict | None, limit: int | None, workers: int | None) -> dict:
    t0 = time.monotonic()
    tasks, bad_rows = read_task_rows(tasks_path, job.domain)
    if limit is not None:
        tasks = tasks[:limit]
    spec = model_spec(params, job.model)
    sandbox_cfg = None
    ev = params.settings("eval")
    if job.mode != "vanilla":
        sandbox_cfg = sandbox_config(params, run_id=registry.RUN_ID, image_manifest=image_manifest,
                                     deterministic=ev.deterministic)
    cfg = agent_config(params, spec=spec, domain=job.domain, sandbox=sandbox_cfg, deterministic=ev.deterministic)
    if ev.deterministic and spec.get("backend") == "local":
        # each turn's sampled ids and log-probabilities go into the trajectories: two runs compare bit for bit
        cfg = dataclasses.replace(cfg, keep_token_ids=True)
    base_seed, max_attempts, max_share = ev.seed, ev.max_attempts, float(ev.max_error_share)
    shash = settings_hash(job, spec, cfg, sandbox_cfg, base_seed)
    thash = {t.id: task_hash(t) for t in tasks}
    state = journal.state(shash, thash)
    reps = repeats_for(params, job.domain)
    done: dict[str, Trajectory] = dict(state.finished)
    todo, retries = [], 0
    for t in tasks:
        for r in range(reps):
            key = episode_key(t.id, r, job.mode)
            if key in done:
                continue
            tried = state.attempts(key)
            if tried >= max_attempts:  # given up: the last error stands, counted as an error
                done[key] = state.failures[key][-1]
                continue
            retries += tried > 0
            todo.append((t, r, tried + 1))
    expected = len(tasks) * reps + len(bad_rows)
    given_up = sum(1 for r in done.values() if r.termination in INFRA)
    log.info("%s: %d tasks, %d episodes, %d already done (journal %s)%s%s", job.name, len(tasks), expected,
             expected - len(bad_rows) - len(todo), journal.path,
             f"; {retries} to retry after errors" if retries else "",
             f"; {given_up} given up after {max_attempts} attempts" if given_up else "")
    n_workers = workers or ev.workers
    pool = None
    if sandbox_cfg is not None and todo:
        sec = params.settings("sandbox")
        n_workers = min(n_workers, sec.pool.max_concurrent)
        pool = SandboxPool(sandbox_cfg, max_concurrent=n_workers, warm=sec.pool.warm, engines=sec.engines or None)
    model = build_model(job.model, spec) if todo else None
    by_id = {t.id: t for t in tasks}
    scorer = Scorer(params, journal, by_id)
    progress = _Progress(job.name, expected, expected - len(bad_rows) - len(todo))

    def meta_for(task: Task, repeat: int, attempt: int) -> dict[str, Any]:
        return dict(repeat=repeat, run_id=registry.RUN_ID, params_hash=shash, task_hash=thash[task.id],
                    seed=episode_seed(base_seed, task.id, repeat), attempt=attempt, episode_id=uuid.uuid4().hex)

    def one(task: Task, repeat: int, attempt: int) -> Trajectory:
        meta = meta_for(task, repeat, attempt)
        try:
            cancel.check()  # nothing new after Ctrl-C
            ep_cfg = cfg
            if cfg.sampling.seed is None:
                ep_cfg = dataclasses.replace(cfg, sampling=dataclasses.replace(cfg.sampling, seed=meta["seed"]))
            rec = run_task(task, model, job.mode, ep_cfg, pool=pool, **meta)
        except cancel.Interrupted:
            rec = _error_record(task, job, INTERRUPTED, **meta)
        except Exception as e:  # a harness failure on this item: an error, retried on a later run
            if cancel.requested():
                rec = _error_record(task, job, INTERRUPTED, **meta)
            else:
                log.warning("%s: task %s failed: %s", job.name, task.id, e)
                rec = _error_record(task, job, "error", f"{type(e).__name__}: {' '.join(str(e).split())[:300]}",
                                    **meta)
        for k in ("params_hash", "task_hash", "attempt", "episode_id"):
            setattr(rec, k, meta[k])
        journal.append(rec)
        scorer.apply(rec)
        return rec

    lockstep = None
    if todo and ev.deterministic:
        if callable(getattr(model, "lockstep", None)):
            lockstep = model.lockstep(max(1, min(n_workers, len(todo))))
        else:
            log.warning("%s: eval.deterministic has no effect on model %s (%s backend): only an in-process model "
                        "decodes in rounds formed by rule", job.name, job.model, spec.get("backend"))
    executor: Any
    if lockstep is not None:
        step = lockstep.__enter__()
        executor = SlotExecutor(max(1, min(n_workers, len(todo))), enter=step.slot, name="lis-eval")
    else:
        executor = ThreadPoolExecutor(max_workers=max(1, n_workers), thread_name_prefix="lis-eval")
    futures: dict[Future, tuple[Task, int, int]] = {executor.submit(one, *item): item for item in todo}
    if lockstep is not None:
        executor.start()
    pending: set[Future] = set(futures)
    try:
        while pending:
            finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for f in finished:
                rec = f.result()
                if rec.termination != INTERRUPTED:
                    done[rec.key] = rec
                progress.update(rec)
    except BaseException:
        _interrupt(executor, pending, futures, journal, job, meta_for)
        progress.close()
        raise
    finally:
        if lockstep is not None:
            lockstep.__exit__(None, None, None)
    executor.shutdown(wait=True)
    progress.close()
    if pool is not None:
        pool.close()
    for rid, problem in bad_rows:  # malformed rows: one error record each, never the end of the job
        log.warning("%s: task row %s is malformed: %s", job.name, rid, problem)
        rec = Trajectory(task_id=rid, model=job.model, mode=job.mode, domain=job.domain, termination="error",
                         error=f"malformed task row: {problem[:300]}", params_hash=shash)
        done[rec.key] = rec
    ids = set(by_id) | {rid for rid, _ in bad_rows}
    records = sorted((r for r in done.values() if r.task_id in ids), key=lambda r: r.key)
    scorer.apply_all(records, workers=n_workers)
    metrics = compute_metrics(records, {"model": job.model, "domain": job.domain, "mode": job.mode,
                                        "settings_hash": shash, "scoring_hash": scorer.hash},
                              expected, time.monotonic() - t0)
    metrics["limits"] = {"max_attempts": max_attempts, "max_error_share": max_share}
    metrics["deterministic"] = _deterministic(ev.deterministic, model, records)
    if metrics["n"] and metrics["error_share"] > max_share:
        for stale in ("metrics.json", "trajectories.jsonl"):  # never leave an older number in place
            (out_dir / stale).unlink(missing_ok=True)
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(metrics["error_kinds"].items()))
        first = next((r.error or (r.score or {}).get("error") for r in records if r.reward is None
                      and (r.error or (r.score or {}).get("error"))), None)
        raise LisError(f"{job.name}: {metrics['errors']} of {metrics['n']} episodes are errors ({kinds}), "
                       f"{100 * metrics['error_share']:.0f}% > eval.max_error_share {100 * max_share:.0f}%; "
                       f"no accuracy published" + (f"; e.g. {first[:200]}" if first else ""),
                       f"fix the cause and run again: finished episodes are kept, errors are retried up to "
                       f"eval.max_attempts ({max_attempts}) times (journal {journal.path})")
    write_jsonl(out_dir / "trajectories.jsonl", (r.to_dict() for r in records))  # atomically, never unencodable
    write_json(out_dir / "metrics.json", metrics)
    return metrics


def _interrupt(executor: ThreadPoolExecutor | SlotExecutor, pending: set[Future], futures: dict, journal: Journal, job: EvalJob,
               meta_for) -> None:
    """Ctrl-C: start nothing new, remove our sandboxes, give running episodes a moment to stop,
    and record the ones still in flight as interrupted (retried on the next run)."""
    cancel.request()
    executor.shutdown(wait=False, cancel_futures=True)
    registry.close_all()
    running = {f for f in pending if not f.cancelled()}
    _, stuck = wait(running, timeout=2.0)
    for f in stuck:  # still blocked (e.g. in a model call): its record is written here
        task, repeat, attempt = futures[f]
        meta = meta_for(task, repeat, attempt)
        journal.append(_error_record(task, job, INTERRUPTED, **meta))
    log.warning("%s: interrupted; %d episode(s) in flight recorded as interrupted, %d not started "
                "(run again to resume)", job.name, len(running), len(pending) - len(running))


def _deterministic(asked: bool, model: Any, records: list[Trajectory]) -> dict[str, Any]:
    """Whether the job's trajectories are a function of the seed alone: the mode was on, the model
    decoded in rounds (in-process), no wall-clock limit decided an episode (a slower machine could have
    let it finish), and no episode has output of concurrent processes the mode could not order."""
    timed_out = sum(1 for r in records if wall_clock_limited(r))
    concurrent = sum(1 for r in records if concurrent_output(r))
    unordered = sum(1 for r in records if unordered_output(r))
    local = model is None or callable(getattr(model, "lockstep", None))
    return {"mode": asked, "wall_clock_limited_episodes": timed_out, "concurrent_output_episodes": concurrent,
            "unordered_output_episodes": unordered, "reproducible": bool(asked and local and timed_out == 0 and unordered == 0)}
