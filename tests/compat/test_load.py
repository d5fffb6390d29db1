"""gpudoctor.compat.load: the TOML reader and validator. The shipped compat tables against
the schema, and what the loader refuses."""

from __future__ import annotations

import datetime
import itertools
import shutil
from pathlib import Path

import pytest
from packaging.version import Version

from gpudoctor.compat import (
    STATUSES,
    CompatTableError,
    Sourced,
    Tables,
    load_tables,
)
from gpudoctor.compat.load import known_until
from gpudoctor.compat.wheels import pip_line
from gpudoctor.versions import normalize_cc

TABLES_DIR = Path(__file__).resolve().parents[2] / "compat_tables"
TABLE_FILES = ("cuda.toml", "cudnn.toml", "gpu.toml", "torch.toml")


@pytest.fixture(scope="module")
def tables() -> Tables:
    """The checkout's tables, read afresh from their directory."""
    return load_tables(TABLES_DIR)


def all_rows(tables: Tables) -> list[Sourced]:
    groups = (
        tables.cuda_releases, tables.cuda_families, tables.driver_branches,
        tables.cudnn_releases, tables.cudnn_layouts, tables.tarball_formats, tables.known_bad,
        tables.torch_releases, tables.gpu_archs, tables.cudnn_support,
    )
    return [row for group in groups for row in group]


def test_every_row_has_https_source_and_valid_status(tables: Tables) -> None:
    rows = all_rows(tables)
    assert len(rows) > 200
    for row in rows:
        assert row.source.startswith("https://"), row
        assert row.status in STATUSES, row
        assert row.note is None or row.note.strip(), row


def test_versions_parse_and_rows_are_unique(tables: Tables) -> None:
    for group, key in (
        (tables.cuda_releases, "version"), (tables.cudnn_releases, "version"),
        (tables.torch_releases, "version"), (tables.gpu_archs, "cc"),
        (tables.driver_branches, "branch"), (tables.cuda_families, "major"),
        (tables.cudnn_layouts, "major"),
    ):
        keys = [getattr(row, key) for row in group]
        parsed = [Version(k) if isinstance(k, str) else k for k in keys]
        assert len(set(parsed)) == len(parsed), key
        assert parsed == sorted(parsed), f"{key} not sorted oldest first"
    for row in tables.cudnn_releases:
        assert row.build is None or row.build.startswith(row.version + "."), row.version
        for cuda, driver in row.min_driver:
            Version(cuda), Version(driver)


def test_driver_strings_are_kept_as_printed(tables: Tables) -> None:
    drivers = [r.min_driver_linux for r in tables.cuda_releases if r.min_driver_linux]
    assert "580.65.06" in drivers
    assert "520.61.05" in drivers


@pytest.mark.parametrize("column", ["min_driver_linux", "min_driver_windows"])
def test_min_driver_non_decreasing_with_cuda_version(tables: Tables, column: str) -> None:
    previous: tuple[str, Version] | None = None
    for row in tables.cuda_releases:  # sorted by version
        value = getattr(row, column)
        if value is None:
            continue
        if previous is not None:
            assert Version(value) >= previous[1], f"{row.version} {value} < {previous[0]}"
        previous = (row.version, Version(value))


def test_each_cuda_minor_has_exactly_one_ga(tables: Tables) -> None:
    minors: dict[str, list[str]] = {}
    for row in tables.cuda_releases:
        minors.setdefault(row.minor, []).append(row.kind)
    for minor, kinds in minors.items():
        assert kinds.count("ga") == 1, minor


def test_driver_branches_match_ga_rows(tables: Tables) -> None:
    minors = {row.minor for row in tables.cuda_releases}
    for branch in tables.driver_branches:
        if branch.cuda not in minors:  # a CUDA version no toolkit has (R565 reports 12.7)
            assert branch.min_driver is None and branch.status == "secondary", branch.branch
            continue
        if branch.min_driver is None:
            assert branch.status == "unverified"
            continue
        assert branch.status == "derived"
        assert Version(branch.min_driver).release[0] == branch.branch
        minimum = tables.cuda_min_driver(branch.cuda)
        assert minimum is not None
        first = next(r for r in tables.cuda_releases if r.minor == branch.cuda)
        assert branch.min_driver == first.min_driver_linux, branch.cuda


def test_every_torch_variant_cuda_is_in_cuda_table(tables: Tables) -> None:
    minors = {row.minor for row in tables.cuda_releases}
    for release in tables.torch_releases:
        assert release.status == "unverified" or release.variants, release.version
        for variant in release.variants:
            assert variant.cuda in minors, (release.version, variant.tag)
            assert variant.tag == "cu" + variant.cuda.replace(".", "")
            assert variant.index_url.startswith("https://download.pytorch.org/whl/")
            for arch in variant.arch_list or ():
                assert normalize_cc(arch) is not None, arch


