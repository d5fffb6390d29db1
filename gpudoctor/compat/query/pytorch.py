"""`compat torch X.Y.Z`."""

from __future__ import annotations

from dataclasses import replace

from gpudoctor.compat import Tables
from gpudoctor.compat.query.answer import (
    Answer,
    NotInTables,
    Section,
    arch_text,
    fact,
    not_in_tables,
    parse_arg,
    same_release,
    tag_text,
)
from gpudoctor.compat.wheels import pip_line


def query_torch(tables: Tables, text: str) -> Answer:
    """The CUDA variants, index URLs, bundled cuDNN, torchvision and Pythons of a release."""
    version = parse_arg(r"\d+\.\d+(\.\d+)?(\+[a-z0-9]+)?", text, "PyTorch version (e.g. 2.1.0)")
    public = version.partition("+")[0]
    rel = next((r for r in tables.torch_releases if same_release(r.version, public)), None)
    if rel is None:
        newest = tables.newest_torch(include_unverified=True).version
        raise not_in_tables("torch", public, [r.version for r in tables.torch_releases], newest)
    tag = version.partition("+")[2]
    variants = rel.variants
    if tag.startswith("cu"):
        variants = tuple(v for v in variants if v.tag == tag)
        if not variants:
            raise NotInTables(f"torch {rel.version} has no {tag} variant in the tables (its "
                              f"variants: {', '.join(v.tag for v in rel.variants) or 'none'})")
    head = fact(
        f"torch {rel.version}: torchvision {rel.torchvision or 'not in the tables'}; torchaudio "
        f"{rel.torchaudio or 'none paired in the tables'}; Python "
        f"{', '.join(rel.python) if rel.python else 'not in the tables'}; PyPI default "
        f"{rel.pypi_default or 'not in the tables'}", rel, version=rel.version,
        torchvision=rel.torchvision, torchaudio=rel.torchaudio,
        python=list(rel.python) if rel.python else None,
        pypi_default=rel.pypi_default, install=rel.install,
        pypi_command=pip_line(rel, None) if rel.pypi_default else None)
    rows = []
    for v in variants:
        need = tables.cuda_min_driver(v.cuda)
        full, mvc = (need.full, need.family) if need else (None, None)
        drv = f"driver ≥ {full or '?'}" + (f" (≥ {mvc} by minor-version compatibility)"
                                           if mvc else "")
        row = fact(
            f"{tag_text(v, rel.pypi_default)} (CUDA {v.cuda}): "
            f"cuDNN {v.cudnn or 'not in the tables'}; "
            f"{arch_text(v.arch_list)}; {drv}; {pip_line(rel, v)}", rel,
            variant=v.tag, cuda=v.cuda, index_url=v.index_url, cudnn=v.cudnn,
            arch_list=list(v.arch_list) if v.arch_list else None, experimental=v.experimental,
            min_driver=full, min_driver_mvc=mvc, pip=pip_line(rel, v))
        if v.source or v.status:  # read in its own source (the next-best one): marked so
            row = replace(row, source=v.source or row.source, status=v.status or row.status)
        rows.append(row)
    return Answer("torch", text, f"PyTorch {rel.version}", (
        Section("release", "release", (head,)),
        Section("variants", "CUDA wheel variants", tuple(rows),
                None if rows else "no CUDA variant of this release is in the tables"),
    ))


