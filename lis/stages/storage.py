"""The ``storage`` stage: Table 12 — our image's measured size beside the paper's shared image and the
task-specific image sets it quotes, and our sandbox memory (idle, busy peak) beside the paper's.
"""
from __future__ import annotations

import logging
from pathlib import Path

from lis.analysis.efficiency_storage import storage_report
from lis.manifest import write_json
from lis.stages.spec import Stage

STAGE = Stage(
    name="storage",
    title="Storage and memory (Table 12)",
    cmd=("lis efficiency storage --quoted data/reference/storage_quoted.yaml --image-manifest "
         "data/image/manifest.json --memory data/bench/sandbox_memory.json --out "
         "data/analysis/storage.json --log logs/analysis/storage.log"),
    deps=("data/reference/storage_quoted.yaml", "data/image/manifest.json", "data/bench/sandbox_memory.json"),
    outs=("data/analysis/storage.json",),
)

log = logging.getLogger("lis.efficiency")
HELP = {
    "quoted": "The paper's quoted storage and memory numbers.",
    "image_manifest": "The image stage's manifest (our image's size).",
    "memory": "`lis bench memory` output (idle and busy memory per sandbox).",
    "out": "JSON to write.",
}


def run(settings: None, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict:
    """Write Table 12's data to ``outputs["out"]`` from ``inputs`` ``quoted`` (the paper's numbers),
    ``image_manifest`` (our image) and ``memory`` (``lis bench memory``); return it. The stage reads
    no params (``settings`` is None)."""
    report = storage_report(inputs["quoted"], inputs["image_manifest"], inputs["memory"])
    write_json(outputs["out"], report)
    log.info("wrote %s", outputs["out"])
    return report


def summary(report: dict) -> str:
    """The table on the terminal: each image's size, then our sandbox memory beside the paper's."""
    lines = [f"{row['name']:<26} {row['kind']:<22} {row['size_gb']:>10} GB  ({row['origin']})" for row in report["images"]]
    for key in ("idle", "busy_peak", "busy_cgroup_peak"):
        m = report["memory"][key]
        lines.append(f"memory {key:<18} ours {m['mb']} MB (n={m['n']}, 95% {m['ci95_mb']})  paper ~{m['paper_mb']} MB")
    return "\n".join(lines)
