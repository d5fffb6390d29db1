"""gpudoctor.compat (the package's __init__): `Tables` and its queries over the bundled tables,
`load_tables` and `known_until`; published facts checked through them, and the package's
modules importing without a cycle."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from gpudoctor.compat import Tables, known_until, load_tables, tables_dir
from gpudoctor.versions import arch_list_supports

TABLES_DIR = Path(__file__).resolve().parents[2] / "compat_tables"


@pytest.mark.parametrize(
    ("cuda", "full", "family", "windows_full"),
    [
        ("10.1", "418.39", None, "418.96"),
        ("10.1.243", "418.39", None, "418.96"),
        ("11.8", "520.61.05", "450.80.02", "520.06"),
        ("12.4", "550.54.14", "525.60.13", "551.61"),
        ("12.4.1", "550.54.15", "525.60.13", "551.78"),
        ("12.4.20240101", "550.54.14", "525.60.13", "551.61"),
        ("11.0", "450.51.05", "450.80.02", "451.48"),
        ("13.0", "580.65.06", "580.65.06", None),
        ("9.2.148", "396.37", None, "398.26"),
    ],
)
def test_cuda_min_driver(
    tables: Tables, cuda: str, full: str, family: str | None, windows_full: str | None
) -> None:
    minimum = tables.cuda_min_driver(cuda)
    assert minimum is not None
    assert (minimum.full, minimum.family, minimum.windows_full) == (full, family, windows_full)
    assert minimum.source.startswith("https://docs.nvidia.com/")


def test_cuda_min_driver_statuses_and_unknowns(tables: Tables) -> None:
    newest = tables.cuda_min_driver("13.4")
    assert newest is not None
    assert (newest.full, newest.status) == (None, "verified")  # 13.4.1 GA: no driver bundled
    assert (newest.family, newest.family_status) == ("580.65.06", "verified")
    twelve = tables.cuda_min_driver("12.4")
    assert twelve is not None
    assert twelve.windows_family == "527.41"
    assert tables.cuda_min_driver("12.7") is None  # there is no public 12.7
    assert tables.cuda_min_driver("7.5") is None
    assert tables.cuda_min_driver("garbage") is None
    assert tables.cuda_min_driver("12") is None


@pytest.mark.parametrize(
    ("driver", "cuda"),
    [
        ("470.82.01", "11.4"),
        ("580.65.06", "13.0"),
        ("535.104.05", "12.2"),
        ("570.124.04", "12.8"),
        ("550.54.14", "12.4"),
        ("550.54.13", "12.4"),  # the branch's CUDA, below the 12.4 GA point release
        ("549.99", "12.3"),  # no R549: the branch below decides
        ("418.39", "10.1"),
        ("610.43.02", "13.3"),
        ("615.20", "13.3"),  # R615 -> 13.4 is unverified: left out unless asked
        ("565.57.01", "12.7"),  # R565 reports a CUDA no toolkit has
        ("560.35.05", "12.6"),
        ("300.10", None),
        ("not-a-driver", None),
    ],
)
def test_cuda_for_driver(tables: Tables, driver: str, cuda: str | None) -> None:
    assert tables.cuda_for_driver(driver) == cuda


def test_cuda_for_driver_with_unverified_rows(tables: Tables) -> None:
    assert tables.cuda_for_driver("615.20", include_unverified=True) == "13.4"
    assert tables.cuda_for_driver("610.43.02", include_unverified=True) == "13.3"


def test_newest(tables: Tables) -> None:
    assert tables.newest_cuda().version == "13.5.0"  # 13.5 GA
    assert tables.newest_cuda(include_unverified=True).version == "13.5.0"
    assert tables.newest_cudnn().version == "9.28.1"  # status "exists": a PyPI version
    assert tables.newest_torch().version == "2.15.0"
    assert tables.newest_torch(include_unverified=True).version == "2.15.0"


def test_cuda_13_4_labels_and_updates(tables: Tables) -> None:
    labels = {r.version: (r.label, r.kind) for r in tables.cuda_releases}
    assert labels["13.4.0"] == ("13.4 Developer Preview", "rc")
    assert labels["13.4.1"] == ("13.4 GA", "ga")
    assert labels["13.4.2"] == ("13.4 Update 1", "update")
    update3 = tables.cuda_min_driver("13.0.3")
    assert update3 is not None and update3.full == "580.126.20"
    for version in ("12.3.2", "12.8.2", "12.9.2", "13.1.2"):
        assert tables.cuda_min_driver(version) is not None, version


def test_cuda_13_4_3_and_13_5_0(tables: Tables) -> None:
    rows = {r.version: r for r in tables.cuda_releases}
    assert (rows["13.4.3"].label, rows["13.4.3"].kind) == ("13.4 Update 2", "update")
    assert (rows["13.5.0"].label, rows["13.5.0"].kind) == ("13.5 GA", "ga")
    assert rows["13.5.0"].min_driver_linux is None  # not bundled on Linux from 13.4
    need = tables.cuda_min_driver("13.5")
    assert need is not None and (need.full, need.family) == (None, "580.65.06")
    r620 = next(b for b in tables.driver_branches if b.branch == 620)
    assert (r620.cuda, r620.status) == ("13.5", "unverified")
    assert tables.cuda_for_driver("620.10", include_unverified=True) == "13.5"


def test_torch_2_1_variants_and_cudnn(tables: Tables) -> None:
    release = tables.torch_release("2.1.0")
    assert release is not None
    assert [(v.tag, v.cuda, v.cudnn) for v in release.variants] == [
        ("cu118", "11.8", "8.7.0.84"),
        ("cu121", "12.1", "8.9.2.26"),
    ]
    assert release.variants[1].index_url == "https://download.pytorch.org/whl/cu121"
    assert release.torchvision == "0.16.0"
    assert release.python == ("3.8", "3.9", "3.10", "3.11")
    assert release.pypi_default == "cu121"  # the PyPI wheel's torch/version.py: 2.1.0+cu121
    assert release.status == "verified"


@pytest.mark.parametrize(
    ("asked", "version"),
    [("2.1", "2.1.0"), ("2.5.1+cu124", "2.5.1"), ("2.13.0+cpu", "2.13.0"), ("1.7.1", "1.7.1")],
)
def test_torch_release_lookup(tables: Tables, asked: str, version: str) -> None:
    release = tables.torch_release(asked)
    assert release is not None
    assert release.version == version


def test_torch_release_unknown(tables: Tables) -> None:
    assert tables.torch_release("2.6.0a0+ecf3bae40a") is None  # NGC-style source build
    assert tables.torch_release("0.4.1") is None
    assert tables.torch_release("") is None


def test_torch_published_rows(tables: Tables) -> None:
    r251 = tables.torch_release("2.5.1")
    assert r251 is not None
    assert (r251.pypi_default, r251.torchvision) == ("cu124", "0.20.1")
    assert {v.cudnn for v in r251.variants} == {"9.1.0.70"}
    r213 = tables.torch_release("2.13.0")
    assert r213 is not None
    assert [v.tag for v in r213.variants] == ["cu126", "cu129", "cu130", "cu132"]
    cu130 = r213.variant("cu130")
    assert cu130 is not None
    assert cu130.cudnn == "9.20.0.48"
    assert cu130.arch_list == ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")  # the wheel: no PTX
    assert r213.variants[3].experimental  # cu132
    r28 = tables.torch_release("2.8.0")
    assert r28 is not None
    assert r28.pypi_default == "cu128"
    cu126 = r28.variant("cu126")
    assert cu126 is not None
    assert "6.0" in (cu126.arch_list or ())
    cu128 = r28.variant("cu128")
    assert cu128 is not None and arch_list_supports(cu128.arch_list or (), "7.0")  # V100
    r211 = tables.torch_release("2.11.0")
    assert r211 is not None
    assert {v.tag: v.cudnn for v in r211.variants if v.tag != "cu126"} == {
        "cu128": "9.19.0.56", "cu130": "9.19.0.56"}
    r115 = tables.torch_release("2.15.0")
    assert r115 is not None
    assert (r115.status, r115.pypi_default) == ("verified", "cu132")
    assert [(v.tag, v.cudnn) for v in r115.variants] == [("cu130", None), ("cu132", "9.26.0.51")]
    r110 = tables.torch_release("1.10.1")
    assert r110 is not None and r110.variant("cu113") is not None


def test_torch_python_minors_are_the_wheels(tables: Tables) -> None:
    """No 3.15 for 2.13.0 or 2.14.x (PyPI has no cp315 wheel of them); 2.15.0 has one."""
    for version in ("2.13.0", "2.14.0", "2.14.1"):
        release = tables.torch_release(version)
        assert release is not None and release.python == ("3.10", "3.11", "3.12", "3.13", "3.14")
    r215 = tables.torch_release("2.15.0")
    assert r215 is not None and r215.python == ("3.11", "3.12", "3.13", "3.14", "3.15")
    r17 = tables.torch_release("1.7.1")
    assert r17 is not None and r17.python == ("3.6", "3.7", "3.8", "3.9")


def test_torch_variants_for_driver_uses_minor_version_compatibility(tables: Tables) -> None:
    # 535.104.05 is the 12.2 Update 2 driver. The cu124 wheel needs 550.54.14 for the full
    # feature set, but PyTorch's wheels rely on minor-version compatibility: 12.x runs on any
    # driver >= 525.60.13. So cu124 comes first by default, cu121 first without MVC.
    tags = [v.tag for v in tables.torch_variants_for_driver("535.104.05", "2.5.1")]
    assert tags == ["cu124", "cu121", "cu118"]
    strict = tables.torch_variants_for_driver("535.104.05", "2.5.1", minor_version_compat=False)
    assert [v.tag for v in strict] == ["cu121", "cu118"]


def test_torch_variants_for_driver_edges(tables: Tables) -> None:
    assert [v.tag for v in tables.torch_variants_for_driver("520.61.05", "2.5.1")] == ["cu118"]
    assert tables.torch_variants_for_driver("450.36.06", "2.5.1") == ()  # below 11.x MVC floor
    r2141 = [v.tag for v in tables.torch_variants_for_driver("580.65.06", "2.14.1")]
    assert r2141 == ["cu132", "cu130", "cu126"]
    assert [v.tag for v in tables.torch_variants_for_driver("575.57.08", "2.14.1")] == ["cu126"]
    newest = [v.tag for v in tables.torch_variants_for_driver("580.65.06")]
    assert newest == ["cu132", "cu130"]  # torch 2.15.0, by MVC
    assert tables.torch_variants_for_driver("575.57.08") == ()
    old = tables.torch_variants_for_driver("418.39", "1.4.0")
    assert [v.tag for v in old] == ["cu101", "cu92"]  # before CUDA 11: the GA driver
    assert tables.torch_variants_for_driver("410.48", "1.4.0")[0].tag == "cu92"
    assert tables.torch_variants_for_driver("580.65.06", "9.9") == ()
    assert tables.torch_variants_for_driver("n/a", "2.5.1") == ()


@pytest.mark.parametrize(
    ("cc", "family"),
    [("sm_86", "Ampere"), ("8.6", "Ampere"), ("86", "Ampere"), ("sm_90a", "Hopper"),
     ("7.5", "Turing"), ("100", "Blackwell"), ("12.0", "Blackwell"), ("3.7", "Kepler")],
)
def test_gpu_arch(tables: Tables, cc: str, family: str) -> None:
    arch = tables.gpu_arch(cc)
    assert arch is not None
    assert arch.family == family


def test_gpu_arch_cuda_range(tables: Tables) -> None:
    kepler = tables.gpu_arch("3.5")
    assert kepler is not None
    assert kepler.last_cuda == "11.8"
    volta = tables.gpu_arch("7.0")
    assert volta is not None
    assert (volta.first_cuda, volta.last_cuda) == ("9.0", "12.9")
    ampere = tables.gpu_arch("8.6")
    assert ampere is not None
    assert (ampere.first_cuda, ampere.last_cuda) == ("11.1", None)
    unknown = tables.gpu_arch("8.8")
    assert unknown is not None
    assert unknown.status == "unverified"
    fermi = tables.gpu_arch("2.1")  # on NVIDIA's legacy page; older than cuda.toml
    assert fermi is not None and (fermi.family, fermi.last_cuda) == ("Fermi", "8.0")
    assert tables.gpu_arch("1.4") is None
    assert tables.gpu_arch("nonsense") is None


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("RTX 3090", "8.6"),
        ("NVIDIA GeForce RTX 3090 Ti", "8.6"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("NVIDIA A10", "8.6"),
        ("Tesla T4", "7.5"),
        ("Tesla V100-SXM2-16GB", "7.0"),
        ("V100", "7.0"),
        ("NVIDIA RTX 6000 Ada Generation", "8.9"),
        ("Quadro RTX 6000", "7.5"),
        ("NVIDIA GeForce GTX 1080", "6.1"),
        ("NVIDIA TITAN Xp", "6.1"),
        ("NVIDIA L40S", "8.9"),
        ("NVIDIA GB200", "10.0"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
        ("NVIDIA RTX A2000 12GB", "8.6"),
        ("NVIDIA RTX 4000 Ada Generation", "8.9"),
        ("NVIDIA RTX 2000 Ada Generation", "8.9"),
        ("NVIDIA GeForce RTX 4050 Laptop GPU", "8.9"),
        ("NVIDIA H20", "9.0"),
    ],
)
def test_find_gpu(tables: Tables, name: str, cc: str) -> None:
    arch = tables.find_gpu(name)
    assert arch is not None, name
    assert arch.cc == cc


@pytest.mark.parametrize("name", ["NVIDIA Tesla Z9", "AMD Radeon", "", "NVIDIA"])
def test_find_gpu_unknown(tables: Tables, name: str) -> None:
    assert tables.find_gpu(name) is None


@pytest.mark.parametrize(
    ("driver_name", "cc"),
    [
        ("NVIDIA A10G", "8.6"),  # AWS g5: secondary row note, not on NVIDIA's page
        ("NVIDIA A10", "8.6"),
        ("NVIDIA L20", "8.9"),
        ("NVIDIA GeForce GTX 1050 Ti", "6.1"),
        ("NVIDIA H20", "9.0"),
        ("NVIDIA RTX 2000 Ada Generation", "8.9"),
    ],
)
def test_product_names_people_type(driver_name: str, cc: str) -> None:
    arch = load_tables().gpu_of_product(driver_name)
    assert arch is not None, driver_name
    assert arch.cc == cc


def test_cudnn_765_and_cuda_10_1(tables: Tables) -> None:
    release = tables.cudnn_release("7.6.5.32")
    assert release is not None
    assert release.version == "7.6.5"
    assert release.cuda_builds == ("9.0", "9.2", "10.0", "10.1", "10.2")
    assert "cudnn-10.1-linux-x64-v7.6.5.32.tgz" in release.tarballs
    assert release.min_driver_for("10.1") == "418.39"
    assert tables.cudnn_release("7.6.5") is release
    assert release in tables.cudnn_for_cuda("10.1")
    assert release in tables.cudnn_for_cuda("10.1.243")
    newest_for_101 = tables.cudnn_for_cuda("10.1")[0]
    assert newest_for_101.version == "8.0.5"  # newest first
    assert tables.cudnn_release("7.6.4") not in tables.cudnn_for_cuda("10.2")


def test_cudnn_9_builds(tables: Tables) -> None:
    v910 = tables.cudnn_release("9.1")
    assert v910 is not None
    assert v910.build == "9.1.0.70"
    assert v910.supports_cuda("12.4")
    assert v910.supports_cuda("11.8")
    assert not v910.supports_cuda("11.7")
    assert v910.min_driver_for("12.4") == "525.60.13"
    v9102 = tables.cudnn_release("9.10.2")
    assert v9102 is not None
    assert v9102.supports_cuda("11.8")
    newest_for_11 = tables.cudnn_for_cuda("11.8")[0]
    assert newest_for_11.version == "9.10.2"  # the last CUDA 11 build
    assert tables.cudnn_for_cuda("13.0")[-1].version == "9.12.0"  # the first CUDA 13 build
    assert tables.cudnn_release("6.0") is None
    assert tables.cudnn_release("x") is None


def test_cudnn_layouts(tables: Tables) -> None:
    v7, v8, v9 = (tables.cudnn_layout(major) for major in (7, 8, 9))
    assert v7 is not None
    assert v7.libraries == ("libcudnn.so.7",)
    assert (v7.version_header, v7.version_multiplier) == ("cudnn.h", 1000)
    assert v8 is not None
    assert len(v8.libraries) == 7
    assert v8.version_multiplier == 1000
    assert "libcudnn_cnn_train.so.8" in v8.libraries
    assert v9 is not None
    assert v9.version_multiplier == 10000
    assert set(v9.libraries) >= {"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9",
                                 "libcudnn_engines_runtime_compiled.so.9",
                                 "libcudnn_heuristic.so.9"}
    assert tables.cudnn_layout(6) is None


def test_cudnn_tarballs(tables: Tables) -> None:
    legacy = tables.cudnn_tarball("/tmp/cudnn-10.1-linux-x64-v7.6.5.32.tgz")
    assert legacy is not None
    assert (legacy.build, legacy.cuda) == ("7.6.5.32", "10.1")
    assert (legacy.include_dir, legacy.lib_dir) == ("cuda/include", "cuda/lib64")
    archive = tables.cudnn_tarball("cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz")
    assert archive is not None
    assert archive.cuda == "12"
    assert archive.lib_dir == "cudnn-linux-x86_64-8.9.7.29_cuda12-archive/lib"
    era83 = tables.cudnn_tarball("cudnn-linux-x86_64-8.3.3.40_cuda11.5-archive.tar.xz")
    assert era83 is not None
    assert era83.cuda == "11.5"
    assert era83.format.cuda_key == "minor"
    assert tables.cudnn_tarball("cudnn-9.0-linux-x64-v7.tgz") is not None  # 7.0 naming
    assert tables.cudnn_tarball("cudnn-linux-x86_64-7.6.5.32_cuda10-archive.tar.xz") is None
    assert tables.cudnn_tarball("cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip") is None
    assert tables.cudnn_tarball("libcudnn8.deb") is None
    fmt = tables.cudnn_tarball_format("8.2.4")
    assert fmt is not None
    assert fmt.include_dir == "cuda/include"


def test_cudnn_gpu_support(tables: Tables) -> None:
    def span(version: str, cuda: str | None = None) -> tuple[str, str] | None:
        row = tables.cudnn_gpu_support(version, cuda)
        return (row.min_cc, row.max_cc) if row else None

    assert span("7.6.5") == ("3.0", "7.5")  # stops at Turing
    assert span("7.6.5", "9.2") == ("3.0", "7.2")  # Turing only with the CUDA 10 builds
    assert span("7.6.5", "10.2") == ("3.0", "7.5")
    assert span("8.7.0") == ("3.5", "9.0")  # the last with Kepler (its cu11 wheel: sm_35)
    assert span("8.8.0") == ("5.0", "9.0")
    assert span("9.0.0") == ("5.0", "9.0")  # cuDNN 9 dropped Kepler; stops at Hopper
    assert span("9.10.2") == ("5.0", "12.0")  # over all builds
    assert span("9.10.2", "12.8") == ("5.0", "12.0")  # Blackwell with CUDA 12.8+
    assert span("9.10.2", "12.6.3") == ("5.0", "9.0")
    assert span("9.10.2", "11.8") == ("5.0", "9.0")
    assert span("9.10.2", "12") == ("5.0", "12.0")  # a bare major: the release's range
    assert span("9.10.2", "garbage") == ("5.0", "12.0")
    assert span("9.11.0") == ("7.5", "12.1")
    assert span("9.17.0", "13") == ("7.5", "12.0")
    assert span("9.28.1", "13.0") == ("7.5", "12.1")
    assert span("6.0.0") is None
    support = tables.cudnn_gpu_support("7.6.5")
    assert support is not None
    assert support.supports("sm_75") and not support.supports("12.0")
    assert not support.supports("garbage")


def test_known_bad_cudnn(tables: Tables) -> None:
    assert tables.known_bad == ()  # no published defect with a source yet
    assert tables.known_bad_cudnn("9.10.0") is None


def test_known_until_is_one_date_in_the_tables(tables: Tables) -> None:
    """cuda.toml's known_until, read by the loader and by the one-file accessor alike."""
    assert isinstance(tables.known_until, datetime.date)
    assert tables.known_until == known_until()  # `refresh_compat.py --stamp` moves the date
    assert tables.known_until >= datetime.date(2026, 11, 4)  # cuda-toolkit 13.5.0 is inside


