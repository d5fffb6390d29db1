"""tools/refresh_compat.py's Python check, its list of unconfirmed rows and `--stamp`, offline on
the recorded registry answers (tests/fixtures/registry/)."""

from __future__ import annotations

import datetime
import io
from dataclasses import replace
from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from tests.tools.refresh_kit import Recorded, recorded, replace_row, tables_copy
from tools.refresh_compat import main
from tools.refresh_diff import compare_cudnn
from tools.refresh_registry import CudnnBuild

__all__ = ["recorded", "tables_copy"]  # fixtures

TODAY = datetime.date(2026, 11, 26)


def run(recorded: Recorded, *argv: str, today: datetime.date = TODAY) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), fetch=recorded.fetch, out=out, err=err, today=today)
    return code, out.getvalue(), err.getvalue()


def set_known_until(tables: Path, date: str) -> str:
    path = tables / "cuda.toml"
    text = path.read_text(encoding="utf-8")
    lines = [line for line in text.split("\n") if line.startswith("known_until =")]
    assert len(lines) == 1
    path.write_text(text.replace(lines[0], f"known_until = {date}"), encoding="utf-8")
    return path.read_text(encoding="utf-8")


def test_the_recorded_registry_gives_zero_differences_and_names_what_it_cannot_confirm(
        recorded: Recorded, tables_copy: Path) -> None:
    """The shipped tables against the recorded registry: no difference (pins, Python minors,
    cuDNN builds, toolkit releases), and every row the registry cannot confirm, named."""
    code, out, err = run(recorded, "--tables", str(tables_copy))

    lines = out.splitlines()
    assert code == 0, err
    assert "No differences." in lines
    assert "Tables known until 2026-11-26 (0 days ago)" in lines
    unconfirmed = lines[lines.index("No differences.") + 2:]
    assert unconfirmed[0].startswith("Not confirmed by the registry")
    text = "\n".join(unconfirmed)
    assert "2.13.0 cu126/cu129/cu132" in text  # variants only on download.pytorch.org
    assert "2.15.0 cu130" in text
    not_there = next(x for x in unconfirmed if x.startswith("  torch releases not on the registry"))
    assert "1.8.2" in not_there and "2.14.1" in not_there  # the recording holds three releases
    assert any(x.startswith("  cuDNN releases with no nvidia-cudnn wheel") and "7.6.5" in x
               for x in unconfirmed)
    assert any(x.startswith("  CUDA releases with no cuda-toolkit wheel") and "10.2.89" in x
               for x in unconfirmed)
    assert any("GPU catalogue" in x and "462 product names" in x for x in unconfirmed)


def test_python_minors_are_compared_with_the_wheels(recorded: Recorded, tables_copy: Path) -> None:
    """A `python` list that names a minor without a wheel (3.15 for 2.11.0) is a difference."""
    path = tables_copy / "torch.toml"
    text = path.read_text(encoding="utf-8")
    old = 'python = ["3.10", "3.11", "3.12", "3.13", "3.14"]\nvariants = [\n  { tag = "cu126", ' \
          'cudnn = "9.10.2.21", arch_list = ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"], ' \
          'source = "https://github.com/pytorch/pytorch/issues/182250"'
    assert text.count(old) == 1
    path.write_text(text.replace(old, old.replace('"3.14"]', '"3.14", "3.15"]')),
                    encoding="utf-8")

    code, out, _ = run(recorded, "--tables", str(tables_copy), "--only", "torch")

    assert code == 1
    assert ("torch 2.11.0 python: tables [3.10, 3.11, 3.12, 3.13, 3.14, 3.15], PyPI Linux "
            "x86_64 wheels [3.10, 3.11, 3.12, 3.13, 3.14]") in out.splitlines()


def test_a_cudnn_wheel_build_beside_nvidias_tarball_build() -> None:
    """9.15.0: NVIDIA's tarballs are 9.15.0.58, PyPI's wheels 9.15.0.57 (wheel_build); the
    wheel matches, so there is no difference, and without wheel_build there would be one."""
    tables = load_tables()
    wheel = [CudnnBuild("9.15.0.57", "nvidia-cudnn-cu13", 13),
             CudnnBuild("9.15.0.57", "nvidia-cudnn-cu12", 12)]
    page = {b.pin: "https://pypi.org/project/nvidia-cudnn-cu13/9.15.0.57/" for b in wheel}
    row = tables.cudnn_release("9.15.0")
    assert row is not None and (row.build, row.wheel_build) == ("9.15.0.58", "9.15.0.57")
    assert compare_cudnn(tables, wheel, page) == []
    without = replace(tables, cudnn_releases=tuple(
        replace(r, wheel_build=None) if r.version == "9.15.0" else r
        for r in tables.cudnn_releases))
    (diff,) = compare_cudnn(without, wheel, page)
    assert diff.line().startswith("cudnn 9.15.0: build tables 9.15.0.58, PyPI 9.15.0.57")


@pytest.mark.slow
def test_stamp_sets_known_until_only_when_nothing_differs(recorded: Recorded,
                                                          tables_copy: Path) -> None:
    before = set_known_until(tables_copy, "2026-09-01")
    later = datetime.date(2026, 12, 1)

    code, out, err = run(recorded, "--tables", str(tables_copy), "--stamp", today=later)

    assert code == 0, err
    assert "Tables known until 2026-09-01 (91 days ago; older than 35 days: the monthly " \
           "refresh is due)" in out.splitlines()
    assert "Stamped known_until = 2026-12-01 in cuda.toml" in out.splitlines()
    after = (tables_copy / "cuda.toml").read_text(encoding="utf-8")
    assert after == before.replace("known_until = 2026-09-01", "known_until = 2026-12-01")
    assert load_tables(tables_copy).known_until == later


def test_stamp_leaves_the_date_when_a_table_differs(recorded: Recorded, tables_copy: Path) -> None:
    replace_row(tables_copy, "cudnn.toml", "9.19.1", '''[[release]]
version = "9.19.1"
build = "9.19.1.9"
cuda_builds = ["13"]
source = "https://pypi.org/project/nvidia-cudnn-cu13/"
status = "verified"
''')
    before = set_known_until(tables_copy, "2026-09-01")

    code, out, _ = run(recorded, "--tables", str(tables_copy), "--stamp")

    assert code == 1
    assert any(x.startswith("Not stamped: ") for x in out.splitlines())
    assert (tables_copy / "cuda.toml").read_text(encoding="utf-8") == before


@pytest.mark.parametrize("extra", [["--only", "torch"], ["--torch", "2.11.0"]])
def test_stamp_needs_a_run_over_every_table(recorded: Recorded, extra: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        run(recorded, "--stamp", *extra)
    assert exc.value.code == 2
    assert "--stamp needs a run over every table" in capsys.readouterr().err
