"""GRPO with generation on a vLLM server (TRL's server mode): params ``grpo.vllm`` (documented in params.yaml).

    server = ServerMode.from_settings(grpo.vllm)     # None for mode none: the policy generates in process
    server.start(init_dir, state_dir)                # runs ``command`` unless base_url already answers
    policy = server.policy(model, tokenizer, seed)   # the training model's template, the server's engine

The episodes are the same (:func:`lis.train.rollout.group.run_group`, token-exact); only the engine
behind the policy changes to :class:`~lis.models.vllm_tokens.VLLMTokenEngine`, and the chat template,
stop ids and tool-call parser stay the training model's, so nothing is re-tokenised. ``command``
placeholders: ``{model}`` the start model's folder, ``{port}`` the port of ``base_url``.

``sync: trl``: TRL pushes the weights over NCCL before calling our ``rollout_func`` (CUDA on both
sides, vLLM installed here). ``sync: files``: TRL is not told about the server; before every generation
batch rank 0 writes the weights (LoRA merged) to one safetensors file on a filesystem both see and has
the server load it — vLLM through its weight-reload RPC then ``/reset_prefix_cache`` (it needs
``VLLM_SERVER_DEV_MODE=1``, which exposes those routes: keep it off public networks), lis's
:class:`lis.models.server.ChatServer` through ``POST /lis/load_weights``.
"""
from __future__ import annotations

import json
import logging
import shlex
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lis.config.training import Vllm
from lis.errors import LisError
from lis.models import vllm_program
from lis.models.local_hf import LocalHFModel
from lis.train.lora import is_lora, merged_state_dict
from lis.util import server_process

log = logging.getLogger("lis.train.grpo")

WHERE = "grpo.vllm"


