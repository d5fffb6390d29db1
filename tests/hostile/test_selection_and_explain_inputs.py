"""Inputs a hostile new user gives that used to pick the wrong exit code, through the real CLI.

- `explain PATH`: an argument naming an existing path of any kind (a file, `<(...)`, a FIFO, a
  directory, /dev/zero) is read as an input, bounded, or refused with exit 2; one that only
  looks like a path is a usage error, never matched as error text.
- `check --only '' / ',' / --skip ''` and selections that leave nothing to run (`--only host
  --skip host`) are usage errors (exit 2), not "every check" or "0 checks" with exit 0.
- `install-cudnn --tarball` naming something that is not a readable regular file (/dev/null,
  /dev/zero, a FIFO, `<(...)`) is a usage error (exit 2) before anything is written, like a
  missing file or a directory.

Every case runs `python -m gpudoctor` as a real subprocess.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import runner

from gpudoctor.checks import REGISTRY, select
from tests.cudnn_kit import CudnnKit, gpu_env_fixture, toolkit_fixture  # noqa: F401 - the fixtures

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "tests" / "fixtures" / "envs" / "h100-healthy.json"
NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def base_env() -> dict[str, str]:
    return runner.environment({"COLUMNS": "200"})


def gpudoctor(*args: str, env: dict[str, str] | None = None,
              ) -> subprocess.CompletedProcess[str]:
    """`python -m gpudoctor ARGS`, as a user runs it."""
    return runner.gpudoctor(*args, env=env or base_env(), timeout=120)


def in_bash(script: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A bash command line (for process substitution), gpudoctor spelt `$GD`."""
    gd = f"{shlex.quote(sys.executable)} -m gpudoctor"
    return subprocess.run(["bash", "-c", script.replace("$GD", gd)], capture_output=True,
                          text=True, env=env or base_env(), timeout=120, check=False)


