"""lis.util.files: a file's SHA-256 and a finished folder moved into place."""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from lis.util.files import replace_dir, sha256_file


def test_sha256_file_is_the_hash_of_the_bytes_across_blocks(tmp_path):
    data = bytes(range(256)) * 9000  # over two 1 MiB blocks
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f") == sha256_file(str(tmp_path / "f")) == hashlib.sha256(data).hexdigest()
    (tmp_path / "empty").write_bytes(b"")
    assert sha256_file(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()


def test_replace_dir_swaps_the_old_folder_for_the_new_one(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "old.txt").write_text("old")
    tmp = Path(tempfile.mkdtemp(prefix=".model.", dir=tmp_path))  # 0700, as mkdtemp makes it
    (tmp / "new.txt").write_text("new")
    replace_dir(tmp, out)
    assert not tmp.exists() and sorted(p.name for p in out.iterdir()) == ["new.txt"]
    assert out.stat().st_mode & 0o777 == 0o755
    fresh = Path(tempfile.mkdtemp(dir=tmp_path))
    replace_dir(fresh, tmp_path / "absent")  # no folder there yet
    assert (tmp_path / "absent").is_dir()
