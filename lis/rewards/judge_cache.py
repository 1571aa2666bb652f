"""An append-only JSONL cache of judge replies keyed by (judge model, prompt, repeat index).

One line per reply: ``{"key", "model", "repeat", "prompt_sha256", "reply"}``. The file is read
once when the cache opens and each new reply is appended (and flushed) as soon as it arrives,
so a rerun — or a run that crashed half-way — does not query the judge again for what it has.
Thread-safe; a torn last line (a crash mid-write) is skipped on load.
"""
from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from lis.util.jsonl import append_jsonl, read_jsonl


def cache_key(model: str, prompt: str, repeat: int) -> str:
    """SHA-256 over the judge model's name, the exact prompt and the repeat index."""
    return hashlib.sha256(json.dumps([model, prompt, repeat], ensure_ascii=False).encode()).hexdigest()


class JudgeCache:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._replies: dict[str, str] = {}
        # tolerant: a crash mid-append leaves a torn last line; a line without key/reply is skipped too
        for rec in read_jsonl(self.path, mode="tolerant", missing_ok=True):
            if isinstance(rec.get("key"), str) and isinstance(rec.get("reply"), str):
                self._replies[rec["key"]] = rec["reply"]

    def __len__(self) -> int:
        return len(self._replies)

    def get(self, model: str, prompt: str, repeat: int) -> str | None:
        """The cached reply, or None."""
        with self._lock:
            return self._replies.get(cache_key(model, prompt, repeat))

    def put(self, model: str, prompt: str, repeat: int, reply: str) -> None:
        """Remember a reply and append it to the file (creating folders as needed)."""
        key = cache_key(model, prompt, repeat)
        record = {"key": key, "model": model, "repeat": repeat,
                  "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(), "reply": reply}
        with self._lock:
            if key in self._replies:
                return
            self._replies[key] = reply
            append_jsonl(self.path, record)
