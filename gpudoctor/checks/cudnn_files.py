"""What the files of one cuDNN copy are, judged: modes that let others change them or run them
as someone else (GD303), libraries that are not shared objects of this machine or were cut
short (GD305), libraries that do not load (GD306). Pure functions over the facts the cuDNN
probe recorded (`CudnnLibrary.mode`, `.elf`, `.loads`); the ELF rule is `gpudoctor.elf`'s,
the one the installer applies to a tarball's members.
"""

from __future__ import annotations

import shlex
import stat

from gpudoctor import elf
from gpudoctor.model import (
    CudnnInstall,
    CudnnLibrary,
    ElfFacts,
    Environment,
    HostFacts,
    Reason,
    Unavailable,
)

UNSAFE_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH
SAFE_CHMOD = "ug-s,go-w"  # what takes UNSAFE_BITS (and group write) away


def unsafe(f: CudnnLibrary) -> str | None:
    """What makes the file's mode dangerous ("world-writable, setuid"); None when nothing."""
    if f.mode < 0:
        return None
    bits = [what for bit, what in ((stat.S_IWOTH, "world-writable"), (stat.S_ISUID, "setuid"),
                                   (stat.S_ISGID, "setgid")) if f.mode & bit]
    return ", ".join(bits) or None


def chmod_line(spec: str, targets: list[str]) -> str:
    """`sudo chmod SPEC -- TARGETS`, every target already shell-quoted (or a quoted directory
    followed by a glob)."""
    return f"sudo chmod {spec} -- {' '.join(targets)}"


def quoted(paths: list[str]) -> list[str]:
    """Each path shell-quoted, once."""
    return [shlex.quote(p) for p in dict.fromkeys(paths)]


def host_machine(env: Environment) -> str | None:
    """The machine the libraries must be built for ("x86_64"), when the host facts say it."""
    machine = env.host.machine if isinstance(env.host, HostFacts) else None
    if isinstance(machine, str) and machine in elf.MACHINES.values():
        return machine
    return None


def real_entries(files: tuple[CudnnLibrary, ...]) -> list[CudnnLibrary]:
    """The files of one directory of a copy, each real file once: a link whose target is
    another of them is judged through that one (a link that leads elsewhere stays)."""
    names = {f.name for f in files}
    return [f for f in files if f.symlink_target is None or f.symlink_target not in names]


def library_problems(i: CudnnInstall, machine: str | None) -> list[str]:
    """Why each shared library of the copy is not one this machine can load, from its ELF
    headers: not ELF, a program, cut short, built for another machine (or, when the machine
    is not known, built for several). A file this user cannot read is GD303's."""
    problems: list[str] = []
    machines: dict[str, str] = {}
    for lib in real_entries(i.libraries):
        if lib.elf is None:
            continue
        facts = lib.elf
        if isinstance(facts, Unavailable):
            if facts.reason is not Reason.PERMISSION_DENIED:
                problems.append(facts.message)
        elif isinstance(facts, ElfFacts) and lib.size >= 0:
            why = elf.library_problem(facts, lib.size, machine)
            if why:
                problems.append(f"{lib.path} is {why}")
            machines.setdefault(facts.machine, lib.path)
    if machine is None and len(machines) > 1:
        problems.append("its libraries are built for several machines: " + ", ".join(
            f"{m} ({p})" for m, p in machines.items()))
    return problems


def load_problems(i: CudnnInstall) -> list[str]:
    """The libraries of the copy that did not load (the loader's words), once each; a failure
    that names a dependency ldd already reported missing is left to that report."""
    missing = i.missing_deps if isinstance(i.missing_deps, tuple) else ()
    found: list[str] = []
    for lib in i.libraries:
        v = lib.loads
        if not isinstance(v, Unavailable):
            continue
        said = (v.detail or "").strip().splitlines()[-1:] if v.detail else []
        if said and any(dep in said[0] for dep in missing):
            continue
        text = v.message + (f" ({said[0][:300]})" if said else "")
        if text not in found:
            found.append(text)
    return found
