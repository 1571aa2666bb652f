"""lis's seccomp filter, the same for both backends: the kernel calls an agent has no use for fail with EPERM.

    docker_profile()   # JSON for the Docker engine (``security_opt=["seccomp=<json>"]``)
    bpf_program()      # the same filter as a classic BPF program for ``bwrap --seccomp FD``

Every other call is allowed: the filter is a deny list, on top of what already confines the agent (a
non-root user, no capabilities, no new privileges, bubblewrap's ``--disable-userns``). Denied:
``io_uring_*`` (a large, often-patched kernel surface), the kernel keyring, ``bpf``,
``perf_event_open``, ``userfaultfd`` (the usual doors of local privilege escalation), namespaces
(``unshare``, ``setns``, ``clone`` with a namespace flag; ``clone3`` answers ENOSYS so that the C
library falls back to ``clone``, whose flags the filter can read), and what Docker's default profile
refuses too (mounts, modules, kexec, reboot, swap, the kernel log, another process's memory, ...).

Calls of another architecture than the host's, and x32 calls, are refused as a whole. The numbers are
the kernel's for x86_64 and aarch64; elsewhere :func:`bpf_program` raises ``SandboxError``.
"""
from __future__ import annotations

import json
import platform
import struct

from lis.sandbox.base import SandboxError

EPERM, ENOSYS = 1, 38
DENIED = ("io_uring_setup", "io_uring_enter", "io_uring_register",
          "keyctl", "add_key", "request_key",
          "bpf", "perf_event_open", "userfaultfd",
          "unshare", "setns",
          "mount", "umount2", "pivot_root", "fsopen", "fsmount", "fsconfig", "fspick", "move_mount", "open_tree",
          "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
          "reboot", "swapon", "swapoff", "syslog", "quotactl", "acct", "lookup_dcookie", "vhangup",
          "open_by_handle_at", "name_to_handle_at", "fanotify_init",
          "process_vm_readv", "process_vm_writev", "kcmp",
          "iopl", "ioperm")
# clone's first argument: any of these flags makes a new namespace
CLONE_NAMESPACES = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
                    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
                    "CLONE_NEWNET": 0x40000000}

NUMBERS = {
    "x86_64": {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "keyctl": 250,
               "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
               "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "fsopen": 430,
               "fsmount": 432, "fsconfig": 431, "fspick": 433, "move_mount": 429, "open_tree": 428,
               "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
               "kexec_file_load": 320, "reboot": 169, "swapon": 167, "swapoff": 168, "syslog": 103, "quotactl": 179,
               "acct": 163, "lookup_dcookie": 212, "vhangup": 153, "open_by_handle_at": 304,
               "name_to_handle_at": 303, "fanotify_init": 300, "process_vm_readv": 310, "process_vm_writev": 311,
               "kcmp": 312, "iopl": 172, "ioperm": 173, "clone": 56, "clone3": 435},
    "aarch64": {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "keyctl": 219,
                "add_key": 217, "request_key": 218, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
                "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "fsopen": 430,
                "fsmount": 432, "fsconfig": 431, "fspick": 433, "move_mount": 429, "open_tree": 428,
                "init_module": 105, "finit_module": 273, "delete_module": 106, "kexec_load": 104,
                "kexec_file_load": 294, "reboot": 142, "swapon": 224, "swapoff": 225, "syslog": 116, "quotactl": 60,
                "acct": 89, "lookup_dcookie": 18, "vhangup": 58, "open_by_handle_at": 265, "name_to_handle_at": 264,
                "fanotify_init": 262, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
                "clone": 220, "clone3": 435},
}
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
DOCKER_ARCH = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64"}
X32_BIT = 0x40000000


def _arch(machine: str | None = None) -> str:
    m = machine or platform.machine()
    m = {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)
    if m not in NUMBERS:
        raise SandboxError(f"no seccomp filter for the {m} architecture (lis has x86_64 and aarch64)",
                           "run lis on x86_64 or aarch64")
    return m


def docker_profile(machine: str | None = None) -> str:
    """The filter as a Docker seccomp profile (JSON text)."""
    arch = _arch(machine)
    names = [n for n in DENIED if n in NUMBERS[arch]]
    rules = [{"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM},
             {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS}]
    rules += [{"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM,
               "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]}
              for flag in CLONE_NAMESPACES.values()]
    return json.dumps({"defaultAction": "SCMP_ACT_ALLOW", "architectures": [DOCKER_ARCH[arch]], "syscalls": rules})


# classic BPF (linux/filter.h, linux/seccomp.h)
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (args[0]'s low 32 bits: little-endian)


def bpf_program(machine: str | None = None) -> bytes:
    """The filter as a classic BPF program (``struct sock_filter`` array, native byte order) for bubblewrap."""
    arch = _arch(machine)
    nums = NUMBERS[arch]
    denied = sorted({nums[n] for n in DENIED if n in nums})
    prog: list[tuple[int, int, int, int]] = []

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> None:
        prog.append((code, jt, jf, k))

    op(_LD_W_ABS, _ARCH)
    op(_JEQ_K, AUDIT_ARCH[arch], jt=1)          # the host's architecture: on; else refuse the call
    op(_RET_K, _RET_ERRNO | EPERM)
    op(_LD_W_ABS, _NR)
    if arch == "x86_64":
        op(_JGE_K, X32_BIT, jf=1)                # an x32 call: refuse
        op(_RET_K, _RET_ERRNO | EPERM)
    for i, nr in enumerate(denied):             # each denied number: jump to the EPERM return after the list
        op(_JEQ_K, nr, jt=len(denied) - i + 5)   # past the rest of the list and the clone/clone3 block
    op(_JEQ_K, nums["clone3"], jt=3)            # clone3 -> ENOSYS (the C library falls back to clone)
    op(_JEQ_K, nums["clone"], jf=3)             # clone -> read its flags; anything else -> allow
    op(_LD_W_ABS, _ARG0)
    op(_JSET_K, sum(CLONE_NAMESPACES.values()), jt=2, jf=1)   # a namespace flag -> EPERM, else allow
    op(_RET_K, _RET_ERRNO | ENOSYS)
    op(_RET_K, _RET_ALLOW)
    op(_RET_K, _RET_ERRNO | EPERM)
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)
