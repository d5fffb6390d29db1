"""`gpudoctor.cli.output`, the command line's one writer: messages on stderr one a line,
escaped and disarmed, lost rather than failing on a closed stderr; the report written whole to
stdout or a file (atomically, never through a planted symbolic link, never waiting on a FIFO),
or an OutputError that `deliver` turns into one line and exit 2. (The same through real
processes, closed and full streams: tests/hostile/test_output_integrity.py.)"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from gpudoctor.cli import output
from gpudoctor.cli.output import OutputError, announce, deliver, say, write_output
from gpudoctor.renderers.interface import OutputFormat
from gpudoctor.renderers.runners import WORD_JOINER
from tests.hostile.forgery import runner_commands


@contextlib.contextmanager
def deadline(seconds: int = 10) -> Iterator[None]:
    """Fail instead of hanging: what these tests guard against is a wait that never ends."""
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still waiting after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_say_writes_one_line_per_argument_escaped_and_disarmed(
        capsys: pytest.CaptureFixture[str]) -> None:
    say("gpudoctor: error: cannot read /tmp/a\nb\x1b[2J", "::error::forged", "  ##[add-mask]x")
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "gpudoctor: error: cannot read /tmp/a\\nb\\x1b[2J"
    assert len(err.splitlines()) == 3 and runner_commands(err) == []
    assert err.replace(WORD_JOINER, "").splitlines()[1:] == ["::error::forged", "  ##[add-mask]x"]


def test_announce_keeps_gpudoctors_own_commands(capsys: pytest.CaptureFixture[str]) -> None:
    announce("::error title=GD101 driver-present::no driver ##[add-mask]x\n")
    err = capsys.readouterr().err
    assert err.startswith("::error title=GD101 driver-present::no driver ")
    assert "##[" not in err


def test_a_closed_or_missing_stderr_loses_the_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", None)
    say("nowhere to go")
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr("sys.stderr", closed)
    say("nowhere to go")  # ValueError: I/O operation on closed file, swallowed


def test_stderr_that_cannot_encode_gets_ascii(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = io.BytesIO()
    monkeypatch.setattr("sys.stderr", io.TextIOWrapper(raw, encoding="ascii"))
    say("[✓] ≤ 13.0 → done")
    assert raw.getvalue() == b"[+] <= 13.0 -> done\n"


def test_a_report_file_is_written_whole_with_the_usual_mode(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    write_output('{"a": "✓"}\n', str(target), OutputFormat.JSON)
    assert target.read_text(encoding="utf-8") == '{"a": "✓"}\n'
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    target.chmod(0o600)  # a file there keeps its mode
    write_output("two\n", str(target))
    assert target.read_text() == "two\n" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temporary left


def test_runner_commands_in_a_report_are_disarmed(tmp_path: Path) -> None:
    target = tmp_path / "r.txt"
    write_output("fine\n::error::forged\n", str(target))
    assert runner_commands(target.read_text()) == []


def test_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("mine\n")
    link = tmp_path / "r.json"
    link.symlink_to(real)
    with pytest.raises(OutputError, match=r"cannot write .*r\.json: .*a symbolic link \(to "):
        write_output("report\n", str(link))
    assert real.read_text() == "mine\n" and link.is_symlink()
    dangling = tmp_path / "d.json"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputError, match="a symbolic link"):
        write_output("report\n", str(dangling))
    assert not (tmp_path / "nowhere").exists()


def test_a_device_is_written_through_and_a_fifo_without_reader_is_an_error(
        tmp_path: Path) -> None:
    write_output("report\n", os.devnull)
    assert Path(os.devnull).exists() and not Path(os.devnull).is_file()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with deadline(), pytest.raises(OutputError, match="a FIFO that no process reads"):
        write_output("report\n", str(fifo))


def test_a_directory_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match=r"cannot write .*/no/r\.json: No such file"):
        write_output("report\n", str(tmp_path / "no" / "r.json"))


def test_stdout(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
                ) -> None:
    write_output("report ✓\n", "-")
    assert capsysbinary.readouterr().out == "report ✓\n".encode()
    monkeypatch.setattr("sys.stdout", None)
    with pytest.raises(OutputError, match="stdout is closed"):
        write_output("report\n", "-")


def test_deliver_says_why_and_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as e:
        deliver("report\n", str(tmp_path / "no" / "r.txt"), OutputFormat.TEXT)
    assert e.value.exit_code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"gpudoctor: error: cannot write {tmp_path}/no/r.txt: ")

    def gone(*_: object) -> None:
        raise OutputError("stdout: the reader closed the pipe", quiet=True)

    monkeypatch.setattr(output, "write_output", gone)
    with pytest.raises(typer.Exit) as e:
        deliver("report\n", "-", OutputFormat.TEXT)
    assert e.value.exit_code == 2 and capsys.readouterr().err == ""  # a closed pipe: quietly


class Trickle(io.RawIOBase):
    """A raw stream that takes at most `most` bytes a write, as a pipe may."""

    def __init__(self, most: int) -> None:
        self.most, self.got = most, bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: object) -> int:
        data = bytes(b)  # type: ignore[call-overload]
        self.got += data[:self.most]
        return min(len(data), self.most)


def test_short_writes_are_written_on_until_all_is_taken() -> None:
    sink = Trickle(3)
    with deadline():
        output._write_all(sink, b"0123456789")  # type: ignore[arg-type]
    assert bytes(sink.got) == b"0123456789"
    with deadline(), pytest.raises(OSError, match="took none of the report") as e:
        output._write_all(Trickle(0), b"x")  # type: ignore[arg-type]
    assert e.value.errno == errno.EIO
