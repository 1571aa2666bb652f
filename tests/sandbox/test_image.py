"""The sandbox image, on the real Docker engine: what the agent finds inside, tags, builders."""
from __future__ import annotations

import json
import os
import shutil
import socket
import time

import pytest

from lis.sandbox.image.spec import ImageSpec
from tests.conftest import ROOT

pytestmark = pytest.mark.docker


def sh(client, tag: str, script: str, **kw) -> tuple[int, str]:
    """Run ``script`` in a throw-away labelled container; always remove it."""
    # owned by this process until an hour from now: no orphan sweep (another test's pool starting, on this
    # worker or the other) may take it while it runs
    labels = {"lis.managed": "true", "lis.run": "tests", "lis.owner": f"{socket.gethostname()}:{os.getpid()}",
              "lis.expires": str(int(time.time()) + 3600)}
    c = client.containers.create(tag, ["bash", "-lc", script], labels=labels,
                                 network_mode=kw.pop("network_mode", "none"), **kw)
    try:
        c.start()
        code = c.wait(timeout=120)["StatusCode"]
        return code, c.logs().decode()
    finally:
        c.remove(force=True)


def test_scientific_stack_imports_as_non_root_in_testbed(docker_client, image_tag):
    code, out = sh(docker_client, image_tag,
                   'python3 -c "import numpy, scipy, sympy, pandas, matplotlib" && id -u && id -un && pwd')
    assert code == 0, out
    uid, user, cwd = out.split()[-3:]
    assert uid != "0" and user == "sandbox" and cwd == "/testbed"


def test_tools_and_writable_places(docker_client, image_tag):
    code, out = sh(docker_client, image_tag, "set -e; python --version; git --version; curl --version | head -1; "
                   "wget --version | head -1; pip --version; touch /testbed/a ~/b /tmp/c; "
                   "! touch /usr/x 2>/dev/null; echo ok")
    assert code == 0 and out.strip().endswith("ok"), out
    assert "Python 3.11" in out


def test_matplotlib_saves_a_figure_headless(docker_client, image_tag):
    code, out = sh(docker_client, image_tag, "cd /testbed && python3 -c \"import matplotlib.pyplot as plt; "
                   "plt.plot([1,2]); plt.savefig('f.png')\" && test -s f.png && echo ok")
    assert code == 0 and "ok" in out, out


def test_image_is_labelled_and_tagged_by_content(docker_client, image_tag, params):
    img = docker_client.images.get(image_tag)
    assert img.labels["lis.image"] == "true"
    assert "lis.managed" not in img.labels  # containers inherit image labels: lis.managed marks sandboxes only
    assert image_tag.endswith(":" + img.labels["lis.content"])
    assert img.attrs["Config"]["User"] == params.section("image")["user"]
    assert img.attrs["Config"]["WorkingDir"] == "/testbed"


def test_manifest_describes_what_is_inside(image_tag, root):
    from lis.sandbox.image.build import ensure_image
    from lis.params import load

    p = load(root)
    facts = ensure_image(p.section("image"), p.root)
    assert facts["tag"] == image_tag and facts["action"] == "reused"
    inside = facts["inside"]
    assert inside["user"] == "sandbox" and inside["cwd"] == "/testbed"
    assert all(inside["libraries"][m] for m in ("numpy", "scipy", "sympy", "pandas", "matplotlib", "mpmath"))
    assert facts["size_mb"] < 800, "the sandbox image grew: the paper's is ~1100 MB, ours should stay far below"


