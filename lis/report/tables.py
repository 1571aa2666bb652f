"""A report table and its three files: Markdown and LaTeX (what a reader sees) and CSV (the raw numbers,
one row per record, intervals as _lo/_hi columns), all built from polars frames.

    t = Table("table2_main", "Table 2", "Accuracy ...", columns, rows, records, notes=[...],
              inputs=[...], sections=["jobs", "report"])
    write_table(t, Path("paper_figures/tables"))   # table2_main.md, .tex, .csv
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from lis.report.cells import Cell


@dataclass
class Table:
    id: str                      # file stem under tables/
    number: str                  # "Table 2", "Table 13 (appendix)", "Learning check"
    title: str
    columns: list[str]
    rows: list[list[Any]]        # str or Cell per column
    records: list[dict[str, Any]] = field(default_factory=list)   # the CSV: raw values
    notes: list[str] = field(default_factory=list)               # footnotes, shown under the table
    inputs: list[str] = field(default_factory=list)              # files read (provenance)
    sections: list[str] = field(default_factory=list)            # params sections it depends on
    paper: str = ""              # how the paper's numbers appear beside ours (or why they do not)
    waiting: str = ""            # set when the table has no rows by configuration: what it waits for

    def text_rows(self) -> list[list[str]]:
        return [[str(c) for c in r] for r in self.rows]

    def frame(self) -> pl.DataFrame:
        """The displayed table as a polars frame (all strings)."""
        cols = _unique(self.columns)
        data = self.text_rows()
        return pl.DataFrame({c: [r[i] if i < len(r) else "" for r in data] for i, c in enumerate(cols)},
                            schema={c: pl.Utf8 for c in cols})

    def record_frame(self) -> pl.DataFrame:
        recs = [_flat(r) for r in self.records]
        if not recs:
            note = self.waiting or "no rows"
            return pl.DataFrame({"note": [note]})
        keys = list(dict.fromkeys(k for r in recs for k in r))
        cols: dict[str, list[Any]] = {k: [r.get(k) for r in recs] for k in keys}
        schema = {k: _dtype(v) for k, v in cols.items()}
        return pl.DataFrame(cols, schema=schema, strict=False)


def _unique(cols: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for c in cols:
        seen[c] = seen.get(c, 0) + 1
        out.append(c if seen[c] == 1 else f"{c} ({seen[c]})")
    return out


def _dtype(values: list[Any]) -> Any:
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {bool} and kinds:
        return pl.Boolean
    if kinds <= {int} and kinds:
        return pl.Int64
    if kinds <= {int, float} and kinds:
        return pl.Float64
    return pl.Utf8


def _flat(record: dict[str, Any]) -> dict[str, Any]:
    """CSV has no lists or maps: an interval [lo, hi] becomes two columns, anything else text."""
    out: dict[str, Any] = {}
    for k, v in record.items():
        if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, (int, float)) or x is None for x in v):
            out[f"{k}_lo"], out[f"{k}_hi"] = v
        elif isinstance(v, (list, tuple, dict)):
            out[k] = str(v)
        else:
            out[k] = v
    return out


# -- Markdown -------------------------------------------------------------------------------------
def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def markdown(t: Table, link_prefix: str = "") -> str:
    """The table as Markdown: title, the table, its notes. Links (viewer pages) are relative to the
    report folder; ``link_prefix`` climbs to it ("../" from tables/)."""
    head = f"**{t.number}. {t.title}**\n\n"
    if t.waiting and not t.rows:
        body = f"_{t.waiting}_\n"
    else:
        frame = t.frame()
        lines = ["| " + " | ".join(_md_escape(c) for c in frame.columns) + " |",
                 "|" + "|".join("---" for _ in frame.columns) + "|"]
        for r, raw in zip(frame.iter_rows(), t.rows):
            cells = []
            for text, c in zip(r, raw):
                s = _md_escape(text)
                if isinstance(c, Cell) and c.href:
                    s = f"[{s}]({link_prefix}{c.href})"
                cells.append(s)
            lines.append("| " + " | ".join(cells) + " |")
        body = "\n".join(lines) + "\n"
    notes = [n for n in ([t.paper] if t.paper else []) + t.notes if n]
    tail = ("\n" + "\n".join(f"- {_md_escape(n)}" for n in notes) + "\n") if notes else ""
    return head + body + tail


# -- LaTeX ----------------------------------------------------------------------------------------
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "→": r"$\rightarrow$", "–": "--",
        "−": "$-$", "†": r"$^\dagger$", "·": r"$\cdot$", "×": r"$\times$", "Δ": r"$\Delta$", "✓": r"\checkmark{}",
        "✗": r"$\times$", "≥": r"$\geq$", "≤": r"$\leq$", "<": r"$<$", ">": r"$>$", "±": r"$\pm$"}


def tex_escape(s: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in s)


def latex(t: Table) -> str:
    label = "tab:" + t.id.replace("_", "-")
    if t.waiting and not t.rows:
        cols, data = ["Note"], [[t.waiting]]
    else:
        frame = t.frame()
        cols, data = frame.columns, [list(r) for r in frame.iter_rows()]
    spec = "l" * len(cols)
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             rf"\caption{{{tex_escape(t.number + '. ' + t.title)}}}", rf"\label{{{label}}}",
             rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(tex_escape(c) for c in cols) + r" \\", r"\midrule"]
    lines += [" & ".join(tex_escape(str(c)) for c in r) + r" \\" for r in data]
    lines += [r"\bottomrule", r"\end{tabular}"]
    notes = [n for n in ([t.paper] if t.paper else []) + t.notes if n]
    if notes:
        lines.append(r"\par\smallskip\footnotesize " + r" \\ ".join(tex_escape(n) for n in notes))
    lines += [r"\end{table}", ""]
    return "\n".join(lines)


def write_table(t: Table, out_dir: Path) -> list[Path]:
    """tables/<id>.md, .tex and .csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md, tex, csv = (out_dir / f"{t.id}.{ext}" for ext in ("md", "tex", "csv"))
    md.write_text(markdown(t, link_prefix="../"), encoding="utf-8")
    tex.write_text(latex(t), encoding="utf-8")
    t.record_frame().write_csv(csv)
    return [md, tex, csv]

