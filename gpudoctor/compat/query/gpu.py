"""`compat gpu sm_XY` and `compat gpu "PRODUCT"`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from packaging.version import Version

from gpudoctor.compat import CudnnSupport, Tables
from gpudoctor.compat.query.answer import (
    Answer,
    NotInTables,
    QueryError,
    Row,
    Section,
    ascii_digits,
    fact,
    torch_series,
    versions_text,
)
from gpudoctor.compat.wheels import pip_line
from gpudoctor.versions import arch_list_supports, normalize_cc, sm_of

if TYPE_CHECKING:
    from gpudoctor.compat.gpu_names import GpuMatch  # imported where a name is matched


def query_gpu(tables: Tables, text: str) -> Answer:
    """Architecture, toolkits, cuDNN and PyTorch support of a compute capability or product."""
    given = ascii_digits(text.strip())
    if not given:
        raise QueryError("give a compute capability (sm_86, 8.6) or a product name (RTX 3090)")
    lowered = given.lower()
    as_cc = re.fullmatch(r"(sm|compute)(_\S*|\d\S*)|\d+\.\d+|\d{2,3}", lowered, re.ASCII)
    cc = re.sub(r"^(sm|compute)_?", "sm_", lowered)  # sm86, SM_86, compute_86 -> sm_86
    if as_cc and normalize_cc(cc) is None:
        raise QueryError(f"{given!r} is not a compute capability (e.g. sm_86 or 8.6)")
    match = None if as_cc else tables.match_gpu(given)
    arch = tables.gpu_arch(cc) if as_cc else tables.gpu_arch(match.cc) if match else None
    if arch is None:
        last = tables.gpu_archs[-1]
        newest = f"newest known: {sm_of(last.cc)}, {last.family}"
        if as_cc:
            raise NotInTables(f"compute capability {given!r} is not in the tables ({newest})")
        raise NotInTables(
            f"GPU {given!r} is not in the tables: no product of NVIDIA's CUDA GPUs pages matches "
            f"it by name, variant or series ({newest}); on that machine `nvidia-smi "
            "--query-gpu=name,compute_cap --format=csv` prints its compute capability")
    sm = sm_of(arch.cc)
    span = f"CUDA {arch.first_cuda or '(older than the tables)'} - {arch.last_cuda or 'current'}"
    head = fact(f"{sm} (compute capability {arch.cc}), {arch.family}: {_products(arch.products)}",
                arch, cc=arch.cc, sm=sm, family=arch.family, products=list(arch.products))
    named = () if match is None else (Section("product", "product", (_product_row(match),)),)
    toolkit = fact(f"toolkits that compile for it: {span}", arch, first_cuda=arch.first_cuda,
                   last_cuda=arch.last_cuda)
    cudnn = tuple(
        fact(f"cuDNN {_releases(s)}" + (f" (CUDA {s.cuda} builds)" if s.cuda else "")
             + f": {'supported' if s.supports(arch.cc) else 'not supported'} "
             f"(compute capability {s.min_cc} - {s.max_cc})", s, first=s.first, last=s.last,
             cuda=s.cuda, min_cc=s.min_cc, max_cc=s.max_cc, supported=s.supports(arch.cc))
        for s in _cudnn_rows(tables))
    return Answer("gpu", text, f"GPU {sm} ({arch.family})", (
        *named,
        Section("arch", "architecture", (head,)),
        Section("toolkits", "CUDA toolkits", (toolkit,)),
        Section("cudnn", "cuDNN", cudnn, "releases without a row here are not in the tables"),
        *_torch_for_gpu(tables, arch.cc),
    ))


def _products(names: tuple[str, ...], shown: int = 8) -> str:
    """The first `shown` product names, and how many more (JSON lists them all)."""
    if not names:
        return "no product in the tables"
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _product_row(match: GpuMatch) -> Row:
    """How the name was placed: the product row it matched, by which rule, on which page."""
    row = match.product
    how = "" if match.rule == "name" else f" by the {match.rule} rule"
    status = row.status if match.rule == "name" else "derived"
    return Row(f"{match.given}: {match.name} ({row.segment}, compute capability {row.cc}){how}",
               (("given", match.given), ("product", match.name), ("rule", match.rule),
                ("segment", row.segment), ("cc", row.cc)), status, row.source, row.note)


def _releases(row: CudnnSupport) -> str:
    return row.first if row.last == row.first else f"{row.first} - {row.last or 'current'}"


def _cudnn_rows(tables: Tables) -> list[CudnnSupport]:
    """Each cuDNN release range once, newest first; split by CUDA build where the support
    matrix gives the builds different compute-capability ranges."""
    shown: list[CudnnSupport] = []
    for whole in reversed([s for s in tables.cudnn_support if s.cuda is None]):
        builds = [s for s in tables.cudnn_support
                  if s.cuda and (s.first, s.last) == (whole.first, whole.last)]
        shown += sorted(builds, key=lambda s: Version((s.cuda or "0").split("-")[0]),
                        reverse=True) or [whole]
    return shown


def _torch_for_gpu(tables: Tables, cc: str) -> tuple[Section, ...]:
    rows: list[Row] = []
    unknown: list[list[str]] = []  # runs of consecutive series without arch lists
    previous_known = True
    for series in torch_series(tables):
        newest = series[-1]
        known = [v for v in newest.variants if v.arch_list is not None]
        if not known:
            if newest.variants:
                if previous_known:
                    unknown.append([])
                unknown[-1] += [r.version for r in series]
                previous_known = False
            continue
        previous_known = True
        fits = [v for v in known if arch_list_supports(v.arch_list or (), cc)]
        yes = [v.tag for v in fits]
        no = [v.tag for v in known if v not in fits]
        stable = [v for v in fits if not v.experimental] or fits
        best = sorted(stable, key=lambda v: Version(v.cuda))
        rest = [v.tag for v in newest.variants if v.arch_list is None]
        parts = [f"includes it: {', '.join(yes) or 'none'}"]
        parts += [f"excludes it: {', '.join(no)}"] if no else []
        parts += [f"arch list not in the tables: {', '.join(rest)}"] if rest else []
        rows.append(fact(f"torch {versions_text(series)}: " + "; ".join(parts), newest,
                         versions=[r.version for r in series], includes=yes, excludes=no,
                         unknown=rest,
                         pip=pip_line(newest, best[-1]) if best else None))
    spans = ", ".join(f"{min(run, key=Version)}-{max(run, key=Version)}" if len(run) > 1
                      else run[0] for run in unknown)
    note = f"arch lists not in the tables for torch {spans}" if unknown else None
    return (Section("torch", "PyTorch wheels whose arch list includes it", tuple(rows), note),)


