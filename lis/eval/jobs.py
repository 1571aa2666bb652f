"""One evaluation job — (model, domain, mode) — and everything that decides its episodes' results."""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

from lis import layout
from lis.agent.loop import AgentConfig
from lis.errors import LisError
from lis.models.registry import fingerprint
import lis.prompts
from lis.runtime import model_spec
from lis.util.code_version import code_version
from lis.util.hashing import hash_obj, hash_tree

MODES = ("vanilla", "sandbox", "sandbox_inline")
OUT_ROOT = Path(layout.EVAL_ROOT)
JOURNAL_ROOT = Path(layout.JOURNAL_ROOT)


@dataclass(frozen=True)
class EvalJob:
    model: str
    domain: str
    mode: str

    def __post_init__(self):
        if self.mode not in MODES:
            raise LisError(f"unknown mode {self.mode!r}", f"use one of: {', '.join(MODES)}")

    @property
    def name(self) -> str:
        return f"{self.model}/{self.domain}/{self.mode}"

    def out_dir(self, root: Path = OUT_ROOT) -> Path:
        return root / self.model / self.domain / self.mode

    def journal(self, root: Path = JOURNAL_ROOT) -> Path:
        return root / self.model / self.domain / f"{self.mode}.jsonl"


def with_model_path(params, name: str, path: Path, job: EvalJob) -> Path:
    """Point the local entry ``name`` of ``params`` at the folder ``path`` (in place); return the job's
    journal for that folder, kept apart from the entry's own."""
    spec = model_spec(params, name)
    if spec.get("backend") != "local":
        raise LisError(f"--model-path needs a local models entry; '{name}' is {spec.get('backend')}",
                       "name a local entry (backend: local) whose settings the folder is evaluated with")
    if not (Path(path) / "config.json").is_file():
        raise LisError(f"no model folder at {path} (config.json missing)", "train it first, or fix --model-path")
    params.data["models"][name] = {**params.data["models"][name], "path": str(path)}
    where = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:12]
    return JOURNAL_ROOT / "by-path" / where / job.model / job.domain / f"{job.mode}.jsonl"


def repeats_for(params, domain: str) -> int:
    return params.settings("eval").repeats.get(domain, 1)


# The code that makes an episode (its scorer is not part of it: scores have their own key).
EPISODE_CODE = ("lis/agent", "lis/sandbox", "lis/models", "lis/prompts")
EPISODE_CODE_EXCLUDE = ("lis/sandbox/image",)


def task_hash(task) -> str:
    """Content hash of a task: an edited task (same id) runs again."""
    return hash_obj(task.to_dict())


def settings_hash(job: EvalJob, spec: dict, cfg: AgentConfig, sandbox_config, seed: int) -> str:
    """What makes an episode's result: a journal entry is reused only under the same hash (the
    job, the model's params entry and weights, the agent and sandbox settings, the prompt
    templates, the version of the code that runs episodes, the seed). Scoring is not in it."""
    sb = None
    if sandbox_config is not None:
        sb = {"backend": sandbox_config.backend, "image": sandbox_config.image or sandbox_config.rootfs,
              "network": sandbox_config.network, "limits": dataclasses.asdict(sandbox_config.limits),
              "timeout": sandbox_config.command_timeout_s}
    where = ("path", "model") if spec.get("backend") == "local" else ()  # the weights' hash stands for a folder
    return hash_obj({"job": dataclasses.asdict(job), "model": {k: v for k, v in spec.items() if k not in where},
                     "weights": fingerprint(job.model, spec),
                     "agent": dataclasses.asdict(cfg), "sandbox": sb,
                     "prompts": hash_tree(Path(lis.prompts.__file__).parent / "templates"),
                     "code": code_version(*EPISODE_CODE, exclude=EPISODE_CODE_EXCLUDE), "seed": seed})
