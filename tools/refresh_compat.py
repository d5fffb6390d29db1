#!/usr/bin/env python3
"""Diff `compat_tables/` against the primary artifacts on the package registry (maintainers).

    python tools/refresh_compat.py [--write] [--stamp] [--only torch|cudnn|cuda ...]
                                   [--torch V ...] [--since V] [--wheels] [--arch-lists]
                                   [--arch-from auto|import|libraries] [--arch-python PATH]
                                   [--tables DIR] [--index URL]

Reads, from the registry's JSON index (PEP 691) and wheel metadata (PEP 658):
- each torch release's Linux x86_64 wheel metadata: the `Requires-Dist` pins of
  `cuda-toolkit` / `nvidia-cuda-runtime*` (its CUDA, hence its variant tag) and
  `nvidia-cudnn-cu*` (its cuDNN). PyPI holds only the default variant of each release; the
  others live on download.pytorch.org, which this tool does not read;
- with `--wheels`, the wheel itself (`torch/version.py`); with `--arch-lists`, also its arch
  list: `torch.cuda.get_arch_list()` from a throwaway venv, or the records in the wheel's own
  libraries where no wheel fits the venv's Python (`--arch-from`; see tools/refresh_wheels.py
  for the cost and tools/refresh_arch.py for the records);
- each torch release's CPython minors (its Linux x86_64 wheels) against `python`;
- the releases of `nvidia-cudnn-cu11/12/13`, `cuda-toolkit` and the CUDA runtime wheels.

Prints each row missing from the tables or disagreeing with an artifact, then every row the
registry cannot confirm (tools/refresh_confirm.py) and the tables' `known_until` date. Nothing is
written without `--write`, which changes only the fields an artifact proves
(tools/refresh_write.py), or `--stamp`, which sets `known_until` to today after a run over every
table found no difference.
Exit status: 0 no differences, 1 differences found, 2 usage error, a registry that could not be
read (one line naming the URL) or a `--write` that could not be applied (nothing written).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TextIO

if __package__ in (None, ""):  # run as a script: make the repository's `tools` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from packaging.version import InvalidVersion, Version

from gpudoctor.compat import CompatTableError, Tables, load_tables
from tools.refresh_confirm import compare_python, freshness, stamp, unconfirmed
from tools.refresh_diff import Difference, compare_cuda, compare_cudnn, compare_torch, short
from tools.refresh_registry import (
    DEFAULT_INDEX,
    CudaPins,
    CudnnBuild,
    Fetch,
    FetchError,
    Registry,
    TorchFacts,
    Unread,
    cudnn_builds,
    urllib_fetch,
)
from tools.refresh_write import EditError, apply_edits

TABLES = Path(__file__).resolve().parent.parent / "compat_tables"
CUDNN = ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
RUNTIMES = ("nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime")
TOOLKIT = "cuda-toolkit"
PYTORCH_INDEX = ("download.pytorch.org is not read (gpudoctor's build machines cannot reach "
                 "it): only each release's PyPI default variant is compared")
PROG = "refresh_compat"


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion as exc:
        raise argparse.ArgumentTypeError(f"not a version: {text!r}") from exc


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line; argparse exits 2 on a usage error."""
    parser = argparse.ArgumentParser(prog=PROG, description="diff compat_tables/ against the "
                                     "primary artifacts on the package registry")
    parser.add_argument("--write", action="store_true",
                        help="update the fields the artifacts prove (keeps comments and layout)")
    parser.add_argument("--stamp", action="store_true",
                        help="set known_until in cuda.toml to today when no table differs "
                             "(a run over every table, without --only/--torch/--since)")
    parser.add_argument("--only", action="append", choices=("torch", "cudnn", "cuda"),
                        help="compare only these tables (repeatable; default all)")
    parser.add_argument("--torch", action="append", type=_version, metavar="VERSION",
                        help="only these torch releases (repeatable)")
    parser.add_argument("--since", type=_version, metavar="VERSION",
                        help="torch releases from this one (default: the oldest in the tables)")
    parser.add_argument("--wheels", action="store_true",
                        help="download each torch wheel (pip download, 0.5-2.5 GB a release) "
                             "and read torch/version.py and its METADATA")
    parser.add_argument("--arch-lists", action="store_true",
                        help="with --wheels: install each wheel and its dependencies into a "
                             "throwaway venv (several GB) and read torch.cuda.get_arch_list()")
    parser.add_argument("--arch-from", choices=("auto", "import", "libraries"), default="auto",
                        help="with --arch-lists: import the wheel in a venv, read its libraries "
                             "(no install; any Python's wheel), or import where a wheel for "
                             "--arch-python exists, else read the libraries (default auto)")
    parser.add_argument("--arch-python", default=sys.executable, metavar="PATH",
                        help="with --arch-lists: the Python whose venv imports the wheel "
                             "(default: this one)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also print what was read for each torch release")
    parser.add_argument("--tables", type=Path, default=TABLES, metavar="DIR",
                        help="the compat_tables directory (default: this checkout's)")
    parser.add_argument("--index", default=DEFAULT_INDEX, metavar="URL",
                        help=f"PEP 691 JSON index (default {DEFAULT_INDEX})")
    args = parser.parse_args(argv)
    if args.arch_lists and not args.wheels:
        parser.error("--arch-lists needs --wheels")
    if not args.arch_lists and (args.arch_from != "auto" or args.arch_python != sys.executable):
        parser.error("--arch-from and --arch-python need --arch-lists")
    if args.stamp and (args.only or args.torch or args.since):
        parser.error("--stamp needs a run over every table (no --only, --torch or --since)")
    return args


