"""tools/refresh_compat.py end to end, offline, on recorded registry answers.

The tables are a copy of this checkout's compat_tables/ in tmp_path with rows planted or
dropped, so the expected differences do not depend on whether the live tables are fixed yet.
"""

from __future__ import annotations

import difflib
import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from gpudoctor.compat import load_tables
from tests.tools.refresh_kit import (
    REPO_ROOT,
    Recorded,
    drop_row,
    plant_variant_cudnn,
    recorded,
    replace_row,
    row_span,
    tables_copy,
)
from tools.refresh_compat import main
from tools.refresh_diff import EXISTS

__all__ = ["recorded", "tables_copy"]  # fixtures

TORCH_2110 = ("https://files.pythonhosted.org/packages/1a/c9/82638ef24d7877510f83baf821f5619a61b"
              "45568ce21c0a87a91576510aa/torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl.metadata")
PLANTED = ("torch 2.11.0 cu130: cudnn tables 9.17.1.4, wheel metadata 9.19.0.56 "
           "(Requires-Dist: nvidia-cudnn-cu13==9.19.0.56)")


def run(recorded: Recorded, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), fetch=recorded.fetch, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def changes(before: str, after: str) -> list[tuple[str, list[str], list[str]]]:
    a, b = before.split("\n"), after.split("\n")
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return [(op, a[i1:i2], b[j1:j2]) for op, i1, i2, j1, j2 in ops if op != "equal"]


def only(recorded: Recorded, keep: dict[str, list[str]]) -> None:
    """Serve the cuDNN indexes with only the files of the builds in `keep` (package -> builds)."""
    for package in ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"):
        url = f"https://pypi.org/simple/{package}/"
        data = json.loads(recorded.body(url))
        builds = keep.get(package, [])
        data["files"] = [f for f in data["files"]
                         if any(f"-{b}-" in f["filename"] for b in builds)]
        data["versions"] = builds
        recorded.override[url] = json.dumps(data).encode()


def test_planted_cudnn_disagreement_is_reported(recorded: Recorded, tables_copy: Path) -> None:
    plant_variant_cudnn(tables_copy, "2.11.0", "cu130", "9.17.1.4")
    before = (tables_copy / "torch.toml").read_text(encoding="utf-8")

    code, out, err = run(recorded, "--tables", str(tables_copy))

    assert code == 1, err
    assert PLANTED in out.splitlines()
    assert f"    {TORCH_2110}" in out.splitlines()
    assert "Nothing" not in out and (tables_copy / "torch.toml").read_text() == before
    assert "download.pytorch.org is not read" in out
    assert TORCH_2110 in recorded.asked  # read through PEP 658, after the cp314/cp313 404s


def test_missing_releases_are_reported(recorded: Recorded, tables_copy: Path) -> None:
    drop_row(tables_copy, "torch.toml", "2.15.0")
    drop_row(tables_copy, "cudnn.toml", "9.28.1")
    drop_row(tables_copy, "cuda.toml", "13.5.0")

    code, out, _ = run(recorded, "--tables", str(tables_copy))

    lines = out.splitlines()
    assert code == 1
    assert ("torch 2.15.0: missing from torch.toml; PyPI default cu132 (Requires-Dist: "
            "cuda-toolkit==13.2.2), cuDNN 9.26.0.51") in lines
    assert "cudnn 9.28.1: missing from cudnn.toml; on PyPI as nvidia-cudnn-cu13==9.28.1.4" in lines
    assert "cuda 13.5.0: missing from cuda.toml; on PyPI as cuda-toolkit==13.5.0" in lines
    assert any(line.startswith("  not compared, no CUDA pin") and "1.10.0" in line
               for line in lines)
    assert any("yanked" in line and "nvidia-cudnn-cu13==9.25.0.15" in line for line in lines)


@pytest.mark.parametrize(("kind", "reported"), [("ga", True), ("rc", False)])
def test_a_toolkit_only_on_pypi_as_rc(recorded: Recorded, tables_copy: Path, kind: str,
                                      reported: bool) -> None:
    replace_row(tables_copy, "cuda.toml", "13.4.0", f'''[[release]]
version = "13.4.0"
label = "13.4 {kind.upper()}"
kind = "{kind}"
source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
status = "unverified"
''')
    _, out, _ = run(recorded, "--tables", str(tables_copy), "--only", "cuda")

    line = ("cuda 13.4.0: kind tables ga (13.4 GA), but PyPI has only a pre-release of it "
            "(cuda-toolkit==13.4.0rc1)")
    assert (line in out.splitlines()) is reported


