"""`compat cuda X.Y` and `compat driver VERSION`."""

from __future__ import annotations

from packaging.version import Version

from gpudoctor.compat import UNVERIFIED, Tables
from gpudoctor.compat.query.answer import (
    Answer,
    NotInTables,
    Row,
    Section,
    build_for,
    cudnn_tarball,
    driver_runs,
    fact,
    not_in_tables,
    parse_arg,
    same_release,
    tag_text,
    torch_series,
    versions_text,
)
from gpudoctor.compat.wheels import pip_line
from gpudoctor.versions import minor_of

TORCH_SERIES_SHOWN = 3  # `compat driver` lists the newest this many torch series it can run


def query_cuda(tables: Tables, text: str) -> Answer:
    """Minimum drivers, cuDNN builds and PyTorch wheels for CUDA "X.Y" (or "X.Y.Z")."""
    version = parse_arg(r"\d+\.\d+(\.\d+)?", text, "CUDA version (X.Y or X.Y.Z)")
    key = minor_of(version)
    minor = f"{key[0]}.{key[1]}"
    releases = [r for r in tables.cuda_releases if minor_of(r.version) == key]
    need = tables.cuda_min_driver(version)
    newest = tables.newest_cuda(include_unverified=True).version
    if not releases or need is None:
        minors = {f"{a}.{b}" for a, b in (minor_of(r.version) for r in tables.cuda_releases)}
        known = sorted(minors) if version.count(".") == 1 else [
            r.version for r in tables.cuda_releases]
        raise not_in_tables("CUDA", version, known, newest)
    if version.count(".") == 2 and not any(same_release(r.version, version) for r in releases):
        raise not_in_tables("CUDA", version, [r.version for r in releases], newest,
                            f"`gpudoctor compat cuda {minor}` answers for the {minor} series")
    ga = next((r for r in releases if r.version == need.cuda),
              next((r for r in releases if r.kind == "ga"), releases[0]))
    rel_rows = tuple(fact(f"{r.version}  {r.label}: Linux driver ≥ {r.min_driver_linux or '?'}, "
                          f"Windows ≥ {r.min_driver_windows or '?'}", r, version=r.version,
                          label=r.label, kind=r.kind, min_driver_linux=r.min_driver_linux,
                          min_driver_windows=r.min_driver_windows) for r in releases)
    full = Row(f"full feature set (CUDA {need.cuda}): Linux ≥ {need.full or '?'}, Windows ≥ "
               f"{need.windows_full or '?'}",
               (("scope", "full"), ("cuda", need.cuda), ("linux", need.full),
                ("windows", need.windows_full)), need.status, need.source,
               ga.note)
    drivers = [full]
    if need.family and need.family_source and need.family_status:
        drivers.append(Row(
            f"minor-version compatibility (any CUDA {key[0]}.x): Linux ≥ {need.family}, "
            f"Windows ≥ {need.windows_family or '?'}",
            (("scope", "family"), ("cuda", f"{key[0]}.x"), ("linux", need.family),
             ("windows", need.windows_family)), need.family_status, need.family_source))
    cudnn = []
    for rel in tables.cudnn_for_cuda(minor):
        build = build_for(rel, minor) or minor
        tarball = cudnn_tarball(tables, rel, build)
        name = ("tarball name not in the tables" if tarball is None
                else tarball[0] + ("" if tarball[1] else " (by naming scheme)"))
        drv = rel.min_driver_for(minor)
        bad = tables.known_bad_cudnn(rel.version)
        cudnn.append(fact(
            f"{rel.version}{f' ({rel.build})' if rel.build else ''} CUDA {build} build: {name}"
            + (f"; driver ≥ {drv}" if drv else "") + (f"; KNOWN BAD: {bad}" if bad else ""),
            rel, version=rel.version, build=rel.build, cuda_build=build,
            tarball=tarball[0] if tarball else None,
            tarball_seen=tarball[1] if tarball else None, min_driver=drv, known_bad=bad))
    return Answer("cuda", text, f"CUDA {version}", (
        Section("releases", f"CUDA {minor} releases", rel_rows),
        Section("min_driver", "minimum driver", tuple(drivers),
                None if need.family else "minor-version compatibility starts with CUDA 11"),
        Section("cudnn", f"cuDNN builds for CUDA {minor}", tuple(cudnn)),
        Section("torch", f"PyTorch wheels built for CUDA {minor}", _torch_for_cuda(tables, minor),
                "CPU and ROCm wheels are not listed"),
    ))