def _torch(args: argparse.Namespace, registry: Registry, tables: Tables,
           out: list[str], seen: dict[str, list[str]]) -> list[Difference]:
    project = registry.project("torch")
    seen["torch"] = [str(v) for v in project.releases()]
    oldest = Version(tables.torch_releases[0].version) if tables.torch_releases else Version("0")
    since = args.since or oldest
    versions = [v for v in project.releases()
                if (v in args.torch if args.torch else v >= since)]
    missing = sorted(set(args.torch or ()) - set(versions))
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(pool.map(lambda v: registry.torch_facts(project, v), versions))
    if args.wheels:
        from tools.refresh_wheels import wheel_facts

        for i, (version, item) in enumerate(zip(versions, found, strict=True)):
            base = item if isinstance(item, TorchFacts) else TorchFacts(
                str(version), project.url, "wheel metadata", CudaPins(None, None))
            found[i] = wheel_facts(project.linux_wheels(version), base, arch=args.arch_lists,
                                   route=args.arch_from, python=args.arch_python)
    read = [f for f in found if isinstance(f, TorchFacts)]
    evidence = sorted({f.evidence for f in read})
    scope = ", ".join(str(v) for v in sorted(args.torch)) if args.torch else f"from {since}"
    out.append(f"torch: {len(versions)} release(s) on the registry ({scope}); read "
               f"{len(read)} ({', '.join(evidence) or 'none'})")
    out.append(f"  {PYTORCH_INDEX}")
    by_reason: dict[str, list[str]] = {}
    for item in found:
        if isinstance(item, Unread):
            by_reason.setdefault(item.reason, []).append(item.version)
    no_pins = [f.version for f in read if f.tag is None]
    if no_pins:
        by_reason["no CUDA pin in the metadata (CUDA inside the wheel; --wheels reads "
                  "torch/version.py)"] = no_pins
    if missing:
        by_reason["not on the registry"] = [str(v) for v in missing]
    out.extend(f"  not compared, {reason}: {', '.join(vs)}" for reason, vs in by_reason.items())
    if args.verbose:
        out.extend(f"  read {_facts(f)}" for f in read)
    pythons, _ = compare_python(tables, project) if not args.torch else ([], [])
    return compare_torch(tables, read) + pythons


def _facts(facts: TorchFacts) -> str:
    """One release's facts: "2.11.0: cu130, cuDNN 9.19.0.56 (...; URL)"."""
    parts = [f"torch/version.py cuda = {facts.version_py_cuda!r}"] if facts.version_py_cuda else []
    parts += [p.text for p in (facts.pins.cuda, facts.pins.cudnn) if p]
    arch = f", arch list [{', '.join(facts.arch_list)}]" if facts.arch_list is not None else ""
    parts += [facts.arch_evidence] if facts.arch_evidence else []
    cudnn = f", cuDNN {facts.pins.cudnn.version}" if facts.pins.cudnn else ""
    return (f"{facts.version}: {facts.tag or 'no CUDA pin'}{cudnn}{arch} "
            f"({'; '.join([*parts, facts.source])})")


def _cudnn(registry: Registry, tables: Tables, out: list[str],
           seen: dict[str, list[str]]) -> list[Difference]:
    builds: list[CudnnBuild] = []
    page: dict[str, str] = {}
    yanked: list[str] = []
    for name in CUDNN:
        project = registry.project(name)
        yanked += [f"{name}=={v}" for v in project.yanked() if len(v.release) == 4]
        mine = cudnn_builds(project)
        builds += mine
        for build in mine:
            page[build.pin] = (f"https://pypi.org/project/{build.package}/{build.build}/"
                               if registry.index == DEFAULT_INDEX else project.url)
    seen["cudnn"] = sorted({b.release for b in builds}, key=Version)
    releases = len(seen["cudnn"])
    out.append(f"cudnn: {releases} releases ({len(builds)} builds) of {', '.join(CUDNN)}")
    if yanked:
        out.append(f"  yanked (every file withdrawn, left out): {', '.join(yanked)}")
    return compare_cudnn(tables, builds, page)


def _cuda(registry: Registry, tables: Tables, out: list[str],
          seen: dict[str, list[str]]) -> list[Difference]:
    toolkit = registry.project(TOOLKIT)
    versions = toolkit.releases(rc=True)
    seen["cuda"] = [short(v) for v in versions]
    runtimes, urls = [], {}
    for name in RUNTIMES:
        project = registry.project(name)
        urls[name] = project.url
        runtimes += [(name, v) for v in project.releases(rc=True)]
    out.append(f"cuda: {len(versions)} releases of {TOOLKIT}; {len(runtimes)} of "
               f"{', '.join(RUNTIMES)}")
    return compare_cuda(tables, versions, toolkit.url, runtimes, urls)


