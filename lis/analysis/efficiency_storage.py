"""Table 12 (storage) and the per-sandbox memory figures: the paper's quoted numbers beside ours.

    table = storage_report(quoted_path, image_manifest_path, memory_path)

Quoted: data/reference/storage_quoted.yaml. Measured: the image stage's manifest and
``lis bench memory``. The paper's GB and MB are read as 10^9 and 10^6 bytes; our memory is measured
in MiB and converted for the comparison (docs/efficiency.md).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from lis.analysis.efficiency_stats import rounded
from lis.errors import LisError

SCHEMA = "lis.efficiency.storage/1"
MIB_TO_MB = 2 ** 20 / 1e6


def _read(path: Path, what: str, hint: str) -> tuple[Any, dict[str, Any]]:
    path = Path(path)
    if not path.is_file():
        raise LisError(f"{what} {path} does not exist" if not path.exists() else f"{what} {path} is not a file", hint)
    try:
        data = path.read_bytes()
        obj = yaml.safe_load(data) if path.suffix in (".yaml", ".yml") else json.loads(data)
    except (OSError, ValueError, yaml.YAMLError) as e:
        raise LisError(f"cannot read {what} {path}: {type(e).__name__}: {' '.join(str(e).split())[:160]}", hint) from None
    if not isinstance(obj, dict):
        raise LisError(f"{what} {path} is not a mapping", hint)
    return obj, {"path": path.as_posix(), "sha256": hashlib.sha256(data).hexdigest()}


def _need(obj: dict, keys: tuple[str, ...], what: str, path: Path, hint: str) -> Any:
    cur: Any = obj
    for k in keys:
        if not isinstance(cur, dict) or k not in cur:
            raise LisError(f"{what} {path} has no {'.'.join(keys)}", hint)
        cur = cur[k]
    return cur


def _measured(stat: dict | None, paper_mb: float | None) -> dict[str, Any]:
    if not stat:
        return {"mib": None, "mb": None, "ci95_mb": None, "n": 0, "paper_mb": paper_mb, "ratio_to_paper": None}
    mb = stat["mean"] * MIB_TO_MB
    ci = [v * MIB_TO_MB for v in stat["ci95"]] if stat.get("ci95") else None
    return {"mib": stat["mean"], "mb": rounded(mb, 1), "ci95_mb": rounded(ci, 1), "n": stat["n"],
            "paper_mb": paper_mb, "ratio_to_paper": rounded(mb / paper_mb, 3) if paper_mb else None}


def storage_report(quoted_path: Path, image_manifest_path: Path, memory_path: Path) -> dict[str, Any]:
    """Table 12 records and the memory comparison. Raises LisError naming a missing or unreadable input."""
    quoted, q_in = _read(quoted_path, "quoted storage numbers", "restore data/reference/storage_quoted.yaml from git")
    manifest, m_in = _read(image_manifest_path, "image manifest", "run the image stage first (lis image build)")
    memory, mem_in = _read(memory_path, "sandbox memory measurement", "run `lis bench memory --out ...` first")
    hint_q = "restore data/reference/storage_quoted.yaml from git"
    images = _need(quoted, ("images",), "quoted storage numbers", quoted_path, hint_q)
    qmem = _need(quoted, ("memory",), "quoted storage numbers", quoted_path, hint_q)
    facts = _need(manifest, ("image",), "image manifest", image_manifest_path, "run the image stage (lis image build)")
    size = facts.get("size_bytes")
    if not size:
        raise LisError(f"image manifest {image_manifest_path} has no image.size_bytes", "run the image stage again")
    for key in ("idle_mib", "busy_peak_mib"):
        _need(memory, (key,), "sandbox memory measurement", memory_path, "run `lis bench memory` again")

    rows = [{"name": i["name"], "kind": i["kind"], "size_gb": i["size_gb"], "origin": "quoted",
             "sources": i.get("sources", [])} for i in images]
    ours_gb = size / 1e9
    paper_shared = next((i["size_gb"] for i in images if i.get("kind") == "shared image"), None)
    rows.append({"name": "lis (this reproduction)", "kind": "shared image", "size_gb": rounded(ours_gb, 3),
                 "origin": "measured", "n": 1, "tag": facts.get("tag") or facts.get("rootfs"),
                 "build_path": facts.get("build_path"),
                 "how": "the engine's image size (uncompressed, all layers); a root filesystem's file sizes when "
                        "built for bubblewrap only",
                 "ratio_to_paper_image": rounded(ours_gb / paper_shared, 3) if paper_shared else None})
    idle = _measured(memory.get("idle_mib"), qmem.get("idle_mb"))
    peak = _measured(memory.get("busy_peak_mib"), qmem.get("peak_mb"))
    hwm = _measured(memory.get("busy_cgroup_peak_mib"), qmem.get("peak_mb"))
    concurrency = []
    for c in quoted.get("concurrency", []):
        ours_total = peak["mb"] * c["sandboxes"] / 1000 if peak["mb"] is not None else None
        node_gb = c["node_memory_tb"] * 1000
        concurrency.append({"sandboxes": c["sandboxes"], "node_memory_tb": c["node_memory_tb"],
                            "paper_total_gb": c["total_gb"], "paper_share": c["share"],
                            "ours_total_gb": rounded(ours_total, 1),
                            "ours_share": rounded(ours_total / node_gb, 4) if ours_total is not None else None,
                            "sources": c.get("sources", [])})
    return {
        "schema": SCHEMA,
        "definitions": "docs/efficiency.md#storage-table-12",
        "quoted_confidence": quoted.get("confidence"),
        "paper": quoted.get("paper"),
        "sources": quoted.get("sources", {}),
        "images": rows,
        "memory": {
            "workload": (memory.get("workload") or {}).get("description"),
            "backend": memory.get("backend"), "source": memory.get("source"),
            "memory_limit_mib": memory.get("memory_limit_mib"),
            "idle": idle, "busy_peak": peak, "busy_cgroup_peak": hwm,
            "quoted_sources": qmem.get("sources", []),
        },
        "concurrency": concurrency,
        "inputs": [q_in, m_in, mem_in],
    }
