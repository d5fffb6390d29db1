"""The arch lists of the download.pytorch.org CUDA variants in compat_tables/torch.toml whose
status is "derived": the TORCH_CUDA_ARCH_LIST of the script that built them (pytorch/builder
manywheel/build.sh, manywheel/build_cuda.sh from 1.11), at the builder commit of each release,
evaluated for the variant's CUDA version on Linux x86_64 (OVERRIDE_TORCH_CUDA_ARCH_LIST unset).

The commit of a release: for 1.9-2.5 the newest commit of builder's release/X.Y branch before
the release's first upload to PyPI (PyPI's upload_time of torch X.Y.Z); for 1.4-1.7, which had
no release branch, the newest commit of builder's main branch before it. The script's arch
section did not change in the weeks before each of these releases, except where the note
below names it.

The method was checked on the wheels: for every release whose PyPI default wheel's arch list
was read in the wheel (1.4 to 2.5), the script's list for that CUDA version equals it
(WHEEL_CHECKED). The lists below were read with `git show <commit>:<path>` in a mirror of
pytorch/builder; this test holds them as data and checks the tables against them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from gpudoctor.checks.pytorch import check_gpu_arch
from gpudoctor.compat import Tables, TorchRelease, TorchVariant
from gpudoctor.compat.rules import arch_in_build
from gpudoctor.model import Status
from gpudoctor.reports.read import read_reports
from tests.checks.envbuilder import reported_env, reported_gpu, reported_torch

BUILDER = "https://github.com/pytorch/builder/blob/{}/{}"
HELDOUT_D = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round5" / "reports-D"

# release -> (pytorch/builder commit, script path): the newest commit before the PyPI upload,
# on release/X.Y from 1.9 on, on main for 1.4-1.7.
SCRIPT_AT: dict[str, tuple[str, str]] = {
    "1.0.0": ("68c413e0e3c5f9c2d8ec647bc922a38867b9a141", "manywheel/build.sh"),
    "1.0.1": ("68c413e0e3c5f9c2d8ec647bc922a38867b9a141", "manywheel/build.sh"),
    "1.1.0": ("68c413e0e3c5f9c2d8ec647bc922a38867b9a141", "manywheel/build.sh"),
    "1.2.0": ("1305888a856a1ea585f3647166af68fd2c03d872", "manywheel/build.sh"),
    "1.3.0": ("d56f6d4de710d0be08c3e1c3f9992c2ffc928580", "manywheel/build.sh"),
    "1.3.1": ("2d91d533eccbe0d859cfe38a9d508fe065f47534", "manywheel/build.sh"),
    "1.4.0": ("091796813dfd978e35ec34f96bebc0276b495c59", "manywheel/build.sh"),
    "1.5.0": ("30850f425c45cb3050570a77e9bfdd321b237083", "manywheel/build.sh"),
    "1.5.1": ("65e9171984cdb54fd8989053f930befac9a5768e", "manywheel/build.sh"),
    "1.6.0": ("8d064bfcfe2e73d89a067dd5f9311828c1792f90", "manywheel/build.sh"),
    "1.7.0": ("c286aade3d1d8f9448d8d6a30d0da1eb1281f4fa", "manywheel/build.sh"),
    "1.7.1": ("3c1d19157273bbd28c7428523c455d6e7aa4453f", "manywheel/build.sh"),
    "1.9.0": ("aea2150b077236c492e86b849ae3dc7a7779c6ce", "manywheel/build.sh"),
    "1.9.1": ("5172c98f5e7542c0aac0b0a5fd238f06e36211ea", "manywheel/build.sh"),
    "1.10.0": ("6d7020eb4af413e0c09f22d7e957f124276a2477", "manywheel/build.sh"),
    "1.10.1": ("f0f41b25781aeb12a59937da169d87aece5a90c5", "manywheel/build.sh"),
    "1.10.2": ("f0f41b25781aeb12a59937da169d87aece5a90c5", "manywheel/build.sh"),
    "1.11.0": ("e77e5d077c1870283a7b391bf58e4857c58fb7f4", "manywheel/build_cuda.sh"),
    "1.12.0": ("17b506673ab5ad1cbec8f204230e7aa980d1aa5b", "manywheel/build_cuda.sh"),
    "1.12.1": ("049415d44cf345cc531962e15160d910b2f9d620", "manywheel/build_cuda.sh"),
    "1.13.0": ("006190cf4f73a7ae74261869ea80b01e780c6a10", "manywheel/build_cuda.sh"),
    "1.13.1": ("d08f22640ad6f332026f26242d458b8d157187be", "manywheel/build_cuda.sh"),
    "2.0.0": ("cb23831325d405ee122e3eb92eac0fc2695a18fe", "manywheel/build_cuda.sh"),
    "2.0.1": ("9f0fad92f342b146272d0f99d3969c2c148e80ba", "manywheel/build_cuda.sh"),
    "2.1.0": ("02ed62c4996a560ff8fa642697d546a09d79cd5a", "manywheel/build_cuda.sh"),
    "2.1.1": ("77901321d9387eeb68ca9e2ddab7562883562cd1", "manywheel/build_cuda.sh"),
    "2.1.2": ("55d40b1b06379fddd0ba14744dc3fdd768530da6", "manywheel/build_cuda.sh"),
    "2.2.0": ("1d444d3c9a9559b3556a1d53a24e63696624e067", "manywheel/build_cuda.sh"),
    "2.2.1": ("50f95dbf9e59be6e667bb833b16c6283c3507f14", "manywheel/build_cuda.sh"),
    "2.2.2": ("af60d11447443059c6c6c7590241a446a33db0f9", "manywheel/build_cuda.sh"),
    "2.3.0": ("e5d769d6406b89e9e115bc8d33e7cb867ec91e30", "manywheel/build_cuda.sh"),
    "2.3.1": ("ba10bae9fe9b93365412297d40bc9a3a3eae6155", "manywheel/build_cuda.sh"),
    "2.4.0": ("55a7a763f573b1d704e29ac52429213948a4fe81", "manywheel/build_cuda.sh"),
    "2.4.1": ("4ce1afeb2262808c1e9707b93682ac66acf2db2a", "manywheel/build_cuda.sh"),
    "2.5.0": ("aec5fb5de2380a9084f4bb430eec4e576066a17c", "manywheel/build_cuda.sh"),
    "2.5.1": ("aec5fb5de2380a9084f4bb430eec4e576066a17c", "manywheel/build_cuda.sh"),
}
# Notes on the windows: 1.7.1 was built while builder changed (e3b1bc07, 2020-12-07, wrote the
# list to a misspelt variable; 3c1d1915, 2020-12-09, fixed it): its PyPI cu102 wheel carries the
# fixed script's list, not the broken one's (";7.5"). 1.13.0: release/1.13 removed 8.6 for CUDA
# 11.x and restored it the same day (1614116a, 006190cf, 2022-10-27); its PyPI cu117 wheel has
# sm_86. 2.5: 047ed9e3 added +PTX to CUDA 12.4 only, reverted (fa48aaf5) before 2.5.0; its PyPI
# cu124 wheel has no PTX.
# release -> {variant: the script's TORCH_CUDA_ARCH_LIST for its CUDA version, sorted}
DERIVED: dict[str, dict[str, tuple[str, ...]]] = {
    "1.2.0": {
        "cu92": ("3.5", "5.0+PTX", "6.0", "6.1", "7.0"),
    },
    "1.3.0": {
        "cu92": ("3.5", "5.0+PTX", "6.0", "6.1", "7.0"),
    },
    "1.3.1": {
        "cu92": ("3.7+PTX", "5.0", "6.0", "6.1", "7.0"),
    },
    "1.4.0": {
        "cu92": ("3.7+PTX", "5.0", "6.0", "6.1", "7.0"),
    },
    "1.5.0": {
        "cu92": ("3.7+PTX", "5.0", "6.0", "6.1", "7.0"),
        "cu101": ("3.7+PTX", "5.0", "6.0", "6.1", "7.0", "7.5"),
    },
    "1.5.1": {
        "cu92": ("3.7+PTX", "5.0", "6.0", "6.1", "7.0"),
        "cu101": ("3.7+PTX", "5.0", "6.0", "6.1", "7.0", "7.5"),
    },
    "1.6.0": {
        "cu92": ("3.7", "5.0", "6.0", "7.0"),
    },
    "1.7.0": {
        "cu92": ("3.7", "5.0", "6.0", "7.0"),
        "cu101": ("3.7", "5.0", "6.0", "7.0", "7.5"),
        "cu110": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0"),
    },
    "1.7.1": {
        "cu92": ("3.7", "5.0", "6.0", "7.0"),
        "cu101": ("3.7", "5.0", "6.0", "7.0", "7.5"),
        "cu110": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0"),
    },
    "1.9.0": {
        "cu111": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "1.9.1": {
        "cu111": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "1.10.0": {
        "cu111": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
        "cu113": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "1.10.1": {
        "cu111": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
        "cu113": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "1.10.2": {
        "cu111": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
        "cu113": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "1.11.0": {
        "cu113": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
        "cu115": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),  # case 11.[1235]
    },
    "1.12.0": {
        "cu113": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
        "cu116": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "1.12.1": {
        "cu113": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
        "cu116": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "1.13.0": {
        "cu116": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "1.13.1": {
        "cu116": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6"),
    },
    "2.1.0": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.1.1": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.1.2": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.2.0": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.2.1": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.2.2": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.3.0": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.3.1": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.4.0": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
        "cu124": ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.4.1": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
        "cu124": ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.5.0": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
        "cu121": ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
    "2.5.1": {
        "cu118": ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
        "cu121": ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    },
}
# release -> (PyPI default variant, the script's list for its CUDA version at SCRIPT_AT): equal
# to the list read in the PyPI wheel (the table's row, status verified or copy).
WHEEL_CHECKED: dict[str, tuple[str, tuple[str, ...]]] = {
    # 1.0's wheels hold no flag string: checked against their fatbins (the table's note)
    "1.0.0": ("cu90", ("3.5", "5.0+PTX", "6.0", "7.0")),
    "1.0.1": ("cu90", ("3.5", "5.0+PTX", "6.0", "7.0")),
    "1.1.0": ("cu90", ("3.5", "5.0+PTX", "6.0", "7.0")),
    "1.2.0": ("cu100", ("3.5", "5.0+PTX", "6.0", "6.1", "7.0", "7.5")),
    "1.3.0": ("cu101", ("3.5", "5.0+PTX", "6.0", "6.1", "7.0", "7.5")),
    "1.3.1": ("cu101", ("3.7+PTX", "5.0", "6.0", "6.1", "7.0", "7.5")),
    "1.4.0": ("cu101", ("3.7+PTX", "5.0", "6.0", "6.1", "7.0", "7.5")),
    "1.5.0": ("cu102", ("3.7+PTX", "5.0", "6.0", "6.1", "7.0", "7.5")),
    "1.5.1": ("cu102", ("3.7+PTX", "5.0", "6.0", "6.1", "7.0", "7.5")),
    "1.6.0": ("cu102", ("3.7", "5.0", "6.0", "7.0", "7.5")),
    "1.7.0": ("cu102", ("3.7", "5.0", "6.0", "7.0", "7.5")),
    "1.7.1": ("cu102", ("3.7", "5.0", "6.0", "7.0", "7.5")),
    "1.9.0": ("cu102", ("3.7", "5.0", "6.0", "7.0")),
    "1.9.1": ("cu102", ("3.7", "5.0", "6.0", "7.0")),
    "1.10.0": ("cu102", ("3.7", "5.0", "6.0", "7.0")),
    "1.10.1": ("cu102", ("3.7", "5.0", "6.0", "7.0")),
    "1.10.2": ("cu102", ("3.7", "5.0", "6.0", "7.0")),
    "1.11.0": ("cu102", ("3.7", "5.0", "6.0", "7.0")),
    "1.12.0": ("cu102", ("3.7", "5.0", "6.0", "7.0")),
    "1.12.1": ("cu102", ("3.7", "5.0", "6.0", "7.0")),
    "1.13.0": ("cu117", ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6")),
    "1.13.1": ("cu117", ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6")),
    "2.0.0": ("cu117", ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6")),
    "2.0.1": ("cu117", ("3.7", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6")),
    "2.1.0": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.1.1": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.1.2": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.2.0": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.2.1": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.2.2": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.3.0": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.3.1": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.4.0": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.4.1": ("cu121", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.5.0": ("cu124", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
    "2.5.1": ("cu124", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")),
}

# Variants the tables leave without an arch list, and why (the test requires exactly these).
EXCLUDED: dict[tuple[str, str], str] = {
    ("1.6.0", "cu101"): "the script writes ';3.7;5.0;6.0;7.0' for CUDA 10.1 (an empty entry: "
                        "builder 8d064bfc, fixed for 1.6.0's successors by 51249bc7)",
    ("1.8.0", "cu111"): "the script's CUDA 11.1 list changed on 1.8.0's release day (builder "
                        "8924a150, 28 minutes after the first PyPI upload): either may have "
                        "built it",
    ("1.8.1", "cu101"): "pytorch/pytorch#57922: a 1.8.1+cu102 wheel from download.pytorch.org "
                        "carries sm_61, sm_75 and compute_37, which the script's CUDA 10 list "
                        "(3.7;5.0;6.0;7.0) lacks: 1.8's download builds did not follow it",
    ("1.8.1", "cu111"): "as 1.8.1 cu101 (pytorch/pytorch#57922)",
    ("1.8.2", "cu102"): "the LTS release was built by a separate pipeline after builder's "
                        "lts/release/1.8 branch forked; what it passed the script is not known",
    ("1.8.2", "cu111"): "the LTS release's separate pipeline, as 1.8.2 cu102",
    **dict.fromkeys(
        (("2.6.0", "cu118"), ("2.6.0", "cu126"), ("2.7.0", "cu118"), ("2.7.1", "cu118")),
        "from 2.6 the script is pytorch/pytorch .ci/manywheel/build_cuda.sh; its snapshot "
        "(4 GB) cannot be brought here and the file index holds it at commits that are no "
        "release's (the releases' commits, from torch/version.py's git_version, e.g. 2.6.0: "
        "2236df17); where the main-branch copies around a release disagree (2.6's cu126 +PTX, "
        "whether 2.7's cu118 kept 3.7) no list is taken"),
    ("2.13.0", "cu129"): "a secondary variant (not in RELEASE.md's 2.13 row); from 2.6 on, as "
                         "2.6.0",
    ("2.15.0", "cu130"): "a secondary variant (pytorch/pytorch#190385); from 2.6 on, as 2.6.0",
}


def _variant(tables: Tables, version: str, tag: str) -> tuple[TorchRelease, TorchVariant]:
    release = tables.torch_release(version)
    assert release is not None and release.version == version, version
    variant = next((v for v in release.variants if v.tag == tag), None)
    assert variant is not None, (version, tag)
    return release, variant


def _row_first(tables: Tables, version: str) -> str:
    """The first version of the [[release]] row that holds `version` (rows share variants)."""
    row = tables.torch_release(version)
    assert row is not None
    return next(r.version for r in tables.torch_releases
                if r.variants == row.variants and r.note == row.note)


@pytest.mark.parametrize(("version", "tag"),
                         [(v, t) for v, lists in DERIVED.items() for t in lists])
def test_a_derived_variant_carries_the_scripts_list(tables: Tables, version: str,
                                                     tag: str) -> None:
    """The table's list is the script's at the release's commit, its status "derived", and its
    source the script at the commit of the first release of its row."""
    _, variant = _variant(tables, version, tag)
    assert variant.arch_list == DERIVED[version][tag]
    assert variant.status == "derived"
    first = _row_first(tables, version)
    assert variant.source == BUILDER.format(*SCRIPT_AT[first])


@pytest.mark.parametrize("version", sorted(WHEEL_CHECKED))
def test_the_script_gives_the_wheels_list_for_the_pypi_default(tables: Tables,
                                                               version: str) -> None:
    """The method's check: where the PyPI default's arch list was read in the wheel (the
    release row's own source and status, not "derived"), the script at that release's commit
    gives the same list for that CUDA version."""
    release, variant = _variant(tables, version, WHEEL_CHECKED[version][0])
    assert release.pypi_default == variant.tag
    assert variant.status is None  # the row's: read in the wheel, as its note says
    assert "VERIFIED from the PyPI wheel" in (release.note or "")
    assert variant.arch_list == WHEEL_CHECKED[version][1]


def test_every_variant_has_an_arch_list_or_a_reasoned_exclusion(tables: Tables) -> None:
    """From 1.4 on, a CUDA variant without an arch list is one EXCLUDED names, and every
    excluded one still lacks it (a list added later must leave the exclusions)."""
    lacking = {(r.version, v.tag) for r in tables.torch_releases for v in r.variants
               if v.arch_list is None}
    assert lacking == set(EXCLUDED)
    assert all(len(why) > 20 for why in EXCLUDED.values())


def test_releases_from_1_9_to_2_5_are_complete(tables: Tables) -> None:
    """Every variant of the builder-era releases with a release branch has its list."""
    for r in tables.torch_releases:
        major, minor = (int(x) for x in r.version.split(".")[:2])
        if (1, 9) <= (major, minor) <= (2, 5) and not r.version.startswith("1.8"):
            assert all(v.arch_list for v in r.variants), r.version


@pytest.mark.parametrize(("version", "tag"),
                         [(v, t) for v, lists in DERIVED.items() for t in lists])
def test_a_derived_list_holds_only_what_its_cuda_compiles(tables: Tables, version: str,
                                                          tag: str) -> None:
    """Rows against rules: every entry is an architecture the variant's CUDA release compiles
    cubins for (a CUDA 9.2 list with 7.5, a CUDA 12 list with 3.7, would be a misreading)."""
    _, variant = _variant(tables, version, tag)
    assert variant.arch_list
    for entry in variant.arch_list:
        cc = re.sub(r"\+PTX$", "", entry)
        assert arch_in_build(tables, variant.cuda, cc).verdict == "sass", (version, tag, entry)


def test_gd404_passes_on_a_report_of_a_derived_variant(tables: Tables) -> None:
    """r7-003.txt (https://github.com/vectorch-ai/ScaleLLM/pull/288): torch 2.4.0+cu124 on an
    A100 80GB PCIe (sm_80), no arch list in the report; labelled healthy with GD404 pass.
    Before the derived list GD404 skipped ("the tables lack the arch list of torch 2.4.0
    cu124")."""
    index: dict[str, Any] = tomllib.loads((HELDOUT_D / "index.toml").read_text("utf-8"))
    label = next(r for r in index["report"] if r["file"] == "r7-003.txt")
    assert "GD404" in label["expect_pass"]
    env = read_reports([("r7-003.txt", (HELDOUT_D / "r7-003.txt").read_text("utf-8"))])
    f = check_gpu_arch.run(env, tables)
    assert f.status is Status.PASS, f
    assert "5.0 6.0 7.0 7.5 8.0 8.6 9.0 (not in the report: the arch list of the torch 2.4.0 " \
           "cu124 wheel, from compat_tables/torch.toml (derived from PyTorch's build script at " \
           "the release's commit, not read in the wheel))" in dict(f.evidence)["arch list"]


def test_gd404_fails_a_gpu_the_derived_list_lacks(tables: Tables) -> None:
    """torch 2.4.0+cu118 on a Tesla K40m (sm_35): CUDA 11.8 still compiles sm_35, so the arch
    rule alone cannot tell (GD404 skipped); the script gave that build 3.7, not 3.5, and no PTX
    (a 3.7 cubin does not run on 3.5), so it fails. The same build runs on a K80 (sm_37)."""
    k40 = reported_env(reported_torch("2.4.0+cu118", "11.8"), reported_gpu("Tesla K40m"))
    f = check_gpu_arch.run(k40, tables)
    assert f.status is Status.FAIL, f
    assert f.message == "torch 2.4.0+cu118 has no kernels for Tesla K40m (sm_35)"
    k80 = reported_env(reported_torch("2.4.0+cu118", "11.8"), reported_gpu("Tesla K80"))
    assert check_gpu_arch.run(k80, tables).status is Status.PASS


def test_a_secondary_list_holds_only_what_its_cuda_compiles(tables: Tables) -> None:
    """The lists read in build_cuda.sh at main-branch commits near a release (status
    secondary: 2.7's cu128, 2.9's and 2.10's cu126 and cu130) against the same rule as the
    derived ones: every entry an architecture the variant's CUDA compiles cubins for."""
    secondary = [(r.version, v) for r in tables.torch_releases for v in r.variants
                 if v.status == "secondary" and v.arch_list]
    assert {(version, v.tag) for version, v in secondary} >= {
        ("2.7.0", "cu128"), ("2.9.0", "cu126"), ("2.9.0", "cu130"), ("2.10.0", "cu130")}
    for version, variant in secondary:
        for entry in variant.arch_list or ():
            cc = re.sub(r"\+PTX$", "", entry)
            assert arch_in_build(tables, variant.cuda, cc).verdict == "sass", (version, entry)


# torch.cuda.get_arch_list() of download.pytorch.org wheels as a PyTorch maintainer printed them
# (https://github.com/pytorch/pytorch/issues/182250, 2026-05-03): (release, variant) -> the list
READ_BY_MAINTAINER = {
    ("2.11.0", "cu126"): ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    ("2.11.0", "cu128"): ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"),
    ("2.10.0", "cu128"): ("7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0"),
}


@pytest.mark.parametrize(("version", "tag"), sorted(READ_BY_MAINTAINER))
def test_the_lists_a_maintainer_printed_are_the_tables(tables: Tables, version: str,
                                                       tag: str) -> None:
    """The comment that gives 2.11.0 cu126's list (the row's only source) also gives two lists
    the tables hold from other sources: all three agree."""
    _, variant = _variant(tables, version, tag)
    assert variant.arch_list == READ_BY_MAINTAINER[(version, tag)]
