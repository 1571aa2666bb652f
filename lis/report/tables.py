"""The paper's tables as Markdown, CSV and LaTeX (polars for the CSV), from the eval metrics."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from lis.report.summary import table2, table3


def _md(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _tex(header: list[str], rows: list[list[str]], caption: str, label: str) -> str:
    def esc(s: str) -> str:
        return (s.replace("\\", r"\textbackslash{}").replace("&", r"\&").replace("%", r"\%").replace("_", r"\_")
                .replace("→", r"$\rightarrow$").replace("–", "--"))

    cols = "l" + "c" * (len(header) - 1)
    body = [" & ".join(esc(c) for c in r) + r" \\" for r in rows]
    return "\n".join([r"\begin{table}[t]", r"\centering", rf"\caption{{{esc(caption)}}}", rf"\label{{{label}}}",
                      rf"\begin{{tabular}}{{{cols}}}", r"\toprule", " & ".join(esc(h) for h in header) + r" \\",
                      r"\midrule", *body, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


def _flat(record: dict) -> dict:
    """CSV has no lists: an interval [lo, hi] becomes two columns."""
    out = {}
    for k, v in record.items():
        if isinstance(v, (list, tuple)) and len(v) == 2:
            out[f"{k}_lo"], out[f"{k}_hi"] = v
        elif isinstance(v, (list, tuple)):
            out[f"{k}_lo"] = out[f"{k}_hi"] = None
        else:
            out[k] = v
    return out


def write_tables(metrics: list[dict], out_dir: Path) -> list[Path]:
    """tables/table2_main.{md,csv,tex} and tables/table3_long_context.{md,csv,tex}; always all six
    files (a table with no data says so), so that the pipeline's outputs are fixed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    specs = [("table2_main", table2, "Accuracy (%) answering directly → in the sandbox (change), per model and domain",
              "tab:main"),
             ("table3_long_context", table3, "Long context (%): documents in the prompt vs. as files in the sandbox",
              "tab:long-context")]
    for name, build, caption, label in specs:
        header, rows, raw = build(metrics)
        if not rows:
            header, rows, raw = ["Note"], [["no evaluation results yet"]], []
        (out_dir / f"{name}.md").write_text(f"**{caption}**\n\n" + _md(header, rows), encoding="utf-8")
        (out_dir / f"{name}.tex").write_text(_tex(header, rows, caption, label), encoding="utf-8")
        frame = pl.DataFrame([_flat(r) for r in raw]) if raw else pl.DataFrame({"note": ["no evaluation results yet"]})
        frame.write_csv(out_dir / f"{name}.csv")
        written += [out_dir / f"{name}.{ext}" for ext in ("md", "csv", "tex")]
    return written
