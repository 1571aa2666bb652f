"""Artifact manifests: what produced a stage output (commit, params, versions, time)."""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.records import ImageManifestRecord, ManifestRecord, ModelManifestRecord, check
from lis.util.jsonl import finite, no_constant
from lis.util.text import safe_value

PACKAGES = ("lis", "torch", "transformers", "trl", "docker", "snakemake", "dvc", "openai", "math-verify")


def git_state(root: Path, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """``commit`` (full) and ``dirty`` (tracked files differ from it, those under ``exclude`` aside) of the
    checkout at ``root``; None where it is not one."""
    def git(*args: str) -> str | None:
        r = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
        return r.stdout.strip() if r.returncode == 0 else None
    try:
        commit = git("rev-parse", "--verify", "-q", "HEAD") or None
        status = git("status", "--porcelain", "--untracked-files=no",
                     *(("--", ".", *(f":(exclude){e}" for e in exclude)) if exclude else ()))
        dirty = None if status is None else bool(status)
    except (OSError, subprocess.SubprocessError):
        commit, dirty = None, None
    return {"commit": commit, "dirty": dirty}


def package_versions(names=PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


def stage_manifest(stage: str, root: Path, profile: str, params_hash: str, wall_s: float, **extra: Any) -> dict:
    return {
        "stage": stage,
        "profile": profile,
        "params_hash": params_hash,
        "git": git_state(root),
        "python": platform.python_version(),
        "packages": package_versions(),
        "wall_s": round(wall_s, 3),
        "finished_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        **extra,
    }


def write_json(path: str | Path, obj: Any) -> Path:
    """Write JSON atomically (temporary file + rename), creating the parent folder; strictly: a
    number that is not finite is written as null (:func:`finite`)."""
    path = Path(path)
    if path.is_dir():
        raise LisError(f"{path} is a folder, not a file", f"give the file to write, e.g. {path / ('out' + (path.suffix or '.json'))}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    obj = safe_value(finite(obj))[0]  # strict JSON, always encodable (a lone surrogate from a record: U+FFFD)
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n",
                   encoding="utf-8")
    tmp.replace(path)
    return path


def read_json(path: str | Path, expect: type | None = None) -> Any:
    """The JSON in ``path``; LisError (one line naming the file) when it is missing, not a file, not
    UTF-8, not JSON, or (``expect``) not of the expected type, e.g. ``dict`` for a manifest."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LisError(f"{path} does not exist", "run the stage that produces it (snakemake --cores all paper)") from None
    except IsADirectoryError:
        raise LisError(f"{path} is a folder, not a JSON file", "give the JSON file") from None
    except UnicodeDecodeError as e:
        raise LisError(f"{path} is not UTF-8 text (byte {e.start}), so not JSON", "rerun the stage that produces it") from None
    except OSError as e:
        raise LisError(f"cannot read {path} ({e.strerror or e})", "give a readable JSON file") from None
    obj = parse_json(text, str(path))
    if expect is not None and not isinstance(obj, expect):
        names = {dict: "an object", list: "a list"}
        raise LisError(f"{path} holds {names.get(type(obj), type(obj).__name__)}, not {names.get(expect, expect.__name__)}",
                       "rerun the stage that produces it")
    return obj


def read_manifest(path: str | Path, record: type | None = None) -> dict[str, Any]:
    """A manifest.json, read strictly (:func:`read_json`) and validated by ``record`` (a model of
    :mod:`lis.records`; the stage manifest by default): the object as written, every key kept.
    Raises LisError (RecordError naming the field) when it is not one."""
    obj = read_json(path, expect=dict)
    check(record or ManifestRecord, obj, where=str(path))
    return obj


def read_image_manifest(path: str | Path) -> dict[str, Any]:
    """data/image/manifest.json, validated (:class:`lis.records.ImageManifestRecord`)."""
    return read_manifest(path, ImageManifestRecord)


def read_model_manifest(folder: str | Path) -> dict[str, Any]:
    """A model folder's manifest.json, validated (:class:`lis.records.ModelManifestRecord`); ``{}``
    when the folder has none (a model from elsewhere)."""
    path = Path(folder) / "manifest.json"
    return read_manifest(path, ModelManifestRecord) if path.is_file() else {}


def parse_json(text: str, where: str, hint: str = "rerun the stage that produces it") -> Any:
    """Strict JSON (NaN and Infinity are not numbers) from ``text``; anything else, nesting too deep
    included, is one LisError naming ``where``."""
    try:
        return json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as e:
        raise LisError(f"{where} is not valid JSON ({e.msg} at line {e.lineno})", hint) from None
    except RecursionError:
        raise LisError(f"{where} is not valid JSON (nested too deep)", hint) from None
    except ValueError as e:  # NaN / Infinity
        raise LisError(f"{where} is not valid JSON ({e})", hint) from None
