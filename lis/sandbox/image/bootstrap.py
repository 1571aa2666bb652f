"""Offline image build: bootstrap a Debian root filesystem from the host's apt mirror, add the
pinned Python wheels, run ``setup-rootfs.sh`` in a chroot, and ``docker import`` the result.

Needs root and ``debootstrap`` (Debian package); no registry. The finished root filesystem is
kept (``image.keep_rootfs``) so that the bubblewrap backend runs the very same computer.
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from lis.errors import ImageBuildError
from lis.sandbox.image.apt_sources import host_mirror
from lis.sandbox.image.spec import ImageSpec
from lis.util.proc import run_logged

log = logging.getLogger(__name__)

WHEEL_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
CHROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def check_can_bootstrap() -> None:
    """Raise ImageBuildError saying what is missing for the offline path."""
    if os.geteuid() != 0:
        raise ImageBuildError("the offline image bootstrap needs root (debootstrap and chroot)",
                              "run as root, or set image.build: dockerfile on a machine that reaches a registry")
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("debootstrap is not installed",
                              "apt-get install debootstrap (scripts/setup.sh does it), or set image.build: dockerfile")


def _deadline_left(deadline: float, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise ImageBuildError(f"the image build ran out of time before {what}", "raise image.timeout_s")
    return left


def _python_version(rootfs: Path) -> str:
    versions = sorted(p.name[len("python"):] for p in (rootfs / "usr/bin").glob("python3.[0-9]*")
                      if p.name[len("python"):].replace(".", "").isdigit())
    if not versions:
        raise ImageBuildError(f"no python3 in the bootstrapped rootfs {rootfs}", "check images/sandbox/bootstrap-packages.txt")
    return versions[-1]


def _install_wheels(spec: ImageSpec, rootfs: Path, pyver: str, deadline: float) -> None:
    target = rootfs / f"usr/local/lib/python{pyver}/dist-packages"
    target.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", "--no-warn-conflicts",
           "--disable-pip-version-check", "--target", str(target), "--python-version", pyver,
           "--implementation", "cp", "--only-binary=:all:"]
    for plat in WHEEL_PLATFORMS:
        cmd += ["--platform", plat]
    cmd += spec.requirements()
    run_logged(cmd, timeout=_deadline_left(deadline, "installing wheels"), what="pip install of the sandbox wheels")
    # Console scripts land in target/bin with the host interpreter's shebang: move and re-point them.
    bindir = target / "bin"
    if bindir.is_dir():
        dest = rootfs / "usr/local/bin"
        dest.mkdir(parents=True, exist_ok=True)
        for script in bindir.iterdir():
            data = script.read_bytes()
            if data.startswith(b"#!"):
                data = b"#!/usr/bin/python3" + data[data.index(b"\n"):]
            (dest / script.name).write_bytes(data)
            (dest / script.name).chmod(0o755)
        shutil.rmtree(bindir)
    shutil.rmtree(target / "share", ignore_errors=True)


def build_rootfs(spec: ImageSpec, dest: Path, deadline: float) -> Path:
    """Bootstrap the sandbox root filesystem into ``dest`` (replaced atomically on success). One
    process at a time per folder (a lock beside it): two debootstraps into one partial folder break
    each other ("file already exists"); one that waited finds the folder built and keeps it."""
    from filelock import FileLock

    dest.parent.mkdir(parents=True, exist_ok=True)
    had = (dest / "usr/bin/python3").exists()
    with FileLock(str(dest.parent / f".{dest.name}.lock")):
        if not had and (dest / "usr/bin/python3").exists():
            log.info("root filesystem %s was built by another process meanwhile", dest)
            return dest
        return _build_rootfs(spec, dest, deadline)


def _build_rootfs(spec: ImageSpec, dest: Path, deadline: float) -> Path:
    check_can_bootstrap()
    section = spec.section
    mirror = host_mirror(section["suite"]) if section["mirror"] == "auto" else section["mirror"]
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    packages = spec.bootstrap_packages() + spec.apt_packages()
    log.info("debootstrap %s from %s with %d packages", section["suite"], mirror, len(packages))
    try:
        run_logged(["debootstrap", "--variant=minbase", f"--include={','.join(packages)}",
                    section["suite"], str(partial), mirror],
                   timeout=_deadline_left(deadline, "debootstrap"), what="debootstrap")
        pyver = _python_version(partial)
        log.info("installing %d pinned wheels for Python %s", len(spec.requirements()), pyver)
        _install_wheels(spec, partial, pyver, deadline)
        ca_dir = partial / "usr/local/share/ca-certificates/lis"
        ca_dir.mkdir(parents=True, exist_ok=True)
        for cert in spec.ca_cert_files():
            shutil.copy2(cert, ca_dir / cert.name)
        log.info("running setup-rootfs.sh in a chroot (user %s, uid %s, %d extra CA certificate(s))",
                 section["user"], section["uid"], len(spec.ca_cert_files()))
        shutil.copy2(spec.context / "setup-rootfs.sh", partial / "tmp/lis-setup-rootfs.sh")
        env = {"LIS_USER": section["user"], "LIS_UID": str(section["uid"]),
               "LIS_COMPILE": "1" if section["compile_bytecode"] else "0", "PATH": CHROOT_PATH, "LC_ALL": "C"}
        run_logged(["chroot", str(partial), "/bin/sh", "/tmp/lis-setup-rootfs.sh"], env=env,
                   timeout=_deadline_left(deadline, "setup-rootfs.sh"), what="setup-rootfs.sh in the chroot")
        (partial / "tmp/lis-setup-rootfs.sh").unlink(missing_ok=True)
        for d in ("dev", "proc", "sys", "run"):  # the runtime mounts its own
            p = partial / d
            if p.is_dir():
                for child in p.iterdir():
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child, ignore_errors=True)
                    else:
                        child.unlink(missing_ok=True)
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return dest


def import_rootfs(client, spec: ImageSpec, rootfs: Path, deadline: float) -> str:
    """``docker import`` a root filesystem with the Dockerfile's config; return the image id. The tar
    is in name order with numeric owners and clamped mtimes, so that equal trees give equal layers."""
    repo, tag = spec.tag.split(":")
    changes = spec.image_config() + [f"LABEL lis.image=true lis.build=bootstrap lis.content={spec.content_hash}"]
    tar = subprocess.Popen(["tar", "--sort=name", "--numeric-owner", "--mtime=@0", "--clamp-mtime", "--xattrs",
                            "-C", str(rootfs), "-cf", "-", "."], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert tar.stdout is not None
        out = client.api.import_image_from_stream(tar.stdout, repository=repo, tag=tag, changes=changes)
    finally:
        if tar.poll() is None:
            tar.kill()
        tar.wait()
    if tar.returncode != 0:
        err = tar.stderr.read().decode(errors="replace")[-300:] if tar.stderr else ""
        raise ImageBuildError(f"tar of the rootfs failed ({err.strip()})")
    _deadline_left(deadline, "finishing the import")
    log.debug("docker import: %s", str(out)[-300:])
    return client.images.get(spec.tag).id