@pytest.mark.slow
def test_write_changes_the_planted_line_and_the_note_only(recorded: Recorded,
                                                          tables_copy: Path) -> None:
    planted = plant_variant_cudnn(tables_copy, "2.11.0", "cu130", "9.17.1.4")
    originals = {p.name: p.read_text(encoding="utf-8") for p in tables_copy.glob("*.toml")}
    lines = originals["torch.toml"].split("\n")
    span = row_span(lines, "torch.toml", "2.11.0")
    assert span is not None
    note = next((lines[i] for i in range(*span) if lines[i].startswith("note = ")), None)

    code, out, err = run(recorded, "--tables", str(tables_copy), "--only", "torch",
                         "--torch", "2.11.0", "--write")

    assert code == 1, err
    after = (tables_copy / "torch.toml").read_text(encoding="utf-8")
    diff = changes(originals["torch.toml"], after)
    assert diff[0] == ("replace", [planted], [planted.replace('"9.17.1.4"', '"9.19.0.56"')])
    (op, old, new), = diff[1:]
    evidence = ("cu130 cuDNN 9.19.0.56 VERIFIED from the PyPI wheel's metadata by "
                f"tools/refresh_compat.py ({TORCH_2110}).")
    if note is None:
        assert (op, old, new) == ("insert", [], [f'note = "{evidence}"'])
    else:
        assert (op, old, new) == ("replace", [note], [f'{note[:-1]} {evidence}"'])
    assert all(p.read_text(encoding="utf-8") == originals[p.name]
               for p in tables_copy.glob("*.toml") if p.name != "torch.toml")
    row = next(r for r in load_tables(tables_copy).torch_releases if r.version == "2.11.0")
    variant = row.variant("cu130")
    assert variant is not None and variant.cudnn == "9.19.0.56"
    assert "Wrote torch.toml" in out

    code, out, _ = run(recorded, "--tables", str(tables_copy), "--only", "torch",
                       "--torch", "2.11.0")
    assert code == 0 and "No differences." in out.splitlines()


@pytest.mark.slow
def test_write_fills_an_unverified_row_from_the_json_api(recorded: Recorded,
                                                         tables_copy: Path) -> None:
    replace_row(tables_copy, "torch.toml", "2.15.0", '''[[release]]
versions = ["2.15.0"]
install = "index-url"
variants = []
source = "https://pypi.org/project/torch/"
status = "unverified"
note = "Seen on PyPI."
''')
    before = (tables_copy / "torch.toml").read_text(encoding="utf-8")

    code, _, err = run(recorded, "--tables", str(tables_copy), "--only", "torch",
                       "--torch", "2.15.0", "--write")

    api = "https://pypi.org/pypi/torch/json"
    said = f"VERIFIED from PyPI's JSON API (requires_dist) by tools/refresh_compat.py ({api})."
    assert code == 1, err
    a = before.split("\n")
    b = (tables_copy / "torch.toml").read_text(encoding="utf-8").split("\n")
    start, end = row_span(a, "torch.toml", "2.15.0") or (0, 0)
    grown = len(b) - len(a)
    assert (b[:start], b[end + grown :]) == (a[:start], a[end:])  # the rest is untouched
    assert b[start : end + grown] == [
        "[[release]]",
        'versions = ["2.15.0"]',
        'install = "index-url"',
        'pypi_default = "cu132"',
        "variants = [",
        '  { tag = "cu132", cudnn = "9.26.0.51" },',
        "]",
        f'source = "{api}"',
        'status = "verified"',
        f'note = "Seen on PyPI. cu132 variant with cuDNN 9.26.0.51 {said} '
        f'PyPI default cu132 {said}"',
        "",
    ]


def cudnn_rows_to_write(recorded: Recorded, tables: Path) -> None:
    """A registry of two cuDNN wheels against tables that lack one row (9.28.1) and one CUDA
    build of another (9.1.1 without CUDA 11): what `--write` can add."""
    only(recorded, {"nvidia-cudnn-cu11": ["9.1.1.17"], "nvidia-cudnn-cu13": ["9.28.1.4"]})
    drop_row(tables, "cudnn.toml", "9.28.1")
    replace_row(tables, "cudnn.toml", "9.1.1", '''[[release]]
version = "9.1.1"
build = "9.1.1.17"
cuda_builds = ["12"]
source = "https://pypi.org/project/nvidia-cudnn-cu12/"
status = "verified"
''')


