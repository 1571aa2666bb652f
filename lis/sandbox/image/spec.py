"""What image to build: the params section, the context folder, the tag, and the image config.

The tag is ``<name>:<hash>``, where the hash covers every file of the context folder, the
resolved build path and every image param except those that do not change the image's content
(``name``, ``keep_rootfs``, ``timeout_s``). Changing ``name`` therefore re-tags the same image
instead of rebuilding it.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from lis.errors import ParamsError
from lis.util.hashing import hash_obj, hash_tree

NOT_CONTENT = ("name", "keep_rootfs", "timeout_s", "build")
IMAGE_FORMAT = 2  # bump when the builder changes what it puts into an image (labels, config): a new tag
HOST_CA_DIR = Path("/usr/local/share/ca-certificates")
REQUIRED_FILES = ("Dockerfile", "apt-packages.txt", "bootstrap-packages.txt", "requirements.txt", "setup-rootfs.sh")


def _read_list(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


@dataclass(frozen=True)
class ImageSpec:
    section: dict
    context: Path
    build_path: str  # resolved: "dockerfile" or "bootstrap"

    @classmethod
    def from_params(cls, section: dict, root: Path, build_path: str) -> "ImageSpec":
        context = (root / section["context"]).resolve()
        missing = [f for f in REQUIRED_FILES if not (context / f).is_file()]
        if missing:
            raise ParamsError(f"image.context {section['context']}: missing {', '.join(missing)}",
                              "point image.context at a folder like images/sandbox")
        return cls(section=section, context=context, build_path=build_path)

    @cached_property
    def content_hash(self) -> str:
        """Hash of the context folder, the content params and the build path (computed once)."""
        content = {k: v for k, v in self.section.items() if k not in NOT_CONTENT}
        content.pop("context", None)  # where the folder is does not matter, what is in it does
        for k in ("suite", "mirror") if self.build_path == "dockerfile" else ("base_image",):
            content.pop(k, None)
        certs = {p.name: hash_obj(p.read_text(errors="replace")) for p in self.ca_cert_files()}
        return hash_obj({"files": hash_tree(self.context), "params": content, "path": self.build_path,
                         "ca_certs": certs, "format": IMAGE_FORMAT}, n=12)

    @property
    def tag(self) -> str:
        return f"{self.section['name']}:{self.content_hash}"

    @property
    def build_args(self) -> dict[str, str]:
        s = self.section
        return {"BASE": s["base_image"], "LIS_USER": s["user"], "LIS_UID": str(s["uid"]),
                "LIS_COMPILE": "1" if s["compile_bytecode"] else "0"}

    def ca_cert_files(self) -> list[Path]:
        """The host's locally added CA certificates, when image.ca_certs is host (behind an
        intercepting proxy the sandbox then trusts what the host trusts)."""
        if self.section.get("ca_certs") != "host" or not HOST_CA_DIR.is_dir():
            return []
        return sorted(p for p in HOST_CA_DIR.rglob("*.crt") if p.is_file())

    def apt_packages(self) -> list[str]:
        return _read_list(self.context / "apt-packages.txt")

    def bootstrap_packages(self) -> list[str]:
        return _read_list(self.context / "bootstrap-packages.txt")

    def requirements(self) -> list[str]:
        return _read_list(self.context / "requirements.txt")

    def image_config(self) -> list[str]:
        """The Dockerfile's ENV, USER, WORKDIR, CMD and LABEL lines after its FROM, with build args
        substituted, as ``docker import --change`` instructions: both build paths give one config."""
        text = (self.context / "Dockerfile").read_text(encoding="utf-8")
        text = re.sub(r"\\\s*\n", " ", text)  # join continuation lines
        args = dict(self.build_args)
        changes: list[str] = []
        after_from = False
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            word = word.upper()
            if word == "FROM":
                after_from = True
                continue
            if word == "ARG" and after_from:
                name, _, default = rest.strip().partition("=")
                args.setdefault(name, default)
                continue
            if not after_from or word not in ("ENV", "USER", "WORKDIR", "CMD", "LABEL"):
                continue
            rest = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), rest.strip())
            if word == "ENV":
                for item in shlex.split(rest):
                    changes.append(f"ENV {item}")
            else:
                changes.append(f"{word} {rest}")
        return changes