def usage_error(p: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The run exited 2 with one error line holding every needle, no traceback, no report."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stdout + p.stderr, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("gpudoctor: error:")]
    assert len(errors) == 1, p.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert p.stdout == "", p.stdout
    return errors[0]


def diagnoses(p: subprocess.CompletedProcess[str]) -> list[str]:
    """The ids explain --format json found."""
    return [d["id"] for d in json.loads(p.stdout)["diagnoses"]]


# --------------------------------------------------------------------------- explain


@pytest.fixture(name="as_text")
def as_text_fixture() -> list[str]:
    """What explain finds in NO_KERNEL given as a quoted text (the reference for the others)."""
    p = gpudoctor("explain", NO_KERNEL, "--no-probe", "--format", "json")
    assert p.returncode == 0, p.stderr
    found = diagnoses(p)
    assert found, p.stdout
    return found


@pytest.mark.slow
def test_a_quoted_text_and_a_regular_file_agree(tmp_path: Path, as_text: list[str]) -> None:
    log = tmp_path / "train.log"
    log.write_text(f"epoch 1\n{NO_KERNEL}\n")
    p = gpudoctor("explain", str(log), "--no-probe", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert diagnoses(p) == as_text


@pytest.mark.slow
def test_process_substitution_is_read_like_a_file(as_text: list[str]) -> None:
    p = in_bash(f"$GD explain <(echo {shlex.quote(NO_KERNEL)}) --no-probe --format json")
    assert p.returncode == 0, p.stderr
    assert diagnoses(p) == as_text


@pytest.fixture(name="fifo")
def fifo_fixture(tmp_path: Path) -> Iterator[Path]:
    """A FIFO a writer thread fills with a traceback once a reader opens it."""
    path = tmp_path / "pipe"
    os.mkfifo(path)

    def write() -> None:
        with path.open("w") as f:  # blocks until gpudoctor opens it to read
            f.write(f"Traceback (most recent call last):\n{NO_KERNEL}\n")

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    yield path
    if writer.is_alive():  # gpudoctor never opened it: release the writer
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(10)


@pytest.mark.slow
def test_a_fifo_is_read_like_a_file(fifo: Path, as_text: list[str]) -> None:
    p = gpudoctor("explain", str(fifo), "--no-probe", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert diagnoses(p) == as_text


@pytest.mark.slow
@pytest.mark.parametrize(("path", "needle"), [
    ("{tmp}", "is a directory"),
    ("/dev/zero", "larger than 16 MiB"),
    ("/dev/null", "empty"),
])
def test_an_existing_path_that_is_no_text_is_refused(tmp_path: Path, path: str,
                                                    needle: str) -> None:
    name = path.format(tmp=tmp_path)
    if not os.path.exists(name):
        pytest.skip(f"{name} does not exist on this machine")
    usage_error(gpudoctor("explain", name, "--no-probe"), "cannot read", name, needle)


@pytest.mark.slow
@pytest.mark.parametrize("arg", [
    "/nonexistent/train.log", "logs/run-3", "train.log", "stderr.TXT", "job.out", "job.err",
])
def test_a_missing_path_is_a_usage_error_not_a_text(tmp_path: Path, arg: str) -> None:
    p = runner.gpudoctor("explain", arg, "--no-probe", env=base_env(), timeout=120, cwd=tmp_path)
    usage_error(p, f"no such file: {arg}", "quote it")


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    [NO_KERNEL],
    NO_KERNEL.split(),  # unquoted: several arguments, joined
    ["cudaErrorNoKernelImageForDevice"],  # one word that is no path
])
def test_an_error_text_is_still_explained(args: list[str]) -> None:
    p = gpudoctor("explain", *args, "--no-probe", "--format", "json")
    assert p.returncode in (0, 1), p.stderr  # matched or not, it was read as a text
    assert "Traceback" not in p.stderr
    assert json.loads(p.stdout)["command"] == "explain"


# --------------------------------------------------------------------------- selections


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["--only", ""], ["--only", ","], ["--only", "host,"], ["--only", " , host"],
    ["--skip", ""], ["--skip", ","], ["--only", "host", "--skip", "cuda,,"],
])
def test_an_empty_selector_is_a_usage_error(args: list[str]) -> None:
    option = args[-2]
    line = usage_error(gpudoctor("check", *args, "--from-snapshot", str(HEALTHY)),
                       option, "empty check selector")
    assert repr(args[-1]) in line


@pytest.mark.slow
def test_an_empty_positional_selector_stays_a_usage_error() -> None:
    usage_error(gpudoctor("check", "", "--from-snapshot", str(HEALTHY)), "no such check")


@pytest.mark.slow
@pytest.mark.parametrize(("args", "cancelling"), [
    (["--only", "host", "--skip", "host"], ["host"]),
    (["host", "--skip", "Environment"], ["Environment"]),
    (["cudnn", "--skip", "cudnn", "--skip", "driver"], ["cudnn"]),
    (["--skip", "driver,cuda,cudnn,pytorch,host,requirements"],
     ["driver", "cuda", "cudnn", "pytorch", "host", "requirements"]),
])
def test_a_selection_that_leaves_nothing_is_a_usage_error(args: list[str],
                                                          cancelling: list[str]) -> None:
    only = [a for i, a in enumerate(args) if not a.startswith("-") and
            (i == 0 or args[i - 1] != "--skip")]
    skip = [s for i, a in enumerate(args) if i and args[i - 1] == "--skip" for s in a.split(",")]
    if select(REGISTRY, only, skip)[0]:
        pytest.skip(f"the registry has checks that {args} leaves in")
    line = usage_error(gpudoctor("check", *args, "--from-snapshot", str(HEALTHY)),
                       "nothing to run")
    for selector in cancelling:
        assert repr(selector) in line
    for selector in set(skip) - set(cancelling):
        assert repr(selector) not in line.split("leaves out")[0]