@pytest.mark.slow
def test_write_adds_a_missing_cudnn_row_and_a_cuda_build(recorded: Recorded,
                                                         tables_copy: Path) -> None:
    cudnn_rows_to_write(recorded, tables_copy)
    before = (tables_copy / "cudnn.toml").read_text(encoding="utf-8")

    code, out, err = run(recorded, "--tables", str(tables_copy), "--only", "cudnn", "--write")

    assert code == 1, err
    assert ("cudnn 9.1.1: no CUDA 11 build in cuda_builds [12]; PyPI has "
            "nvidia-cudnn-cu11==9.1.1.17") in out.splitlines()
    page = "https://pypi.org/project/nvidia-cudnn-cu13/9.28.1.4/"
    diff = changes(before, (tables_copy / "cudnn.toml").read_text(encoding="utf-8"))
    assert diff[:2] == [
        ("replace", ['cuda_builds = ["12"]'], ['cuda_builds = ["11", "12"]']),
        ("insert", [], ['note = "A CUDA 11 build: nvidia-cudnn-cu11==9.1.1.17 exists on PyPI '
                        '(only its existence was checked, no support matrix read; '
                        'tools/refresh_compat.py)."']),
    ]
    block = ["[[release]]", 'version = "9.28.1"', 'build = "9.28.1.4"', 'cuda_builds = ["13"]',
             f'source = "{page}"', f'status = "{EXISTS}"',
             'note = "Build 9.28.1.4 for CUDA 13: nvidia-cudnn-cu13==9.28.1.4 exists on PyPI (only '
             'its existence was checked, no support matrix read; tools/refresh_compat.py)."']
    assert len(diff) == 3 and diff[2][0] == "insert" and [x for x in diff[2][2] if x] == block
    b = (tables_copy / "cudnn.toml").read_text(encoding="utf-8").split("\n")
    at = b.index('version = "9.28.1"') - 1
    assert b[at : at + len(block)] == block and b[at - 1] == b[at + len(block)] == ""
    below = [r.version for r in load_tables(tables_copy).cudnn_releases
             if Version(r.version) < Version("9.28.1")]
    span = row_span(b, "cudnn.toml", max(below, key=Version))
    assert span is not None and span[1] == at  # right after the next lower release
    release = next(r for r in load_tables(tables_copy).cudnn_releases if r.version == "9.28.1")
    assert (release.build, release.cuda_builds, release.source) == ("9.28.1.4", ("13",), page)


def test_a_build_number_that_disagrees(recorded: Recorded, tables_copy: Path) -> None:
    only(recorded, {"nvidia-cudnn-cu13": ["9.19.1.2"]})
    replace_row(tables_copy, "cudnn.toml", "9.19.1", '''[[release]]
version = "9.19.1"
build = "9.19.1.9"
cuda_builds = ["13"]
source = "https://pypi.org/project/nvidia-cudnn-cu13/"
status = "verified"
''')
    code, out, _ = run(recorded, "--tables", str(tables_copy), "--only", "cudnn")

    assert code == 1
    assert ("cudnn 9.19.1: build tables 9.19.1.9, PyPI 9.19.1.2 (nvidia-cudnn-cu13==9.19.1.2)"
            in out.splitlines())


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_network_failure_is_one_line_and_exit_2(tables_copy: Path) -> None:
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    index = f"http://127.0.0.1:{port}/simple/"

    done = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "refresh_compat.py"),
                           "--index", index, "--tables", str(tables_copy)],
                          capture_output=True, text=True, timeout=120, check=False)

    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"refresh_compat: cannot read {index}torch/: ")


def test_a_failure_midway_prints_nothing_else(recorded: Recorded, tables_copy: Path) -> None:
    recorded.fail[TORCH_2110] = "HTTP 503 Service Unavailable"

    code, out, err = run(recorded, "--tables", str(tables_copy), "--write")

    assert (code, out) == (2, "")
    assert err == f"refresh_compat: cannot read {TORCH_2110}: HTTP 503 Service Unavailable" \
                  " (nothing written)\n"


def test_usage_errors_exit_2(recorded: Recorded, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        run(recorded, "--arch-lists")
    assert exc.value.code == 2
    assert "--arch-lists needs --wheels" in capsys.readouterr().err


@pytest.mark.slow
def test_new_rows_that_would_not_load_are_left_out(recorded: Recorded, tables_copy: Path) -> None:
    cudnn_rows_to_write(recorded, tables_copy)
    mirror = "http://mirror.invalid/simple/"  # not https: a row sourced there does not load

    def fetch(url: str, accept: str = "*/*") -> bytes:
        return recorded.fetch(url.replace(mirror, "https://pypi.org/simple/"), accept)

    out, err = io.StringIO(), io.StringIO()
    code = main(["--tables", str(tables_copy), "--only", "cudnn", "--index", mirror, "--write"],
                fetch=fetch, out=out, err=err)

    assert code == 1, err.getvalue()
    text = (tables_copy / "cudnn.toml").read_text(encoding="utf-8")
    assert 'cuda_builds = ["11", "12"]' in text and 'version = "9.28.1"' not in text
    assert any(line.startswith("  left out: the 1 new row(s): with them the tables would not "
                               "load (cudnn.toml:") for line in out.getvalue().splitlines())
