"""``lis efficiency``: what the sandbox costs — ``tokens`` (Tables 10, 11) and ``storage`` (Table 12), the
commands of the ``efficiency`` and ``storage`` stages, made from their declarations (lis/stages/)."""
from __future__ import annotations

import typer

app = typer.Typer(help="Efficiency analyses (definitions: docs/efficiency.md).", no_args_is_help=True)
