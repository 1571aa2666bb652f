"""Plans as a terminal table (one per stage, a column pair per setup) and as JSON.

    print(render([plan_a, plan_b]))     # the same stage under two setups
"""
from __future__ import annotations

from typing import Any

from lis.train.plan.memory import GB, PHASES, TERM_ORDER, Plan
from lis.train.plan.setups import gb_text

PHASE_NAMES = {"generation": "generation", "train": "forward/backward", "optimizer": "optimizer step"}


def _phase(keys: tuple[str, ...], counted: bool) -> str:
    if not counted:
        return "(not used)"
    if tuple(keys) == PHASES:
        return "all"
    return ", ".join({"generation": "gen", "train": "fwd/bwd", "optimizer": "step"}[k] for k in keys)


def _gb(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x / GB:,.{digits}f}"


def _count(n: int) -> str:
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.2f} M"


def render(plans: list[Plan], title: str = "") -> str:
    """One stage's plans under several setups: rows the terms (GB per process on its device, and in the
    node's CPU memory), then each phase's peak, the total against the capacity, fits, and disk."""
    first = plans[0]
    w, s = first.workload, first.shape
    d = 2 if max(p.peak_gb for p in plans) < 10 else 1     # small plans (the tiny model): hundredths
    gb = lambda x: _gb(x, d)  # noqa: E731
    letters = [chr(ord("A") + k) for k in range(len(plans))]
    trainable = "all trainable" if first.trainable == s.params else f"{first.trainable / 1e6:,.1f} M trainable (LoRA)"
    if w.stage == "grpo":
        shape = (f"micro-batch {w.rows} x {w.tokens:,} tokens ({w.tokens - w.completion:,} prompt + "
                 f"{w.completion:,} episode), {w.group_batch} episodes per step")
    else:
        shape = f"micro-batch {w.rows} x {w.tokens:,} tokens ({w.labelled:,} labelled)"
    lines = [f"{w.stage} · {s.name} ({_count(s.params)} params, {trainable}){' · ' + title if title else ''}",
             f"  {shape}; bf16 {'on' if w.bf16 else 'off'}, gradient checkpointing "
             f"{'on' if w.checkpointing else 'off'}{', padded micro-batches (attention mask)' if w.padded else ''}; "
             f"device {w.device}"]
    for note in w.notes:
        lines.append(f"  note: {note}")
    for k, p in zip(letters, plans):
        src = f"  ({p.setup.source})" if p.setup.source not in ("", "none", "environment") else ""
        lines.append(f"  {k}: {p.setup.name} — {p.setup.describe()}{src}")
        lines.append("     " + "; ".join(f"{what.replace('kv', 'KV cache')}: {dt}" for what, dt in p.dtypes.items()))
    keys: list[str] = []
    for p in plans:
        keys += [t.key for t in p.terms if t.key not in keys]
    keys.sort(key=lambda k: TERM_ORDER.index(k) if k in TERM_ORDER else len(TERM_ORDER))
    head = ["term", "phase"]
    dev = "GPU" if all(p.setup.device == "cuda" for p in plans) else "device"
    for k in letters:
        head += [f"{k} {dev} GB", f"{k} CPU GB"]
    rows: list[list[str]] = []
    for key in keys:
        ts = [next((t for t in p.terms if t.key == key), None) for p in plans]
        t0 = next(t for t in ts if t is not None)
        row = [t0.label, _phase(t0.phases, t0.counted)]
        for t in ts:
            row += [gb(t.gpu) if t else "-", gb(t.cpu) if t and t.cpu else ""]
        rows.append(row)
    foot: list[list[str]] = []
    for ph in PHASES:
        if any(ph in p.phases for p in plans):
            foot.append([f"peak: {PHASE_NAMES[ph]}", ""] + [x for p in plans for x in (gb(p.phases.get(ph)), "")])
    row = ["total vs capacity", ""]
    for p in plans:
        cap = p.setup.cpu_capacity_gb
        row += [f"{p.peak_gb:,.{d}f} / {gb_text(p.setup.capacity_gb)}",
                f"{p.cpu_gb:,.1f} / {gb_text(cap)}" if cap else (f"{p.cpu_gb:,.1f}" if p.cpu_gb else "")]
    foot.append(row)
    foot.append(["fits", ""] + [x for p in plans for x in (
        "yes" if p.fits else f"NO ({'CPU' if p.fits_gpu else PHASE_NAMES[p.peak_phase]})", "")])
    foot.append(["disk per checkpoint", ""] + [x for p in plans for x in (gb(p.disk["checkpoint"]), "")])
    foot.append([f"disk: {w.keep} kept + 1 being written + the model", ""] +
                [x for p in plans for x in (gb(p.disk["total"]), "")])
    widths = [max(len(r[c]) for r in [head] + rows + foot) for c in range(len(head))]

    def fmt(r: list[str]) -> str:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])] + [x.rjust(wd) for x, wd in zip(r[2:], widths[2:])]
        return "| " + " | ".join(cells) + " |"

    table = [fmt(head), "|" + "|".join("-" * (wd + 2) for wd in widths) + "|"]
    table += [fmt(r) for r in rows] + ["|" + "|".join("-" * (wd + 2) for wd in widths) + "|"] + [fmt(r) for r in foot]
    out = lines + [""] + table
    out.append("  forward/backward peak: the fixed state, the activations kept, and the larger of the logits' working "
               "set and one layer's backward (they never coexist); CPU GB: the node's memory, every process")
    return "\n".join(out)


def plans_json(plans: list[Plan]) -> list[dict[str, Any]]:
    return [p.as_dict() for p in plans]
