"""Every report figure looked at the way a reader does: rendered, then no text box (tick labels, axis
labels, titles, suptitle, annotations, cell labels, legends) overlaps another, none leaves the canvas,
and no legend lies over another panel's plotting area.

Boxes are matplotlib's own: each Text artist that is actually drawn (visible, non-empty; ticks
outside the view are not drawn and not counted) measured with ``get_window_extent(renderer)``
after ``fig.canvas.draw()``; a legend is one box (``Legend.get_window_extent``) holding its own
texts. Two boxes overlap when their intersection has an area above EPS px² (touching is not
overlapping). A rotated text counts by its axis-aligned box, so the figures keep labels horizontal.

The figures are drawn by the report's own functions on the inputs of the report tests' projects
(tests/report/build_inputs.py: the default matrix, an external model only, the trained pair), on
realistic long labels (every domain, long model and run names, large n), on sparse data and as
"waits for" notes. Each is checked as it is saved (figures._save wrapped), and the saved PNG must
have the size of the canvas that was checked (a tight bounding box at save time would hide a cut).
"""
from __future__ import annotations

from itertools import combinations

import pytest

from lis.report import figures as F
from lis.report.context import DOMAIN_TITLES
from tests.report.build_inputs import build_all, make_project, params_of

EPS = 1.0   # px² at the figure's dpi


def _drawn_texts(fig):
    """(renderer, texts drawn by a full draw of the figure): Text.draw is watched while the canvas draws."""
    from matplotlib.text import Text

    drawn, orig = [], Text.draw

    def watch(self, renderer):
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        return orig(self, renderer)

    Text.draw = watch
    try:
        fig.canvas.draw()
    finally:
        Text.draw = orig
    return fig.canvas.get_renderer(), list(dict.fromkeys(drawn))


def _name(t) -> str:
    return repr(t.get_text()) if hasattr(t, "get_text") else "legend[" + ", ".join(
        repr(x.get_text()) for x in t.get_texts()) + "]"


def layout_problems(fig) -> list[str]:
    """What a reader would see wrong: overlapping text boxes, text off the canvas, a legend over
    another panel. Empty when the figure is clean."""
    from matplotlib.legend import Legend

    renderer, texts = _drawn_texts(fig)
    legends = [lg for lg in fig.findobj(Legend) if lg.get_visible()]
    own = {id(t) for lg in legends for t in lg.findobj(lambda a: hasattr(a, "get_text"))}
    items = [(t, t.get_window_extent(renderer)) for t in texts if id(t) not in own]
    items += [(lg, lg.get_window_extent(renderer)) for lg in legends]
    canvas = fig.bbox
    out = []
    for a, box in items:
        if box.x0 < canvas.x0 - 0.5 or box.y0 < canvas.y0 - 0.5 or box.x1 > canvas.x1 + 0.5 or box.y1 > canvas.y1 + 0.5:
            out.append(f"{_name(a)} leaves the canvas: {tuple(round(v) for v in box.extents)} "
                       f"outside {tuple(round(v) for v in canvas.extents)}")
    for (a, ba), (b, bb) in combinations(items, 2):
        w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
        h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
        if w > 0 and h > 0 and w * h > EPS:
            out.append(f"{_name(a)} overlaps {_name(b)} ({w:.0f}×{h:.0f} px)")
    for lg in legends:
        lb = lg.get_window_extent(renderer)
        for ax in fig.axes:
            if ax is lg.axes or not ax.get_visible() or not ax.axison:
                continue
            ab = ax.get_window_extent(renderer)
            w, h = min(lb.x1, ab.x1) - max(lb.x0, ab.x0), min(lb.y1, ab.y1) - max(lb.y0, ab.y0)
            if w > 0 and h > 0 and w * h > EPS:
                out.append(f"{_name(lg)} lies over another panel ({w:.0f}×{h:.0f} px)")
    return out


