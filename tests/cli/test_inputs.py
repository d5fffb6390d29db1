"""`read_input`: the one bounded reader every input path uses (snapshots, pasted reports)."""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path

import pytest

from gpudoctor.cli.inputs import InputError, read_input


def test_reads_a_file_and_drops_a_bom(tmp_path: Path) -> None:
    f = tmp_path / "r.json"
    f.write_bytes(b"\xef\xbb\xbf{\"a\": 1}")
    assert read_input(str(f), 100) == '{"a": 1}'


def test_limit_is_exact(tmp_path: Path) -> None:
    f = tmp_path / "r.txt"
    f.write_bytes(b"x" * 100)
    assert read_input(str(f), 100) == "x" * 100
    with pytest.raises(InputError, match=r"r.txt: 100 bytes, larger than 99 bytes"):
        read_input(str(f), 99)


@pytest.mark.parametrize(("make", "message"), [
    (lambda d: d / "missing", "no such file"),
    (lambda d: d, "is a directory, not a file"),
])
def test_missing_and_directory(tmp_path: Path, make: object, message: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(InputError, match=message):
        read_input(str(path), 1 << 20)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable(tmp_path: Path) -> None:
    f = tmp_path / "secret"
    f.write_text("{}")
    f.chmod(0)
    with pytest.raises(InputError, match="permission denied"):
        read_input(str(f), 100)


def test_endless_device_is_cut() -> None:
    with pytest.raises(InputError, match="/dev/zero: larger than 1 MiB"):
        read_input("/dev/zero", 1 << 20)


def test_fifo_with_an_endless_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)

    def write() -> None:
        try:
            with open(fifo, "wb") as w:
                while True:
                    w.write(b"x" * 65536)
        except OSError:
            pass

    threading.Thread(target=write, daemon=True).start()
    with pytest.raises(InputError, match="larger than 1 MiB"):
        read_input(str(fifo), 1 << 20)


def test_not_utf8_and_empty(tmp_path: Path) -> None:
    f = tmp_path / "bin"
    f.write_bytes(b"ok\x80")
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 2 is 0x80\)"):
        read_input(str(f), 100)
    f.write_bytes(b" \n")
    with pytest.raises(InputError, match="empty"):
        read_input(str(f), 100)


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"hello")))
    assert read_input("-", 10) == "hello"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x" * 11)))
    with pytest.raises(InputError, match="stdin: larger than 10 bytes"):
        read_input("-", 10)
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(InputError, match="stdin: closed"):
        read_input("-", 10)