def test_default_location_is_the_checkout_and_loads() -> None:
    tables = load_tables(TABLES_DIR)  # the checkout's own copy, read afresh
    assert Path(str(tables_dir())).resolve() == TABLES_DIR
    assert load_tables() is load_tables()  # cached
    assert load_tables().cuda_releases == tables.cuda_releases


COMPAT_MODULES = ("gpudoctor.compat", "gpudoctor.compat.rows", "gpudoctor.compat.load",
                  "gpudoctor.compat.advice", "gpudoctor.compat.recommend",
                  "gpudoctor.compat.query", "gpudoctor.compat.query.answer",
                  "gpudoctor.compat.query.cuda", "gpudoctor.compat.query.cudnn",
                  "gpudoctor.compat.query.gpu", "gpudoctor.compat.query.pytorch",
                  "gpudoctor.versions")


@pytest.mark.slow
def test_each_compat_module_imports_alone() -> None:
    """No import cycle in the compat package: each module imports first in a fresh interpreter
    (a cycle shows as an ImportError on a partially initialised module)."""
    import subprocess
    import sys

    for module in COMPAT_MODULES:
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, (module, done.stderr[-2000:])


@pytest.mark.parametrize(("driver", "cuda"), [
    ("390.12", "9.1"),  # R390's beta, below 9.1 GA's 390.46: the branch reports 9.1
    ("390.46", "9.1"),
    ("387.26", "9.0"),  # R387 has no row of its own: the rows below it decide
    ("384.81", "9.0"),
    ("450.36.06", "11.0"),  # the 11.0 RC driver, below 11.0 GA's 450.51.06
    ("418.39", "10.1"),
])
def test_a_driver_reports_its_branchs_cuda(tables: Tables, driver: str, cuda: str) -> None:
    """https://github.com/pytorch/pytorch/issues/16318 (round 6's r9-007: driver 390.12 beside a
    CUDA 9.1.85 toolkit, which GD104 failed): the rule is the branch's, not the GA's point
    release."""
    assert tables.cuda_for_driver(driver) == cuda