@pytest.fixture
def drawn(monkeypatch):
    """Each figure the report saves, (id, matplotlib figure, problems), checked just before saving."""
    seen: list[tuple[str, object, list[str]]] = []
    save = F._save

    def check_then_save(fig, fg, out):
        problems = layout_problems(fig)
        size = tuple(round(v) for v in fig.bbox.size)
        save(fig, fg, out)
        head = fg.files[0].read_bytes()[16:24]   # the PNG's IHDR: the saved canvas must be the checked one
        saved = (int.from_bytes(head[:4], "big"), int.from_bytes(head[4:], "big"))
        if saved != size:
            problems.append(f"the PNG is {saved[0]}×{saved[1]} px, not the checked canvas {size[0]}×{size[1]} px")
        seen.append((fg.id, fig, problems))

    monkeypatch.setattr(F, "_save", check_then_save)
    return seen


def _assert_clean(seen) -> None:
    bad = {fid: p for fid, _, p in seen if p}
    assert not bad, "\n".join(f"{fid}: {x}" for fid, p in bad.items() for x in p)


EXTERNAL_JOBS = {"models": ["ext"], "external": ["ext"], "domains": ["math", "long_context"],
                 "long_context_ablation": ["ext"], "grpo_data": []}
EXT_ENTRY = {"backend": "local", "path": "data/models/ext", "sampling": {"temperature": 0.7, "top_p": 0.8, "top_k": 20,
                                                                       "max_tokens": 192}}
TRAINED_JOBS = {"models": ["grpo-files", "llm-rl"], "external": [], "domains": ["math", "long_context"],
                "long_context_ablation": ["grpo-files"], "grpo_data": ["files"]}


@pytest.mark.parametrize("matrix", ["default", "external", "trained"])
def test_report_figures_have_no_overlapping_or_cut_text(matrix, tmp_path, drawn):
    """The report's figures on the report tests' inputs, through the report itself."""
    from lis.report.build import build_report

    if matrix == "default":
        root = make_project(tmp_path, report={"min_n": 4, "trajectories": False})
    elif matrix == "external":
        root = make_project(tmp_path, jobs=EXTERNAL_JOBS, rl_pairs=[], models={"ext": EXT_ENTRY},
                            report={"trajectories": False})
    else:
        root = make_project(tmp_path, jobs=TRAINED_JOBS, report={"trajectories": False},
                            rl_pairs=[{"before": "llm-rl", "after": "grpo-files", "label": "GRPO vs LLM-RL"}])
    build_all(root)
    build_report(root, params_of(root), "smoke", root / "paper_figures")
    assert sorted(fid for fid, _, _ in drawn) == ["figure1_grid", "figure2_capabilities", "training_curves"]
    _assert_clean(drawn)


MODELS = ["Qwen3-Coder-30B-A3B-Instruct", "DeepSeek-V3.2-Exp", "qwen3-4b-instruct-2507-grpo-files", "llm-rl", "sft"]
LONG_TITLES = {**DOMAIN_TITLES, "instruct_pretrain": "Held-out context tasks (instruction pre-training)"}


def _grid():
    out = []
    for i, m in enumerate(MODELS):
        for j, d in enumerate(LONG_TITLES):
            if (i + j) % 5 == 4:
                continue   # a missing cell draws "–"
            acc = ((7 * i + 3 * j) % 11) / 10
            out.append({"model": m, "domain": d, "sandbox_accuracy": acc, "delta": ((i + 2 * j) % 7 - 3) / 20,
                        "sandbox_n": 3 if j == 2 else 256})
    return out


