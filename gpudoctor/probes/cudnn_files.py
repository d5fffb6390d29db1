"""The facts of each file of one cuDNN copy: link target, size, mode, what a library's ELF
headers say, and whether it loads. The cuDNN probe (`probes.cudnn`) calls `library_facts` for
the `libcudnn*` files of a copy and `file_facts` for its headers; the checks judge (GD303 the
modes, GD305 the ELF facts, GD306 the loads).

Each real file is read once, however many links lead to it: its first `elf.HEAD` bytes, a
regular file only (a FIFO or a device is never opened for reading). Every shared library that
is a regular file is loaded with ctypes (`dlopen`, RTLD_NOW) in a child of our own interpreter,
one after another, so that one that crashes or hangs the loader is named and the ones after it
are still tried (in a new child, within what is left of the time budget).

Mapping: a file that cannot be opened → PERMISSION_DENIED / ERROR; not ELF → ERROR; a load
the loader refuses → NOT_INSTALLED (with its message); the child dies from a signal while
loading one → CRASHED; past the budget → TIMEOUT; the child cannot start → ERROR.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from gpudoctor import childproc, elf
from gpudoctor.model import CudnnLibrary, ElfFacts, Reason, Unavailable

LOAD_BUDGET = 10.0  # seconds for loading every library of one copy
# The child's program comes on stdin (`python -`: not in argv, where `ps` shows it), the paths
# in its first line as a Python literal (ASCII: `ascii()`). Its lines are JSON written by hand,
# each the one `json.dumps` would write (`_json`'s encoder is the one it uses): `import json`
# (re, enum, functools) would be ~11 ms of the child's start.
_LOADER = r"""
import ctypes
try:
    from _json import encode_basestring_ascii as text
except ImportError:  # an interpreter without json's C half
    from json import dumps as text
handles = {}
for path in PATHS:
    print('["try", %s]' % text(path), flush=True)
    try:
        handles[path] = ctypes.CDLL(path)
    except OSError as e:
        print('["error", %s, %s]' % (text(path), text(str(e))), flush=True)
    else:
        print('["ok", %s]' % text(path), flush=True)
if VERSION in handles:  # last: a call that crashes or hangs costs no load's answer
    try:
        get = handles[VERSION].cudnnGetVersion
    except AttributeError:
        pass
    else:
        get.restype = ctypes.c_size_t
        print('["version", %s, %d]' % (text(VERSION), int(get())), flush=True)
