"""The report's figures (PNG and PDF), drawn with seaborn on matplotlib's Agg backend (both imported
only here): Figure 1 (sandbox score and Δ against vanilla per model × domain), Figure 2 (capability
usage and turns by domain) and the GRPO training curves.

Every figure has a fixed size from its data's shape and no dates or versions in its files, so its
bytes depend on its data only; no text box may overlap another or leave the canvas
(tests/report/test_figure_layout.py). A figure without data is still written, saying what it waits for.
"""
from __future__ import annotations

import textwrap
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from lis.report.cells import num

CAPS = ("external", "file", "compute")
CAP_COLORS = {"external": "#4C72B0", "file": "#55A868", "compute": "#C44E52"}
TURNS_COLOR = "#8172B3"
DPI = 120
RC = {"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8,
      "legend.fontsize": 8, "figure.dpi": DPI, "axes.spines.top": False, "axes.spines.right": False,
      "svg.hashsalt": "lis"}


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

    return plt


@contextmanager
def _style() -> Iterator[tuple[Any, Any]]:
    """(pyplot, seaborn) under the report's style: seaborn's "ticks" look, the report's font sizes."""
    plt = _plt()
    import seaborn as sns

    with plt.rc_context({**sns.axes_style("ticks"), **RC}):
        yield plt, sns


def _wrap(label: str, width: int) -> str:
    return "\n".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label


def _save(fig: Any, fg: Figure, out: Path) -> None:
    plt = _plt()
    out.mkdir(parents=True, exist_ok=True)
    png, pdf = out / f"{fg.id}.png", out / f"{fg.id}.pdf"
    fig.savefig(png, dpi=DPI, metadata={"Software": None})
    fig.savefig(pdf, metadata={"CreationDate": None, "Creator": None, "Producer": None})
    plt.close(fig)
    fg.files = [png, pdf]


def _waiting(fg: Figure, out: Path) -> None:
    with _style() as (plt, _):
        fig, ax = plt.subplots(figsize=(6, 1.6), layout="constrained")
        ax.axis("off")
        ax.text(0.5, 0.5, _wrap(f"{fg.number}: {fg.waiting}", 80), ha="center", va="center", fontsize=9)
        _save(fig, fg, out)


ALL_ZERO = ("No model scores above 0 on a cell with at least {min_n} items (a cell marked † has fewer and is not a "
            "result). That is expected of the embedded default: its models are tiny (trained in minutes on this run's "
            "own context tasks), cannot solve real benchmark items, and its task sets are samples. What this run does "
            "show is the learning check: trained models against their start on held-out context tasks.")


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
    import numpy as np

    z = np.full((len(models), len(domains)), np.nan)
    for i, m in enumerate(models):
        for j, d in enumerate(domains):
            v = num((cells.get((m, d)) or {}).get("sandbox_accuracy"))
            if v is not None:
                z[i, j] = 100 * v
    results = [num(r.get("sandbox_accuracy")) for r in cells.values()  # cells with enough items to be a result
               if num(r.get("sandbox_accuracy")) is not None and r.get("sandbox_n") is not None and int(r["sandbox_n"]) >= min_n]
    all_zero = bool(np.isfinite(z).any()) and not any(v > 0 for v in results)
    if all_zero:
        fg.notes.append(ALL_ZERO.format(min_n=min_n))
    label_w = 0.3 + 0.065 * max(len(m) for m in models)   # inches for the model names
    with _style() as (plt, sns):
        fig, ax = plt.subplots(figsize=(max(4.8, label_w + 1.25 * len(domains)), 1.2 + 0.55 * len(models)),
                               layout="constrained")
        sns.heatmap(z, ax=ax, cmap="Blues", vmin=0, vmax=100, cbar=False, square=False, linewidths=0,
                    xticklabels=[_wrap(titles.get(d, d), 13) for d in domains], yticklabels=models)
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
                ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=8,
                        color=dcol if color == "black" else color)
        ax.tick_params(axis="both", length=0)
        ax.tick_params(axis="y", rotation=0)
        ax.tick_params(axis="x", rotation=0)
        ax.set_xlabel("")
        ax.set_ylabel("")
        fig.suptitle(f"Sandbox accuracy (%) and Δ vs vanilla; † n < {min_n}"
                     + (f"\nNo model scores above 0 on a cell with n ≥ {min_n} (see the note)" if all_zero else ""), fontsize=9)
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
    order = list(titles)
    rows = sorted(rows, key=lambda r: (order.index(r["domain"]) if r["domain"] in order else len(order), r["domain"]))
    labels = [_wrap(titles.get(r["domain"], r["domain"]), 24) for r in rows]
    usage = {"domain": [lab for lab in labels for _ in CAPS], "capability": [c for _ in rows for c in CAPS],
             "share": [100 * (num(r.get(c)) or 0.0) for r in rows for c in CAPS]}
    turns = [num(r.get("avg_turns")) or 0.0 for r in rows]
    with _style() as (plt, sns):
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 1.3 + 0.5 * len(rows)), sharey=True, layout="constrained",
                                     gridspec_kw={"width_ratios": [3, 2]})
        sns.barplot(usage, x="share", y="domain", hue="capability", order=labels, hue_order=CAPS,
                    palette=CAP_COLORS, orient="h", errorbar=None, ax=a1)
        handles, names = a1.get_legend_handles_labels()
        a1.get_legend().remove()
        fig.legend(handles, names, loc="outside upper center", ncol=len(CAPS), frameon=False,
                   title="sandbox capability (% of turns that use it)", title_fontsize=8)
        a1.set(xlabel="% of turns", ylabel="", xlim=(0, max(5.0, 1.05 * max(usage["share"]))))
        sns.barplot({"domain": labels, "turns": turns}, x="turns", y="domain", order=labels, color=TURNS_COLOR,
                    orient="h", errorbar=None, ax=a2)
        a2.bar_label(a2.containers[0], labels=[f"n {r.get('episodes')}" for r in rows], padding=3, fontsize=7)
        a2.set(xlabel="average turns", ylabel="", xlim=(0, 1.3 * max(max(turns), 1.0)))
        a2.tick_params(axis="y", left=False)
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
    from matplotlib.ticker import MaxNLocator

    names = list(runs)
    with _style() as (plt, sns):
        palette = dict(zip(names, sns.color_palette("deep", len(names))))
        fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), layout="constrained")
        for ax, (col, label) in zip(axes, CURVES):
            steps: list[float] = []
            for name, rows in runs.items():
                pts = [(s, v) for s, v in ((num(r.get("step")), num(r.get(col))) for r in rows)
                       if s is not None and v is not None]
                if pts:
                    sns.lineplot(x=[p[0] for p in pts], y=[p[1] for p in pts], ax=ax, color=palette[name],
                                 marker="o" if len(pts) < 30 else None, markersize=4, markeredgewidth=0,
                                 estimator=None, errorbar=None, sort=True, label=name, legend=False)
                    steps += [p[0] for p in pts]
            ax.set(xlabel="step", ylabel=label)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if not steps:
                ax.text(0.5, 0.5, f"no {col} in train_log.csv", transform=ax.transAxes, ha="center", va="center",
                        color="0.4")
            elif max(steps) - min(steps) < 2:   # too few steps for whole-number ticks of their own
                ax.set_xlim(min(steps) - 1, max(steps) + 1)
        handles = [plt.Line2D([], [], color=palette[n], linewidth=2) for n in names]
        fig.legend(handles, names, loc="outside upper center", ncol=min(len(names), 4), frameon=False)
        _save(fig, fg, out)
    return fg