def _torch_for_cuda(tables: Tables, minor: str) -> tuple[Row, ...]:
    return tuple(
        fact(f"torch {versions_text(series)} {tag_text(v, series[-1].pypi_default)}"
             + (f", cuDNN {v.cudnn}" if v.cudnn else "")
             + f": {pip_line(series[-1], v)}", series[-1],
             versions=[r.version for r in series], variant=v.tag, cuda=v.cuda, cudnn=v.cudnn,
             experimental=v.experimental, index_url=v.index_url,
             pip=pip_line(series[-1], v))
        for series in torch_series(tables) for v in series[-1].variants if v.cuda == minor
    )


def query_driver(tables: Tables, text: str) -> Answer:
    """The highest CUDA a Linux driver runs, and the newest PyTorch wheels it runs."""
    driver = parse_arg(r"\d+\.\d+(\.\d+)?", text, "driver version (e.g. 470.82.01)")
    have = Version(driver)
    usable = [b for b in tables.driver_branches if b.status != UNVERIFIED]
    met = [b for b in usable
           if (have >= Version(b.min_driver) if b.min_driver else have.major >= b.branch)]
    oldest, last = usable[0], tables.driver_branches[-1]
    if not met:
        raise NotInTables(f"driver {driver} is not in the tables (oldest known: "
                          f"{oldest.min_driver} for CUDA {oldest.cuda}; newest known: "
                          f"R{last.branch})")
    if have.major > last.branch:  # a branch newer than the tables: never answered by guess
        raise NotInTables(f"driver {driver} is not in the tables (newest known: R{last.branch}, "
                          f"for CUDA {last.cuda}); its branch R{have.major} is newer than any "
                          "they hold")
    top = max(met, key=lambda b: Version(b.cuda))
    newer = [b for b in tables.driver_branches if Version(b.cuda) > Version(top.cuda)]
    highest = fact(f"CUDA {top.cuda} (driver ≥ {top.min_driver or f'R{top.branch}'})", top,
                   cuda=top.cuda, branch=top.branch, min_driver=top.min_driver)
    families = tuple(
        fact(f"any CUDA {f.major}.x runtime (≥ {f.min_driver_linux}), without PTX JIT of newer "
             "PTX; some newer APIs return cudaErrorCallRequiresNewerDriver", f, major=f.major,
             min_driver=f.min_driver_linux)
        for f in tables.cuda_families
        if have >= Version(f.min_driver_linux) and f.major >= Version(top.cuda).major
        and f.status != UNVERIFIED and newer and any(
            Version(b.cuda).major == f.major for b in newer))
    rows: list[Row] = []
    shown = 0
    for series in torch_series(tables):
        newest = series[-1]
        if newest.status == UNVERIFIED or shown >= TORCH_SERIES_SHOWN:
            continue
        runs = [(v, how) for v in newest.variants if (how := driver_runs(tables, driver, v.cuda))]
        shown += bool(runs)
        for v, how in sorted(runs, key=lambda vh: Version(vh[0].cuda), reverse=True):
            mvc = " [minor-version compatibility]" if how == "mvc" else ""
            rows.append(fact(f"torch {newest.version} {tag_text(v)}{mvc}: "
                             f"{pip_line(newest, v)}", newest, version=newest.version,
                             variant=v.tag, cuda=v.cuda, experimental=v.experimental,
                             runs=how, arch_list=v.arch_list, pip=pip_line(newest, v)))
    return Answer("driver", text, f"driver {driver} (Linux)", (
        Section("highest_cuda", "highest CUDA it runs", (highest,),
                "a lower bound derived from each CUDA release's minimum driver; "
                "`nvidia-smi` prints the exact value"),
        Section("minor_version_compat", "also runs, by minor-version compatibility", families),
        Section("torch", "usable PyTorch wheels (newest releases)", tuple(rows),
                None if rows else "no PyTorch release in the tables runs on this driver"),
    ))


