"""No code, test or config reads a path outside the repository (a development machine's folders)."""
from __future__ import annotations

import re

from tests.conftest import ROOT, run

# a development machine's folders beside the checkout (spelt in two parts so this file does not match itself)
OUTSIDE = re.compile("|".join(re.escape(p) for p in ("/work/" + "shared", "/work/" + "main", str(ROOT) + "/")))
CHECKED = (".py", ".yaml", ".yml", ".smk", ".toml", ".sh", ".cfg")


def test_no_tracked_file_names_a_path_outside_the_repository():
    files = run(["git", "ls-files", "-co", "--exclude-standard"]).stdout.split()
    hits = []
    for f in files:
        path = ROOT / f
        if (path.suffix in CHECKED or path.name in ("Snakefile", "Makefile")) and path.is_file():
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if OUTSIDE.search(line):
                    hits.append(f"{f}:{n}: {line.strip()}")
    assert hits == [], "read data/ through the repository root instead:\n" + "\n".join(hits)
