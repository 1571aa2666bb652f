"""Which capabilities of the sandbox each turn of an episode uses (docs/behaviour.md).

    verdict = classify_episode(trajectory)          # a Trajectory or its dict
    verdict.turns                                    # model calls (steps)
    verdict.turns_using("compute")                   # turns that used computation
    verdict.per_turn[3].capabilities                 # ('compute', 'file')
    verdict.per_turn[3].evidence                     # which rule matched what, and where

A turn (one model call) uses a capability when any of its tool calls does, counted once per turn.
A call uses one when a rule of that capability matches a text the call runs: the shell command,
the Python it runs inline, and the files it runs that the episode wrote before (with the local
modules they import, to a depth of :data:`MAX_DEPTH` files); editor calls are matched on
``"<command> <path>"``. Which texts each scope searches, and how files become known (files.py), are
in docs/behaviour-definitions.md.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from lis.agent.trajectory import Step, Trajectory
from lis.analysis.behaviour.files import DEFAULT_CWD, FileTracker, resolve
from lis.analysis.behaviour.rules import Rules, load_rules
from lis.analysis.behaviour.shell import Cd, Code, Copy, Run, Write, parse_command

MAX_DEPTH = 3
NOT_RUN = frozenset({"bad_json", "bad_arguments", "unknown_tool", "missing_argument"})
# Endings that are not the model's doing (lis.eval.journal.INFRA) and Ctrl-C: left out of every
# number, counted apart (tests/analysis keep this equal to the journal's sets).
EXCLUDED = frozenset({"model_error", "model_timeout", "sandbox_error", "error", "interrupted"})
_IMPORT = re.compile(r"^\s*(?:from\s+(\w+)\s+import\b|import\s+(\w+(?:\s*,\s*\w+)*))", re.M)
_SHEBANG_PY = re.compile(r"\A#!.*\bpython")
_LEAD = re.compile(r"\A(?:[;&|(`{!\s]|\$\(|-exec\s|(?:then|else|elif|if|do|while|until|xargs|sudo|time|nohup|exec|command|env)\s)+")


@dataclass(frozen=True)
class Evidence:
    rule: str
    capability: str
    where: str       # bash | python -c | heredoc | heredoc (bash) | script /path[: python -c] | import /path | editor
    text: str        # what matched (at most 80 characters)


@dataclass
class TurnVerdict:
    step: int
    calls: int
    capabilities: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    followed: tuple[str, ...] = ()           # files whose content was read for this turn
    evidence: list[Evidence] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["capabilities"], d["rules"], d["followed"] = list(self.capabilities), list(self.rules), list(self.followed)
        return d


@dataclass
class EpisodeVerdict:
    task_id: str
    model: str
    domain: str
    mode: str
    repeat: int
    termination: str
    per_turn: list[TurnVerdict]

    @property
    def included(self) -> bool:
        return self.termination not in EXCLUDED

    @property
    def turns(self) -> int:
        return len(self.per_turn)

    @property
    def calls(self) -> int:
        return sum(t.calls for t in self.per_turn)

    def turns_using(self, capability: str) -> int:
        return sum(capability in t.capabilities for t in self.per_turn)

    def turns_using_any(self) -> int:
        return sum(bool(t.capabilities) for t in self.per_turn)

    def turns_by_rule(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.per_turn:
            for r in t.rules:
                out[r] = out.get(r, 0) + 1
        return out


class EpisodeClassifier:
    """Turn-by-turn classification of one episode (it keeps the files written so far)."""

    def __init__(self, rules: Rules | None = None):
        self.rules = rules or load_rules()
        self.files = FileTracker()
        self.cwd = DEFAULT_CWD

    # -- one turn ---------------------------------------------------------------------------
    def turn(self, step: Step) -> TurnVerdict:
        evidence: list[Evidence] = []
        followed: list[str] = []
        for call in step.calls:
            if call.tool is None or call.error in NOT_RUN or not isinstance(call.arguments, dict):
                continue
            args = call.arguments
            if call.tool == "execute_bash" and isinstance(args.get("command"), str):
                self._bash(args["command"], "bash", self.cwd, 0, set(), evidence, followed, persist=True)
            elif call.tool == "str_replace_editor":
                self._editor(args, call.error, evidence)
        caps = tuple(c for c in self.rules.capability_ids if any(e.capability == c for e in evidence))
        rules = tuple(dict.fromkeys(e.rule for e in evidence))
        return TurnVerdict(step.index, len(step.calls), caps, rules, tuple(dict.fromkeys(followed)), evidence)

    # -- scopes -----------------------------------------------------------------------------
    def _match(self, scope: str, text: str, where: str, evidence: list[Evidence]) -> None:
        for rule in self.rules.for_scope(scope):
            m = rule.regex.search(text)
            if m:
                shown = _LEAD.sub("", m.group(0)) if scope == "bash" else m.group(0)
                evidence.append(Evidence(rule.id, rule.capability, where, " ".join((shown or m.group(0)).split())[:80]))

    def _editor(self, args: dict, error: str | None, evidence: list[Evidence]) -> None:
        command, path = args.get("command"), args.get("path")
        if not isinstance(command, str):
            return
        self._match("editor", f"{command} {path if isinstance(path, str) else ''}".strip(), "editor", evidence)
        if error or not isinstance(path, str) or not path.strip():
            return  # the editor refused it: the file did not change
        p = resolve(path, self.cwd)
        if command == "create":
            self.files.write(p, args.get("file_text") if isinstance(args.get("file_text"), str) else "")
        elif command == "str_replace" and isinstance(args.get("old_str"), str):
            new = args.get("new_str")
            self.files.replace(p, args["old_str"], new if isinstance(new, str) else "")
        elif command == "insert" and isinstance(args.get("new_str"), str):
            line = args.get("insert_line")
            self.files.insert(p, line if isinstance(line, int) and not isinstance(line, bool) else 10**9,
                              args["new_str"])

    def _bash(self, command: str, where: str, cwd: str, depth: int, seen: set[str], evidence: list[Evidence],
              followed: list[str], persist: bool) -> None:
        parsed = parse_command(command)
        self._match("bash", parsed.shell_text, where, evidence)
        here = cwd
        for ev in parsed.events:
            if isinstance(ev, Cd):
                if not any(ch in ev.path for ch in "$*?`"):
                    here = resolve(ev.path, here)
            elif isinstance(ev, Code):
                origin = ev.origin if ev.lang == "python" else f"{ev.origin} (bash)"
                origin = origin if where == "bash" else f"{where}: {origin}"
                if ev.lang == "python":
                    self._python(ev.text, origin, here, depth, seen, evidence, followed)
                elif depth < MAX_DEPTH:
                    self._bash(ev.text, origin, here, depth + 1, seen, evidence, followed, persist=False)
            elif isinstance(ev, Write):
                self.files.write(resolve(ev.path, here), ev.text, ev.append)
            elif isinstance(ev, Copy):
                self.files.copy(resolve(ev.src, here), resolve(ev.dst, here), ev.move)
            elif isinstance(ev, Run):
                self._run(ev, here, depth, seen, evidence, followed)
        if persist:
            self.cwd = here

    def _run(self, ev: Run, here: str, depth: int, seen: set[str], evidence: list[Evidence],
             followed: list[str]) -> None:
        path = self.files.find(ev.path, here, self.cwd)
        if path is None or path in seen or depth >= MAX_DEPTH:
            return
        text = self.files.content[path]
        lang = ev.runner
        if lang == "direct":
            lang = "python" if path.endswith(".py") or _SHEBANG_PY.match(text) else "shell"
        followed.append(path)
        inner = seen | {path}
        if lang == "python":
            self._python(text, f"script {path}", posixpath.dirname(path), depth + 1, inner, evidence, followed,
                         own=path)
        else:
            self._bash(text, f"script {path}", here, depth + 1, inner, evidence, followed, persist=False)

    def _python(self, code: str, where: str, folder: str, depth: int, seen: set[str], evidence: list[Evidence],
                followed: list[str], own: str | None = None) -> None:
        self._match("python", code, where, evidence)
        if depth >= MAX_DEPTH:
            return
        for m in _IMPORT.finditer(code):
            names = [m.group(1)] if m.group(1) else [n.strip() for n in m.group(2).split(",")]
            for name in names:
                path = resolve(f"{name}.py", folder)
                if path in self.files.content and path not in seen and path != own:
                    followed.append(path)
                    self._python(self.files.content[path], f"import {path}", folder, depth + 1, seen | {path},
                                 evidence, followed, own=path)


def _as_trajectory(rec: Trajectory | dict) -> Trajectory:
    return rec if isinstance(rec, Trajectory) else Trajectory.from_dict(rec)


def classify_episode(rec: Trajectory | dict, rules: Rules | None = None) -> EpisodeVerdict:
    """The per-turn verdicts of one episode (its steps in order)."""
    t = _as_trajectory(rec)
    clf = EpisodeClassifier(rules)
    return EpisodeVerdict(t.task_id, t.model, t.domain, t.mode, t.repeat, t.termination,
                          [clf.turn(s) for s in t.steps])


def classify_episodes(records: Iterable[Trajectory | dict], rules: Rules | None = None) -> list[EpisodeVerdict]:
    rules = rules or load_rules()
    return [classify_episode(r, rules) for r in records]