def test_figures_with_long_labels(tmp_path, drawn):
    """Every domain, long model and run names, large n, wide values: still nothing overlaps or is cut."""
    doms = list(LONG_TITLES)
    F.figure1(_grid(), MODELS, doms, LONG_TITLES, tmp_path, [], 4)
    rows = [{"domain": d, "external": 0.02 * k, "file": 0.95 - 0.1 * k, "compute": 0.5 if k % 2 else 0.0,
             "avg_turns": 4.0 + 13.7 * (k == 3), "episodes": 12 * 10 ** (k % 4)} for k, d in enumerate(doms)]
    F.figure2(rows, LONG_TITLES, tmp_path, [])
    runs = {name: [{"step": str(s), "reward_mean": str(0.1 + 0.8 * s / 40 * (k + 1) / 4),
                    "tool_calls_mean": str(3 + k + s % 5), "turns_mean": str(5 + s % 7 + k)} for s in range(n)]
            for k, (name, n) in enumerate([("grpo-files", 40), ("grpo-instruct_pretrain", 40),
                                           ("replicates/r2/grpo-files", 12), ("llm-rl", 5)])}
    F.training_curves(runs, tmp_path, [])
    assert [fid for fid, _, _ in drawn] == ["figure1_grid", "figure2_capabilities", "training_curves"]
    _assert_clean(drawn)


def test_sparse_figures(tmp_path, drawn):
    """One model without any score, one domain without turns, one run of one step."""
    F.figure1([{"model": "m", "domain": "math", "sandbox_accuracy": None, "delta": None, "sandbox_n": None}],
              ["a-model-name-of-forty-characters-or-so-x"], ["math"], DOMAIN_TITLES, tmp_path, [], 30)
    F.figure2([{"domain": "unknown_domain", "external": None, "file": None, "compute": None, "avg_turns": None,
                "episodes": 0}], DOMAIN_TITLES, tmp_path, [])
    F.training_curves({"grpo-files": [{"step": "1", "reward_mean": "0.5", "tool_calls_mean": "", "turns_mean": "3"}]},
                      tmp_path, [])
    assert len(drawn) == 3
    _assert_clean(drawn)


def test_waiting_figures(tmp_path, drawn):
    """A figure without data says what it waits for, in full, on the canvas."""
    F.figure1([], [], [], DOMAIN_TITLES, tmp_path, [], 4)
    F.figure2([], DOMAIN_TITLES, tmp_path, [])
    F.training_curves({}, tmp_path, [], waiting="waits for training: jobs.grpo_data is empty and llm-rl is not "
                                                 "evaluated (stages grpo / llm_rl)")
    assert len(drawn) == 3
    _assert_clean(drawn)


def test_the_check_sees_an_overlap_and_a_cut(tmp_path):
    """The check itself: a legend over a label, two labels on one spot and a title off the canvas are found."""
    plt = F._plt()
    fig, (a, b) = plt.subplots(1, 2, figsize=(4, 2))
    a.plot([0, 1], [0, 1], label="a long legend entry")
    a.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    b.set_ylabel("a label under the legend")
    a.text(0.5, 0.5, "here")
    a.text(0.5, 0.5, "here too")
    fig.suptitle("a title far too long for the canvas it is drawn on, cut at both ends", fontsize=14)
    problems = layout_problems(fig)
    plt.close(fig)
    assert any("legend[" in p and "overlaps" in p for p in problems), problems
    assert any("'here'" in p and "'here too'" in p for p in problems), problems
    assert any("leaves the canvas" in p for p in problems), problems
    assert any("lies over another panel" in p for p in problems), problems


def test_figure1_says_plainly_when_no_cell_that_is_a_result_scores_above_zero(tmp_path):
    """The embedded default's grid: zeros, and cells with too few items (†) that are not results. The
    figure's note says so; a grid with one real score above 0 has no such note."""
    def cell(m, d, acc, n):
        return {"model": m, "domain": d, "sandbox_accuracy": acc, "delta": 0.0, "sandbox_n": n}

    zeros = [cell("base", "math", 0.0, 64), cell("sft", "math", 0.0, 64), cell("sft", "biomed", 0.5, 2)]
    fg = F.figure1(zeros, ["base", "sft"], ["math", "biomed"], DOMAIN_TITLES, tmp_path, [], 30)
    assert any("No model scores above 0 on a cell with at least 30 items" in n for n in fg.notes), fg.notes
    scored = zeros + [cell("base", "biomed", 0.25, 64)]
    fg = F.figure1(scored, ["base", "sft"], ["math", "biomed"], DOMAIN_TITLES, tmp_path, [], 30)
    assert not any("No model scores" in n for n in fg.notes), fg.notes
