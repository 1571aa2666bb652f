"""The root's one-call helpers: one scored episode from this project's params (example: :mod:`lis`).

``run_task`` builds what ``lis eval run`` builds for one episode: the sandbox of the ``sandbox``
section on the built image (``data/image/manifest.json``; ``lis image build`` makes it), the agent
settings of the ``agent`` section with the model entry's sampling, the episode's seed from
``eval.seed``; then it scores the answer on the host as the eval's scoring pass does (the
``scoring`` section's judge, if one is set). Its parts stay public for anything else:
``lis.runtime`` (builders), ``lis.agent`` (the loop), ``lis.sandbox`` (sandboxes).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from lis.agent import run_task as run_episode_task
from lis.agent.trajectory import FINISHED, Trajectory
from lis.eval.scoring import score_episode
from lis.models.registry import build_model as build_chat_model
from lis.params import Params
from lis.params import load as load_params
from lis.runtime import agent_config, build_judge, chat_model, episode_seed, model_spec, sandbox_config
from lis.sandbox import SandboxConfig, SandboxPool, registry
from lis.tasks.schema import Task


def build_model(name: str, params: Params | None = None):
    """The ChatModel of the models entry ``name`` (params: the project's, from the working directory up)."""
    return chat_model(params or load_params(), name)


def run_task(task: Task, model: Any, mode: str = "sandbox", *, params: Params | None = None, score: bool = True,
             sandbox: SandboxConfig | None = None, seed: int | None = None, repeat: int = 0) -> Trajectory:
    """Run ``task`` once in ``mode`` (sandbox, sandbox_inline or vanilla) with ``model`` (a models
    entry's name or a ChatModel) and return its record; with ``score`` the record's ``reward`` and
    ``score`` are filled for a finished episode. ``sandbox``: another SandboxConfig than the params'
    on the built image. Never raises for a model or sandbox failure: ``termination`` says it."""
    params = params or load_params()
    spec = model_spec(params, model) if isinstance(model, str) else None
    chat = build_chat_model(model, spec) if spec is not None else model
    box = None if mode == "vanilla" else (sandbox or sandbox_config(params, run_id=registry.RUN_ID, built_image=True))
    cfg = agent_config(params, spec=spec, domain=task.domain, sandbox=box)
    seed = episode_seed(params.settings("eval").seed, task.id, repeat) if seed is None else seed
    if cfg.sampling.seed is None:
        cfg = dataclasses.replace(cfg, sampling=dataclasses.replace(cfg.sampling, seed=seed))
    meta = dict(repeat=repeat, seed=seed, run_id=registry.RUN_ID)
    if box is None:
        rec = run_episode_task(task, chat, mode, cfg, **meta)
    else:
        with SandboxPool(box, max_concurrent=1) as pool:
            rec = run_episode_task(task, chat, mode, cfg, pool=pool, **meta)
    if score and rec.termination in FINISHED:
        score_episode(rec, task, build_judge(params), params.settings("scoring").ifbench_variants)
    return rec
