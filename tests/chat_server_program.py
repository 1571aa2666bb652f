"""A model server program for launcher tests: our ChatServer around a replaying scripted model, on a
given port, run as its own process (``python tests/chat_server_program.py --port P``).

``--model-dir DIR``: serve that local model (LocalHFModel: ``/v1/completions`` with token ids the way
vLLM does, a stand-in for a vLLM server of the same model) instead of the replaying one;
``--reply``: the assistant's text for every request; ``--delay-s``: each reply takes this long (a
model call in flight); ``--child``: also start a child process in the same process group (a vLLM
worker stand-in), to show that stopping the server stops the group; ``--pids FILE``: write the
server's and the child's pids there once serving; ``--request-log FILE``: each token completion's body
and the sampling settings the server drew with, one JSON line each (ChatServer's ``request_log``).

With ``--model-dir`` a sampling field a request leaves out takes the folder's ``generation_config.json``
value, as vLLM does (write that file to stand in for a model that ships defaults, e.g. Qwen3-Instruct's
top-k 20).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lis.models.base import ChatResult  # noqa: E402
from lis.models.scripted import ScriptedModel  # noqa: E402
from lis.models.server import ChatServer  # noqa: E402


class SlowRepeat(ScriptedModel):
    def __init__(self, reply: str, delay_s: float):
        super().__init__([reply] * 100_000, name="served-test")
        self.delay_s = delay_s

    def chat(self, messages, tools=None, sampling=None) -> ChatResult:
        threading.Event().wait(self.delay_s)
        return super().chat(messages, tools, sampling)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--reply", default="The answer is \\boxed{42}.")
    ap.add_argument("--delay-s", type=float, default=0.0)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--pids", type=Path)
    ap.add_argument("--model-dir", type=Path)
    ap.add_argument("--request-log", type=Path)
    a = ap.parse_args()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) if a.child else None
    if a.model_dir:
        from lis.models.local_hf import LocalHFModel

        model = LocalHFModel.load(a.model_dir, name="served-policy", device="cpu", seed=0)
    else:
        model = SlowRepeat(a.reply, a.delay_s)
    srv = ChatServer(model, port=a.port, request_log=a.request_log).start()
    if a.pids:
        a.pids.write_text(json.dumps({"server": os.getpid(), "child": child.pid if child else None}))
    print(f"serving on {srv.base_url}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