# Every release of torch on PyPI (https://pypi.org/pypi/torch/json, read 2026-11-27: 52; the
# registry has no torch before 1.0.0). `tools/refresh_compat.py --only torch` compares the
# tables with the live registry; this keeps the count checked offline.
PYPI_TORCH_RELEASES = (
    "1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.3.0", "1.3.1", "1.4.0", "1.5.0", "1.5.1", "1.6.0",
    "1.7.0", "1.7.1", "1.8.0", "1.8.1", "1.9.0", "1.9.1", "1.10.0", "1.10.1", "1.10.2",
    "1.11.0", "1.12.0", "1.12.1", "1.13.0", "1.13.1", "2.0.0", "2.0.1", "2.1.0", "2.1.1",
    "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1",
    "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0",
    "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0",
)


def test_every_torch_release_on_pypi_is_in_the_tables(tables: Tables) -> None:
    """Complete against the registry's count: each PyPI release has its row (1.8.2, the LTS
    release, was never on PyPI and is the one row more); a post-release is its release's."""
    assert len(PYPI_TORCH_RELEASES) == 52
    assert {r.version for r in tables.torch_releases} == {*PYPI_TORCH_RELEASES, "1.8.2"}
    r101 = tables.torch_release("1.0.1.post2")  # download.pytorch.org's rebuild of 1.0.1
    assert r101 is not None and r101.pypi_default == "cu90"
