"""The ``storage`` stage: Table 12 — our image's measured size beside the paper's shared image and the
task-specific image sets it quotes, and our sandbox memory (idle, busy peak) beside the paper's.

The whole stage in one module: its declaration (``STAGE``, from which dvc.yaml is rendered and the
Snakemake rule takes its code and params) and ``run``, which ``lis efficiency storage`` calls.
"""
from __future__ import annotations

import logging
from pathlib import Path

from lis.analysis.efficiency_storage import storage_report
from lis.manifest import write_json
from lis.stages.spec import Stage

STAGE = Stage(
    name="storage",
    cmd=("lis efficiency storage --quoted data/reference/storage_quoted.yaml --image-manifest "
         "data/image/manifest.json --memory data/bench/sandbox_memory.json --out "
         "data/analysis/storage.json --log logs/analysis/storage.log"),
    entry="lis.cli.efficiency_storage:storage",
    deps=("data/reference/storage_quoted.yaml", "data/image/manifest.json", "data/bench/sandbox_memory.json"),
    outs=("data/analysis/storage.json",),
)

log = logging.getLogger("lis.efficiency")


def run(settings: None, inputs: dict[str, Path], outputs: dict[str, Path]) -> dict:
    """Write Table 12's data to ``outputs["out"]`` from ``inputs`` ``quoted`` (the paper's numbers),
    ``image_manifest`` (our image) and ``memory`` (``lis bench memory``); return it. The stage reads
    no params (``settings`` is None)."""
    report = storage_report(inputs["quoted"], inputs["image_manifest"], inputs["memory"])
    write_json(outputs["out"], report)
    log.info("wrote %s", outputs["out"])
    return report
