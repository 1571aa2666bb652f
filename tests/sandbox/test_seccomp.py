"""lis's seccomp filter as data (lis/sandbox/seccomp.py): the BPF program run by a small interpreter of the
instructions it uses, for both architectures, and the Docker profile's rules. The kernel's verdicts in real
sandboxes: tests/sandbox/test_hostile.py."""
from __future__ import annotations

import json
import struct

import pytest

from lis.sandbox.seccomp import AUDIT_ARCH, CLONE_NAMESPACES, DENIED, NUMBERS, bpf_program, docker_profile

ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026


def verdict(prog: bytes, nr: int, arch: int, arg0: int = 0) -> int:
    """What the classic BPF program returns for one call (the opcodes it uses: ld abs, jeq, jge, jset, ret)."""
    ins = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    data, pc, acc = {0: nr, 4: arch, 16: arg0}, 0, 0
    for _ in range(len(ins) + 1):
        code, jt, jf, k = ins[pc]
        if code == 0x20:
            acc, pc = data[k], pc + 1
        elif code in (0x15, 0x35, 0x45):
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unknown opcode {code:#x}")
    raise AssertionError("the program did not return")


@pytest.mark.parametrize("machine", sorted(NUMBERS))
def test_the_program_refuses_the_denied_calls_and_allows_the_rest(machine):
    prog, nums, arch = bpf_program(machine), NUMBERS[machine], AUDIT_ARCH[machine]
    denied = {nums[n] for n in DENIED if n in nums}
    assert len(denied) >= 35
    for nr in denied:
        assert verdict(prog, nr, arch) == EPERM, nr
    for nr in sorted(set(range(460)) - denied - {nums["clone"], nums["clone3"]}):
        assert verdict(prog, nr, arch) == ALLOW, nr
    assert verdict(prog, nums["clone3"], arch) == ENOSYS
    assert verdict(prog, nums["clone"], arch, arg0=0x01200011) == ALLOW  # fork(): CLONE_CHILD_SETTID | ... | SIGCHLD
    for flag in CLONE_NAMESPACES.values():
        assert verdict(prog, nums["clone"], arch, arg0=flag | 0x11) == EPERM, hex(flag)
    assert verdict(prog, 0, 0x40000003) == EPERM  # another architecture (32-bit x86): refused as a whole
    if machine == "x86_64":
        assert verdict(prog, 0x40000000, arch) == EPERM  # x32


def test_the_docker_profile_says_the_same():
    p = json.loads(docker_profile("x86_64"))
    assert p["defaultAction"] == "SCMP_ACT_ALLOW" and p["architectures"] == ["SCMP_ARCH_X86_64"]
    (deny,) = [r for r in p["syscalls"] if r["action"] == "SCMP_ACT_ERRNO" and "args" not in r and r["errnoRet"] == 1]
    assert set(deny["names"]) == set(DENIED)
    clone = [r for r in p["syscalls"] if r["names"] == ["clone"]]
    assert {r["args"][0]["value"] for r in clone} == set(CLONE_NAMESPACES.values())
    assert all(r["args"][0]["op"] == "SCMP_CMP_MASKED_EQ" and r["args"][0]["valueTwo"] == r["args"][0]["value"]
               for r in clone)
    assert [r["errnoRet"] for r in p["syscalls"] if r["names"] == ["clone3"]] == [38]
    assert "iopl" not in json.loads(docker_profile("aarch64"))["syscalls"][0]["names"]  # x86 only
