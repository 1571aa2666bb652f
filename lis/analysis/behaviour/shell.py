"""Reading an ``execute_bash`` command the way the classifier needs it (no shell is run).

    parsed = parse_command("cd /testbed && cat > x.py <<'EOF'\\nprint(1)\\nEOF\\npython3 x.py")
    parsed.shell_text    # the command without here-document bodies and with `python -c` code blanked
    parsed.events        # in order: Cd('/testbed'), Write('x.py', 'print(1)\\n'), Run('x.py', 'python')

Events: ``Code`` (code run now: ``python -c``, a here-document piped or fed to an interpreter),
``Write`` (a here-document, ``echo`` or ``printf`` redirected to a file), ``Run`` (a file executed
by python, a shell, or in command position), ``Copy`` (``cp``/``mv``) and ``Cd``.

It is a reader of common forms, not a shell: what it does not understand is left in
``shell_text`` and only searched by the bash-scope rules.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEREDOC = re.compile(r"(?<![<\w])<<(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z_][\w.-]*))")
_SEP = re.compile(r"&&|\|\||[;|&()\n]")
_PY = r"python(?:\d(?:\.\d+)?)?"
_CMD_START = r"(?:^|[;&|(`{!]|\$\(|\b(?:then|else|do|sudo|time|nohup|exec|xargs)\s)[ \t]*(?:\w+=\S*[ \t]+)*"
_PY_C = re.compile(rf"(?:^|(?<=[\s;&|(`]))({_PY})((?:[ \t]+-[A-Za-z]+)*?)[ \t]+-c[ \t]*(?=['\"$])", re.M)
_RUN = re.compile(rf"{_CMD_START}(?:timeout[ \t]+\S+[ \t]+)?(?P<runner>{_PY}|bash|sh|zsh|source|\.)"
                  r"(?P<opts>(?:[ \t]+-[\w-]+)*)[ \t]+(?P<q>['\"]?)(?P<path>[^\s;&|<>()'\"`-][^\s;&|<>()'\"`]*)(?P=q)", re.M)
_DIRECT = re.compile(rf"{_CMD_START}(?P<path>(?:\.{{1,2}}/|/)[^\s;&|<>()'\"`]+)", re.M)
_CD = re.compile(rf"{_CMD_START}cd[ \t]+(?P<path>[^\s;&|<>()`]+)", re.M)
_COPY = re.compile(rf"{_CMD_START}(?P<op>cp|mv)(?:[ \t]+-\w+)*[ \t]+(?P<src>[^\s;&|<>()`-][^\s;&|<>()`]*)"
                   r"[ \t]+(?P<dst>[^\s;&|<>()`]+)[ \t]*(?=$|[;&|)\n])", re.M)
_ECHO = re.compile(r"(?:^|(?<=[\s;&|(]))(?P<cmd>echo|printf)(?P<opts>(?:[ \t]+-[neE]+)*)[ \t]+"
                   r"(?P<arg>\"(?:[^\"\\]|\\.)*\"|'[^']*')[ \t]*(?P<op>>>?)[ \t]*(?P<path>[^\s;&|<>()`]+)", re.M)
_REDIRECT = re.compile(r"(?<![<>&\d])(>>?)[ \t]*(?!&)([^\s;&|<>()`]+)")
_WORD = re.compile(r"[^\s;&|<>()]+")


@dataclass(frozen=True)
class Code:
    lang: str       # python | shell
    text: str
    origin: str     # "python -c" | "heredoc" | "pipe"
    pos: int = 0


@dataclass(frozen=True)
class Write:
    path: str
    text: str
    append: bool
    origin: str     # heredoc | echo | printf
    pos: int = 0


@dataclass(frozen=True)
class Run:
    path: str
    runner: str     # python | shell | direct
    pos: int = 0


@dataclass(frozen=True)
class Copy:
    src: str
    dst: str
    move: bool
    pos: int = 0


@dataclass(frozen=True)
class Cd:
    path: str
    pos: int = 0


@dataclass
class ParsedCommand:
    shell_text: str
    events: list = field(default_factory=list)


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def _segment(line: str, start: int, end: int) -> tuple[str, str]:
    """The simple command around [start, end) of ``line`` and what follows it after a pipe."""
    lo = 0
    for m in _SEP.finditer(line, 0, start):
        lo = m.end()
    m = _SEP.search(line, end)
    hi = m.start() if m else len(line)
    after = line[m.end():] if m and m.group(0) == "|" else ""
    return line[lo:hi], after


def _command_word(segment: str) -> tuple[str, list[str]]:
    words = [w for w in _WORD.findall(segment)]
    while words and (re.fullmatch(r"\w+=\S*", words[0]) or words[0] in ("sudo", "nohup", "time", "exec", "command")):
        words.pop(0)
    return (words[0].rsplit("/", 1)[-1] if words else ""), words[1:]


def _heredoc_kind(line: str, m: re.Match) -> tuple[str, str | None, bool]:
    """('python'|'shell'|'write'|'text', path, append) for the here-document operator ``m`` of ``line``."""
    segment, after = _segment(line, m.start(), m.end())
    word, args = _command_word(segment.replace(m.group(0), " "))
    if re.fullmatch(_PY, word):
        rest = [a for a in args if not a.startswith("-") or a == "-"]
        return ("python", None, False) if not rest or rest[0] == "-" or rest[0] == "/dev/stdin" else ("text", None, False)
    if word in ("bash", "sh", "zsh") and not [a for a in args if not a.startswith("-")]:
        return "shell", None, False
    for r in _REDIRECT.finditer(segment.replace(m.group(0), " ")):
        return "write", _unquote(r.group(2)), r.group(1) == ">>"
    if after:
        nxt, nargs = _command_word(after)
        if re.fullmatch(_PY, nxt) and not [a for a in nargs if not a.startswith("-")]:
            return "python", None, False
        if nxt in ("bash", "sh") and not [a for a in nargs if not a.startswith("-")]:
            return "shell", None, False
        if nxt == "tee":
            paths = [a for a in nargs if not a.startswith("-")]
            if paths:
                return "write", _unquote(paths[0]), "-a" in nargs
    return "text", None, False


def _quote_states(line: str, state: str) -> tuple[list[str], str]:
    """The quoting in force at each character of ``line`` ('' none, "'" or '"') from the state it starts
    in, and the state at its end. A ``#`` starting a word outside quotes ends the line (a comment)."""
    states, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        states.append(state)
        if state == "'":
            if c == "'":
                state = ""
        elif state == '"':
            if c == "\\" and i + 1 < n:
                states.append(state)
                i += 1
            elif c == '"':
                state = ""
        else:
            if c == "\\" and i + 1 < n:
                states.append(state)
                i += 1
            elif c in "'\"":
                state = c
            elif c == "#" and (i == 0 or line[i - 1] in " \t;&|("):
                states.extend([state] * (n - i - 1))
                break
        i += 1
    return states, state