@pytest.mark.slow
def test_a_selection_that_leaves_some_checks_runs_them() -> None:
    host, _ = select(REGISTRY, ["host"])
    p = gpudoctor("check", "--only", "host", "--skip", host[0].id, "--from-snapshot",
                  str(HEALTHY), "--format", "json")
    assert p.returncode in (0, 1), p.stderr
    ran = {r["id"] for r in json.loads(p.stdout)["findings"]}
    assert ran == {c.id for c in host[1:]}


@pytest.mark.slow
@pytest.mark.parametrize("args", [["", "GD404"], ["GD404", ","]])
def test_checks_command_refuses_empty_selectors(args: list[str]) -> None:
    usage_error(gpudoctor("checks", *args), "no such check")


# --------------------------------------------------------------------------- install-cudnn


@pytest.fixture(name="child_env")
def child_env_fixture(request: pytest.FixtureRequest) -> dict[str, str]:
    """A child that sees no GPU through the fake NVML (gcc builds it); without gcc the refusals
    come before NVML is asked, so the plain environment does."""
    if shutil.which("gcc") is None:
        return base_env()
    env: dict[str, str] = request.getfixturevalue("gpu_env")()
    return {**env, "NO_COLOR": "1", "COLUMNS": "200"}


@pytest.mark.slow
@pytest.mark.parametrize(("tarball", "needle"), [
    ("/dev/null", "a character device"),
    ("/dev/zero", "a character device"),
    ("{fifo}", "a FIFO"),
])
@pytest.mark.parametrize("dry_run", [True, False])
def test_a_tarball_that_is_no_regular_file_is_a_usage_error(
        toolkit: Path, tmp_path: Path, child_env: dict[str, str], tarball: str, needle: str,
        dry_run: bool) -> None:
    fifo = tmp_path / "cudnn.tgz"
    os.mkfifo(fifo)  # no writer: gpudoctor must refuse it without opening it
    name = tarball.format(fifo=fifo)
    if not os.path.exists(name):
        pytest.skip(f"{name} does not exist on this machine")
    before = CudnnKit.tree_state(toolkit)
    p = gpudoctor("install-cudnn", "--tarball", name, "--prefix", str(toolkit),
                  *(["--dry-run"] if dry_run else []), env=child_env)
    usage_error(p, f"--tarball {name}", needle, "not a tarball file")
    assert CudnnKit.tree_state(toolkit) == before
    assert not (toolkit / ".gpudoctor").exists()


@pytest.mark.slow
def test_a_process_substitution_tarball_is_a_usage_error(
        toolkit: Path, child_env: dict[str, str]) -> None:
    before = CudnnKit.tree_state(toolkit)
    p = in_bash(f"$GD install-cudnn --tarball <(echo x) --prefix {shlex.quote(str(toolkit))}",
                env=child_env)
    usage_error(p, "--tarball /dev/fd/", "a FIFO")
    assert CudnnKit.tree_state(toolkit) == before


def test_an_unreadable_tarball_is_a_usage_error(
        toolkit: Path, tmp_path: Path, child_env: dict[str, str]) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file: an unreadable tarball cannot be made")
    tarball = tmp_path / "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
    tarball.write_bytes(b"\0" * 1024)
    tarball.chmod(0)
    before = CudnnKit.tree_state(toolkit)
    p = gpudoctor("install-cudnn", "--tarball", str(tarball), "--prefix", str(toolkit),
                  env=child_env)
    usage_error(p, "permission denied")
    assert CudnnKit.tree_state(toolkit) == before


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_a_missing_or_directory_tarball_stays_a_usage_error(
        toolkit: Path, tmp_path: Path, child_env: dict[str, str], kind: str) -> None:
    tarball = tmp_path / "cudnn.tgz"
    if kind == "directory":
        tarball.mkdir()
    p = gpudoctor("install-cudnn", "--tarball", str(tarball), "--prefix", str(toolkit),
                  env=child_env)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