def test_every_gpu_row_has_a_family_and_known_cuda(tables: Tables) -> None:
    """A GPU row's CUDA range is in cuda.toml, or (Tesla 1.x, last CUDA 6.5) older than it."""
    minors = {row.minor for row in tables.cuda_releases}
    oldest = min(Version(m) for m in minors)
    for arch in tables.gpu_archs:
        assert arch.family.strip(), arch.cc
        assert normalize_cc(arch.cc) == arch.cc
        for cuda in (arch.first_cuda, arch.last_cuda):
            assert cuda is None or cuda in minors or Version(cuda) < oldest, (arch.cc, cuda)


def test_cudnn_builds_and_matrix_lists_are_consistent(tables: Tables) -> None:
    minors = {row.minor for row in tables.cuda_releases}
    for release in tables.cudnn_releases:
        for build in release.cuda_builds:
            for part in build.split("-"):
                assert part in minors or part in {m.split(".")[0] for m in minors}, build
        for name in release.tarballs:
            parsed = tables.cudnn_tarball(name)
            assert parsed is not None, name
            assert parsed.build == release.build, name
            if "." in parsed.cuda:
                assert release.supports_cuda(parsed.cuda), name
            else:  # one archive per CUDA major
                assert parsed.cuda in {b.split(".")[0] for b in release.cuda_builds}, name
        floor = tables.cudnn_gpu_support(release.version)
        if release.compute_capabilities and floor is not None:
            lowest = min(release.compute_capabilities, key=Version)
            assert lowest == floor.min_cc, release.version


def test_cudnn_support_ranges(tables: Tables) -> None:
    """Every cuDNN release range has one row over all its builds, and per-build rows inside it."""
    wide = {(s.first, s.last): s for s in tables.cudnn_support if s.cuda is None}
    assert len(wide) == len([s for s in tables.cudnn_support if s.cuda is None])
    for row in tables.cudnn_support:
        low, high = Version(row.min_cc), Version(row.max_cc)
        assert low <= high, (row.first, row.cuda)
        assert normalize_cc(row.min_cc) == row.min_cc and normalize_cc(row.max_cc) == row.max_cc
        whole = wide.get((row.first, row.last))
        assert whole is not None, f"{row.first}-{row.last} has no row over all its builds"
        assert Version(whole.min_cc) <= low and high <= Version(whole.max_cc), (row.first, row.cuda)
    for (first, last), row in wide.items():
        builds = [s for s in tables.cudnn_support if s.cuda and (s.first, s.last) == (first, last)]
        if builds:  # the range over all builds is the union of the builds' ranges
            assert row.min_cc == min((s.min_cc for s in builds), key=Version), first
            assert row.max_cc == max((s.max_cc for s in builds), key=Version), first
    ranges = sorted(wide.values(), key=lambda s: Version(s.first))
    for older, newer in itertools.pairwise(ranges):  # no gap, no overlap between ranges
        assert older.last is not None and Version(older.last) < Version(newer.first), older.first
    assert ranges[-1].last is None  # the newest range is open
    for release in tables.cudnn_releases:
        if Version(release.version) >= Version(ranges[0].first):
            assert tables.cudnn_gpu_support(release.version) is not None, release.version


def test_exists_rows_say_so(tables: Tables) -> None:
    """A row whose only evidence is a package version on PyPI has status "exists" and says so."""
    exists = [r for r in all_rows(tables) if r.status == "exists"]
    assert exists
    for row in exists:
        assert row.note is not None and row.note.startswith("Only existence checked"), row
    for row in tables.cudnn_releases:
        if row.note and "pip index versions" in row.note and "not read" in row.note:
            assert row.status == "exists", row.version


def test_pypi_default_variants_carry_the_wheels_arch_list(tables: Tables) -> None:
    """From 1.9 on, the PyPI default wheel was read: its variant has the measured arch list."""
    for release in tables.torch_releases:
        if Version(release.version) < Version("1.9.0") or release.pypi_default is None:
            continue
        default = release.variant(release.pypi_default)
        assert default is not None and default.arch_list, release.version
        assert not any(a.endswith("+PTX") for a in default.arch_list), release.version


def copy_tables(tmp_path: Path) -> Path:
    target = tmp_path / "compat_tables"
    target.mkdir()
    for name in TABLE_FILES:
        shutil.copy(TABLES_DIR / name, target / name)
    return target


def test_copied_tables_load(tmp_path: Path) -> None:
    assert load_tables(copy_tables(tmp_path)).newest_cuda() == load_tables().newest_cuda()


