"""Copy-out streams to disk under a cap (sandbox.limits.copy_out_mb): the answer file first, then
what fits, a note of what was left out; host memory stays bounded whatever the sandbox wrote; and
`lis run` exits non-zero (one line on stderr) when its output was cut."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap

import pytest
import yaml

from tests.conftest import ROOT, run

pytestmark = pytest.mark.docker

MB = 1 << 20


def test_past_the_cap_the_answer_comes_first_then_what_fits_and_a_note(make, tmp_path):
    sb = make(limits={"copy_out_mb": 1})
    r = sb.exec("mkdir -p /testbed/output/sub && cd /testbed/output && head -c 1000000 /dev/urandom > a_big.bin && "
                "{ echo 42; head -c 60000 /dev/zero | tr '\\0' ' '; } > answer.txt && head -c 30000 /dev/zero > b.bin && "
                "echo small > sub/c.txt && ln -s sub/c.txt link && ln -s /etc/passwd evil && stat -c %s answer.txt")
    assert r.stdout == "60003\n", r
    out = sb.copy_out("/testbed/output", tmp_path / "out", first=("/testbed/output/answer.txt",))
    got = out / "output"
    assert (got / "answer.txt").read_text().strip() == "42"  # first, although a_big.bin comes before it by name
    assert not (got / "a_big.bin").exists()  # 1,000,000 bytes no longer fit in 1 MB after the answer
    assert (got / "b.bin").stat().st_size == 30000  # a later file that still fits
    assert (got / "sub/c.txt").read_text() == "small\n" and (got / "link").read_text() == "small\n"
    assert not (got / "evil").exists() and not (got / "evil").is_symlink()  # a link out is never made
    note = (got / "COPY_OUT_NOTE.txt").read_text()
    assert "copy_out_mb: 1 MB" in note and "output/a_big.bin\t1000000 bytes" in note, note
    info = sb.info["copy_out"]
    assert info["left_out"] == 1 and info["left_out_bytes"] == 1000000 and info["bytes"] <= MB, info


def test_under_the_cap_everything_is_copied_and_no_note(sb, tmp_path):
    sb.exec("mkdir -p /testbed/output && cd /testbed/output && head -c 3000000 /dev/urandom > r.bin && "
            "chmod 755 r.bin && sha256sum r.bin > sum")
    out = sb.copy_out("/testbed/output", tmp_path / "out")
    got = out / "output"
    assert subprocess.run(["sha256sum", "-c", "sum"], cwd=got, capture_output=True).returncode == 0
    assert (got / "r.bin").stat().st_mode & 0o777 == 0o755
    assert not (got / "COPY_OUT_NOTE.txt").exists() and sb.info["copy_out"]["left_out"] == 0


COPY_1GB = textwrap.dedent("""
    import dataclasses, json, resource, sys, time
    from lis.sandbox import Limits, SandboxConfig, make_sandbox

    def hwm_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024

    cfg = SandboxConfig(**json.loads(sys.argv[1]))
    cfg.limits = Limits(memory_mb=2048, testbed_mb=1200, tmp_mb=64, home_mb=64, reserve_mb=512,
                        copy_out_mb=int(sys.argv[3]))
    with make_sandbox(cfg).start() as sb:
        sb.exec("mkdir -p /testbed/output && echo 42 > /testbed/output/answer.txt && "
                "head -c 600M /dev/zero > /testbed/output/a.bin && head -c 424M /dev/zero > /testbed/output/b.bin",
                timeout=120)
        before = hwm_mb()
        t0 = time.monotonic()
        sb.copy_out("/testbed/output", sys.argv[2], first=("/testbed/output/answer.txt",))
        print(json.dumps({"hwm_before_mb": before, "hwm_after_mb": hwm_mb(), "copy_s": time.monotonic() - t0,
                          **sb.info["copy_out"]}))
