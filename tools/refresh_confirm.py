"""What the registry confirms beyond pins, and what it cannot: `tools/refresh_compat.py`'s
Python check, its list of unconfirmed rows, and `--stamp`.

- Python: each torch release's CPython minors (cp310, ... ; free-threaded cp313t left out) of its
  Linux x86_64 wheels on the registry, against `python` in torch.toml. Read in the index page the
  torch check already fetched: no extra request.
- Unconfirmed: every row of the tables no artifact on the registry can confirm, by kind, so a
  maintainer knows what the run did not check (torch variants only on download.pytorch.org,
  minimum drivers in NVIDIA's release notes, the GPU catalogue, cuDNN releases before PyPI
  wheels, ...). Each kind names its rows.
- `--stamp`: the date the tables were last checked (`known_until` in cuda.toml) set to today,
  by editing that one line, only after a run over every table found no difference.
"""

from __future__ import annotations

import datetime
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

from packaging.version import Version

from gpudoctor.compat import Tables, TorchRelease
from tools.refresh_diff import Difference
from tools.refresh_registry import Project

PCI_IDS = "https://pci-ids.ucw.cz/"  # the rows tools/refresh_pci.py writes

PYTORCH_INDEX = "download.pytorch.org (not reachable from gpudoctor's build machines)"
STALE_DAYS = 35  # the monthly step is late


def wheel_pythons(project: Project, version: Version) -> tuple[str, ...]:
    """CPython minors ("3.10") of `version`'s Linux x86_64 wheels, free-threaded ones left out."""
    minors = set()
    for wheel in project.linux_wheels(version):
        for interpreter, abi, _ in wheel.tags:
            match = re.fullmatch(r"cp(\d)(\d+)", interpreter)
            if match and not abi.endswith("t"):
                minors.add(f"{match[1]}.{match[2]}")
    return tuple(sorted(minors, key=Version))


def _series(tables: Tables) -> dict[tuple[int, int, tuple[str, ...] | None], list[TorchRelease]]:
    """Releases grouped as torch.toml writes them: one minor series, one `python` list."""
    groups: dict[tuple[int, int, tuple[str, ...] | None], list[TorchRelease]] = defaultdict(list)
    for row in tables.torch_releases:
        major, minor = Version(row.version).release[:2]
        groups[(major, minor, row.python)].append(row)
    return groups


def compare_python(tables: Tables, project: Project) -> tuple[list[Difference], list[str]]:
    """Each series' `python` against the wheels of its newest release on the registry (older
    patch releases may have fewer minors, never more), and the releases not on the registry."""
    on_registry = set(project.releases())
    diffs: list[Difference] = []
    absent: list[str] = []
    for (_, _, listed), rows in _series(tables).items():
        found = [(r, Version(r.version)) for r in rows]
        absent += [r.version for r, v in found if v not in on_registry]
        present = sorted((v for _, v in found if v in on_registry))
        if not present:
            continue
        newest = wheel_pythons(project, present[-1])
        wrong = [v for v in present[:-1] if not set(wheel_pythons(project, v)) <= set(newest)]
        have = ", ".join(listed) if listed else "(none)"
        if listed != newest or wrong:
            extra = (f"; {', '.join(map(str, wrong))} had wheels for other minors" if wrong
                     else "")
            diffs.append(Difference(
                f"torch {present[-1]} python", f"tables [{have}], PyPI Linux x86_64 wheels "
                f"[{', '.join(newest)}]{extra}", project.url, listed is None,
                why_not="a list field: set it by hand from the wheels listed"))
    return diffs, absent


def _names(items: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(items)) or "none"


def unconfirmed(tables: Tables, *, torch_versions: Sequence[str], cudnn_versions: Sequence[str],
                toolkit_versions: Sequence[str], only: set[str]) -> list[str]:
    """One line per kind of row the registry cannot confirm, naming the rows."""
    torch, cudnn, cuda = tables.torch_releases, tables.cudnn_releases, tables.cuda_releases
    lines = []
    if "torch" in only:
        others = [f"{r.version} {'/'.join(v.tag for v in r.variants if v.tag != r.pypi_default)}"
                  for r in torch if any(v.tag != r.pypi_default for v in r.variants)]
        absent = [r.version for r in torch if r.version not in torch_versions]
        paired = [r.version for r in torch if r.torchvision or r.torchaudio]
        lines += [
            f"  torch variants other than the PyPI default (only on {PYTORCH_INDEX}; their "
            f"cuDNN pins and arch lists come from RELEASE.md or the row's note): "
            f"{_names(others)}",
            f"  torch releases not on the registry: {_names(absent)}",
            f"  torchvision / torchaudio pairings (wheel metadata not compared): {_names(paired)}",
        ]
    if "cudnn" in only:
        absent = [r.version for r in cudnn if r.version not in cudnn_versions]
        lines += [
            f"  cuDNN releases with no nvidia-cudnn wheel (NVIDIA's archive only): "
            f"{_names(absent)}",
            f"  cuDNN CUDA minors, stated drivers and compute capabilities (support matrices): "
            f"{len(cudnn)} releases, {len(tables.cudnn_support)} [[cudnn_support]] rows",
        ]
    if "cuda" in only:
        absent = [r.version for r in cuda if r.version not in toolkit_versions]
        lines += [
            f"  CUDA releases with no cuda-toolkit wheel: {_names(absent)}",
            f"  CUDA minimum drivers, labels, families and driver branches (NVIDIA's release "
            f"notes): {len(cuda)} releases, {len(tables.cuda_families)} families, "
            f"{len(tables.driver_branches)} branches",
        ]
    chips = [p for p in tables.gpu_products if p.source.startswith(PCI_IDS)]
    rows = [p for p in tables.gpu_products if not p.source.startswith(PCI_IDS)]
    pages = sum(len(p.names) for p in rows)
    lines.append(f"  GPU catalogue (NVIDIA's CUDA GPUs pages, not a registry): {pages} product "
                 f"names in {len(rows)} rows, {len(tables.gpu_archs)} archs; "
                 f"{sum(len(p.names) for p in chips)} names in {len(chips)} rows placed by "
                 "their chip (tools/refresh_pci.py, from pci.ids)")
    return ["Not confirmed by the registry (check by hand, see README 'Refreshing the tables'):",
            *lines]


def freshness(tables: Tables, today: datetime.date) -> str:
    """"Tables known until 2026-11-26 (0 days ago)", and a warning when a month has passed."""
    until = tables.known_until
    if until is None:
        return "Tables: no known_until date"
    days = (today - until).days
    late = f"; older than {STALE_DAYS} days: the monthly refresh is due" \
        if days > STALE_DAYS else ""
    return f"Tables known until {until.isoformat()} ({days} days ago{late})"


def stamp(text: str, today: datetime.date) -> str:
    """cuda.toml's text with `known_until` set to `today` (that one line edited)."""
    new, count = re.subn(r"(?m)^known_until[ \t]*=[ \t]*\S+[ \t]*$",
                         f"known_until = {today.isoformat()}", text)
    if count != 1:
        raise ValueError("cuda.toml: no single 'known_until = YYYY-MM-DD' line to update")
    return new
