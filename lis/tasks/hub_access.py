"""Reading datasets and files from the Hugging Face hub at a pinned revision, with one-line errors.

Everything that touches the network goes through :func:`hub_rows` and :func:`hub_file`. When the
hub cannot be reached (no network, ``HF_HUB_OFFLINE=1``) and the pinned revision is not in the
local cache, they raise a one-line :class:`~lis.errors.LisError` that names the dataset and points
at the offline ``samples`` source instead of a traceback.

Both note the commit they actually read (``datasets`` keeps a hub dataset's cache under its commit
sha; ``huggingface_hub`` keeps a file under ``snapshots/<sha>/``): inside :func:`recording_commits`
the caller gets ``{repo: commit}``, which the task manifest records. Offline, ``datasets`` serves
the latest cached copy whatever revision was asked for, so a pinned commit that the cache does not
hold is an error here rather than a silently different task set.

``$LIS_BACKOFF_S`` sets the Hugging Face client's waits between retries (:func:`client_waits`).
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterator

from lis.errors import LisError
from lis.util.retry import backoff_from_env

_SHA = re.compile(r"[0-9a-f]{40}")
_commits: ContextVar[dict[str, str | None] | None] = ContextVar("lis_hub_commits", default=None)

OFFLINE_HINT = ("use --source samples for the offline sample in data/samples, or fetch the dataset into the "
                "HF cache (HF_HOME) on a machine with network and copy the cache here")


def _reason(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    first = " ".join(first.split())
    return f"{type(exc).__name__}: {first[:200]}" if first else type(exc).__name__


def _hub_errors() -> tuple[type[BaseException], ...]:
    errs: list[type[BaseException]] = [OSError, ValueError]
    try:
        from huggingface_hub.errors import HfHubHTTPError

        errs.append(HfHubHTTPError)
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency of datasets
        pass
    return tuple(errs)


_CLIENT_WAITS: dict[str, tuple[float, float]] = {}  # the client's own (first wait, longest wait) per function


def client_waits() -> None:
    """Set the Hugging Face client's waits between retries (``base_wait_time``, ``max_wait_time`` of
    ``http_backoff`` and ``http_stream_backoff``, which every request of the client goes through) from
    ``$LIS_BACKOFF_S``: the first wait that many seconds, the longest 8 times it (the client's own ratio,
    1 s to 8 s); unset, the client's own. Raises LisError for a bad value."""
    import inspect

    from huggingface_hub import utils as hf_utils

    base = backoff_from_env()
    # (http_stream_backoff is a context manager: its function is the one it wraps)
    for fn in map(inspect.unwrap, (hf_utils.http_backoff, hf_utils.http_stream_backoff)):
        defaults = fn.__kwdefaults__ or {}
        if "base_wait_time" not in defaults or "max_wait_time" not in defaults:  # pragma: no cover - another client
            continue
        first, longest = _CLIENT_WAITS.setdefault(fn.__qualname__,
                                                  (defaults["base_wait_time"], defaults["max_wait_time"]))
        if base is not None:
            first, longest = base, base * (longest / first if first else 1)
        defaults["base_wait_time"], defaults["max_wait_time"] = first, longest


@contextmanager
def recording_commits() -> Iterator[dict[str, str | None]]:
    """``{repo: commit sha}`` of every hub read inside the block (None where the commit is unknown).

    Nested blocks share the outer dict. Raises LisError when one repo is read at two commits (an
    offline cache that holds its configs from different commits).
    """
    seen = _commits.get()
    if seen is not None:
        yield seen
        return
    seen = {}
    token = _commits.set(seen)
    try:
        yield seen
    finally:
        _commits.reset(token)


def _note(repo: str, revision: str, commit: str | None) -> None:
    """Record ``commit`` for ``repo``; raise LisError when it contradicts a pinned sha or an earlier read."""
    if commit and re.fullmatch(r"[0-9a-f]{7,40}", revision) and not commit.startswith(revision):
        raise LisError(f"the hub dataset {repo} was read at commit {commit}, not at the pinned revision {revision} "
                       f"(an offline cache serves the copy it holds)",
                       "fetch the pinned commit with network access (HF_HUB_OFFLINE unset), or pin the cached commit")
    seen = _commits.get()
    if seen is None:
        return
    if seen.get(repo) and commit and seen[repo] != commit:
        raise LisError(f"the hub dataset {repo} was read at two commits ({seen[repo]} and {commit})",
                       "the local cache mixes revisions: load it with network access, or pin one revision")
    seen[repo] = seen.get(repo) or commit


def dataset_commit(ds: Any) -> str | None:
    """The commit a loaded hub dataset came from: ``datasets`` caches it under ``.../<version>/<commit sha>/``."""
    files = getattr(ds, "cache_files", None) or []
    name = Path(files[0]["filename"]).parent.name if files else ""
    return name if _SHA.fullmatch(name) else None


def file_commit(path: Path) -> str | None:
    """The commit of a file fetched by ``hf_hub_download`` (``.../snapshots/<commit sha>/<filename>``)."""
    for parent in Path(path).parents:
        if parent.parent.name == "snapshots":
            return parent.name if _SHA.fullmatch(parent.name) else None
    return None


def check_revision(dataset: str, revision: str | None) -> str:
    """The revision to pin; raises LisError when none is given (HEAD would make runs unreproducible)."""
    if not revision or not str(revision).strip():
        raise LisError(f"no revision given for the hub dataset {dataset}",
                       "pass --revision <commit sha> (or 'main' knowingly) so the task set is reproducible")
    return str(revision).strip()


def hub_rows(dataset: str, config: str | None, split: str, revision: str | None,
             data_files: Any = None) -> list[dict[str, Any]]:
    """Rows of ``datasets.load_dataset(dataset, config, split=split, revision=revision)`` as dicts.

    Raises LisError (one line, naming the dataset and revision) when the hub cannot be reached and
    the revision is not cached, when the dataset, config, split or revision does not exist, or
    when the copy read is not the pinned commit.
    """
    revision = check_revision(dataset, revision)
    name = f"{dataset}" + (f" (config {config})" if config else "")
    client_waits()
    try:
        from datasets import load_dataset

        kwargs: dict[str, Any] = {"split": split, "revision": revision}
        if data_files is not None:
            kwargs["data_files"] = data_files
        ds = load_dataset(dataset, config, **kwargs)
    except _hub_errors() as e:
        raise LisError(f"cannot load the hub dataset {name} at revision {revision}: {_reason(e)}",
                       OFFLINE_HINT) from None
    _note(dataset, revision, dataset_commit(ds))
    return [dict(r) for r in ds]


def hub_file(repo: str, filename: str, revision: str | None) -> Path:
    """Local path of one file of the hub dataset repo ``repo`` at ``revision`` (downloaded or cached).

    Raises LisError (one line) when the hub cannot be reached and the file is not cached, when
    the repo, file or revision does not exist, or when the copy read is not the pinned commit.
    """
    revision = check_revision(repo, revision)
    client_waits()
    try:
        from huggingface_hub import hf_hub_download

        path = Path(hf_hub_download(repo, filename, repo_type="dataset", revision=revision))
    except _hub_errors() as e:
        raise LisError(f"cannot fetch {filename} of the hub dataset {repo} at revision {revision}: {_reason(e)}",
                       OFFLINE_HINT) from None
    _note(repo, revision, file_commit(path))
    return path