def test_tag_depends_on_content_not_on_name(tmp_path, params):
    sec = params.section("image")
    ctx = tmp_path / "ctx"
    shutil.copytree(ROOT / sec["context"], ctx)
    a = ImageSpec.from_params({**sec, "context": str(ctx)}, tmp_path, "bootstrap")
    a.content_hash  # snapshot before the edit below
    renamed = ImageSpec.from_params({**sec, "context": str(ctx), "name": "other", "timeout_s": 99}, tmp_path, "bootstrap")
    assert a.content_hash == renamed.content_hash and renamed.tag.startswith("other:")
    (ctx / "apt-packages.txt").write_text((ctx / "apt-packages.txt").read_text() + "jq\n")
    assert ImageSpec.from_params({**sec, "context": str(ctx)}, tmp_path, "bootstrap").content_hash != a.content_hash
    assert ImageSpec.from_params({**sec, "context": str(ctx), "uid": 1001}, tmp_path, "bootstrap").content_hash \
        != ImageSpec.from_params({**sec, "context": str(ctx)}, tmp_path, "bootstrap").content_hash
    # the base image matters only to the dockerfile path, the mirror only to the bootstrap path
    df = ImageSpec.from_params({**sec, "context": str(ctx)}, tmp_path, "dockerfile")
    assert df.content_hash != ImageSpec.from_params({**sec, "context": str(ctx)}, tmp_path, "bootstrap").content_hash
    assert ImageSpec.from_params({**sec, "context": str(ctx), "mirror": "http://x"}, tmp_path, "dockerfile").content_hash \
        == df.content_hash


def test_dockerfile_config_is_shared_by_both_paths(params):
    spec = ImageSpec.from_params(params.section("image"), ROOT, "bootstrap")
    changes = spec.image_config()
    assert changes[-3:] == ["USER sandbox", "WORKDIR /testbed", 'CMD ["/bin/bash"]']
    assert "ENV HOME=/home/sandbox" in changes and "ENV MPLBACKEND=Agg" in changes
    assert any(c.startswith("ENV PATH=/home/sandbox/.local/bin:") for c in changes)


def test_missing_context_file_is_a_params_error(tmp_path, params):
    from lis.errors import ParamsError

    (tmp_path / "ctx").mkdir()
    with pytest.raises(ParamsError, match="missing Dockerfile"):
        ImageSpec.from_params({**params.section("image"), "context": "ctx"}, tmp_path, "bootstrap")


@pytest.mark.slow
def test_dockerfile_path_builds_on_a_local_base(docker_client, image_tag, params):
    """The registry path for real: docker build of images/sandbox/Dockerfile, FROM our own image
    (no registry here). Exercises COPY, build args, apt, pip and setup-rootfs.sh idempotency."""
    from lis.sandbox.image import ensure_image

    sec = {**params.section("image"), "build": "dockerfile", "base_image": image_tag, "name": "lis-test-dockerfile"}
    facts = ensure_image(sec, params.root, force=True)
    try:
        assert facts["build_path"] == "dockerfile"
        assert facts["inside"]["user"] == "sandbox" and facts["inside"]["cwd"] == "/testbed"
        assert facts["inside"]["libraries"]["numpy"]
        code, out = sh(docker_client, facts["tag"], 'python3 -c "import scipy, pandas" && id -u')
        assert code == 0 and out.split()[-1] == "1000", out
    finally:
        docker_client.images.remove(facts["tag"], force=True)


def test_no_container_left_behind(docker_client):
    left = docker_client.containers.list(all=True, sparse=True, filters={"label": "lis.run=tests"})
    assert left == []
    left = docker_client.containers.list(all=True, sparse=True, filters={"label": "lis.run=image-inspect"})
    assert left == []


def test_without_docker_the_root_filesystem_is_the_image(image_tag, tmp_path):
    """A machine with no engine (many clusters): the image stage keeps to the root filesystem and
    the bubblewrap backend runs it."""
    from tests.conftest import run

    env = {"DOCKER_HOST": "tcp://127.0.0.1:9"}
    out = tmp_path / "manifest.json"
    r = run(["lis", "image", "build", "--out", str(out)], env=env)
    facts = json.loads(out.read_text())["image"]
    assert facts["tag"] is None and facts["rootfs"] and "no Docker" in facts["base"]
    assert facts["inside"]["user"] == "sandbox" and facts["inside"]["libraries"]["scipy"]
    r = run(["lis", "sandbox", "exec", "--backend", "bwrap", "id -un; python3 -c 'import pandas'; echo ok"], env=env)
    assert json.loads(r.stdout)["stdout"] == "sandbox\nok\n"
