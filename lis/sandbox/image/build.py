"""``lis image build``: pick the build path, build only when the content-hash tag is missing, and
describe the image in a manifest (the first pipeline stage's output)."""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from lis.errors import EngineError, ImageBuildError
from lis.paths import cache_dir, rootfs_dir
from lis.sandbox.bwrap_backend import bwrap_available
from lis.sandbox.engine import HINT, connect
from lis.sandbox.labels import helper_labels
from lis.sandbox.image.bootstrap import build_rootfs, check_can_bootstrap, import_rootfs
from lis.sandbox.image.dockerfile import build_dockerfile, registry_answers
from lis.sandbox.image.spec import ImageSpec

log = logging.getLogger(__name__)

# Printed by a throw-away container: what the agent will find inside.
PROBE = r"""
import json, os, platform, pwd, shutil, subprocess, sys
from importlib import metadata
def ver(cmd):
    try: return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except Exception: return None
mods = ["numpy", "scipy", "sympy", "pandas", "matplotlib", "mpmath", "chardet"]
libs = {}
for m in mods:
    try: libs[m] = metadata.version(m)
    except metadata.PackageNotFoundError: libs[m] = None
try:
    debs = subprocess.run(["dpkg-query", "-W", "-f", "${Package}=${Version}\n"], capture_output=True, text=True).stdout.split()
except FileNotFoundError:
    debs = []
print(json.dumps({
  "python": platform.python_version(), "python_path": sys.executable, "libraries": libs,
  "user": pwd.getpwuid(os.getuid()).pw_name, "uid": os.getuid(), "home": os.path.expanduser("~"), "cwd": os.getcwd(),
  "tools": {t: shutil.which(t) is not None for t in ["bash", "git", "curl", "wget", "pip", "python", "bc", "unzip"]},
  "git": ver(["git", "--version"]), "os": ver(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
  "debian_packages": len(debs), "debian_package_versions": dict(d.split("=", 1) for d in debs),
}))
"""


def resolve_build_path(section: dict, client) -> str:
    """``auto`` → dockerfile when the base image is local or its registry answers, else bootstrap
    (also when there is no Docker engine at all: ``client`` is None)."""
    path = section["build"]
    if path != "auto":
        return path
    if client is not None and registry_answers(client, section["base_image"]):
        return "dockerfile"
    try:
        check_can_bootstrap()
    except ImageBuildError as e:
        raise ImageBuildError(f"cannot build the sandbox image: no registry answers for {section['base_image']} "
                              f"and the offline path is unavailable ({e})", e.hint) from None
    return "bootstrap"


def expected_tag(section: dict, root: Path, client=None) -> str:
    client = client or connect()
    return ImageSpec.from_params(section, root, resolve_build_path(section, client)).tag


def _engine_or_none():
    try:
        return connect(timeout=10)
    except EngineError:
        return None


def inspect_rootfs(rootfs: Path, section: dict, timeout: float = 120) -> dict:
    """The PROBE run through bubblewrap over a root filesystem (no Docker needed)."""
    import subprocess

    bwrap = bwrap_available()
    if not bwrap:
        raise ImageBuildError("bubblewrap (bwrap) is not installed: cannot check the root filesystem",
                              "apt-get install bubblewrap")
    home = f"/home/{section['user']}"
    argv = [bwrap, "--ro-bind", str(rootfs), "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--tmpfs", "/testbed", "--tmpfs", home, "--unshare-all", "--uid", str(section["uid"]), "--gid",
            str(section["uid"]), "--die-with-parent", "--chdir", "/testbed", "--clearenv", "--setenv", "HOME", home,
            "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--", "python3", "-c", PROBE]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise ImageBuildError(f"the root filesystem {rootfs} does not run python3 ({r.stderr.strip()[-300:]})",
                              "rebuild it with `lis image build --force`")
    return json.loads(r.stdout)


def ensure_rootfs_only(section: dict, root: Path, force: bool = False, inspect: bool = True) -> dict:
    """No Docker engine: bootstrap only the root filesystem the bubblewrap backend runs."""
    if section["build"] == "dockerfile":
        raise EngineError("image.build is dockerfile but no Docker engine answers", HINT)
    spec = ImageSpec.from_params(section, root, "bootstrap")
    rootfs = rootfs_dir(spec.content_hash)
    t0 = time.monotonic()
    action = "reused"
    if force or not (rootfs / "usr/bin/python3").exists():
        log.info("no Docker engine: bootstrapping only the root filesystem %s (for the bubblewrap backend)", rootfs)
        build_rootfs(spec, rootfs, time.monotonic() + section["timeout_s"])
        action = "built"
    else:
        log.info("no Docker engine: root filesystem %s is up to date", rootfs)
    size = sum(p.lstat().st_size for p in rootfs.rglob("*") if not p.is_symlink() and p.is_file())
    return {"tag": None, "id": None, "size_bytes": size, "size_mb": round(size / 1e6, 1), "build_path": "bootstrap",
            "content_hash": spec.content_hash, "action": action, "build_s": round(time.monotonic() - t0, 1),
            "rootfs": str(rootfs), "base": f"debian {section['suite']} (debootstrap, root filesystem only: no Docker)",
            "inside": inspect_rootfs(rootfs, section) if inspect else None}


