"""The ``image`` and ``sandbox`` sections: how the sandbox image is built and how sandboxes run."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from lis.config.base import NonNegFloat, NonNegInt, PosFloat, Section


class ImageSection(Section):
    build: Literal["auto", "dockerfile", "bootstrap"]
    """auto: the Dockerfile where a registry answers, else a Debian bootstrap"""
    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._/-]*$")]
    """image tag name (the content hash is the tag)"""
    context: str
    """build context folder (the Dockerfile and what it copies)"""
    base_image: str
    suite: str
    """Debian suite of the bootstrap"""
    mirror: str
    user: Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_-]*$")]
    """the non-root user the agent runs as"""
    uid: Annotated[int, Field(ge=1, le=65533)]
    ca_certs: Literal["host", "none"]
    compile_bytecode: bool
    keep_rootfs: bool
    """keep the bootstrap's root filesystem (the bwrap backend runs it)"""
    timeout_s: Annotated[int, Field(ge=60)]


class Admission(Section):
    """Host-wide start limits, shared by every lis process (lis/sandbox/admission.py)."""

    max_starting: NonNegInt = 16
    """sandboxes starting at once (0: no limit)"""
    max_starts_per_s: NonNegFloat = 20.0
    """starts per second (0: no limit)"""


class Pool(Section):
    max_concurrent: Annotated[int, Field(ge=1)]
    warm: NonNegInt
    """sandboxes kept started ahead of need"""


class Limits(Section):
    """Resource limits of one sandbox. The tmpfs quotas are memory: with reserve_mb they must fit
    memory_mb (lis.util.quota's rule, checked when params load)."""

    memory_mb: Annotated[int, Field(ge=64)] = 2048
    cpus: PosFloat = 1.0
    pids: Annotated[int, Field(ge=16)] = 256
    testbed_mb: Annotated[int, Field(ge=1)] = 768
    """quota of /testbed (documents, the agent's files, answer.txt)"""
    tmp_mb: Annotated[int, Field(ge=1)] = 256
    home_mb: Annotated[int, Field(ge=1)] = 512
    """quota of the user's home (pip --user installs land here)"""
    var_tmp_mb: Annotated[int, Field(ge=1)] = 64
    reserve_mb: NonNegInt = 448
    """memory kept for processes beyond the quotas"""
    max_output_bytes: Annotated[int, Field(ge=1024)] = 16 << 20
    """bytes read from one command; past it the command is stopped"""
    nofile: Annotated[int, Field(ge=64)] = 4096
    copy_out_mb: Annotated[int, Field(ge=1)] = 256
    """the most bytes copied out of a sandbox's output folder to the host"""


class SandboxSection(Section):
    backend: Literal["docker", "bwrap"]
    network: Literal["none", "bridge"]
    command_timeout_s: PosFloat
    lifetime_s: Annotated[float, Field(ge=60)]
    engines: list[str]
    """Docker engine URLs to spread sandboxes over ([]: the local engine)"""
    admission: Admission = Admission()
    pool: Pool
    limits: Limits
