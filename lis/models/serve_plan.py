"""How a served models entry is started: its ``serve:`` block → a command line and a health URL.

    models:
      qwen3-4b-instruct-2507:
        backend: openai
        model: Qwen/Qwen3-4B-Instruct-2507
        base_url: http://localhost:8000/v1
        serve: {auto: true, tensor_parallel_size: 1, max_model_len: 65536}    # vllm serve ... (built here)
      my-server:
        backend: openai
        base_url: http://127.0.0.1:9000/v1
        serve: {auto: true, command: [python, -m, my.server, --port, "9000"]}  # any program

``serve.auto: false`` (the shipped entries) documents the command and starts nothing: the stages
expect the server to be up. With ``auto: true`` the stages using :func:`serving` start it when its
health URL does not answer, reuse it for every job of the model in the process, and stop it on every
exit path (:mod:`lis.util.server_process`). ``serve.linger_s`` keeps it up that long after its last
job (a pipeline evaluates each model on several task sets); a server whose weights folder changed
since it started is restarted, never reused.

The vLLM command (:func:`vllm_command`) takes the tool-call parser of the model's family as the
authors instruct (``PARSERS``) unless ``tool_call_parser`` is given. A command that starts with
``vllm`` runs the set-up's vLLM (:mod:`lis.models.vllm_program`); ``serve.env`` carries the CPU
build's settings (``VLLM_CPU_KVCACHE_SPACE`` in GiB, ``VLLM_CPU_OMP_THREADS_BIND``).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator
from urllib.parse import urlsplit

from pydantic import ValidationError

from lis.config.models import ServeSpec
from lis.models.base import ModelError
from lis.params import pydantic_problem
from lis.models import vllm_program
from lis.util import server_process

VLLM_KEYS = {"model", "tool_call_parser", "reasoning_parser", "tensor_parallel_size", "max_model_len",
             "enable_prefix_caching", "host", "port", "extra_args"}
COMMON_KEYS = {"auto", "command", "health_url", "startup_timeout_s", "env", "linger_s"}
STATE_DIR = Path("logs/serve")
# (pattern on the lower-cased model id, vLLM tool-call parser): first match wins
PARSERS = ((r"qwen3-coder", "qwen3_coder"), (r"qwen3", "hermes"), (r"qwen2\.5", "hermes"),
           (r"deepseek-v3\.2", "deepseek_v32"), (r"deepseek-v3\.1", "deepseek_v31"), (r"deepseek-(v3|r1)", "deepseek_v3"))


@dataclass(frozen=True)
class ServePlan:
    name: str
    auto: bool
    command: list[str]
    health_url: str
    startup_timeout_s: float
    env: dict[str, str]
    linger_s: float = 0.0
    weights: str | None = None  # the weights vLLM loads (a folder or a hub id)


def family_parser(model: str) -> str | None:
    """vLLM's tool-call parser for a model id, by family; None when the family is not known."""
    low = model.lower()
    for pattern, parser in PARSERS:
        if re.search(pattern, low):
            return parser
    return None


def _root_url(base_url: str) -> str:
    """``http://h:p/v1`` → ``http://h:p``."""
    u = urlsplit(base_url)
    return f"{u.scheme}://{u.netloc}"


def plan(name: str, spec: dict[str, Any]) -> ServePlan | None:
    """The serve plan of a models entry, or None when it has no ``serve:``. Raises ModelError."""
    serve = spec.get("serve")
    if serve is None:
        return None
    if spec.get("backend") != "openai":
        raise ModelError(f"models.{name}.serve: only an openai entry is served (this one is {spec.get('backend')})",
                         f"remove serve: from models.{name}")
    try:
        checked = ServeSpec.model_validate(serve)
    except ValidationError as e:
        raise ModelError(pydantic_problem(e, f"models.{name}.serve"),
                         f"use {', '.join(sorted(VLLM_KEYS | COMMON_KEYS))} (`lis params schema` says what each takes)") from None
    base_url = spec.get("base_url")
    if not base_url:
        raise ModelError(f"models.{name}: a served entry needs base_url (where its server answers)",
                         f"set models.{name}.base_url, e.g. http://127.0.0.1:8000/v1")
    command = serve.get("command")
    weights = None if command is not None else str(serve.get("model") or spec.get("model") or "") or None
    if command is not None:
        both = sorted(set(serve) & VLLM_KEYS)
        if both:
            raise ModelError(f"models.{name}.serve: command replaces the vLLM fields; it cannot go with "
                             f"{', '.join(both)}", "put those options into the command, or drop command")
        cmd = [str(a) for a in command]
        health = serve.get("health_url") or base_url.rstrip("/") + "/models"
    else:
        cmd = vllm_command(name, spec)
        health = serve.get("health_url") or _root_url(base_url) + "/health"
    return ServePlan(name=name, auto=checked.auto, command=cmd, health_url=health,
                     startup_timeout_s=float(checked.startup_timeout_s),
                     env={str(k): str(v) for k, v in checked.env.items()}, linger_s=float(checked.linger_s),
                     weights=weights)