def _image_exists(client, tag: str):
    try:
        return client.images.get(tag)
    except Exception:
        return None


def inspect_image(client, tag: str, timeout: float = 120) -> dict:
    """Run the probe in a throw-away, labelled, network-less container; always remove it."""
    container = client.containers.create(tag, ["python3", "-c", PROBE], network_mode="none",
                                         labels=helper_labels("image-inspect", timeout + 60))
    try:
        container.start()
        status = container.wait(timeout=timeout)
        out = container.logs(stdout=True, stderr=False).decode(errors="replace")
        if status.get("StatusCode") != 0:
            err = container.logs(stdout=False, stderr=True).decode(errors="replace")[-300:]
            raise ImageBuildError(f"the image {tag} does not run python3 ({err.strip()})", "rebuild with --force")
        return json.loads(out)
    finally:
        container.remove(force=True)


def ensure_image(section: dict, root: Path, force: bool = False, inspect: bool = True) -> dict:
    """Build the image unless its tag exists; return facts for the manifest (``inside`` only
    when ``inspect``: it runs a probe container). Without a Docker engine, only the root
    filesystem is built (the bubblewrap backend needs nothing else)."""
    client = _engine_or_none()
    if client is None:
        return ensure_rootfs_only(section, root, force=force, inspect=inspect)
    build_path = resolve_build_path(section, client)
    spec = ImageSpec.from_params(section, root, build_path)
    tag = spec.tag
    deadline = time.monotonic() + section["timeout_s"]
    t0 = time.monotonic()
    image = None if force else _image_exists(client, tag)
    rootfs = rootfs_dir(spec.content_hash) if build_path == "bootstrap" else None
    if image is None:
        # Same content under another name (only image.name changed): re-tag, do not rebuild.
        same = [] if force else client.images.list(filters={"label": f"lis.content={spec.content_hash}"})
        if same:
            repo, t = tag.split(":")
            same[0].tag(repo, t)
            log.info("re-tagged existing image %s as %s", same[0].short_id, tag)
            reused = "retagged"
        else:
            log.info("building %s by the %s path", tag, build_path)
            if build_path == "bootstrap":
                assert rootfs is not None
                build_rootfs(spec, rootfs, deadline)
                log.info("importing the rootfs into Docker as %s", tag)
                import_rootfs(client, spec, rootfs, deadline)
                if not section["keep_rootfs"]:
                    import shutil
                    shutil.rmtree(rootfs, ignore_errors=True)
            else:
                build_dockerfile(client, spec, deadline)
            reused = "built"
        image = client.images.get(tag)
    else:
        log.info("image %s is up to date (%s)", tag, image.short_id)
        reused = "reused"
        if rootfs is not None and section["keep_rootfs"] and not (rootfs / "usr/bin/python3").exists():
            # the cache was cleared (or moved: LIS_CACHE_DIR) while the image stayed: the bubblewrap
            # backend runs this folder, so bootstrap it again from the same spec
            log.info("the root filesystem %s is missing: bootstrapping it again (for the bubblewrap backend)", rootfs)
            build_rootfs(spec, rootfs, deadline)
    build_s = time.monotonic() - t0
    inside = inspect_image(client, tag) if inspect else None
    return {
        "tag": tag,
        "id": image.id,
        "size_bytes": image.attrs.get("Size"),
        "size_mb": round((image.attrs.get("Size") or 0) / 1e6, 1),
        "build_path": build_path,
        "content_hash": spec.content_hash,
        "action": reused,
        "build_s": round(build_s, 1),
        "rootfs": str(rootfs) if rootfs is not None and rootfs.is_dir() else None,
        "base": section["base_image"] if build_path == "dockerfile" else f"debian {section['suite']} (debootstrap)",
        "inside": inside,
    }


def prune_images(section: dict, root: Path, dry_run: bool = False) -> list[str]:
    """Remove lis-built images (label lis.image=true) and kept root filesystems other than the
    current params' ones."""
    import shutil

    client = connect()
    keep_tag = expected_tag(section, root, client)
    keep_hash = keep_tag.split(":")[1]
    removed = []
    for img in client.images.list(filters={"label": "lis.image=true"}):
        if img.labels.get("lis.content") == keep_hash:
            continue
        names = img.tags or [img.short_id]
        removed += names
        if not dry_run:
            for name in names:
                client.images.remove(name, noprune=False)
    rootfs_root = cache_dir() / "rootfs"
    if rootfs_root.is_dir():
        for d in rootfs_root.iterdir():
            if d.name != keep_hash:
                removed.append(str(d))
                if not dry_run:
                    shutil.rmtree(d, ignore_errors=True)
    return removed
