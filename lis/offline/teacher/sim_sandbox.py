"""A simulated sandbox for scripted warm-up episodes: the files it holds and what commands print.

Each step is a tool call plus the observation the real tools would return for it, in the agent's
exact format (:mod:`lis.agent.tools.observation`: exit-code line, ``[STDOUT]``/``[STDERR]``
sections, 80-line truncation). Only the commands the scripted episodes use are simulated
(``ls``, ``cat``, ``head``, ``wc``, ``grep | cut | head``, redirections, editor create/view);
their output matches what the sandbox image prints (GNU coreutils in the C locale).
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from shlex import quote as q  # a path quoted for bash only when it needs it (spaces, parentheses)
from typing import Any

from lis.agent.tools.observation import bash_observation, editor_observation
from lis.sandbox.base import ExecResult

BASH, EDITOR, SUBMIT = "execute_bash", "str_replace_editor", "submit"


@dataclass
class Step:
    """One assistant tool call and the observation it gets."""
    tool: str
    args: dict[str, Any]
    observation: str


def bash_step(command: str, stdout: str = "", stderr: str = "", exit_code: int = 0) -> Step:
    """An execute_bash step whose command printed ``stdout``/``stderr`` and exited with ``exit_code``."""
    obs = bash_observation(ExecResult(stdout, stderr, exit_code), timeout_s=120, max_output_bytes=16 << 20)
    return Step(BASH, {"command": command}, obs)


def editor_step(args: dict[str, Any], result: str) -> Step:
    return Step(EDITOR, args, editor_observation(result))


@dataclass
class SimSandbox:
    """Folders and text files of a sandbox (absolute paths), changed by the steps built on it."""
    dirs: set[str] = field(default_factory=set)
    files: dict[str, str] = field(default_factory=dict)

    def mkdirs(self, *paths: str) -> None:
        for p in paths:
            while p not in ("/", ""):
                self.dirs.add(p)
                p = posixpath.dirname(p)

    def put(self, path: str, text: str) -> None:
        self.mkdirs(posixpath.dirname(path))
        self.files[path] = text

    def entries(self, folder: str) -> list[str]:
        """Names directly in ``folder``, sorted as ``ls`` sorts them in the C locale."""
        kids = {posixpath.basename(p) for p in (*self.dirs, *self.files) if posixpath.dirname(p) == folder}
        return sorted(kids, key=lambda s: s.encode())

    def in_folder(self, folder: str) -> list[str]:
        return [posixpath.join(folder, n) for n in self.entries(folder) if posixpath.join(folder, n) in self.files]

    # -- steps -------------------------------------------------------------------------------
    def ls(self, folder: str, shown: str | None = None) -> Step:
        names = self.entries(folder)
        return bash_step(f"ls {q(shown or folder)}", "".join(n + "\n" for n in names))

    def wc(self, flag: str, paths: list[str], shown: str) -> Step:
        """``wc -c``/``-l``/``-w`` over ``paths``. As GNU wc: one file is printed unpadded; several get
        a ``total`` line and a column as wide as the digits of their total size in bytes."""
        count = {"-c": lambda t: len(t.encode()), "-l": lambda t: t.count("\n"),
                 "-w": lambda t: len(t.split())}[flag]
        rows = [(count(self.files[p]), p) for p in paths]
        width = 0
        if len(rows) > 1:
            rows.append((sum(n for n, _ in rows), "total"))
            width = len(str(sum(len(self.files[p].encode()) for p in paths)))
        return bash_step(f"wc {flag} {shown}", "".join(f"{n:>{width}} {p}\n" for n, p in rows))

    def cat(self, path: str) -> Step:
        text = self.files[path]
        return bash_step(f"cat {q(path)}", text)

    def head(self, path: str, n: int) -> Step:
        text, end = self.files[path], -1
        for _ in range(n):  # up to and including the n-th newline (all of it when it has fewer)
            end = text.find("\n", end + 1)
            if end < 0:
                break
        return bash_step(f"head -n {n} {q(path)}", text if end < 0 else text[:end + 1])

    def head_bytes(self, path: str, n: int) -> Step:
        data = self.files[path].encode()[:n]
        return bash_step(f"head -c {n} {q(path)}", data.decode("utf-8", "replace"))

    def grep(self, word: str, paths: list[str], shown: str, per_file: int = 3, width: int = 200,
             limit: int = 10) -> Step:
        """``grep -n -i -m per_file WORD FILES | cut -c 1-width | head -n limit``."""
        out = []
        for p in paths:
            hits = [(i, line) for i, line in enumerate(self.files[p].split("\n"), 1) if word.lower() in line.lower()]
            for i, line in hits[:per_file]:
                row = f"{p}:{i}:{line}" if len(paths) > 1 else f"{i}:{line}"
                out.append(row.encode()[:width].decode("utf-8", "replace"))
        text = "".join(r + "\n" for r in out[:limit])
        cmd = f"grep -n -i -m {per_file} {q(word)} {shown} | cut -c 1-{width} | head -n {limit}"
        return bash_step(cmd, text, exit_code=0)

    def view_dir(self, folder: str) -> Step:
        """str_replace_editor view of a folder: ``find -maxdepth 2``, sorted."""
        found = [folder]
        for name in self.entries(folder):
            child = posixpath.join(folder, name)
            found.append(child)
            if child in self.dirs:
                found += [posixpath.join(child, n) for n in self.entries(child)]
        body = "\n".join(sorted(found, key=lambda s: s.encode()))
        return editor_step({"command": "view", "path": folder},
                           f"Here are the files and directories up to 2 levels deep in {folder}, excluding hidden "
                           f"items:\n{body}")

    def view_file(self, path: str, first: int, last: int) -> Step:
        lines = self.files[path].split("\n")
        if self.files[path].endswith("\n"):
            lines = lines[:-1]
        last = min(last, len(lines))
        shown = "\n".join(f"{i:6}\t{line}" for i, line in enumerate(lines[first - 1:last], first))
        return editor_step({"command": "view", "path": path, "view_range": [first, last]},
                           f"Here's the result of running `cat -n` on {path}:\n{shown}")

    def create(self, path: str, text: str) -> Step:
        existed = path in self.files
        self.put(path, text)
        return editor_step({"command": "create", "path": path, "file_text": text},
                           f"File {'overwritten' if existed else 'created successfully'} at: {path}")

    def write(self, command: str, path: str, text: str, stdout: str = "") -> Step:
        """A bash command that writes ``text`` to ``path`` (redirection, here-document, script)."""
        self.put(path, text)
        return bash_step(command, stdout)
