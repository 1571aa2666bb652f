"""The ``image`` stage: Sandbox image (profile <profile>)."""
from __future__ import annotations

from lis.stages.spec import Stage

STAGE = Stage(
    name="image",
    cmd="lis image build --profile ${profile} --out data/image/manifest.json --log logs/image.log",
    entry="lis.cli.image:build",
    params=("image",),
    deps=("${image.context}",),
    code=("lis/paths.py", "lis/sandbox", "lis/cli/image.py"),
    outs=("data/image/manifest.json",),
)