""")


@pytest.mark.parametrize("cap_mb", [2048, 256])
def test_a_1gb_output_folder_costs_the_host_little_memory(base_config, backend, tmp_path, cap_mb):
    """600 MB of output used to cost 1.92 GB of host memory; 1 GB was lost entirely. Now the copy
    streams: the process's peak resident memory (VmHWM) stays under 300 MB, copied whole (cap 2 GB)
    or cut at the cap (256 MB)."""
    cfg = {k: v for k, v in dataclasses.asdict(base_config).items() if k != "limits"}
    r = subprocess.run([sys.executable, "-c", COPY_1GB, json.dumps({**cfg, "backend": backend}), str(tmp_path / "out"),
                        str(cap_mb)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    m = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"MEASURED {backend} cap {cap_mb} MB: peak RSS {m['hwm_after_mb']:.0f} MB (before the copy "
          f"{m['hwm_before_mb']:.0f} MB), {m['bytes'] / MB:.0f} MB copied in {m['copy_s']:.1f} s")
    assert m["hwm_after_mb"] < 300, m
    got = tmp_path / "out" / "output"
    assert (got / "answer.txt").read_text() == "42\n"
    if cap_mb == 2048:
        assert m["left_out"] == 0 and (got / "a.bin").stat().st_size == 600 * MB
        assert (got / "b.bin").stat().st_size == 424 * MB
    else:
        assert m["left_out"] == 2 and m["bytes"] == 3 and (got / "COPY_OUT_NOTE.txt").is_file()


def test_lis_run_with_a_1gb_output_folder_keeps_the_answer_notes_the_rest_and_fails(repo_copy, image_tag, tmp_path):
    """With 1,000 MB of output every file (the answer included) was lost and `lis run` exited 0."""
    fill = ("mkdir -p /testbed/output && echo 42 > /testbed/output/answer.txt && "
            "head -c 600M /dev/zero > /testbed/output/a.bin && head -c 424M /dev/zero > /testbed/output/b.bin && "
            "echo small > /testbed/output/c.txt")
    replies = [{"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c1", "type": "function", "function": {"name": "execute_bash",
                                                                 "arguments": json.dumps({"command": fill})}}]},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c2", "type": "function", "function": {"name": "submit", "arguments": "{}"}}]}]
    params = yaml.safe_load((repo_copy / "params.yaml").read_text())
    params["models"]["writer"] = {"backend": "scripted", "replies": replies}
    (repo_copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    ci = yaml.safe_load((repo_copy / "workflow/params/ci.yaml").read_text())
    ci["sandbox"]["limits"] = {"memory_mb": 2048, "testbed_mb": 1200, "tmp_mb": 64, "home_mb": 64}  # copy_out_mb: 256
    (repo_copy / "workflow/params/ci.yaml").write_text(yaml.safe_dump(ci, sort_keys=False))
    out = tmp_path / "out"
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
             "print('PEAK_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
             "sys.exit(r.returncode)")
    r = run([sys.executable, "-c", probe, "lis", "run", "--model", "writer", "--profile", "ci", "--query",
             "Write 1 GB", "--output-dir", str(out)], cwd=repo_copy, check=False, env={"COLUMNS": "300"}, timeout=600)
    peak_mb = int(r.stderr.split("PEAK_KB")[-1].split()[0]) / 1024
    print(f"MEASURED lis run, 1 GB output, copy_out_mb 256: peak RSS {peak_mb:.0f} MB, exit {r.returncode}")
    assert r.returncode == 3, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "copy_out_mb" in ln]
    assert len(lines) == 1 and "2 file(s)" in lines[0] and "left out" in lines[0], r.stderr[-2000:]
    (run_dir,) = list(out.iterdir())
    files = run_dir / "files"
    assert (files / "answer.txt").read_text() == "42\n" and (files / "c.txt").read_text() == "small\n"
    note = (files / "COPY_OUT_NOTE.txt").read_text()
    assert "output/a.bin\t629145600 bytes" in note and "output/b.bin\t444596224 bytes" in note, note
    assert json.loads((run_dir / "trajectory.json").read_text())["answer"] == "42"
    assert peak_mb < 300