"""


def loader_program(paths: list[str], version_of: str | None = None) -> str:
    """The loader child's program (on its stdin) for these paths; with `version_of` (one of
    them) it ends by asking that library its `cudnnGetVersion`, when it loaded."""
    return f"PATHS = {paths!a}\nVERSION = {version_of!a}\n{_LOADER}"


Loaded = bool | Unavailable


def file_facts(path: Path, elf_facts: ElfFacts | Unavailable | None = None,
               loads: Loaded | None = None) -> CudnnLibrary:
    """Name, symlink target, size, mode and readability of one file (and what is given of its
    ELF headers and load)."""
    try:
        target = os.readlink(path) if path.is_symlink() else None
    except OSError:
        target = None
    try:
        st = path.stat()
        size, mode = st.st_size, stat.S_IMODE(st.st_mode)
    except OSError:
        size, mode = -1, -1
    return CudnnLibrary(
        name=path.name,
        path=str(path),
        symlink_target=target,
        size=size,
        mode=mode,
        world_readable=mode >= 0 and bool(mode & stat.S_IROTH),
        readable=mode >= 0 and os.access(path, os.R_OK),
        elf=elf_facts,
        loads=loads,
    )


def elf_facts(path: Path) -> ElfFacts | Unavailable:
    """What the ELF headers of the file at path say, or why they cannot be read."""
    found = elf.read(path)
    if isinstance(found, elf.NotElf):
        if found.unreadable:
            reason = Reason.PERMISSION_DENIED if found.permission else Reason.ERROR
            return Unavailable(reason, f"{path} cannot be read as a library: {found.why}")
        return Unavailable(Reason.ERROR, f"{path} is not an ELF file: {found.why}")
    return ElfFacts(found.e_type, found.machine, found.interpreter, found.extent)


def library_facts(
    paths: list[Path], shared: list[Path], env: Mapping[str, str], main: Path | None = None,
) -> tuple[tuple[CudnnLibrary, ...], int | None]:
    """The facts of every file in `paths`; those in `shared` (the shared libraries) with
    their ELF headers read and a load tried, once per real file. With `main` (one of
    `shared`), also its `cudnnGetVersion` as the loader child read it (`load_each`); None
    where it did not: the caller asks in a child of its own (`native.read_version`), which
    says why."""
    by_real: dict[str, Path] = {}
    for p in shared:
        by_real.setdefault(os.path.realpath(p), p)
    read = {real: elf_facts(Path(real)) for real in by_real}
    loadable = [real for real, facts in read.items() if _regular(real)]
    version_of = os.path.realpath(main) if main is not None else None
    loads, version = load_each(loadable, env, version_of) if loadable else ({}, None)
    out = []
    for p in paths:
        real = os.path.realpath(p) if p in shared else None
        out.append(file_facts(p, read.get(real) if real else None,
                              loads.get(real) if real else None))
    return tuple(out), version


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def load_each(paths: list[str], env: Mapping[str, str], version_of: str | None = None,
              budget: float = LOAD_BUDGET) -> tuple[dict[str, Loaded], int | None]:
    """Load each library (a path) with ctypes in a child, in order: True, or why not. A load
    that crashes or hangs the child is named, and the paths after it go to a new child.

    With `version_of` (one of `paths`), also its `cudnnGetVersion`, asked by the child that
    loaded it after its last load. The reading counts only as `read_version`'s child would
    have given it: the child's last line, and the child ended with status 0; else None (a
    missing symbol, a crash, a hang or a load that failed: the caller asks again in a child of
    `read_version`, whose answer says why), so the reading is the same either way."""
    out: dict[str, Loaded] = {}
    version: int | None = None
    left = list(paths)
    deadline = time.monotonic() + budget
    while left:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            out.update((p, Unavailable(Reason.TIMEOUT, f"{p} was not tried: loading this "
                                       f"copy's libraries took over {budget:g} s"))
                       for p in left)
            break
        timed_out = False
        asked = version_of if version_of in left else None
        try:
            result = childproc.run([sys.executable, "-I", "-S", "-"], remaining, env,
                                   loader_program(left, asked))
        except childproc.ChildTimeout as e:
            result, timed_out = e.result, True
        except OSError as e:
            out.update((p, Unavailable(Reason.ERROR, f"{p} was not tried: the loader child "
                                       "could not start", detail=repr(e))) for p in left)
            break
        if asked is not None and not timed_out and result.returncode == 0:
            version = _version_line(result.stdout, asked)
        pending = _answers(result.stdout, set(left), out)
        if pending is None:  # nothing in progress: every path answered, or the child broke
            out.update((p, Unavailable(Reason.ERROR, f"the loader child said nothing of {p}",
                                       detail=result.stderr.strip()[-2000:] or None))
                       for p in left if p not in out)
            break
        if timed_out:
            out[pending] = Unavailable(Reason.TIMEOUT, f"loading {pending} hung (killed after "
                                       f"{budget:g} s for the whole copy)")
        else:
            code = result.returncode
            how = f"signal {-code}" if code < 0 else f"exit status {code}"
            out[pending] = Unavailable(Reason.CRASHED, f"loading {pending} killed the process "
                                       f"that loaded it ({how})",
                                       detail=result.stderr.strip()[-2000:] or None)
        left = left[left.index(pending) + 1:]
    return out, version


def _version_line(stdout: str, path: str) -> int | None:
    """The version the child's last line gives for `path` (`["version", path, N]`), else None."""
    lines = stdout.strip().splitlines()
    try:
        msg = json.loads(lines[-1])
    except (ValueError, IndexError):
        return None
    if (isinstance(msg, list) and len(msg) == 3 and msg[:2] == ["version", path]
            and type(msg[2]) is int):
        return msg[2]
    return None


def _answers(stdout: str, asked: set[str], out: dict[str, Loaded]) -> str | None:
    """Record the child's answers in `out`; the path it was loading when it stopped, if any.
    Lines that are not the loader's own (a library may print) are ignored."""
    pending = None
    for line in stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not (isinstance(msg, list) and len(msg) in (2, 3) and msg[1] in asked):
            continue
        path = msg[1]
        if msg[0] == "try":
            pending = path
        elif msg[0] == "ok" and path == pending:
            out[path], pending = True, None
        elif msg[0] == "error" and path == pending and len(msg) == 3:
            said = str(msg[2])
            said = said[len(path) + 2:] if said.startswith(f"{path}: ") else said
            out[path] = Unavailable(Reason.NOT_INSTALLED, f"{path} cannot be loaded",
                                    detail=said[:2000])
            pending = None
    return pending
