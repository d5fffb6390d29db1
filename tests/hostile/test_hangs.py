"""Never a hang: a driver whose NVML or libcuda blocks, a torch whose import blocks.

NVML: the compiled fake libnvidia-ml.so.1 (tests/fakes/fake_nvml.c) with FAKE_NVML_INIT_SLEEP
blocks in `nvmlInit`, as a wedged driver does. The probe gives up after its deadline and the
process still exits although the thread in the C call cannot be stopped.

torch: `check host` reads no torch fact, so with an `import torch` that never returns it
neither starts nor waits for the torch child.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import runner

from tests.hostile.proctable import PY, REPO, env, hanging_python

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

BOUND = 60.0  # seconds: generous; without the deadlines these runs never end


def _run(argv: list[str], extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, cwd=REPO, env={**env(), **extra}, capture_output=True,
                              text=True, timeout=BOUND, check=False)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{argv} did not finish within {BOUND:g} s: {e.stderr!r}")


def _gpudoctor(args: list[str], extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    try:
        return runner.gpudoctor(*args, env=extra, timeout=BOUND)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"gpudoctor {args} did not finish within {BOUND:g} s: {e.stderr!r}")


def _wedged(fake_nvml: Path) -> dict[str, str]:
    return {"LD_LIBRARY_PATH": str(fake_nvml), "FAKE_NVML_INIT_SLEEP": "3600",
            "FAKE_NVML_GPUS": "NVIDIA H100 80GB HBM3:9.0:85899345920"}


def test_nvml_probe_times_out_and_the_process_exits(fake_nvml: Path) -> None:
    code = ("import json\n"
            "from gpudoctor.probes.interface import Deps\n"
            "from gpudoctor.probes.nvml import probe_nvml\n"
            "from gpudoctor.snapshot import to_data\n"
            "print(json.dumps(to_data(probe_nvml(Deps(nvml_timeout=1.5)))))\n")
    result = _run([PY, "-c", code], _wedged(fake_nvml))
    assert result.returncode == 0, result.stderr
    fact = json.loads(result.stdout)
    assert fact["unavailable"] == "timeout"
    assert fact["message"].startswith("NVML did not answer within 1.5 s")


def test_nvml_probe_answers_when_init_is_only_slow(fake_nvml: Path) -> None:
    """The same fake, blocking shorter than the deadline: the facts come through."""
    code = ("import json\n"
            "from gpudoctor.probes.interface import Deps\n"
            "from gpudoctor.probes.nvml import probe_nvml\n"
            "from gpudoctor.snapshot import to_data\n"
            "print(json.dumps(to_data(probe_nvml(Deps(nvml_timeout=30)))))\n")
    result = _run([PY, "-c", code], {**_wedged(fake_nvml), "FAKE_NVML_INIT_SLEEP": "0.3"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"


def test_check_finishes_when_nvml_blocks(fake_nvml: Path) -> None:
    """`--timeout` bounds NVML as it bounds `import torch`: the report comes, the driver is
    reported as not answering."""
    result = _gpudoctor(["check", "host", "driver", "--timeout", "2",
                   "--no-torch", "--format", "json"], _wedged(fake_nvml))
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    nvml = json.loads(result.stdout)["environment"]["nvml"]
    assert nvml["unavailable"] == "timeout"
    assert nvml["message"].startswith("NVML did not answer within 2 s")


def test_check_host_does_not_wait_for_a_hanging_torch(tmp_path: Path) -> None:
    hang = hanging_python(tmp_path)
    result = _gpudoctor(["check", "host", "--python", str(hang), "--format",
                   "json"], {})
    assert result.returncode in (0, 1), result.stderr
    data = json.loads(result.stdout)
    assert {f["layer"] for f in data["findings"]} == {"host"}
    torch = data["environment"]["torch"]
    assert (torch["unavailable"], torch["message"]) == (
        "skipped", "not gathered: no selected check reads it")


# ------------------------------------------------------------------------------ readers
# issue 18, Found 5: `fleet DIR` hung for ever on a FIFO named *.json (open blocks until a
# writer comes); `-o FILE` replaced a symbolic link with a file


def test_fleet_skips_a_fifo_named_json(tmp_path: Path) -> None:
    import os

    reports = tmp_path / "reports"
    reports.mkdir()
    good = reports / "node1.json"
    assert _gpudoctor(["check", "--from-snapshot",
                 str(REPO / "tests" / "fixtures" / "envs" / "h100-healthy.json"), "--format",
                 "json", "-o", str(good)], {}).returncode == 0
    os.mkfifo(reports / "stuck.json")  # no writer, ever
    for args in ([str(reports)], [str(reports / "stuck.json"), str(good)]):
        result = _gpudoctor(["fleet", *args, "--format", "json"], {})
        assert result.returncode == 1, result.stderr  # an unreadable report is a problem
        view = json.loads(result.stdout)
        assert view["summary"]["nodes"] == 1
        assert view["unreadable"] == [{"path": str(reports / "stuck.json"),
                                       "reason": "a FIFO (pipe), not a regular file"}]


def test_a_named_stream_that_never_ends_is_refused(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`explain FIFO` / `--from-report FIFO` still read a stream the user names (`<(…)`), but
    within a deadline: a writer that opens the FIFO and never writes or closes is refused."""
    import os
    import threading

    from gpudoctor.cli import inputs

    fifo = tmp_path / "slow"
    os.mkfifo(fifo)
    held: list[int] = []
    done = threading.Event()

    def writer() -> None:  # opens, writes a little, then holds the FIFO open
        fd = os.open(fifo, os.O_WRONLY)
        os.write(fd, b"partial")
        held.append(fd)
        done.wait(30)
        os.close(fd)

    threading.Thread(target=writer, daemon=True).start()
    monkeypatch.setattr(inputs, "STREAM_SECONDS", 1.0)
    try:
        with pytest.raises(inputs.InputError, match="no end of input within 1 s"):
            inputs.read_input(str(fifo), 1 << 20)
    finally:
        done.set()
    with pytest.raises(inputs.InputError, match="a FIFO \\(pipe\\), not a regular file"):
        inputs.read_input(str(fifo), 1 << 20, regular_only=True)


