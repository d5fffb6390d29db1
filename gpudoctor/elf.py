"""What a file's ELF headers say, read in one bounded read: the one ELF reader of gpudoctor.

`install-cudnn` judges each `lib*/libcudnn*.so*` member of a tarball from its first bytes
(`parse`), the cuDNN probe each library file on disk (`read`); both ask `library_problem`
whether what they read is a shared library a program can load. A leaf module: the standard
library only, no I/O but `read`'s one open, and nothing here raises on garbage: every byte
string gives an `Elf` or a `NotElf` saying why not.

What is read (the System V ABI, both classes and byte orders): the identification, e_type,
e_machine, the program header table (PT_INTERP, and where each PT_LOAD segment's bytes lie)
and where the section header table lies. The program headers must lie within the first
`HEAD` bytes, as every linker puts them (right after the 64-byte ELF header): a file whose
headers are elsewhere is not judged a library. `Elf.extent` is the least size the headers
say the file has (the end of the section header table, of every segment's bytes, of the
program headers); a file shorter than that was cut.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Literal, Protocol

HEAD = 64 << 10  # bytes read from the start of a file: the ELF and program headers
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
PT_LOAD, PT_INTERP = 1, 3
_MAX_PHNUM = 4096  # more program headers than any real shared object has
MACHINES = {3: "i386", 8: "mips", 20: "ppc", 21: "ppc64le", 22: "s390x", 40: "arm",
            62: "x86_64", 183: "aarch64", 243: "riscv64"}
_TYPES = {ET_REL: "a relocatable object (.o)", ET_EXEC: "an executable program",
          ET_CORE: "a core dump"}


@dataclass(frozen=True, slots=True)
class Elf:
    """The facts an ELF file's headers state."""

    bits: int  # 32 or 64
    e_type: int  # ET_DYN (3) for a shared object, and for a position-independent program
    machine: str  # "x86_64", "aarch64", …; "ELF machine N" for one not named here
    interpreter: bool  # it has a PT_INTERP header: a program run by the loader, not a library
    extent: int  # the least size its headers say the file has


@dataclass(frozen=True, slots=True)
class NotElf:
    """Why a file is not ELF, or could not be read as one."""

    why: str  # "it starts with b'#!/bin/sh\\n' (no ELF magic)"
    unreadable: bool = False  # not read: it cannot be opened or read, or is no regular file
    permission: bool = False  # … because this user may not read it


class ElfLike(Protocol):
    """What `library_problem` judges: an `Elf`, or the model's recorded facts of one."""

    @property
    def e_type(self) -> int:
        """The ELF file type."""
        ...

    @property
    def interpreter(self) -> bool:
        """Whether it has a PT_INTERP program header."""
        ...

    @property
    def extent(self) -> int:
        """The least size its headers say the file has."""
        ...

    @property
    def machine(self) -> str:
        """The machine it is built for."""
        ...


def parse(head: bytes, size: int) -> Elf | NotElf:
    """The ELF facts of a file of `size` bytes whose first bytes are `head` (at least
    min(size, HEAD) of them, for the program headers to be seen)."""
    if len(head) < 4 or head[:4] != b"\x7fELF":
        return NotElf(f"it starts with {head[:12]!r} (no ELF magic)" if head
                      else "it is empty")
    if len(head) < 52 or head[4] not in (1, 2) or head[5] not in (1, 2):
        return NotElf("its ELF header is cut short or names no valid class and byte order")
    bits = 32 if head[4] == 1 else 64
    order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
    if bits == 64 and len(head) < 64:
        return NotElf("its ELF header is cut short")

    def num(offset: int, width: int) -> int:
        return int.from_bytes(head[offset:offset + width], order)

    word = 4 if bits == 32 else 8
    e_type, e_machine = num(16, 2), num(18, 2)
    phoff, shoff = num(24 + word, word), num(24 + 2 * word, word)
    at = 24 + 3 * word + 4 + 2  # past e_flags and e_ehsize
    phentsize, phnum, shentsize, shnum = (num(at + 2 * k, 2) for k in range(4))
    machine = MACHINES.get(e_machine, f"ELF machine {e_machine}")
    interpreter, extent = False, 64 if bits == 64 else 52
    if phnum:
        if phnum > _MAX_PHNUM or phentsize < (32 if bits == 32 else 56):
            return NotElf(f"its program header table is malformed ({phnum} entries of "
                          f"{phentsize} bytes)")
        table_end = phoff + phnum * phentsize
        extent = max(extent, table_end)
        if table_end > len(head):
            if table_end <= size:  # there, but past what was read: not where linkers put it
                return NotElf(f"its program headers lie beyond the first {HEAD} bytes")
            return Elf(bits, e_type, machine, False, extent)  # the file ends inside them
        for k in range(phnum):
            p = phoff + k * phentsize
            p_type = num(p, 4)
            if bits == 64:
                p_offset, p_filesz = num(p + 8, 8), num(p + 32, 8)
            else:
                p_offset, p_filesz = num(p + 4, 4), num(p + 16, 4)
            interpreter = interpreter or p_type == PT_INTERP
            if p_type in (PT_LOAD, PT_INTERP):
                extent = max(extent, p_offset + p_filesz)
    if shoff:
        extent = max(extent, shoff + max(shnum, 1) * shentsize)
    return Elf(bits, e_type, machine, interpreter, extent)


def read(path: str | os.PathLike[str]) -> Elf | NotElf:
    """The ELF facts of the file at path (symlinks followed), from its first HEAD bytes.
    Opens only a regular file, without blocking (a FIFO or a device is not read); never
    raises: an error is a `NotElf` with `unreadable` set."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        return NotElf(f"it cannot be opened: {e.strerror or e}", unreadable=True,
                      permission=isinstance(e, PermissionError))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return NotElf("it is not a regular file", unreadable=True)
        head = os.pread(fd, HEAD, 0)
    except OSError as e:
        return NotElf(f"it cannot be read: {e.strerror or e}", unreadable=True)
    finally:
        os.close(fd)
    return parse(head, st.st_size)


def library_problem(e: ElfLike, size: int, machine: str | None = None) -> str | None:
    """Why a file of `size` bytes with these ELF facts is not a shared library a program can
    load (for `machine`, when given): "an executable program", "a program (a
    position-independent executable with an interpreter)", "built for aarch64", "cut short:
    its headers say 1234 bytes, the file has 200"; None when it is one."""
    if e.e_type != ET_DYN:
        return f"{_TYPES.get(e.e_type, f'an ELF file of type {e.e_type}')}, not a shared library"
    if e.interpreter:
        return ("a program (a position-independent executable with an interpreter), not a "
                "shared library")
    if e.extent > size:
        return (f"cut short: its ELF headers say it has at least {e.extent} bytes, the file "
                f"has {size}")
    if machine is not None and e.machine != machine:
        return f"built for {e.machine}, not {machine}"
    return None