@dataclass(frozen=True)
class ServerMode:
    """The vLLM server of ``grpo.vllm`` (:meth:`from_settings`): where it is, how to start it, how weights reach it."""

    base_url: str
    model: str | None
    logprobs_mode: str
    timeout_s: float
    command: tuple[str, ...] | None
    startup_timeout_s: float
    sync: str
    env: tuple[tuple[str, str], ...]
    _kind: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_settings(cls, vllm: "Vllm | None") -> "ServerMode | None":
        """The server of the validated ``grpo.vllm`` block; None when it is absent or its mode is ``none``."""
        if vllm is None or vllm.mode == "none":
            return None
        url = vllm.base_url.rstrip("/")
        if url.endswith("/v1"):
            url = url[:-3]
        command = shlex.split(vllm.command) if isinstance(vllm.command, str) else vllm.command
        return cls(url, model=vllm.model, logprobs_mode=vllm.logprobs_mode, timeout_s=float(vllm.timeout_s),
                   command=tuple(str(c) for c in command) if command else None,
                   startup_timeout_s=float(vllm.startup_timeout_s), sync=vllm.sync,
                   env=tuple((str(k), str(x)) for k, x in vllm.env.items()))

    # -- TRL ----------------------------------------------------------------------------------
    def trl_config(self) -> dict[str, Any]:
        """The GRPOConfig options of server mode (none with ``sync: files``: TRL does not see the server)."""
        if self.sync == "files":
            return {}
        return {"use_vllm": True, "vllm_mode": "server", "vllm_server_base_url": self.base_url,
                "vllm_server_timeout": self.timeout_s}

    def require_vllm(self) -> None:
        """TRL's weight transfer to the server runs in the training process: vLLM must be importable
        (``sync: trl``; ``files`` needs none)."""
        from trl.import_utils import is_vllm_available

        if self.sync == "trl" and not is_vllm_available():
            raise LisError(f"{WHERE}.mode is server, but vLLM is not installed here (TRL pushes the weights to the "
                           "server with it)", "pip install -e '.[gpu]' on the GPU box, or set grpo.vllm.mode: none "
                           "(or grpo.vllm.sync: files with lis's own server)")

    @staticmethod
    def gathered_weights(accelerator: Any, wrapped: Any) -> dict[str, Any] | None:
        """The whole model's weights when they are sharded over processes (a collective: every rank calls it;
        rank 0 gets them); None when each process holds the whole model (:meth:`push_weights` reads it)."""
        kind = str(getattr(accelerator, "distributed_type", ""))
        if accelerator.num_processes <= 1 or not any(k in kind for k in ("FSDP", "DEEPSPEED")):
            return None
        if is_lora(accelerator.unwrap_model(wrapped)):
            raise LisError(f"{WHERE}.sync: files with LoRA under FSDP or DeepSpeed is not supported",
                           "train LoRA with DDP (workflow/accelerate/multi_gpu_ddp.yaml), or use sync: trl")
        return accelerator.get_state_dict(wrapped)

    def push_weights(self, model: Any, folder: Path, weights: dict[str, Any] | None = None) -> dict[str, Any]:
        """``sync: files``: write ``model``'s weights (LoRA merged; or the gathered ``weights``) to ``folder`` and
        have the server load them; returns its answer. LisError when the server refuses or does not answer."""
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tmp, path = folder / ".model.safetensors.tmp", folder / "model.safetensors"
        state = merged_state_dict(model) if weights is None else {
            k: v.detach().contiguous() for k, v in weights.items() if k != "lm_head.weight"
            or not getattr(getattr(model, "config", None), "tie_word_embeddings", False)}
        save_file(state, str(tmp))
        tmp.replace(path)
        if self.server_kind() == "vllm":  # vLLM reads every *.safetensors of the folder: only this one is there
            fix = "start vLLM with VLLM_SERVER_DEV_MODE=1 (its weight-reload route), or use sync: trl on CUDA"
            kwargs = {"weights_path": str(folder.resolve())}
            try:  # lis's launcher adds the worker extension (lis/models/vllm_main.py)
                said = self._post("/collective_rpc", {"method": "lis_reload_weights", "kwargs": kwargs}, fix)
            except LisError as e:
                if "lis_reload_weights" not in str(e):
                    raise
                log.warning("%s: the vLLM server at %s has no lis worker extension: vLLM's own reload_weights (on "
                            "the CPU build a tied output layer keeps its old weights)", WHERE, self.base_url)
                said = self._post("/collective_rpc", {"method": "reload_weights", "kwargs": kwargs}, fix)
            self._post("/reset_prefix_cache", {}, fix)
            return {"loaded": str(folder.resolve()), "server": "vllm", "said": said}
        return self._post("/lis/load_weights", {"path": str(path.resolve())},
                          "serve the start model with lis's ChatServer or vLLM, or use sync: trl")

    def _post(self, route: str, body: dict[str, Any], fix: str) -> dict[str, Any]:
        req = urllib.request.Request(f"{self.base_url}{route}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                text = r.read()
                return json.loads(text) if text.strip() else {}
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")[:300]
            raise LisError(f"{WHERE}: the server at {self.base_url} refused the weights ({route}: HTTP {e.code}: "
                           f"{detail})", fix) from None
        except (OSError, ValueError) as e:
            raise LisError(f"{WHERE}: could not push the weights to {self.base_url} ({route}: {e})",
                           "check that the server runs and shares this filesystem") from None

    def server_kind(self) -> str:
        """``vllm`` or ``lis``: who answers ``/v1/models`` (its ``owned_by``); read once."""
        if self._kind is None:
            try:
                with urllib.request.urlopen(f"{self.base_url}/v1/models", timeout=30) as r:
                    owner = str(json.loads(r.read())["data"][0].get("owned_by", ""))
            except (OSError, ValueError, KeyError, IndexError) as e:
                raise LisError(f"{WHERE}: cannot read {self.base_url}/v1/models ({e})",
                               "check that the server runs") from None
            object.__setattr__(self, "_kind", "vllm" if owner == "vllm" else "lis")
        return self._kind

    # -- the server ---------------------------------------------------------------------------
    def start(self, init: Path, state_dir: Path) -> None:
        """Start ``command`` when ``base_url`` does not answer (no command: the server must answer)."""
        health = f"{self.base_url}/health"
        if self.command is None:
            if not server_process.healthy(health, timeout=5.0):
                raise LisError(f"{WHERE}: no server answers at {health}",
                               "start it (CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model <start model> --port 8000) "
                               "or set grpo.vllm.command to let the stage start it")
            return
        port = str(urlparse(self.base_url).port or 8000)
        argv = vllm_program.resolve([c.replace("{model}", str(Path(init).resolve())).replace("{port}", port)
                                     for c in self.command])
        server_process.ensure("grpo-vllm", argv, health, state_dir=state_dir,
                              startup_timeout_s=self.startup_timeout_s, env=dict(self.env) or None)

    def stop(self) -> None:
        server_process.release("grpo-vllm")

    def served_model(self) -> str:
        """The model name requests carry: ``model``, else the first ``GET /v1/models`` lists."""
        if self.model:
            return str(self.model)
        try:
            with urllib.request.urlopen(f"{self.base_url}/v1/models", timeout=30) as r:
                return str(json.loads(r.read())["data"][0]["id"])
        except (OSError, urllib.error.URLError, ValueError, KeyError, IndexError) as e:
            raise LisError(f"{WHERE}: cannot read the served model from {self.base_url}/v1/models ({e})",
                           "check the server, or set grpo.vllm.model") from None

    def policy(self, model: Any, tokenizer: Any, seed: int, sampling: Any = None) -> Any:
        """The rollout policy: the training model's template, stop ids and parser; the server's engine;
        ``sampling`` (every field set: the RL sampling policy) for every call."""
        # lazy: loads torch and the openai SDK; importing this module does not
        from lis.models.vllm_tokens import VLLMTokenEngine

        policy = LocalHFModel(model, tokenizer, name="policy", seed=seed, sampling=sampling)
        engine = VLLMTokenEngine(f"{self.base_url}/v1", self.served_model(), stop_ids=set(policy.stop_ids),
                                 logprobs_mode=self.logprobs_mode)
        policy.use_engine(engine)
        log.info("GRPO rollouts generate on the vLLM server at %s (model %s)", self.base_url, engine.model)
        return policy