@pytest.mark.parametrize("to", ["file", "dangling"])
def test_output_to_a_symlink_is_refused(tmp_path: Path, to: str) -> None:
    """`-o LINK`: refused with exit 2 naming where the link points; the link and its target
    are left as they were. A link to a device (`-o /dev/stdout`) is written through."""
    target = tmp_path / "target.json"
    if to == "file":
        target.write_text("precious")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    snap = str(REPO / "tests" / "fixtures" / "envs" / "h100-healthy.json")
    result = _gpudoctor(["check", "--from-snapshot", snap, "-o", str(link)],
                  {})
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[0] == (
        f"gpudoctor: error: cannot write {link}: a symbolic link (to {target}); write to the "
        "file it names instead")
    assert link.is_symlink() and os_readlink(link) == str(target)
    assert (target.read_text() == "precious") if to == "file" else not target.exists()
    result = _gpudoctor(["check", "--from-snapshot", snap, "--format", "json",
                   "-o", "/dev/stdout"], {})
    assert result.returncode == 0 and json.loads(result.stdout)["schema_version"]


def os_readlink(path: Path) -> str:
    import os

    return os.readlink(path)


def test_output_to_a_fifo_without_reader_is_an_error_not_a_hang(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    snap = str(REPO / "tests" / "fixtures" / "envs" / "h100-healthy.json")
    result = _gpudoctor(["check", "--from-snapshot", snap, "-o", str(fifo)],
                  {})
    assert result.returncode == 2, result.stderr
    assert "a FIFO that no process reads" in result.stderr
