"""Scoring as its own pass over a job's episodes, keyed by the scorer settings and code version.

Graders run on the host over the finished record (the answer file's text or the vanilla reply), so a
changed scorer never re-runs an episode. ``scoring_hash`` is what a score depends on: the ``scoring``
params (with the judge model's params and fingerprint; not the cache path) and the scoring code's version.
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from lis.agent.trajectory import Trajectory
from lis.errors import LisError
from lis.eval.journal import FINISHED, Journal
from lis.models.registry import fingerprint
from lis.rewards import score
from lis.runtime import build_judge, model_spec
from lis.tasks.schema import Task
from lis.util.code_version import code_version
from lis.util.hashing import hash_obj

log = logging.getLogger("lis.eval")

SCORING_CODE = ("lis/rewards",)
NOT_SEMANTIC = ("judge_cache",)  # where the judge's replies are cached does not change a score


def scoring_hash(params) -> str:
    sec = {k: v for k, v in params.settings("scoring").written().items() if k not in NOT_SEMANTIC}
    judge = sec.get("judge")
    judge_model = None
    if judge:
        spec = model_spec(params, judge["model"])
        judge_model = {"spec": spec, "fingerprint": fingerprint(judge["model"], spec)}
    return hash_obj({"scoring": sec, "judge_model": judge_model, "code": code_version(*SCORING_CODE)})


def score_episode(rec: Trajectory, task: Task, judge=None, ifbench_variant: str = "ifbench8") -> bool:
    """Fill a finished episode's ``reward`` and ``score``; False when the scorer failed (e.g. the judge is
    unreachable): the reward stays None with the reason."""
    try:
        s = score(task, rec.answer, judge=judge, mode=rec.mode, ifbench_variant=ifbench_variant)
    except LisError as e:
        rec.reward, rec.score = None, {"error": e.one_line()}
        return False
    rec.reward, rec.score = s.value, {"scorer": s.scorer, "extracted": s.extracted, "details": s.details}
    return True


class Scorer:
    """Scores finished episodes once per scoring hash; remembers the scores in the journal."""

    def __init__(self, params, journal: Journal, tasks: dict[str, Task]):
        self.hash = scoring_hash(params)
        self.judge = build_judge(params)
        self.journal = journal
        self.tasks = tasks
        self.known = journal.scores(self.hash)
        self.ifbench_variant = params.settings("scoring").ifbench_variants
        self.failed: set[str] = set()  # episodes whose scoring failed in this process (tried again next run)

    def apply(self, rec: Trajectory) -> None:
        """Fill ``rec.reward``/``rec.score``: from the journal when this scorer scored the episode
        before, else now (and remember it). Unfinished episodes get no score; a failing scorer leaves
        the reward None with the reason, to be scored on a later run."""
        if rec.termination not in FINISHED:
            rec.reward, rec.score = None, None
            return
        known = self.known.get(rec.episode_id)
        if known is not None:
            rec.reward, rec.score = known["reward"], known["score"]
            return
        task = self.tasks.get(rec.task_id)
        if task is None:
            rec.reward, rec.score = None, {"error": f"task {rec.task_id} is not in the task set"}
            return
        if not score_episode(rec, task, self.judge, self.ifbench_variant):
            self.failed.add(rec.episode_id)
            return
        self.journal.append_score(rec.episode_id, self.hash, rec.reward, rec.score)
        self.known[rec.episode_id] = {"reward": rec.reward, "score": rec.score}

    def apply_all(self, records: list[Trajectory], workers: int = 4) -> int:
        """Score every record that has no score under this hash yet (concurrently: a judge is a
        network call); return how many were scored now."""
        todo = [r for r in records if r.termination in FINISHED and r.episode_id not in self.known
                and r.episode_id not in self.failed]
        queued = {id(r) for r in todo}
        for r in records:
            if id(r) not in queued and r.episode_id not in self.failed:  # a failure of this run keeps its reason
                self.apply(r)
        if todo:
            log.info("scoring %d episode(s) with scoring settings %s", len(todo), self.hash)
            with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="lis-score") as ex:
                list(ex.map(self.apply, todo))
        return len(todo)