def test_row_without_source_is_refused(tmp_path: Path) -> None:
    directory = copy_tables(tmp_path)
    path = directory / "cuda.toml"
    text = path.read_text(encoding="utf-8")
    row = '[[release]]\nversion = "12.4.0"\nlabel = "12.4 GA"\nkind = "ga"\nstatus = "copy"\n'
    anchor = '[[release]]\nversion = "9.0.76"'
    assert anchor in text
    path.write_text(text.replace(anchor, row + "\n" + anchor, 1), encoding="utf-8")
    with pytest.raises(CompatTableError, match=r"cuda\.toml.*12\.4\.0.*missing 'source'"):
        load_tables(directory)


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        ("cuda.toml", 'status = "copy"', 'status = "probably"', "status"),
        ("cuda.toml", "source = \"https://docs.nvidia.com/cuda/archive",
         "source = \"http://docs.nvidia.com/cuda/archive", "https://"),
        ("cuda.toml", 'min_driver_linux = "384.81"', 'min_driver_linux = "r384"', "not a version"),
        ("cuda.toml", 'version = "9.1.85"', 'version = "9.0.76"', "twice"),
        ("gpu.toml", 'family = "Ampere"', 'famly = "Ampere"', "famly"),
        ("torch.toml", 'tag = "cu118"', 'tag = "rocm6.2"', "variant"),
        ("cudnn.toml", 'cuda_builds = ["9.0", "9.2", "10.0"]', 'cuda_builds = "9.0"', "list"),
        ("gpu.toml", 'max_cc = "7.5"\nsource', 'source', "missing 'max_cc'"),
        ("gpu.toml", 'cuda = "9.0-9.2"', 'cuda = "9.x"', "not allowed"),
        ("gpu.toml", 'cuda = "9.0-9.2"', 'cuda = "10.0-10.2"',
         r"7\.6\.0 \(CUDA 10\.0-10\.2\) twice"),
        ("cudnn.toml", 'status = "exists"', 'status = "exist"', "status"),
        ("torch.toml", 'install = "find-links"\nurl', 'install = "index-url"\nurl',
         "install index-url twice"),
        ("torch.toml", 'install = "find-links"\nurl', 'install = "pip"\nurl', "install"),
        # an aarch64 wheel's lists: compute capabilities, a source and a known status
        ("torch.toml", 'aarch64 = { arch_lists = [["9.0", "10.0", "12.0"]]',
         'aarch64 = { arch_lists = [["sm90"]]', "aarch64: 'arch_lists'"),
        ("torch.toml", 'aarch64 = { arch_lists = [["9.0", "10.0", "12.0"]]',
         'aarch64 = { arch_lists = []', "aarch64: 'arch_lists'"),
        ("torch.toml", 'status = "verified" }', 'status = "sure" }', "aarch64: 'status'"),
    ],
)
def test_malformed_rows_are_refused(
    tmp_path: Path, file: str, old: str, new: str, message: str
) -> None:
    directory = copy_tables(tmp_path)
    path = directory / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(CompatTableError, match=message) as info:
        load_tables(directory)
    assert file in str(info.value)


def test_index_urls_come_from_the_index_rows(tmp_path: Path) -> None:
    """The wheel index of each install method is table data ([[index]]), not code: a changed
    row changes every install line of that method, and a method with no row is refused."""
    directory = copy_tables(tmp_path)
    path = directory / "torch.toml"
    text = path.read_text(encoding="utf-8")
    old = 'url = "https://download.pytorch.org/whl/torch_stable.html"'
    assert old in text
    path.write_text(text.replace(old, 'url = "https://mirror.example/torch_stable.html"'),
                    encoding="utf-8")
    tables = load_tables(directory)
    found = [r for r in tables.torch_releases if r.install == "find-links"]
    assert found, "the tables have find-links releases"
    for release in found:  # 1.1.0 lists only its PyPI default, installed without the index
        tag = next((v.tag for v in release.variants if v.tag != release.pypi_default), None)
        if tag is not None:
            assert pip_line(release, release.variant(tag)).endswith(
                "-f https://mirror.example/torch_stable.html")
    start = text.index("[[index]]\ninstall = \"find-links\"")
    path.write_text(text[:start] + text[text.index("[[index]]", start + 1):], encoding="utf-8")
    with pytest.raises(CompatTableError, match=r"torch\.toml.*no \[\[index\]\] row.*find-links"):
        load_tables(directory)


def test_missing_file_and_bad_toml_are_refused(tmp_path: Path) -> None:
    directory = copy_tables(tmp_path)
    (directory / "gpu.toml").write_text("[[arch]\n", encoding="utf-8")
    with pytest.raises(CompatTableError, match=r"gpu\.toml: not valid TOML"):
        load_tables(directory)
    (directory / "gpu.toml").unlink()
    with pytest.raises(CompatTableError, match=r"gpu\.toml: cannot read"):
        load_tables(directory)
    assert issubclass(CompatTableError, ValueError)


def test_known_until_reads_cuda_toml_alone(tmp_path: Path) -> None:
    directory = copy_tables(tmp_path)
    (directory / "gpu.toml").unlink()  # one file is read: the others may be anything
    assert known_until(directory) == load_tables(TABLES_DIR).known_until
    path = directory / "cuda.toml"
    text = path.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("known_until"))
    path.write_text(text.replace(line, 'known_until = "2026-02-30"'), encoding="utf-8")
    with pytest.raises(CompatTableError, match=r"'known_until' must be a date .*'2026-02-30'"):
        known_until(directory)
    path.write_text(text.replace(line, 'known_until = "2026-11-04"'), encoding="utf-8")
    assert known_until(directory) == datetime.date(2026, 11, 4)  # its string spelling too
    path.write_text(text.replace(line, ""), encoding="utf-8")
    with pytest.raises(CompatTableError, match="missing 'known_until'"):
        known_until(directory)