def _strip_heredocs(command: str) -> tuple[str, list]:
    """The command without here-document bodies, and the events the here-documents make. A ``<<``
    inside quotes (``python3 -c "print(1 << n)"``) is not a here-document."""
    lines = command.split("\n")
    out: list[str] = []
    events: list = []
    offset = 0  # offset of the current output line in the output text
    state = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        states, state = _quote_states(line, state)
        ops = [m for m in _HEREDOC.finditer(line) if m.start() < len(states) and states[m.start()] == ""]
        out.append(line)
        i += 1
        for m in ops:
            delim = m.group(2) or m.group(3) or m.group(4)
            strip_tabs = m.group(1) == "-"
            body = []
            while i < len(lines):
                cur = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if cur == delim:
                    break
                body.append(cur)
            text = "\n".join(body) + ("\n" if body else "")
            kind, path, append = _heredoc_kind(line, m)
            pos = offset + m.start()
            if kind in ("python", "shell"):
                events.append(Code(kind, text, "heredoc", pos))
            elif kind == "write" and path:
                events.append(Write(path, text, append, "heredoc", pos))
        offset += len(line) + 1
    return "\n".join(out), events


def _quoted_at(text: str, i: int) -> tuple[str, int] | None:
    """The shell word made of quoted pieces starting at ``text[i]`` ('…', "…", $'…'): (value, end)."""
    parts, j = [], i
    while j < len(text) and text[j] in "'\"$":
        q = text[j]
        if q == "$":
            if not text.startswith("$'", j):
                break
            end = j + 2
            while end < len(text) and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            raw = text[j + 2:end]
            parts.append(raw.encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")
                         if raw.isascii() else raw.replace("\\n", "\n").replace("\\'", "'"))
            j = end + 1
            continue
        end = j + 1
        if q == "'":
            end = text.find("'", j + 1)
            if end < 0:
                return None
            parts.append(text[j + 1:end])
        else:
            buf = []
            while end < len(text) and text[end] != '"':
                if text[end] == "\\" and end + 1 < len(text) and text[end + 1] in '"\\$`\n':
                    if text[end + 1] != "\n":
                        buf.append(text[end + 1])
                    end += 2
                    continue
                buf.append(text[end])
                end += 1
            if end >= len(text):
                return None
            parts.append("".join(buf))
        j = end + 1
        if j + 1 < len(text) and text[j] == "\\" and text[j + 1] == "'":  # 'it'\''s'
            parts.append("'")
            j += 2
    return ("".join(parts), j) if parts else None


