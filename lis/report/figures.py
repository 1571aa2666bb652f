"""The report's figures (PNG and PDF, matplotlib with the Agg backend, imported only here):

- Figure 1: per model × benchmark domain, the sandbox score with Δ against vanilla (the paper's grid);
- Figure 2: sandbox-capability usage (external / file / computation) and average turns by domain;
- training curves: reward, tool calls per episode and turns per episode over the GRPO steps.

A figure without data is still written, saying what it waits for (never silently missing).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lis.report.cells import num

CAP_COLORS = {"external": "#4C72B0", "file": "#55A868", "compute": "#C44E52"}


@dataclass
class Figure:
    id: str
    number: str
    title: str
    inputs: list[str] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    waiting: str = ""
    files: list[Path] = field(default_factory=list)


def _plt():
    import logging

    import matplotlib

    logging.getLogger("fontTools").setLevel(logging.WARNING)   # PDF font subsetting chatter

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
                         "svg.hashsalt": "lis"})
    return plt


def _save(fig: Any, fg: Figure, out: Path) -> None:
    plt = _plt()
    out.mkdir(parents=True, exist_ok=True)
    png, pdf = out / f"{fg.id}.png", out / f"{fg.id}.pdf"
    fig.savefig(png, dpi=120, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(pdf, bbox_inches="tight", metadata={"CreationDate": None, "Creator": None, "Producer": None})
    plt.close(fig)
    fg.files = [png, pdf]


def _waiting(fg: Figure, out: Path) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 1.6))
    ax.axis("off")
    ax.text(0.5, 0.5, f"{fg.number}: {fg.waiting}", ha="center", va="center", wrap=True, fontsize=9)
    _save(fig, fg, out)


def figure1(grid: list[dict[str, Any]], models: list[str], domains: list[str], titles: dict[str, str],
            out: Path, inputs: list[str], min_n: int) -> Figure:
    """grid: records {model, domain, sandbox_accuracy, delta, sandbox_n}."""
    fg = Figure("figure1_grid", "Figure 1", "Sandbox score per model and domain, with Δ against vanilla (points)",
                inputs, ["jobs", "report"])
    cells = {(r["model"], r["domain"]): r for r in grid}
    if not models or not domains:
        fg.waiting = "waits for benchmark evaluations (jobs.models × jobs.domains, vanilla and sandbox)"
        _waiting(fg, out)
        return fg
    plt = _plt()
    import numpy as np

    z = np.full((len(models), len(domains)), np.nan)
    for i, m in enumerate(models):
        for j, d in enumerate(domains):
            v = num((cells.get((m, d)) or {}).get("sandbox_accuracy"))
            if v is not None:
                z[i, j] = 100 * v
    fig, ax = plt.subplots(figsize=(1.3 + 1.25 * len(domains), 0.9 + 0.55 * len(models)))
    ax.imshow(np.ma.masked_invalid(z), cmap="Blues", vmin=0, vmax=100, aspect="auto")
    for i, m in enumerate(models):
        for j, d in enumerate(domains):
            r = cells.get((m, d)) or {}
            v, dl, n = num(r.get("sandbox_accuracy")), num(r.get("delta")), r.get("sandbox_n")
            if v is None:
                text, color = "–", "black"
            else:
                text = f"{100 * v:.1f}" + ("" if dl is None else f"\n{100 * dl:+.1f}")
                if n is None or int(n) < min_n:
                    text += "†"
                color = "white" if 100 * v > 60 else "black"
            dcol = color if dl is None or v is None else ("#1a7f37" if dl > 0 else "#b42318" if dl < 0 else color)
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color=dcol if color == "black" else color)
    ax.set_xticks(range(len(domains)), [titles.get(d, d) for d in domains], rotation=20, ha="right")
    ax.set_yticks(range(len(models)), models)
    ax.set_title(f"Sandbox accuracy (%) and Δ vs vanilla; † n < {min_n}", fontsize=9)
    for s in ax.spines.values():
        s.set_visible(False)
    _save(fig, fg, out)
    return fg


def figure2(rows: list[dict[str, Any]], titles: dict[str, str], out: Path, inputs: list[str]) -> Figure:
    """rows: {domain, external, file, compute, avg_turns, episodes} (sandbox mode, all models)."""
    fg = Figure("figure2_capabilities", "Figure 2", "Sandbox-capability usage (% of turns) and average turns by domain",
                inputs, ["behaviour", "jobs"])
    if not rows:
        fg.waiting = "waits for sandbox-mode episodes (the behaviour stage)"
        _waiting(fg, out)
        return fg
    plt = _plt()
    order = list(titles)
    rows = sorted(rows, key=lambda r: (order.index(r["domain"]) if r["domain"] in order else len(order), r["domain"]))
    doms = [r["domain"] for r in rows]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.2), gridspec_kw={"width_ratios": [3, 2]})
    w = 0.8 / 3
    for k, cap in enumerate(("external", "file", "compute")):
        vals = [100 * (num(r.get(cap)) or 0.0) for r in rows]
        a1.bar([i + (k - 1) * w for i in range(len(rows))], vals, w, label=cap, color=CAP_COLORS[cap])
    a1.set_xticks(range(len(rows)), [titles.get(d, d) for d in doms], rotation=20, ha="right")
    a1.set_ylabel("% of turns")
    a1.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    a2.bar(range(len(rows)), [num(r.get("avg_turns")) or 0.0 for r in rows], color="#8172B3")
    a2.set_xticks(range(len(rows)), [titles.get(d, d) for d in doms], rotation=20, ha="right")
    a2.set_ylabel("average turns")
    for i, r in enumerate(rows):
        a2.text(i, (num(r.get("avg_turns")) or 0.0), f"n {r.get('episodes')}", ha="center", va="bottom", fontsize=7)
    _save(fig, fg, out)
    return fg


CURVES = (("reward_mean", "reward (mean of the step)"), ("tool_calls_mean", "tool calls per episode"),
          ("turns_mean", "turns per episode"))


def training_curves(runs: dict[str, list[dict[str, str]]], out: Path, inputs: list[str], waiting: str = "") -> Figure:
    """runs: run name -> train_log.csv rows (step, reward_mean, tool_calls_mean, turns_mean, ...)."""
    fg = Figure("training_curves", "Training curves", "GRPO: reward, tool calls and turns per episode over steps",
                inputs, ["grpo", "llm_rl"])
    if not runs or not any(runs.values()):
        fg.waiting = waiting or "waits for training (stages grpo / llm_rl)"
        _waiting(fg, out)
        return fg
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(11, 3))
    for name, rows in runs.items():
        steps = [num(r.get("step")) for r in rows]
        for ax, (col, label) in zip(axes, CURVES):
            pts = [(s, num(r.get(col))) for s, r in zip(steps, rows) if s is not None and num(r.get(col)) is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if len(pts) < 30 else None, ms=3,
                        label=name)
            ax.set_xlabel("step")
            ax.set_ylabel(label)
    axes[0].legend(frameon=False, fontsize=8)
    _save(fig, fg, out)
    return fg
