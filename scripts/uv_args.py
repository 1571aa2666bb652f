"""pip's configuration as uv's options, for scripts/setup.sh.

    python scripts/uv_args.py < <(python -m pip config list)

Reads ``pip config list`` (files and ``PIP_*`` variables, as pip resolves them: the last value of a
key wins) and prints one line per uv word (``--find-links``, ``/opt/wheels``, ...), then ``ENV
NAME=VALUE`` lines for variables uv reads instead of options. So uv installs from the same places as
pip would: the same indexes (every index searched, pip's rule: ``--index-strategy
unsafe-best-match``), links, constraints and certificate. Exit 3 (nothing printed) on a setting it
does not know how to carry over: setup.sh then installs with pip, as before.
"""
from __future__ import annotations

import ast
import shlex
import sys

# pip settings that change nothing about which files uv installs
HARMLESS = {"default-timeout", "timeout", "disable-pip-version-check", "progress-bar", "quiet", "verbose",
            "no-cache-dir", "cache-dir", "retries", "root-user-action", "break-system-packages", "no-input",
            "require-virtualenv", "prefer-binary", "no-color", "exists-action", "no-warn-script-location",
            "use-feature", "log"}


def settings(lines: list[str]) -> dict[str, str]:
    """key -> value, the last one pip lists (pip lists files then its variables, in precedence order)."""
    out: dict[str, str] = {}
    for line in lines:
        line = line.strip()
        if not line or "=" not in line:
            continue
        name, _, value = line.partition("=")
        key = name.rsplit(".", 1)[-1]
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            pass
        out[key] = str(value)
    return out


def uv_words(conf: dict[str, str]) -> list[str]:
    """The uv words and ``ENV`` lines for ``conf``; ValueError naming a setting uv cannot take."""
    words, env = ["--index-strategy", "unsafe-best-match"], []
    for key, value in conf.items():
        items = shlex.split(value)
        if key in HARMLESS:
            continue
        if key == "index-url":
            words += ["--default-index", items[0]]
        elif key == "extra-index-url":
            for url in items:
                words += ["--extra-index-url", url]
        elif key == "find-links":
            for place in items:
                words += ["--find-links", place]
        elif key == "constraint":
            for path in items:
                words += ["--constraints", path]
        elif key == "no-index" and value.lower() in ("1", "true", "yes", "on"):
            words.append("--no-index")
        elif key == "cert":
            env.append(f"SSL_CERT_FILE={value}")
        elif key == "trusted-host":
            for host in items:
                words += ["--allow-insecure-host", host]
        else:
            raise ValueError(key)
    return words + [f"ENV {e}" for e in env]


def main() -> int:
    try:
        lines = uv_words(settings(sys.stdin.read().splitlines()))
    except ValueError as e:
        print(f"pip setting {e} has no uv counterpart here", file=sys.stderr)
        return 3
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
