"""What this machine offers, checked for real (no assumptions): engine, image, GPU, vLLM (vs the pin), hub and
the hub models at their revisions, the served models entries in use, disk."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from lis.models import vllm_program
from lis.errors import LisError
from lis.models.serve_plan import plan
from lis.paths import rootfs_dir
from lis.sandbox.bwrap_backend import bwrap_problem
from lis.sandbox.engine import connect, engine_version
from lis.sandbox.image import expected_tag
from lis.sandbox.image.spec import ImageSpec
from lis.util.server_process import healthy


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    hint: str = ""


def check_docker() -> Check:
    try:
        client = connect(timeout=10)
        return Check("docker", True, f"engine {engine_version(client)}")
    except LisError as e:
        return Check("docker", False, str(e), "bash scripts/setup.sh docker (root on Debian), or install Docker")


def check_image(section: dict, root: Path) -> Check:
    try:
        client = connect(timeout=10)
    except LisError:
        rootfs = rootfs_dir(ImageSpec.from_params(section, root, "bootstrap").content_hash)
        if (rootfs / "usr/bin/python3").exists():
            return Check("image", True, f"no Docker; root filesystem {rootfs} (bubblewrap backend)")
        return Check("image", False, "no Docker engine and no root filesystem", "lis image build (root, debootstrap)")
    try:
        tag = expected_tag(section, root, client)
    except LisError as e:
        return Check("image", False, str(e), e.hint or "")
    try:
        img = client.images.get(tag)
    except Exception:
        return Check("image", False, f"{tag} is not built", "lis image build (or make paper)")
    return Check("image", True, f"{tag} ({img.attrs.get('Size', 0) / 1e6:.0f} MB)")


def check_gpu() -> Check:
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout.strip()
            if out:
                lines = out.splitlines()
                return Check("gpu", True, f"{len(lines)} GPU(s): {lines[0][:60]}")
        except (OSError, subprocess.SubprocessError):
            pass
    cuda = _torch_cuda()
    if cuda:
        return Check("gpu", True, f"torch sees {cuda} (no nvidia-smi on PATH)")
    how = "nvidia-smi not on PATH" if not shutil.which("nvidia-smi") else "nvidia-smi lists no GPU"
    return Check("gpu", False, "no NVIDIA GPU visible",
                 f"the full profile needs a CUDA GPU box with the NVIDIA driver ({how}; torch sees no CUDA); "
                 "use profile smoke on CPU")


def _torch_cuda() -> str | None:
    """``"N CUDA device(s): name"`` when torch sees CUDA, else None (torch absent, CPU build, no driver)."""
    if importlib.util.find_spec("torch") is None:
        return None
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.device_count():
            return f"{torch.cuda.device_count()} CUDA device(s): {torch.cuda.get_device_name(0)[:50]}"
    except Exception:  # noqa: BLE001 - a broken driver is "no GPU" here
        return None
    return None


def vllm_pin() -> str | None:
    """The vLLM version the ``gpu`` extra pins (pyproject.toml, as installed), or None."""
    try:
        reqs = metadata.requires("lis") or []
    except metadata.PackageNotFoundError:
        return None
    for r in reqs:
        name, _, rest = r.partition("==")
        if name.strip() == "vllm" and rest:
            return rest.split(";")[0].strip()
    return None


def check_vllm() -> Check:
    pin = vllm_pin()
    want = f"vllm {pin}" if pin else "vllm"
    if importlib.util.find_spec("vllm") is None:
        if vllm_program.available():  # the server's own venv; TRL's NCCL push needs vLLM in this one (CUDA)
            return Check("vllm", True, f"the vLLM server: {' '.join(vllm_program.program())} (TRL's NCCL weight "
                         f"push would also need the gpu extra here, {want})")
        return Check("vllm", False, f"not installed (the gpu extra pins {want})",
                     "bash scripts/setup.sh vllm (the server's own venv); on a CUDA host also pip install -e '.[gpu]'")
    have = metadata.version("vllm")
    if pin and have != pin:
        return Check("vllm", False, f"vllm {have} is installed, the gpu extra pins {pin}",
                     f"pip install -e '.[gpu]' (vllm=={pin}); TRL and our token engine are tested against it")
    return Check("vllm", True, f"vllm {have}" + (" (the pinned version)" if pin else ""))


def check_hf_hub(timeout: float = 5) -> Check:
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        return Check("hf_hub", False, "HF_HUB_OFFLINE=1 is set", "unset HF_HUB_OFFLINE to load models and datasets from the hub")
    import urllib.request

    url = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/") + "/api/models?limit=1"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return Check("hf_hub", True, f"{url.split('/api')[0]} answers (HTTP {r.status})")
    except Exception as e:
        reason = " ".join(str(getattr(e, "reason", e)).split())[:80]
        return Check("hf_hub", False, f"unreachable ({reason})", "offline: use profile smoke (samples in data/samples)")


def check_bubblewrap() -> Check:
    """bwrap installed and able to make the namespaces the bubblewrap backend asks for (a real run)."""
    path = shutil.which("bwrap")
    if not path:
        return Check("bubblewrap", False, "bwrap not installed", "apt-get install bubblewrap")
    problem = bwrap_problem()
    if problem is None:
        return Check("bubblewrap", True, f"{path}: namespaces work")
    return Check("bubblewrap", False, problem,
                 "allow unprivileged user namespaces (Ubuntu 24.04: sysctl kernel.apparmor_restrict_unprivileged_"
                 "userns=0), or set sandbox.backend (and teacher/grpo.sandbox_backend) to docker")


def check_disk(root: Path, min_gb: float) -> Check:
    free = shutil.disk_usage(root).free / 1e9
    ok = free >= min_gb
    return Check("disk", ok, f"{free:.0f} GB free at {root} (profile needs {min_gb:g} GB)",
                 "" if ok else "free some disk space or lower doctor.min_free_disk_gb")


def check_hub_models(params, hub: Check) -> Check:
    """The hub models the profile loads (base.hub and the vLLM-served entries in use) exist on the hub
    at their revisions; unpinned ones (revision null: current main) are named."""
    import urllib.parse
    import urllib.request

    wanted: dict[str, str | None] = {}
    base = params.data.get("base") or {}
    if base.get("source") == "hub" and (base.get("hub") or {}).get("model"):
        wanted[base["hub"]["model"]] = base["hub"].get("revision")
    for name in served_in_use(params):
        spec = params.data["models"][name]
        serve = spec.get("serve") or {}
        if "command" not in serve and (serve.get("model") or spec.get("model")):
            wanted.setdefault(str(serve.get("model") or spec["model"]), None)
    if not wanted:
        return Check("hub_models", True, "no hub model in this profile")
    names = ", ".join(f"{m}@{r or 'main'}" for m, r in wanted.items())
    if not hub.ok:
        return Check("hub_models", False, f"cannot resolve {names}: the hub is not reachable",
                     "fix hf_hub first (network, HF_ENDPOINT, HF_HUB_OFFLINE)")
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    resolved, bad = [], []
    for model, rev in wanted.items():
        url = f"{endpoint}/api/models/{model}/revision/{urllib.parse.quote(rev or 'main', safe='')}"
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                sha = json.loads(r.read()).get("sha", "?")
            resolved.append(f"{model}@{(rev or 'main')[:12]} ({sha[:10]}{'' if rev else ', unpinned'})")
        except Exception as e:  # noqa: BLE001 - 401/404/timeout: say which
            bad.append(f"{model}@{rev or 'main'} ({' '.join(str(getattr(e, 'reason', e)).split())[:40]})")
    if bad:
        return Check("hub_models", False, f"not found on the hub: {'; '.join(bad)}",
                     "fix the model id or revision in params (base.hub, models.<name>), or log in (huggingface-cli login)")
    return Check("hub_models", True, "; ".join(resolved))


def served_in_use(params) -> list[str]:
    """The served (openai, with serve:) models entries this profile uses: evaluated, judge, throughput."""
    models = params.data.get("models") or {}
    judge = ((params.data.get("scoring") or {}).get("judge") or {}).get("model")
    names = [*(params.data.get("jobs") or {}).get("models", []), judge, (params.data.get("throughput") or {}).get("model")]
    return [n for n in dict.fromkeys(names) if n in models and models[n].get("serve") is not None]


def check_served(params) -> Check:
    """Each served entry in use answers its health URL, or will be started (serve.auto) by a program
    that is installed here."""
    names = served_in_use(params)
    if not names:
        return Check("served", True, "no served model in use (jobs.models, scoring.judge, throughput.model)")
    up, problems, hints = [], [], []
    for name in names:
        p = plan(name, params.data["models"][name])
        if healthy(p.health_url):
            up.append(f"{name} answers")
        elif not p.auto:
            problems.append(f"{name} does not answer {p.health_url} (serve.auto: false)")
            hints.append(f"start it ({' '.join(p.command)}) or set models.{name}.serve.auto: true")
        elif not (vllm_program.available() if p.command[0] == "vllm" else shutil.which(p.command[0])):
            problems.append(f"{name}: {p.command[0]} is not installed (serve.auto would start it)")
            hints.append("bash scripts/setup.sh vllm" if p.command[0] == "vllm" else f"install {p.command[0]}")
        else:
            up.append(f"{name} will be started ({p.command[0]})")
    if problems:
        return Check("served", False, "; ".join(problems), "; ".join(dict.fromkeys(hints)))
    return Check("served", True, "; ".join(up))


def run_checks(params) -> tuple[list[Check], list[str]]:
    """All checks, and the names the profile needs (disk is always needed)."""
    sec = params.settings("doctor")
    hub = check_hf_hub()
    checks = [check_docker(), check_image(params.settings("image").written(), params.root), check_gpu(), check_vllm(),
              hub, check_hub_models(params, hub), check_served(params), check_bubblewrap(),
              check_disk(params.root, sec.min_free_disk_gb)]
    return checks, list(sec.needs) + ["disk"]
