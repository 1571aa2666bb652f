"""The files a model writes during an episode, as far as its actions show them.

    files = FileTracker()
    files.write("/testbed/x.py", "import itertools\\n")         # editor create, heredoc, echo > f
    files.replace("/testbed/x.py", "itertools", "math")          # editor str_replace
    files.insert("/testbed/x.py", 0, "import os")                # editor insert
    files.find("x.py", cwd="/testbed")                           # -> "/testbed/x.py" (or None)

Only what the trajectory shows is known (a file a program changed keeps the content last seen; an
edit of a file never seen whole is ``partial``). A name that matches no known path is looked up by
its base name when exactly one known file has it: the authors' episodes run every command in a
fresh shell at /testbed, ours in one that keeps its working directory.
"""
from __future__ import annotations

import posixpath

DEFAULT_CWD = "/testbed"


def resolve(path: str, cwd: str) -> str:
    path = path.strip()
    if path.startswith("~"):
        path = "/root" + path[1:]
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(cwd or DEFAULT_CWD, path))


class FileTracker:
    def __init__(self) -> None:
        self.content: dict[str, str] = {}
        self.partial: set[str] = set()

    def write(self, path: str, text: str, append: bool = False) -> None:
        if append and path in self.content:
            self.content[path] += text
        else:
            self.content[path] = text
            if append:
                self.partial.add(path)
            else:
                self.partial.discard(path)

    def replace(self, path: str, old: str, new: str) -> None:
        if path in self.content and old and old in self.content[path]:
            self.content[path] = self.content[path].replace(old, new, 1)
        else:  # never seen whole (or an edit the editor refused): keep what we know of it
            self.content[path] = self.content.get(path, "") + ("\n" if path in self.content else "") + new
            self.partial.add(path)

    def insert(self, path: str, line: int, new: str) -> None:
        if path in self.content and path not in self.partial:
            lines = self.content[path].split("\n")
            at = max(0, min(int(line), len(lines)))
            self.content[path] = "\n".join(lines[:at] + new.split("\n") + lines[at:])
        else:
            self.content[path] = self.content.get(path, "") + ("\n" if path in self.content else "") + new
            self.partial.add(path)

    def copy(self, src: str, dst: str, move: bool) -> None:
        if src not in self.content:
            return
        if dst in self.content or dst.endswith("/") or "." not in posixpath.basename(dst):
            if dst not in self.content:  # cp x.py folder/ -> folder/x.py
                dst = posixpath.join(dst, posixpath.basename(src))
        self.content[dst] = self.content[src]
        if src in self.partial:
            self.partial.add(dst)
        if move:
            self.content.pop(src, None)
            self.partial.discard(src)

    def find(self, path: str, cwd: str, *also: str) -> str | None:
        """The known file ``path`` names (relative to ``cwd``, then to each of ``also``), or None."""
        for base in (cwd, *also, DEFAULT_CWD):
            p = resolve(path, base)
            if p in self.content:
                return p
        name = posixpath.basename(path.rstrip("/"))
        same = [p for p in self.content if posixpath.basename(p) == name]
        return same[0] if len(same) == 1 else None
