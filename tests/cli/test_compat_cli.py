"""`gpudoctor compat ...`: the published answers, text and JSON, and the refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest
import runner
from packaging.version import Version
from runner import invoke

from gpudoctor.compat import STATUSES, load_tables
from gpudoctor.compat.query import (
    QUERIES,
    cudnn_tarball,
)

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


def run(*args: str) -> Any:
    return invoke("compat", *args)


def as_json(*args: str) -> dict[str, Any]:
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def rows(data: dict[str, Any], section: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data["sections"][section]["rows"]
    return found


# --- compat cuda --------------------------------------------------------------------------------


def test_cuda_10_1_text() -> None:
    result = run("cuda", "10.1")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Linux ≥ 418.39, Windows ≥ 418.96" in out
    assert "cudnn-10.1-linux-x64-v7.6.5.32.tgz" in out
    assert "torch 1.8.1 cu101" in out
    assert "minor-version compatibility starts with CUDA 11" in out


def test_cuda_10_1_json() -> None:
    data = as_json("cuda", "10.1")
    assert data["schema_version"] == 1 and data["kind"] == "cuda"
    full = rows(data, "min_driver")[0]
    assert (full["scope"], full["linux"], full["windows"]) == ("full", "418.39", "418.96")
    assert full["source"].startswith("https://") and full["status"] in ("verified", "copy")
    cudnn = {r["version"]: r for r in rows(data, "cudnn")}
    assert cudnn["7.6.5"]["tarball"] == "cudnn-10.1-linux-x64-v7.6.5.32.tgz"
    assert cudnn["7.6.5"]["tarball_seen"] is True
    assert cudnn["7.6.5"]["min_driver"] == "418.39"
    torch = {(v, r["variant"]) for r in rows(data, "torch") for v in r["versions"]}
    assert {("1.4.0", "cu101"), ("1.8.1", "cu101"), ("1.7.1", "cu101")} <= torch
    assert all(r["cuda"] == "10.1" for r in rows(data, "torch"))


def test_cuda_family_floor_and_update_release() -> None:
    data = as_json("cuda", "12.4.1")
    by_scope = {r["scope"]: r for r in rows(data, "min_driver")}
    assert by_scope["full"]["linux"] == "550.54.15"
    assert by_scope["family"]["linux"] == "525.60.13"
    assert by_scope["family"]["status"] == "verified"


def test_cuda_torch_pip_lines_name_the_index() -> None:
    data = as_json("cuda", "12.6")
    pips = {r["pip"] for r in rows(data, "torch")}
    assert "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126" in pips


@pytest.mark.slow
def test_unverified_rows_say_so() -> None:
    result = run("gpu", "sm_88")
    assert result.exit_code == 0, result.output
    assert "[unverified]" in result.stdout
    assert rows(as_json("gpu", "sm_88"), "arch")[0]["status"] == "unverified"
    exists = run("cudnn", "9.28.1")  # only its PyPI version was checked
    assert "[exists]" in exists.stdout


@pytest.mark.slow
def test_cuda_13_4_labels() -> None:
    data = as_json("cuda", "13.4.1")
    releases = {r["version"]: (r["label"], r["kind"]) for r in rows(data, "releases")}
    assert releases == {"13.4.0": ("13.4 Developer Preview", "rc"), "13.4.1": ("13.4 GA", "ga"),
                        "13.4.2": ("13.4 Update 1", "update"),
                        "13.4.3": ("13.4 Update 2", "update")}
    assert "13.4.1  13.4 GA" in run("cuda", "13.4.1").stdout
    update3 = rows(as_json("cuda", "13.0.3"), "min_driver")[0]
    assert (update3["cuda"], update3["linux"]) == ("13.0.3", "580.126.20")


def test_verbose_shows_sources() -> None:
    result = run("cuda", "10.1", "-v")
    assert "source: https://docs.nvidia.com/" in result.stdout
    assert "source:" not in run("cuda", "10.1").stdout


# --- compat cudnn -------------------------------------------------------------------------------


def test_cudnn_7_6_5() -> None:
    data = as_json("cudnn", "7.6.5")
    builds = rows(data, "cuda_builds")
    assert [b["cuda_build"] for b in builds] == ["9.0", "9.2", "10.0", "10.1", "10.2"]
    assert [b["tarball"] for b in builds] == [
        f"cudnn-{c}-linux-x64-v7.6.5.32.tgz" for c in ("9.0", "9.2", "10.0", "10.1", "10.2")]
    assert [b["min_driver"] for b in builds] == ["384.111", "396.26", "410.48", "418.39", "440"]
    assert rows(data, "gpus")[0]["min_cc"] == "3.0"
    assert rows(data, "layout")[0]["libraries"] == ["libcudnn.so.7"]
    text = run("cudnn", "7.6.5").stdout
    assert "CUDA 10.2: cudnn-10.2-linux-x64-v7.6.5.32.tgz; driver ≥ 440" in text


def test_cudnn_build_number_and_torch_bundles() -> None:
    assert as_json("cudnn", "7.6.5.32")["subject"] == "cuDNN 7.6.5"
    assert run("cudnn", "7.6.5.99").exit_code == 1
    data = as_json("cudnn", "9.1.0")
    bundled = {(v, r["variant"]) for r in rows(data, "torch") for v in r["versions"]}
    assert ("2.4.0", "cu124") in bundled and ("2.5.1", "cu118") in bundled


def test_cudnn_9_major_build_tarball_by_scheme() -> None:
    data = as_json("cudnn", "9.28.0")
    by_build = {b["cuda_build"]: b for b in rows(data, "cuda_builds")}
    assert by_build["13"]["tarball"] == "cudnn-linux-x86_64-9.28.0.42_cuda13-archive.tar.xz"
    assert by_build["13"]["tarball_seen"] is False
    assert "(by naming scheme)" in run("cudnn", "9.28.0").stdout


def test_tarball_of_a_range_in_a_minor_era_is_not_guessed() -> None:
    tables = load_tables()
    rel = tables.cudnn_release("8.4.0")
    assert rel is not None
    assert cudnn_tarball(tables, rel, "11.0-11.6") is None
    seen = tables.cudnn_release("8.3.3")
    assert seen is not None
    assert cudnn_tarball(tables, seen, "11.0-11.6") == (
        "cudnn-linux-x86_64-8.3.3.40_cuda11.5-archive.tar.xz", True)


# --- compat driver ------------------------------------------------------------------------------


def test_driver_470() -> None:
    data = as_json("driver", "470.82.01")
    highest = rows(data, "highest_cuda")[0]
    assert (highest["cuda"], highest["status"]) == ("11.4", "derived")
    assert [r["major"] for r in rows(data, "minor_version_compat")] == [11]
    torch = rows(data, "torch")
    assert torch and all(r["variant"] == "cu118" and r["runs"] == "mvc" for r in torch)
    assert torch[0]["pip"] == ("pip install torch==2.7.1 --index-url "
                               "https://download.pytorch.org/whl/cu118")
    assert len({r["version"] for r in torch}) == 3
    text = run("driver", "470.82.01").stdout
    assert "CUDA 11.4" in text and "[derived]" in text
    assert "[minor-version compatibility]" in text


def test_driver_580_runs_cu130_in_full() -> None:
    data = as_json("driver", "580.65.06")
    assert rows(data, "highest_cuda")[0]["cuda"] == "13.0"
    newest = [r for r in rows(data, "torch") if r["version"] == "2.14.1"]
    assert {r["variant"]: r["runs"] for r in newest} == {
        "cu132": "mvc", "cu130": "full", "cu126": "full"}


# --- compat torch -------------------------------------------------------------------------------


@pytest.mark.slow
def test_torch_2_1_0() -> None:
    data = as_json("torch", "2.1.0")
    head = rows(data, "release")[0]
    assert head["torchvision"] == "0.16.0"
    assert head["python"] == ["3.8", "3.9", "3.10", "3.11"]
    assert head["pypi_default"] == "cu121"  # read in the PyPI wheel
    variants = {r["variant"]: r for r in rows(data, "variants")}
    assert set(variants) == {"cu118", "cu121"}
    assert variants["cu118"]["cudnn"] == "8.7.0.84"
    assert variants["cu121"]["cudnn"] == "8.9.2.26" and variants["cu121"]["experimental"]
    assert variants["cu118"]["index_url"] == "https://download.pytorch.org/whl/cu118"
    assert variants["cu118"]["min_driver_mvc"] == "450.80.02"
    text = run("torch", "2.1.0").stdout
    assert "PyPI default cu121" in text and "torchvision 0.16.0" in text
    assert "PyPI default not in the tables" in run("torch", "1.8.2").stdout


@pytest.mark.slow
def test_torch_fixed_rows() -> None:
    v211 = {r["variant"]: r for r in rows(as_json("torch", "2.11.0"), "variants")}
    assert v211["cu130"]["cudnn"] == v211["cu128"]["cudnn"] == "9.19.0.56"
    assert "cuDNN 9.19.0.56" in run("torch", "2.11.0").stdout
    v28 = {r["variant"]: r for r in rows(as_json("torch", "2.8.0"), "variants")}
    assert "7.0" in v28["cu128"]["arch_list"]  # sm_70 is in the cu128 wheel
    v215 = rows(as_json("torch", "2.15.0"), "variants")
    assert [(r["variant"], r["cudnn"]) for r in v215] == [("cu130", None), ("cu132", "9.26.0.51")]
    assert v215[0]["status"] == "secondary"  # announced (RFC), not read in the wheel


def test_torch_local_tag_selects_the_variant() -> None:
    data = as_json("torch", "2.1.0+cu121")
    assert [r["variant"] for r in rows(data, "variants")] == ["cu121"]
    result = run("torch", "2.1.0+cu999")
    assert result.exit_code == 1 and "no cu999 variant" in result.stderr


def test_torch_old_find_links_release() -> None:
    data = as_json("torch", "1.4.0")
    pips = {r["variant"]: r["pip"] for r in rows(data, "variants")}
    assert pips["cu92"] == ("pip install torch==1.4.0+cu92 -f "
                            "https://download.pytorch.org/whl/torch_stable.html")
    assert "(PyPI default)" in run("torch", "1.4.0").stdout


# --- compat gpu ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sm_86", "8.6", "86", "RTX 3090", "NVIDIA GeForce RTX 3090"])
def test_gpu_ampere(name: str) -> None:
    data = as_json("gpu", name)
    arch = rows(data, "arch")[0]
    assert (arch["cc"], arch["family"]) == ("8.6", "Ampere")
    assert "GeForce RTX 3090" in arch["products"]
    assert rows(data, "toolkits")[0]["first_cuda"] == "11.1"
    torch = {v: r for r in rows(data, "torch") for v in r["versions"]}
    assert "cu126" in torch["2.14.1"]["includes"] and "cu130" in torch["2.14.1"]["includes"]
    cudnn = rows(data, "cudnn")
    # every cuDNN from 8.6 on supports Ampere 8.6; 7.6 stops at Turing, 8.0.0-8.0.3 at 8.0
    assert all(r["supported"] for r in cudnn if Version(r["first"]) >= Version("8.6.0"))
    assert not any(r["supported"] for r in cudnn if r["first"] in ("7.6.0", "8.0.0"))


def test_gpu_sm_120_is_not_supported_by_old_cudnn() -> None:
    data = as_json("gpu", "sm_120")
    cudnn = rows(data, "cudnn")
    supported = {(r["first"], r["cuda"]) for r in cudnn if r["supported"]}
    assert not any(Version(first) < Version("9") for first, _ in supported)
    # Blackwell only with the CUDA 12.8+ builds of 9.7-9.10.2, not with their 12.0-12.6 or 11
    assert ("9.7.0", "12.8-12.9") in supported
    assert ("9.7.0", "12.0-12.6") not in supported and ("9.7.0", "11") not in supported
    assert ("9.17.1", "13") in supported
    text = run("gpu", "sm_120").stdout
    assert "cuDNN 7.6.0 - 7.6.5 (CUDA 10.0-10.2 builds): not supported" in text
    assert "cuDNN 7.6.0 - 7.6.5: supported" not in text


def test_gpu_pascal_and_kepler() -> None:
    pascal = as_json("gpu", "GTX 1080")
    torch = {v: r for r in rows(pascal, "torch") for v in r["versions"]}
    assert torch["2.13.0"]["includes"] == ["cu126"]
    assert torch["2.13.0"]["excludes"] == ["cu130", "cu132"]
    assert rows(pascal, "toolkits")[0]["last_cuda"] == "12.9"
    kepler = as_json("gpu", "sm_37")
    torch = {v: r for r in rows(kepler, "torch") for v in r["versions"]}
    assert torch["2.0.1"]["includes"] == ["cu117", "cu118"]
    assert torch["2.14.1"]["includes"] == []
    # arch lists read in the PyPI wheels from 1.4 on (92bf065); only the LTS 1.8.2 lacks one
    assert kepler["sections"]["torch"]["note"] == "arch lists not in the tables for torch 1.8.2"
    # cu92 of 1.4.0, cu113 and cu116 of 1.12.1: lists derived from the builder script at the
    # release's commit (compat_tables/torch.toml, tests/compat/test_arch_lists.py)
    assert torch["1.4.0"]["includes"] == ["cu92", "cu101"]
    assert torch["1.8.1"]["includes"] == ["cu102"]
    assert torch["1.12.1"]["includes"] == ["cu102", "cu113", "cu116"]  # PyPI's wheel has sm_37
    cudnn = {r["first"]: r["supported"] for r in rows(kepler, "cudnn")}
    assert cudnn["8.0.0"] and not cudnn["9.0.0"]


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("cuda", "99.1"), "CUDA 99.1 is not in the tables (newest known: 13.5.0)"),
        (("cuda", "10.3"), "CUDA 10.3 is not in the tables (newest known: 13.5.0; nearest "
                           "known: 10.2, 11.0)"),
        (("cudnn", "7.9.9"), "cuDNN 7.9.9 is not in the tables (newest known: 9.28.1; nearest "
                             "known: 7.6.5, 8.0.0)"),
        (("torch", "0.4.1"), "torch 0.4.1 is not in the tables (newest known: 2.15.0; nearest "
                             "known: 1.0.0)"),
        (("driver", "300.10"), "driver 300.10 is not in the tables (oldest known: 367.48"),
        (("gpu", "sm_99"), "is not in the tables (newest known: sm_121"),
        (("gpu", "RTX 9999"), "'RTX 9999' is not in the tables"),
    ],
)
def test_not_in_the_tables(args: tuple[str, ...], needle: str) -> None:
    result = run(*args)
    assert result.exit_code == 1
    assert needle in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "args",
    [("cuda", "ten"), ("cuda", "10"), ("cudnn", "7.x"), ("driver", "abc"), ("torch", "2.x"),
     ("gpu", "sm_x"), ("gpu", " "), ("cuda", "10.1", "--format", "markdown")],
)
def test_malformed_is_a_usage_error(args: tuple[str, ...]) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


# --- every answer ------------------------------------------------------------------------------

SAMPLES = [("cuda", "10.1"), ("cuda", "13.4"), ("cudnn", "7.6.5"), ("cudnn", "9.10.2"),
           ("driver", "470.82.01"), ("driver", "615.1"), ("torch", "2.1.0"),
           ("torch", "2.15.0"), ("gpu", "sm_86"), ("gpu", "sm_88")]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "query"), SAMPLES)
def test_every_row_has_status_and_source(kind: str, query: str) -> None:
    data = as_json(kind, query)
    text = run(kind, query).stdout
    for section in data["sections"].values():
        assert section["title"] in text
        for row in section["rows"]:
            assert row["source"].startswith("https://")
            assert row["status"] in STATUSES
            if row["status"] not in ("verified", "copy"):
                assert f"[{row['status']}]" in text


@pytest.mark.parametrize(("kind", "query"), SAMPLES)
def test_text_and_json_render_the_same_answer(kind: str, query: str) -> None:
    answer = QUERIES[kind](load_tables(), query)
    text = run(kind, query).stdout
    for section in answer.sections:
        for row in section.rows:
            assert row.text in text
    assert json.loads(run(kind, query, "-f", "json").stdout) == json.loads(
        json.dumps(answer.to_dict()))


# --- only what the tables hold, exactly ---------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("cuda", "12.4.7"), "CUDA 12.4.7 is not in the tables (newest known: {cuda}; nearest "
                             "known: 12.4.0, 12.4.1); `gpudoctor compat cuda 12.4` answers for "
                             "the 12.4 series"),
        (("cuda", "12.7"), "CUDA 12.7 is not in the tables (newest known: {cuda}; nearest "
                           "known: 12.6, 12.8)"),
        (("cudnn", "7.6"), "cuDNN 7.6 is not in the tables (newest known: {cudnn}; nearest "
                           "known: 7.6.0, 7.6.1, 7.6.2, 7.6.3, 7.6.4, 7.6.5)"),
        (("cudnn", "8.9.7.1"), "cuDNN 8.9.7.1 is not in the tables (newest known: {cudnn}; "
                               "nearest known: 8.9.7.29)"),
        (("driver", "999.99"), "driver 999.99 is not in the tables (newest known: R{branch}, "
                               "for CUDA {branch_cuda}); its branch R999 is newer than any they "
                               "hold"),
        (("torch", "2.1"), "torch 2.1 is not in the tables (newest known: {torch}; nearest "
                           "known: 2.1.0, 2.1.1, 2.1.2)"),
    ],
)
def test_a_version_not_held_exactly_is_never_answered_as_another(
        args: tuple[str, ...], message: str) -> None:
    tables = load_tables()
    newest = {"cuda": tables.newest_cuda(include_unverified=True).version,
              "cudnn": tables.newest_cudnn(include_unverified=True).version,
              "torch": tables.newest_torch(include_unverified=True).version,
              "branch": tables.driver_branches[-1].branch,
              "branch_cuda": tables.driver_branches[-1].cuda}
    for fmt in ("text", "json"):
        result = run(*args, "--format", fmt)
        assert result.exit_code == 1, result.output
        assert result.stdout == ""
        assert result.stderr.strip() == f"gpudoctor: {message.format(**newest)}"


@pytest.mark.slow
def test_the_versions_held_exactly_are_answered() -> None:
    assert as_json("cuda", "12.4")["subject"] == "CUDA 12.4"
    assert as_json("cuda", "12.4.1")["subject"] == "CUDA 12.4.1"
    assert as_json("cudnn", "8.9.7.29")["subject"] == "cuDNN 8.9.7"
    newest = load_tables().driver_branches[-1].branch
    assert as_json("driver", f"{newest}.1")["subject"] == f"driver {newest}.1 (Linux)"
    assert as_json("torch", "2.1.0+cu121")["subject"] == "PyTorch 2.1.0"


@pytest.mark.parametrize("spelling", ["sm86", "SM86", "sm_86", "SM_86", "compute_86",
                                      "compute86", "8.6", "86", " sm_86 "])
def test_every_spelling_of_a_compute_capability(spelling: str) -> None:
    assert as_json("gpu", spelling)["subject"] == "GPU sm_86 (Ampere)"


@pytest.mark.parametrize("kind", ["cuda", "cudnn", "driver", "torch", "gpu"])
@pytest.mark.parametrize("digits", ["１２.４", "١٢.٤", "۸.۶", "१२.४"])  # full-width, Arabic-Indic…
def test_non_ascii_digits_are_a_usage_error(kind: str, digits: str) -> None:
    result = run(kind, digits)
    assert result.exit_code == 2, result.output
    assert "non-ASCII digit" in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_non_ascii_digits_through_the_real_command() -> None:
    done = runner.gpudoctor("compat", "cuda", "١٢.٤")
    assert done.returncode == 2, done.stderr
    assert "non-ASCII digit '١' (U+0661)" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
