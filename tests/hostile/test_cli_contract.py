"""The command-line contract under hostile conditions, each case a real `python -m gpudoctor`
process: a closed stdout, a full device, a reader that closes the pipe, a file-size limit, an
ASCII-only stream, a snapshot whose strings carry terminal escapes and rich markup, selectors
that name nothing, options out of bounds, and inputs that are huge, endless or impossible.

Every case asserts the exit code, that no traceback reached the user, and the one-line message.
`--from-snapshot` keeps the machine out of it where the machine does not matter (fast).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import runner

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "tests" / "fixtures" / "envs" / "h100-healthy.json"
FAILING = ROOT / "tests" / "fixtures" / "envs" / "pascal-gpu-cu130-torch.json"
GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]
OSC_TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen


DROP = ("PYTHONIOENCODING", "LC_", "PYTHONUTF8")  # the encoding is the one a test states


def base_env(**extra: str) -> dict[str, str]:
    return runner.environment({"PYTHONIOENCODING": "utf-8", **extra}, drop=DROP)


def run(args: Sequence[str], env: dict[str, str] | None = None, stdout: Any = subprocess.PIPE,
        stdin: Any = subprocess.DEVNULL, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """`python -m gpudoctor ARGS` in exactly `env` (default `base_env()`)."""
    return runner.gpudoctor(*args, env=env or base_env(), drop=DROP, timeout=timeout,
                            text=False, stdout=stdout, stdin=stdin)


def stderr_of(p: subprocess.CompletedProcess[bytes]) -> str:
    err = p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert "internal error" not in err, err
    return err


def first_line(p: subprocess.CompletedProcess[bytes]) -> str:
    return stderr_of(p).splitlines()[0] if p.stderr else ""


# --------------------------------------------------------------------------- streams


def test_closed_stdout_is_one_line_exit_2() -> None:
    p = subprocess.run(["sh", "-c", 'exec "$0" -m gpudoctor check --from-snapshot "$1" >&-',
                        sys.executable, str(HEALTHY)], stderr=subprocess.PIPE, env=base_env(),
                       cwd=ROOT, timeout=60, check=False)
    assert p.returncode == 2
    assert first_line(p) == ("gpudoctor: error: stdout is closed, so the report cannot be "
                             "written (write it to a file with -o FILE)")
    assert len(stderr_of(p).splitlines()) == 1


@pytest.mark.parametrize(("snapshot", "args", "code"), [
    (HEALTHY, [], 0), (FAILING, [], 1), (HEALTHY, ["--format", "json"], 0),
    (HEALTHY, ["--only", "nosuch"], 2)])
def test_closed_stderr_changes_no_exit_code(tmp_path: Path, snapshot: Path, args: list[str],
                                            code: int) -> None:
    """A job that closes stderr (`2>&-`) gets the exit code and the report it would get with
    it open: the summary line has nowhere to go, and that is no failure."""
    out = tmp_path / "out"
    p = subprocess.run(["sh", "-c", 'exec "$0" -m gpudoctor check "$@" >"$OUT" 2>&-',
                        sys.executable, "--from-snapshot", str(snapshot), *args],
                       env=base_env(OUT=str(out)), cwd=ROOT, timeout=60, check=False)
    assert p.returncode == code
    if code != 2:
        opened = run(["check", "--from-snapshot", str(snapshot), *args])
        assert opened.returncode == code and out.read_bytes() == opened.stdout


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit"])
def test_full_device_is_one_line_exit_2(fmt: str) -> None:
    with open("/dev/full", "wb") as full:
        p = run(["check", "--from-snapshot", str(HEALTHY), "--format", fmt], stdout=full)
    assert p.returncode == 2
    assert first_line(p) == ("gpudoctor: error: cannot write the report to stdout: "
                             "No space left on device")
    assert len(stderr_of(p).splitlines()) == 1


def test_help_onto_a_full_device() -> None:
    with open("/dev/full", "wb") as full:
        p = run(["check", "--help"], stdout=full)
    assert p.returncode == 2
    assert first_line(p).startswith("gpudoctor: error: cannot write the output: No space left")


def test_reader_closes_the_pipe_quietly() -> None:
    proc = runner.popen("check", "--from-snapshot", str(HEALTHY), "-v", "--format", "json",
                        env=base_env(), drop=DROP, text=False, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child is even up: its write meets a pipe with no reader
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 2
    assert err == ""  # quietly: no message, no "Exception ignored", no traceback


def test_head_1_reads_the_first_line(tmp_path: Path) -> None:
    p = subprocess.run(["sh", "-c", '"$0" -m gpudoctor check --from-snapshot "$1" -v | head -1',
                        sys.executable, str(HEALTHY)], capture_output=True, env=base_env(),
                       cwd=ROOT, timeout=60, check=False)
    assert p.returncode == 0
    assert p.stdout.decode().startswith("Driver (max CUDA it runs)")
    assert "Traceback" not in p.stderr.decode()


def test_file_size_limit_leaves_no_half_report(tmp_path: Path) -> None:
    """`ulimit -f` makes every write past 8 KiB fail with EFBIG (Python ignores SIGXFSZ): the
    report file keeps its old content and no temporary file is left."""
    out = tmp_path / "r.json"
    out.write_text("old report\n")
    p = subprocess.run(["sh", "-c", 'ulimit -f 16; exec "$0" -m gpudoctor check '
                        '--from-snapshot "$1" --format json -v -o "$2"',
                        sys.executable, str(HEALTHY), str(out)], stderr=subprocess.PIPE,
                       env=base_env(), cwd=ROOT, timeout=60, check=False)
    assert p.returncode == 2
    assert first_line(p) == f"gpudoctor: error: cannot write {out}: File too large"
    assert out.read_text() == "old report\n"
    assert [x.name for x in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"},
                                 {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}],
                         ids=["PYTHONIOENCODING=ascii", "LC_ALL=C"])
@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit"])
def test_ascii_stream_gets_ascii(env: dict[str, str], fmt: str) -> None:
    e = base_env(**env)
    if not e["PYTHONIOENCODING"]:
        del e["PYTHONIOENCODING"]
    p = run(["check", "--from-snapshot", str(FAILING), "--format", fmt, "-v"], env=e)
    assert p.returncode == 1, stderr_of(p)  # GD404 fails on this snapshot
    stderr_of(p)
    out = p.stdout.decode("ascii")  # raises if a byte is not ASCII
    if fmt == "text":
        assert "[x] PyTorch" in out and "x GD404" in out and "+ GD101" in out
        assert "-> fix: install a torch build" in out and "CUDA <= 13.0" in out
    elif fmt == "json":
        data = json.loads(out)
        assert data["findings"][0]["message"].endswith("supports CUDA ≤ 13.0")
    elif fmt == "junit":
        failures = [f.get("message", "") for f in ET.fromstring(out).iter("failure")]
        assert any("sm_61" in m for m in failures)
    else:
        assert "[FAIL] | `GD404`" in out


def test_every_help_under_ascii() -> None:
    env = base_env(PYTHONIOENCODING="ascii")
    for cmd in ([], ["check"], ["checks"], ["snapshot"], ["smoke-test"], ["install-cudnn"],
                ["uninstall-cudnn"], ["compat"], ["compat", "gpu"], ["recommend"]):
        p = run([*cmd, "--help"], env=env)
        assert p.returncode == 0, (cmd, stderr_of(p))
        assert "examples:" in p.stdout.decode("ascii"), cmd


# --------------------------------------------------------------------------- hostile strings


@pytest.fixture
def hostile_snapshot(tmp_path: Path) -> Path:
    """A real snapshot whose GPU name carries terminal escapes and whose toolkit path carries
    rich markup, as a snapshot from a stranger could."""
    data = json.loads(FAILING.read_text())  # GD404 fails naming the GPU: in every format
    env = data["environment"]
    env["nvml"]["gpus"][0]["name"] = f"NVIDIA H100{OSC_TITLE}{CLEAR}\u202eevil"
    env["torch"]["runtime"]["devices"][0]["name"] = f"H100 [red]{CLEAR}[/red] [/]"
    env["cuda"]["toolkits"][0]["root"] = "/opt/[bold]cuda[/] [/]\rroot"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit"])
def test_snapshot_strings_cannot_drive_the_terminal(hostile_snapshot: Path, fmt: str) -> None:
    p = run(["check", "--from-snapshot", str(hostile_snapshot), "--format", fmt, "-v"])
    assert p.returncode == 1, stderr_of(p)
    out = p.stdout.decode()
    for raw in ("\x1b", "\x07", "\r", "\u202e"):
        assert raw not in out, (fmt, raw)
    if fmt == "json":
        data = json.loads(out)
        assert data["environment"]["nvml"]["gpus"][0]["name"].startswith(f"NVIDIA H100{OSC_TITLE}")
        assert any(OSC_TITLE in f["message"] for f in data["findings"])
        return
    if fmt == "markdown":  # what a Markdown reader shows: backslash escapes undone
        out = re.sub(r"\\([\\`*_\[\]!|~$])", r"\1", out)
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\u202eevil" in out
    assert "/opt/[bold]cuda[/] [/]\\rroot" in out  # markup printed as it is
    if fmt == "junit":
        ET.fromstring(out)  # XML 1.0 cannot hold ESC at all: escaped, the document parses


def test_recommend_escapes_snapshot_strings(hostile_snapshot: Path) -> None:
    p = run(["recommend", "--from-snapshot", str(hostile_snapshot)])
    stderr_of(p)
    out = p.stdout.decode()
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;pwned\\x07" in out


@pytest.mark.parametrize("args", [["compat", "gpu", f"x{CLEAR}"], ["check", "--format", CLEAR],
                                  ["check", "--only", OSC_TITLE, "--from-snapshot", str(HEALTHY)]])
def test_control_characters_in_argv_are_echoed_escaped(args: list[str]) -> None:
    p = run(args)
    assert p.returncode in (1, 2)
    err = stderr_of(p)
    assert "\x1b" not in err and "\x07" not in err
    assert "\\x1b" in err


def test_markup_in_a_selector_is_printed_not_parsed() -> None:
    p = run(["check", "--only", "[/]", "--only", "[red]x", "--from-snapshot", str(HEALTHY)])
    assert p.returncode == 2
    assert first_line(p) == ("gpudoctor: error: '[/]', '[red]x': no such check "
                             "(see `gpudoctor checks`)")


def test_escape_in_a_path_is_shown_escaped(tmp_path: Path) -> None:
    p = run(["check", "--from-snapshot", str(tmp_path / f"x{CLEAR}.json")])
    assert p.returncode == 2
    assert first_line(p) == f"gpudoctor: error: cannot read {tmp_path}/x\\x1b[2J.json: no such file"


# --------------------------------------------------------------------------- selectors


@pytest.mark.parametrize("args", [["GD999"], ["--only", "GD101,gd9x"], ["--skip", "drivers"],
                                  ["cudnn", "--skip", "torch"]])
def test_selector_naming_no_check_is_exit_2(args: list[str]) -> None:
    p = run(["check", *args, "--from-snapshot", str(HEALTHY)])
    assert p.returncode == 2
    lines = stderr_of(p).splitlines()
    assert lines[0].startswith("gpudoctor: error: '") and lines[0].endswith(
        "no such check (see `gpudoctor checks`)")
    assert lines[1].startswith("  ids: GD101 GD102")
    assert "driver-present" in lines[2] and lines[2].startswith("  slugs: ")
    assert lines[3] == ('  layers: driver ("Driver & GPUs"), cuda, cudnn, pytorch, '
                        'host ("Environment"), requirements')
    assert p.stdout == b""


@pytest.mark.parametrize(("args", "want", "unwanted"), [
    (["Driver & GPUs"], "GD101", "GD501"),
    (["--only", "environment"], "GD504", "GD101"),
    (["CUDNN"], "GD301", "GD401"),
    (["--skip", "driver & gpus", "--skip", "PyTorch,cuDNN,cuda"], "GD501", "GD101"),
])
def test_layer_names_as_printed_are_selectors(args: list[str], want: str, unwanted: str) -> None:
    p = run(["check", *args, "--from-snapshot", str(HEALTHY)])
    assert p.returncode == 0, stderr_of(p)
    out = p.stdout.decode()
    assert want in out and unwanted not in out


# --------------------------------------------------------------------------- option bounds


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "1e9", "abc"])
def test_timeout_must_be_finite_positive_seconds(value: str) -> None:
    p = run(["check", "--timeout", value, "--from-snapshot", str(HEALTHY)])
    assert p.returncode == 2
    assert "Invalid value for '--timeout'" in stderr_of(p)


def test_timeout_from_the_environment_is_checked_too() -> None:
    p = run(["check", "--from-snapshot", str(HEALTHY)], env=base_env(GPUDOCTOR_TIMEOUT="abc"))
    assert p.returncode == 2
    assert "Invalid value for '--timeout' (env var: 'GPUDOCTOR_TIMEOUT')" in stderr_of(p)
    p = run(["snapshot", "--no-torch"], env=base_env(GPUDOCTOR_TIMEOUT="nan"))
    assert p.returncode == 2 and "'--timeout'" in stderr_of(p)


@pytest.mark.parametrize(("option", "value"), [
    ("--steps", "1"), ("--steps", "10001"), ("--warmup", "-1"), ("--warmup", "1001"),
    ("--batch-size", "0"), ("--batch-size", "4097"), ("--timeout", "nan"), ("--timeout", "0"),
])
def test_smoke_test_bounds(option: str, value: str) -> None:
    p = run(["smoke-test", "--device", "cpu", option, value])
    assert p.returncode == 2
    assert f"Invalid value for '{option}'" in stderr_of(p)


def test_smoke_timeout_from_the_environment() -> None:
    p = run(["smoke-test", "--device", "cpu"], env=base_env(GPUDOCTOR_SMOKE_TIMEOUT="inf"))
    assert p.returncode == 2
    assert "(env var: 'GPUDOCTOR_SMOKE_TIMEOUT')" in stderr_of(p)


# --------------------------------------------------------------------------- bounded inputs


def test_dev_zero_is_refused_at_once() -> None:
    t = time.monotonic()
    p = run(["check", "--from-snapshot", "/dev/zero"])
    assert p.returncode == 2
    assert first_line(p) == ("gpudoctor: error: cannot read /dev/zero: larger than 16 MiB, the "
                             "most gpudoctor reads (is it the right file?)")
    assert time.monotonic() - t < 30  # generous: the point is that it ends, not how fast


def test_sparse_2gb_file_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(2 << 30)
    p = run(["check", "--from-snapshot", str(big)])
    assert p.returncode == 2
    assert first_line(p) == (f"gpudoctor: error: cannot read {big}: 2.05e+03 MiB, larger than "
                             "16 MiB, the most gpudoctor reads (is it the right file?)")


@pytest.fixture
def endless_fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO whose writer never stops (until the reader goes)."""
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    stop = threading.Event()

    def write() -> None:
        try:
            with open(fifo, "wb") as f:
                while not stop.is_set():
                    f.write(b"{" * 65536)
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    yield fifo
    stop.set()


