"""``lis serve``: the sandboxed agent as an OpenAI-compatible endpoint.

    lis serve                                              # serve.model of params at serve.host:serve.port
    lis serve --model qwen3-4b-instruct-2507 --port 8100   # a models entry (any backend) as the upstream
    lis serve --model Qwen/Qwen3-4B-Instruct-2507 --base-url http://localhost:8000/v1   # any served model
    LIS_SERVE_API_KEY=secret lis serve                     # require `Authorization: Bearer secret`

Then any OpenAI client: ``OpenAI(base_url="http://127.0.0.1:8100/v1", api_key="secret")
.chat.completions.create(model="lis-agent", messages=[...])``. Each request runs one episode in a
fresh sandbox; the answer file's text comes back as the assistant message. Start-up removes the
sandboxes earlier server runs left (SIGKILL); SIGINT/SIGTERM cancel the running episodes and
remove their sandboxes.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from lis.cli.options import LogFile, ParamsFile, Profile, Verbose, load_params
from lis.cli.run import _model_spec
from lis.models.registry import build_model
from lis.runtime import agent_config, model_spec, sandbox_config
from lis.sandbox import registry
from lis.serve import auth
from lis.serve.server import run_server
from lis.serve.settings import RUN_PREFIX
from lis.serve.settings import files_dir as served_files
from lis.serve.state import ServeState
from lis.serve.sweep import sweep_earlier
from lis.util import progress
from lis.util.log import setup_logging

log = logging.getLogger("lis.serve")


def serve(model: Optional[str] = typer.Option(None, "--model", "-m", help="The upstream: a models entry of params, "
                                              "a local model folder, or a served model name with --base-url "
                                              "(default serve.model)."),
          base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint of the upstream."),
          api_key: Optional[str] = typer.Option(None, "--api-key", help="The upstream's API key (with --base-url)."),
          host: Optional[str] = typer.Option(None, "--host", help="Address to listen on (default serve.host)."),
          port: Optional[int] = typer.Option(None, "--port", min=0, max=65535, help="Port (default serve.port)."),
          served_name: Optional[str] = typer.Option(None, "--served-name", help="Model name clients ask for "
                                                    "(default serve.served_name)."),
          max_concurrent: Optional[int] = typer.Option(None, "--max-concurrent", max=4096, min=1,
                                                       help="Episodes at once (default serve.max_concurrent)."),
          max_queue: Optional[int] = typer.Option(None, "--max-queue", max=100000, min=0,
                                                  help="Requests waiting for a slot; beyond: 429 (default serve.max_queue)."),
          warm: Optional[int] = typer.Option(None, "--warm", max=1024, min=0, help="Sandboxes started ahead (default serve.warm)."),
          files_dir: Optional[Path] = typer.Option(None, "--files-dir", help="Where produced files are kept "
                                                   "(default serve.files_dir)."),
          backend: Optional[str] = typer.Option(None, "--backend", help="docker or bwrap (default sandbox.backend)."),
          network: Optional[str] = typer.Option(None, "--network", help="none or bridge (default sandbox.network)."),
          profile: Optional[str] = Profile, params_file: Optional[Path] = ParamsFile,
          log_file: Optional[Path] = LogFile, verbose: bool = Verbose) -> None:
    """Serve the sandboxed agent as an OpenAI-compatible endpoint (POST /v1/chat/completions)."""

    setup_logging(log_file, verbose)
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one line per upstream call otherwise
    p = load_params(profile, params_file)
    s = p.settings("serve", host=host, port=port, served_name=served_name, max_concurrent=max_concurrent,
                   max_queue=max_queue, warm=warm, files_dir=str(files_dir.resolve()) if files_dir else None)
    s = s.model_copy(update={"files_dir": str(served_files(s, p.root))})
    name, spec = _model_spec(p, model or s.model, base_url, api_key)
    s = s.model_copy(update={"model": name})
    run_id = f"{RUN_PREFIX}{registry.RUN_ID}"
    sb_cfg = sandbox_config(p, run_id=run_id, overrides={"backend": backend, "network": network}, built_image=True)
    # the sampling of the params entry of that name when there is one (also under --base-url), else the spec's
    cfg = agent_config(p, spec=model_spec(p, name) if name in p.settings("models") else spec, domain="general",
                       sandbox=sb_cfg)
    engines = list(p.settings("sandbox").engines) or [None]
    if sb_cfg.backend == "docker":
        sweep_earlier(engines, run_id)
    keys = auth.load_keys(s.api_key_env)
    auth.warn_if_open(keys, s.api_key_env, f"{s.host}:{s.port}")
    state = ServeState(settings=s, model=build_model(name, spec), agent=cfg, sandbox=sb_cfg, run_id=run_id,
                       engines=engines, keys=keys)
    progress.when_stopped(lambda: f"lis serve: stopped; episodes served: {state.counts['episodes']}, "
                                  f"cancelled by the stop: {state.counts['interrupted']}")
    run_server(state)