def _loads(tables_dir: Path, new: dict[str, str]) -> None:
    """Raise CompatTableError unless the tables load with `new` in place of their files."""
    with tempfile.TemporaryDirectory(prefix="refresh-compat-") as tmp:
        for table in tables_dir.glob("*.toml"):
            text = new.get(table.name) or table.read_text(encoding="utf-8")
            (Path(tmp) / table.name).write_text(text, encoding="utf-8")
        load_tables(Path(tmp))


def _write(tables_dir: Path, diffs: list[Difference], out: list[str]) -> None:
    edits = [d.edit for d in diffs if d.edit is not None]
    texts = {f: (tables_dir / f).read_text(encoding="utf-8") for f in {e.file for e in edits}}
    new, skipped = apply_edits(texts, edits)
    try:
        _loads(tables_dir, new)
    except CompatTableError as exc:
        kept = [e for e in edits if e.kind != "add-row"]
        if len(kept) == len(edits):
            raise EditError(f"the edited tables would not load: {exc}") from exc
        new, skipped = apply_edits(texts, kept)  # a new row may lack a field the schema wants
        skipped.append(f"the {len(edits) - len(kept)} new row(s): with them the tables would "
                       f"not load ({exc})")
        try:
            _loads(tables_dir, new)
        except CompatTableError as again:
            raise EditError(f"the edited tables would not load: {again}") from again
    out.extend(f"  left out: {line}" for line in dict.fromkeys(skipped))
    for name, text in new.items():
        target = tables_dir / name
        part = target.with_name(f".{name}.refresh")
        part.write_text(text, encoding="utf-8")
        os.replace(part, target)
    out.append(f"Wrote {', '.join(sorted(new)) or 'nothing'} ({len(edits)} edits proposed, "
               f"{len(skipped)} left out)")


def _report(diffs: list[Difference], write: bool) -> list[str]:
    lines = [""] if diffs else []
    for diff in diffs:
        lines += [diff.line(), f"    {diff.source}"]
        if diff.edit is None and diff.why_not:
            lines.append(f"    not written: {diff.why_not}")
    missing = sum(d.missing for d in diffs)
    writable = sum(d.edit is not None for d in diffs)
    verb = "written" if write else "writable with --write"
    lines += ["", f"{len(diffs)} differences ({missing} missing, {len(diffs) - missing} "
                  f"disagreeing); {writable} {verb}" if diffs else "No differences."]
    return lines


def _stamp(tables_dir: Path, diffs: list[Difference], today: datetime.date,
           out: list[str]) -> None:
    if diffs:
        out.append(f"Not stamped: {len(diffs)} differences (known_until stays as it is)")
        return
    path = tables_dir / "cuda.toml"
    new = stamp(path.read_text(encoding="utf-8"), today)
    _loads(tables_dir, {"cuda.toml": new})
    part = path.with_name(".cuda.toml.refresh")
    part.write_text(new, encoding="utf-8")
    os.replace(part, path)
    out.append(f"Stamped known_until = {today.isoformat()} in cuda.toml")


def main(argv: Sequence[str] | None = None, *, fetch: Fetch = urllib_fetch,
         out: TextIO | None = None, err: TextIO | None = None,
         today: datetime.date | None = None) -> int:
    """Run the diff; the return value is the exit status."""
    out, err = out or sys.stdout, err or sys.stderr
    args = parse_args(argv)
    registry = Registry(fetch, args.index)
    only = set(args.only or ("torch", "cudnn", "cuda"))
    today = today or datetime.date.today()
    try:
        tables = load_tables(args.tables)
        lines = [f"Registry: {registry.index} (PEP 691 JSON index, PEP 658 wheel metadata)",
                 f"Tables: {args.tables}", freshness(tables, today)]
        seen: dict[str, list[str]] = {}
        diffs = _torch(args, registry, tables, lines, seen) if "torch" in only else []
        diffs += _cudnn(registry, tables, lines, seen) if "cudnn" in only else []
        diffs += _cuda(registry, tables, lines, seen) if "cuda" in only else []
        lines += _report(diffs, args.write)
        lines += ["", *unconfirmed(tables, torch_versions=seen.get("torch", ()),
                                   cudnn_versions=seen.get("cudnn", ()),
                                   toolkit_versions=seen.get("cuda", ()), only=only)]
        if args.write and diffs:
            _write(args.tables, diffs, lines)
        if args.stamp:
            _stamp(args.tables, diffs, today, lines)
    except (FetchError, CompatTableError, EditError, OSError, ValueError) as exc:
        print(f"{PROG}: {exc}" + (" (nothing written)" if args.write or args.stamp else ""),
              file=err)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=err)
        return 130
    try:
        print("\n".join(lines), file=out)
        out.flush()
    except BrokenPipeError:  # `| head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