def test_endless_fifo_is_refused(endless_fifo: Path) -> None:
    p = run(["check", "--from-snapshot", str(endless_fifo)])
    assert p.returncode == 2
    assert first_line(p).endswith("larger than 16 MiB, the most gpudoctor reads (is it the "
                                  "right file?)")


def test_stdin_is_read_bounded_too() -> None:
    with open("/dev/zero", "rb") as zero:
        p = run(["check", "--from-snapshot", "-"], stdin=zero)
    assert p.returncode == 2
    assert first_line(p).startswith("gpudoctor: error: cannot read stdin: larger than 16 MiB")
    p = runner.gpudoctor("check", "--from-snapshot", "-", "--only", "GD101",
                         input=HEALTHY.read_bytes(), env=base_env(), drop=DROP, timeout=60,
                         text=False)
    assert p.returncode == 0 and b"GD101" in p.stdout


@pytest.mark.parametrize(("path", "value", "field", "why"), [
    (("nvml", "gpus", 0, "compute_capability"), "x.y", "$.nvml.gpus[0].compute_capability",
     "'x.y' is not a compute capability (like 8.6)"),
    (("nvml", "gpus", 0, "memory_total"), -1, "$.nvml.gpus[0].memory_total",
     "-1 must be a whole number ≥ 0"),
    (("nvml", "driver_version"), "abc", "$.nvml.driver_version",
     "'abc' is not a version (like 580.65.06 or 12.4)"),
    (("nvml", "cuda_driver_version"), -12000, "$.nvml.cuda_driver_version",
     "-12000 must be a whole number ≥ 0"),
    (("cuda", "toolkits"), [], "$.toolkits.toolkits",  # the fixture's v1 key, read
     "must not be empty (a fact without any item is unavailable)"),
    (("torch", "runtime", "devices", 0, "capability"), "٨.٦",
     "$.torch.runtime.devices[0].capability", "'٨.٦' is not a compute capability (like 8.6)"),
    (("host", "shm_bytes"), 10**30, "$.host.shm_bytes",
     "a number too large for any fact (more than 64 bits)"),
])
def test_impossible_values_name_the_field(tmp_path: Path, path: tuple[Any, ...], value: Any,
                                          field: str, why: str) -> None:
    data = json.loads(HEALTHY.read_text())
    node = data["environment"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    snap = tmp_path / "impossible.json"
    snap.write_text(json.dumps(data))
    p = run(["check", "--from-snapshot", str(snap)])
    assert p.returncode == 2
    assert first_line(p) == (f"gpudoctor: error: {snap} is not a usable gpudoctor snapshot: "
                             f"{field}: {why}")


@pytest.mark.parametrize(("content", "why"), [
    (b"", "empty"), (b"\xff\xfe{}", "not UTF-8 text (byte 0 is 0xff)"),
    (b"[" * 100000 + b"]" * 100000, ""),  # nested past Python's recursion limit
    (b'{"schema_version": 1, "environment": ' + b"1" * 5000 + b"}", ""),  # a 5000-digit int
])
def test_garbage_inputs(tmp_path: Path, content: bytes, why: str) -> None:
    snap = tmp_path / "garbage.json"
    snap.write_bytes(content)
    p = run(["check", "--from-snapshot", str(snap)])
    assert p.returncode == 2
    assert first_line(p).startswith("gpudoctor: error: ") and str(snap) in first_line(p)
    assert why in first_line(p)


def test_directory_as_snapshot(tmp_path: Path) -> None:
    p = run(["check", "--from-snapshot", str(tmp_path)])
    assert p.returncode == 2
    assert first_line(p) == f"gpudoctor: error: cannot read {tmp_path}: is a directory, not a file"


# --------------------------------------------------------------------------- one shape


def test_debug_after_the_subcommand() -> None:
    p = run(["check", "--debug", "--from-snapshot", str(HEALTHY), "--only", "GD101"])
    assert p.returncode == 0, stderr_of(p)


def test_format_variable_applies_only_where_the_format_exists() -> None:
    p = run(["compat", "cuda", "12.4"], env=base_env(GPUDOCTOR_FORMAT="junit"))
    assert p.returncode == 0, stderr_of(p)
    assert p.stdout.decode().startswith("CUDA 12.4")
    p = run(["check", "--from-snapshot", str(HEALTHY)], env=base_env(GPUDOCTOR_FORMAT="junit"))
    assert p.returncode == 0 and p.stdout.startswith(b"<?xml")
    p = run(["compat", "cuda", "12.4"], env=base_env(GPUDOCTOR_FORMAT="yaml"))
    assert p.returncode == 2
    assert ("GPUDOCTOR_FORMAT='yaml' is not a format (text, json, markdown, junit, "
            "prometheus)") in stderr_of(p)


def test_summary_on_stderr_report_on_stdout() -> None:
    p = run(["check", "--from-snapshot", str(FAILING)])
    assert p.returncode == 1
    assert re.fullmatch(r"gpudoctor: \d+ passed, (\d+ warnings?, )?(\d+ notes?, )?[1-9]\d* failed, "
                        r"\d+ skipped\n", stderr_of(p))
    assert b" passed, " not in p.stdout


def test_text_has_no_trailing_spaces_and_unwrapped_fixes() -> None:
    p = run(["check", "--from-snapshot", str(FAILING), "-v"], env=base_env(COLUMNS="60"))
    assert p.returncode == 1
    lines = p.stdout.decode().splitlines()
    assert all(line == line.rstrip() for line in lines)
    fixes = [line for line in lines if "→ fix:" in line]
    assert any(len(line) > 60 for line in fixes)  # longer than the terminal, still one line
    assert any("--index-url https://download.pytorch.org/whl/cu126" in line for line in fixes)