def _blank(text: str, lo: int, hi: int) -> str:
    return text[:lo] + re.sub(r"[^\n]", " ", text[lo:hi]) + text[hi:]


def _echo_text(cmd: str, opts: str, arg: str) -> str:
    value = _quoted_at(arg, 0)
    s = value[0] if value else arg
    if cmd == "printf" or "e" in opts:
        s = s.replace("\\n", "\n").replace("\\t", "\t").replace("%%", "%")
    if cmd == "echo" and "n" not in opts:
        s += "\n"
    return s


def parse_command(command: str) -> ParsedCommand:
    """Split an execute_bash command into its shell text and the events the classifier follows."""
    text, events = _strip_heredocs(command)
    # python -c '<code>': the code is Python; blank it in the shell text (same length: positions hold)
    for m in list(_PY_C.finditer(text)):
        q = _quoted_at(text, m.end())
        if q is None:
            continue
        code, end = q
        events.append(Code("python", code, "python -c", m.start()))
        text = _blank(text, m.end(), end)
    for m in _ECHO.finditer(text):
        events.append(Write(_unquote(m.group("path")), _echo_text(m.group("cmd"), m.group("opts"), m.group("arg")),
                            m.group("op") == ">>", m.group("cmd"), m.start()))
    for m in _CD.finditer(text):
        events.append(Cd(_unquote(m.group("path")), m.start("path")))
    for m in _COPY.finditer(text):
        events.append(Copy(_unquote(m.group("src")), _unquote(m.group("dst")), m.group("op") == "mv", m.start("op")))
    for m in _RUN.finditer(text):
        runner, opts, path = m.group("runner"), m.group("opts").split(), m.group("path")
        if runner.startswith("python"):
            if any(o in ("-c", "-m") or (o.startswith("-") and o[-1] in "cm" and len(o) > 1) for o in opts) or path == "-":
                continue
            events.append(Run(path, "python", m.start("runner")))
        elif path != "-" and not any(o.startswith("-") and "c" in o[1:] for o in opts):  # bash -c: shell text
            events.append(Run(path, "shell", m.start("runner")))
    for m in _DIRECT.finditer(text):
        events.append(Run(m.group("path"), "direct", m.start("path")))
    events.sort(key=lambda e: e.pos)
    return ParsedCommand(text, events)
