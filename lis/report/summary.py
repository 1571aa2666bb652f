"""The paper's result shapes from whatever metrics exist: Table 2 (vanilla → sandbox (Δ) per model
and domain) and Table 3 (long context: documents in the prompt vs. as files)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lis.manifest import read_json
from lis.records import MetricsRecord, RecordError, check

DOMAIN_ORDER = ["math", "physics", "chem", "biomed", "long_context", "instruct_follow"]
DOMAIN_TITLES = {"math": "Math", "physics": "Physics", "chem": "Chemistry", "biomed": "Biomedicine",
                 "long_context": "Long-Context", "instruct_follow": "Instruction Following"}


def load_metrics(root: Path) -> list[dict[str, Any]]:
    """The metrics.json of every job under ``root`` (<model>/<domain>/<mode>/); LisError naming the
    file when one is not a job's metrics (not JSON, or without its model, domain, mode and numbers)."""
    out = []
    for p in sorted(Path(root).glob("*/*/*/metrics.json")):
        m = read_json(p, expect=dict)
        try:
            check(MetricsRecord, m, where=f"{p} is not a job's metrics")
        except RecordError as e:
            raise RecordError(str(e), "rerun that job (lis eval run) or remove the file") from None
        out.append(m)
    return out


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _counts(*jobs: dict | None) -> str:
    """ " · n a/b" (scored episodes of each job) and " · errors c/d" when a job had errors."""
    ns = "/".join("–" if j is None else str(j.get("scored", j.get("n"))) for j in jobs)
    errs = [0 if j is None else int(j.get("errors") or 0) for j in jobs]
    return f" · n {ns}" + (f" · errors {'/'.join(map(str, errs))}" if any(errs) else "")


def _index(metrics: list[dict]) -> dict[tuple[str, str, str], dict]:
    return {(m["model"], m["domain"], m["mode"]): m for m in metrics}


def table2(metrics: list[dict]) -> tuple[list[str], list[list[str]], list[dict]]:
    """Header, display rows ("vanilla → sandbox (Δ)") and raw records, one row per model."""
    idx = _index(metrics)
    models = sorted({m["model"] for m in metrics})
    domains = [d for d in DOMAIN_ORDER if any(k[1] == d for k in idx)]
    header = ["Model"] + [DOMAIN_TITLES[d] for d in domains]
    rows, raw = [], []
    for model in models:
        row = [model]
        for d in domains:
            v, s = idx.get((model, d, "vanilla")), idx.get((model, d, "sandbox"))
            va, sa = (v or {}).get("accuracy"), (s or {}).get("accuracy")
            delta = None if va is None or sa is None else sa - va
            row.append(f"{_pct(va)} → {_pct(sa)} ({'–' if delta is None else f'{100 * delta:+.1f}'})"
                       + _counts(v, s))
            raw.append({"model": model, "domain": d, "vanilla": va, "sandbox": sa, "delta": delta,
                        "n_vanilla": (v or {}).get("scored"), "n_sandbox": (s or {}).get("scored"),
                        "errors_vanilla": (v or {}).get("errors"), "errors_sandbox": (s or {}).get("errors"),
                        "ci95_vanilla": (v or {}).get("ci95"), "ci95_sandbox": (s or {}).get("ci95")})
        rows.append(row)
    return header, rows, raw


def table3(metrics: list[dict]) -> tuple[list[str], list[list[str]], list[dict]]:
    """Long context: vanilla, sandbox with documents in the prompt, sandbox with documents as files."""
    idx = _index(metrics)
    models = sorted({m["model"] for m in metrics if m["domain"] == "long_context"})
    header = ["Model", "Vanilla (documents in prompt)", "Sandbox, documents in prompt", "Sandbox, documents as files"]
    rows, raw = [], []
    for model in models:
        jobs = [idx.get((model, "long_context", mode)) for mode in ("vanilla", "sandbox_inline", "sandbox")]
        cells = [(j or {}).get("accuracy") for j in jobs]
        rows.append([model] + [_pct(c) + (_counts(j) if j else "") for c, j in zip(cells, jobs)])
        raw.append({"model": model, "vanilla": cells[0], "sandbox_inline": cells[1], "sandbox_files": cells[2],
                    **{f"{k}_{m}": (j or {}).get(f) for j, m in zip(jobs, ("vanilla", "sandbox_inline", "sandbox_files"))
                       for k, f in (("n", "scored"), ("errors", "errors"))}})
    return header, rows, raw
