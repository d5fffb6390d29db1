"""`gpudoctor.probes.cudnn_files`, the cuDNN probe's file facts (issue 18, item 6): each
library's ELF headers and whether it loads, on real compiled libraries. A library that aborts
or hangs the loader is named and the ones after it are still tried; a FIFO named like a library
is never opened for reading."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from gpudoctor.model import CudnnFacts, ElfFacts, Reason, Unavailable
from gpudoctor.probes.cudnn import probe_cudnn_at
from gpudoctor.probes.cudnn_files import library_facts, load_each
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.native import read_version
from gpudoctor.versions import format_cudnn_version as decode_version
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture

pytestmark = pytest.mark.subprocess  # starts programs (the probes' children, ldd, ...)

ENV = {"PATH": "/usr/bin:/bin"}


def hanging_library(tmp_path: Path) -> Path:
    src = tmp_path / "hang.c"
    src.write_text("#include <unistd.h>\n"
                   "__attribute__((constructor)) static void wait(void) { sleep(60); }\n")
    out = tmp_path / "libcudnn_hang.so.9"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return out


@pytest.mark.slow
def test_a_crash_is_named_and_the_next_library_is_still_loaded(
        tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    good = str(cudnn_kit.compile("libcudnn_ops.so.9", 90100))
    aborts = str(cudnn_kit.compile("libcudnn_cnn.so.9", 90100, abort=True))
    text = tmp_path / "libcudnn_adv.so.9"
    text.write_text("not a library\n")
    after = str(cudnn_kit.compile("libcudnn_graph.so.9", 90100))
    found, _ = load_each([good, aborts, str(text), after], ENV)
    assert found[good] is True
    crashed = found[aborts]
    assert isinstance(crashed, Unavailable)
    assert crashed.reason is Reason.CRASHED
    assert "killed the process that loaded it (signal 6)" in crashed.message
    refused = found[str(text)]
    assert isinstance(refused, Unavailable)
    assert refused.reason is Reason.NOT_INSTALLED
    assert refused.detail in ("invalid ELF header", "file too short")
    assert found[after] is True


@pytest.mark.slow
def test_a_library_that_hangs_the_loader_is_abandoned_in_time(
        tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    hang, good = str(hanging_library(tmp_path)), str(cudnn_kit.compile("libcudnn.so.9", 90100))
    found, _ = load_each([hang, good], ENV, budget=1.5)
    assert isinstance(found[hang], Unavailable)
    assert found[hang].reason is Reason.TIMEOUT  # type: ignore[union-attr]
    assert isinstance(found[good], Unavailable)  # the budget was spent: not tried
    assert found[good].reason is Reason.TIMEOUT  # type: ignore[union-attr]


@pytest.mark.slow
def test_paths_json_must_escape_are_named_exactly(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    """The loader child gets its paths as a Python literal and writes its JSON lines by hand:
    a path with quotes, a backslash and a non-ASCII letter is loaded, refused and named
    exactly as any other."""
    folder = tmp_path / 'a "quoted" \\ dir é'
    folder.mkdir()
    lib = folder / "libcudnn_ops.so.9"
    shutil.copy(cudnn_kit.compile("libcudnn_ops.so.9", 90100), lib)
    text = folder / "libcudnn_adv.so.9"
    text.write_text("not a library\n")
    found, _ = load_each([str(lib), str(text)], ENV)
    assert found[str(lib)] is True
    refused = found[str(text)]
    assert isinstance(refused, Unavailable)
    assert refused.reason is Reason.NOT_INSTALLED
    assert refused.message == f"{text} cannot be loaded"
    assert refused.detail in ("invalid ELF header", "file too short")


def test_a_fifo_named_like_a_library_is_not_waited_on(tmp_path: Path,
                                                      cudnn_kit: CudnnKit) -> None:
    lib = tmp_path / "libcudnn.so.9.1.0"
    shutil.copyfile(cudnn_kit.compile("libcudnn.so.9", 90100), lib)
    fifo = tmp_path / "libcudnn_ops.so.9.1.0"
    os.mkfifo(fifo)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(
        library_facts([lib, fifo], [lib, fifo], ENV)[0]), daemon=True)
    worker.start()
    worker.join(30)
    assert done, "reading a FIFO blocked"
    facts = {f.name: f for f in done[0]}  # type: ignore[attr-defined]
    assert isinstance(facts["libcudnn_ops.so.9.1.0"].elf, Unavailable)
    assert "not a regular file" in facts["libcudnn_ops.so.9.1.0"].elf.message
    assert facts["libcudnn_ops.so.9.1.0"].loads is None
    assert facts["libcudnn.so.9.1.0"].loads is True


def test_every_name_of_a_file_shares_its_facts(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "9.1.0")
    (prefix / "lib64/libcudnn_static.a").write_bytes(b"!<arch>\n")
    facts = probe_cudnn_at(str(prefix), Deps(environ=ENV))
    assert isinstance(facts, CudnnFacts)
    libs = {lib.name: lib for lib in facts.installs[0].libraries}
    real = libs["libcudnn_ops.so.9.1.0"]
    assert isinstance(real.elf, ElfFacts)
    assert real.elf.extent == real.size
    assert libs["libcudnn_ops.so.9"].elf == libs["libcudnn_ops.so"].elf == real.elf
    assert all(lib.loads is True for name, lib in libs.items() if ".so" in name)
    assert libs["libcudnn_static.a"].elf is None  # a static archive is not loaded
    assert libs["libcudnn_static.a"].loads is None
    assert all(h.elf is None and h.loads is None for h in facts.installs[0].headers)


@pytest.mark.parametrize("mode", [0o4755, 0o2644, 0o1777])
def test_the_mode_keeps_setuid_setgid_and_sticky(tmp_path: Path, cudnn_kit: CudnnKit,
                                                 mode: int) -> None:
    prefix = cudnn_kit.populate(tmp_path / "cuda", "9.1.0")
    (prefix / "lib64/libcudnn.so.9.1.0").chmod(mode)
    facts = probe_cudnn_at(str(prefix), Deps(environ=ENV))
    assert isinstance(facts, CudnnFacts)
    libs = {lib.name: lib for lib in facts.installs[0].libraries}
    assert libs["libcudnn.so.9.1.0"].mode == mode
    assert libs["libcudnn.so"].mode == mode  # a link shows the mode of what it leads to


# libcudnn.so.9 as it may be met: the body of a C file (each with `#include`s it needs)
_MAINS = {
    "answers": "size_t cudnnGetVersion(void) { return 90100; }",
    "no-symbol": "int cudnnCreate(void *h) { return 0; }",
    "aborts-when-asked": "size_t cudnnGetVersion(void) { abort(); return 0; }",
    "aborts-at-exit": "size_t cudnnGetVersion(void) { return 90100; }\n"
                      "__attribute__((destructor)) static void boom(void) { abort(); }",
    "prints-at-exit": "size_t cudnnGetVersion(void) { return 90100; }\n"
                      '__attribute__((destructor)) static void say(void) { puts("bye"); }',
    "cannot-load": None,  # a text file named like the library
}


def _main_library(tmp_path: Path, kind: str) -> Path:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no C compiler (gcc) to build the library")
    lib = tmp_path / "cuda" / "lib64" / "libcudnn.so.9"
    lib.parent.mkdir(parents=True)
    body = _MAINS[kind]
    if body is None:
        lib.write_text("not a library\n")
        return lib
    src = tmp_path / "main.c"
    src.write_text("#include <stddef.h>\n#include <stdio.h>\n#include <stdlib.h>\n" + body + "\n")
    subprocess.run([gcc, "-shared", "-fPIC", "-Wl,-soname,libcudnn.so.9", "-o", str(lib),
                    str(src)], check=True, capture_output=True)
    return lib


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(_MAINS))
def test_the_loader_reads_the_version_only_as_a_child_of_its_own_would(
        tmp_path: Path, cudnn_kit: CudnnKit, kind: str) -> None:
    """The loader child asks the main library its version after its last load; it counts
    only where `read_version`'s own child would have given that number (its last line, exit
    status 0), else the probe asks in a child of `read_version`: the fact is the same as when
    every version was read that way, and the other libraries' loads are answered whatever
    the version call did."""
    main = _main_library(tmp_path, kind)
    other = main.parent / "libcudnn_ops.so.9"
    shutil.copyfile(cudnn_kit.compile("libcudnn_ops.so.9", 90100), other)
    loads, read = load_each([str(main), str(other)], ENV, str(main))
    alone = read_version(str(main), "cudnnGetVersion", returns_size_t=True, env=ENV)
    assert read == (alone if kind == "answers" else None)
    assert loads[str(other)] is True
    assert (loads[str(main)] is True) is (kind != "cannot-load")
    (main.parent.parent / "include").mkdir()
    facts = probe_cudnn_at(str(main.parent.parent), Deps(environ=ENV))
    assert isinstance(facts, CudnnFacts)
    version = facts.installs[0].library_version
    assert version == (decode_version(alone) if isinstance(alone, int) else alone)
