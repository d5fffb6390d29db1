"""`compat cudnn X.Y.Z`."""

from __future__ import annotations

from gpudoctor.compat import Tables
from gpudoctor.compat.query.answer import (
    Answer,
    Section,
    cudnn_tarball,
    fact,
    not_in_tables,
    parse_arg,
    same_release,
    tag_text,
    torch_series,
    versions_text,
)


def query_cudnn(tables: Tables, text: str) -> Answer:
    """CUDA builds, tarballs, drivers, GPUs and file layout of cuDNN "X.Y.Z" (or its build)."""
    version = parse_arg(r"\d+\.\d+(\.\d+){0,2}", text, "cuDNN version (X.Y.Z or X.Y.Z.B)")
    by_build = version.count(".") == 3  # a 4-part build number: only that exact build answers
    rel = next((r for r in tables.cudnn_releases
                if (any(b and same_release(b, version) for b in (r.build, r.wheel_build))
                    if by_build else same_release(r.version, version))), None)
    if rel is None:
        newest = tables.newest_cudnn(include_unverified=True).version
        known = [(r.build or r.version) if by_build else r.version
                 for r in tables.cudnn_releases]
        raise not_in_tables("cuDNN", version, known, newest)
    bad = tables.known_bad_cudnn(rel.version)
    wheel = f"; PyPI wheels {rel.wheel_build}" if rel.wheel_build else ""
    head = fact(f"cuDNN {rel.version}" + (f" (build {rel.build}{wheel})" if rel.build else "")
                + (f"; KNOWN BAD: {bad}" if bad else ""), rel, version=rel.version,
                build=rel.build, wheel_build=rel.wheel_build, known_bad=bad)
    builds = []
    for build in rel.cuda_builds:
        tarball = cudnn_tarball(tables, rel, build)
        low = build.split("-")[0]
        stated = rel.min_driver_for(low) if "." in low else dict(rel.min_driver).get(low)
        cuda_need = tables.cuda_min_driver(low if "." in low else f"{low}.0")
        floor = None
        if cuda_need:
            floor = (cuda_need.family or cuda_need.full) if ("-" in build or "." not in build) \
                else cuda_need.full
        name = ("tarball name not in the tables" if tarball is None
                else tarball[0] + ("" if tarball[1] else " (by naming scheme)"))
        drv = f"driver ≥ {stated} (cuDNN support matrix)" if stated else (
            f"driver ≥ {floor} (CUDA table)" if floor else "driver not in the tables")
        builds.append(fact(f"CUDA {build}: {name}; {drv}", rel, cuda_build=build,
                           tarball=tarball[0] if tarball else None,
                           tarball_seen=tarball[1] if tarball else None,
                           min_driver=stated, cuda_min_driver=floor))
    gpus = []
    if rel.compute_capabilities:
        gpus.append(fact("support matrix lists compute capability "
                         + ", ".join(rel.compute_capabilities), rel,
                         compute_capabilities=list(rel.compute_capabilities)))
    for support in tables.cudnn_support_rows(rel.version):
        span = f"cuDNN {support.first}-{support.last or 'current'}"
        said = (f"CUDA {support.cuda} builds: {support.range_text()}" if support.cuda else
                f"supports {support.range_text()} over all its CUDA builds ({span})")
        gpus.append(fact(said, support, min_cc=support.min_cc,
                         max_cc=support.max_cc, cuda=support.cuda, first=support.first,
                         last=support.last))
    sections = [
        Section("release", "release", (head,)),
        Section("cuda_builds", "CUDA builds", tuple(builds)),
        Section("gpus", "GPUs", tuple(gpus),
                None if gpus else "the compute capabilities of this release are not in the "
                "tables"),
    ]
    layout = tables.cudnn_layout(int(rel.version.split(".")[0]))
    if layout:
        sections.append(Section("layout", f"cuDNN {layout.major} files", (fact(
            f"headers {' '.join(layout.headers)}; libraries {' '.join(layout.libraries)}; "
            f"CUDNN_VERSION = MAJOR*{layout.version_multiplier} + MINOR*100 + PATCH "
            f"(in {layout.version_header})", layout, headers=list(layout.headers),
            libraries=list(layout.libraries), version_header=layout.version_header,
            version_multiplier=layout.version_multiplier),)))
    torch = [
        fact(f"torch {versions_text(series)} {tag_text(v)} bundles cuDNN {v.cudnn}", series[-1],
             versions=[r.version for r in series], variant=v.tag, cudnn=v.cudnn)
        for series in torch_series(tables) for v in series[-1].variants
        if v.cudnn and tables.cudnn_release(v.cudnn) is rel
    ]
    sections.append(Section("torch", "PyTorch wheels that bundle it", tuple(torch)))
    return Answer("cudnn", text, f"cuDNN {rel.version}", tuple(sections))