def identity(p: ServePlan, root: Path) -> str:
    """What a running server must have been started with to be reused: its environment and, when
    the weights are a local folder, every file's name, size and modification time in it."""
    h = hashlib.sha256(json.dumps(sorted(p.env.items())).encode())
    folder = (root / p.weights) if p.weights else None
    if folder is not None and folder.is_dir():
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                st = f.stat()
                h.update(f"{f.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def vllm_command(name: str, spec: dict[str, Any]) -> list[str]:
    """``vllm serve ...`` for a models entry (see the module doc). Raises ModelError."""
    serve = spec["serve"]
    served = spec.get("model")
    weights = serve.get("model") or served
    if not weights:
        raise ModelError(f"models.{name}: a vLLM-served entry needs model (or serve.model)",
                         f"set models.{name}.model to the hub id or folder vLLM loads")
    u = urlsplit(spec["base_url"])
    host = serve.get("host") or u.hostname or "127.0.0.1"
    port = serve.get("port") or u.port or (443 if u.scheme == "https" else 80)
    # usage.prompt_tokens_details.cached_tokens: the prefix-cache hits lis records per turn (vLLM omits it otherwise)
    cmd = ["vllm", "serve", str(weights), "--host", str(host), "--port", str(port), "--enable-prompt-tokens-details"]
    if served and served != weights:
        cmd += ["--served-model-name", str(served)]
    parser = serve["tool_call_parser"] if "tool_call_parser" in serve else family_parser(str(served or weights))
    if parser:
        cmd += ["--enable-auto-tool-choice", "--tool-call-parser", str(parser)]
    if serve.get("reasoning_parser"):
        cmd += ["--reasoning-parser", str(serve["reasoning_parser"])]
    if serve.get("tensor_parallel_size"):
        cmd += ["--tensor-parallel-size", str(int(serve["tensor_parallel_size"]))]
    if serve.get("max_model_len"):
        cmd += ["--max-model-len", str(int(serve["max_model_len"]))]
    if serve.get("enable_prefix_caching") is True:
        cmd += ["--enable-prefix-caching"]
    elif serve.get("enable_prefix_caching") is False:
        cmd += ["--no-enable-prefix-caching"]
    return cmd + [str(a) for a in serve.get("extra_args") or []]


@contextlib.contextmanager
def serving(models: dict[str, dict[str, Any]], names: Iterable[str | None], root: Path | None = None) -> Iterator[list]:
    """Bring up the servers of the named entries that say ``serve.auto: true`` (each at most once
    per process), yield them, and release them (stopping those this process is the last user of)
    when the block ends however it ends. Entries without serve.auto are left alone."""
    root = Path(root or ".")
    plans = []
    for name in dict.fromkeys(n for n in names if n):
        if name in models:
            p = plan(name, models[name])
            if p is not None and p.auto:
                plans.append(p)
    servers, ours = [], []
    try:
        for p in plans:
            if not server_process.in_use(p.name):
                ours.append(p.name)  # an enclosing block that ensured it releases it
            servers.append(server_process.ensure(p.name, vllm_program.resolve(p.command), p.health_url, state_dir=root / STATE_DIR,
                                                 startup_timeout_s=p.startup_timeout_s, env=p.env or None, cwd=root,
                                                 linger_s=p.linger_s, identity=identity(p, root)))
        yield servers
    finally:
        for name in ours:
            server_process.release(name)
