"""The diff between `compat_tables/` and what the registry's artifacts say.

Pure functions of the loaded `Tables` and the facts `refresh_registry` read: each returns
`Difference`s, and each difference carries the `Edit` that `--write` may apply, or says why
there is none (a fact the registry cannot prove, such as a toolkit's minimum driver).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.version import Version

from gpudoctor.compat import STATUSES, Tables
from gpudoctor.versions import parse_version as _ver
from tools.refresh_registry import CudnnBuild, Pin, TorchFacts

# What reading an artifact proves (compat_tables/README.md): a wheel's metadata is the release's
# own statement; a package version on PyPI proves only that the release exists.
READ = "verified"
EXISTS = "exists" if "exists" in STATUSES else "verified"
NO_TORCH_ROW = "a new release row needs its variants and index from PyTorch's RELEASE.md"
NO_CUDA_ROW = "its minimum driver is printed in NVIDIA's release notes, not in the registry"


@dataclass(frozen=True, slots=True)
class Edit:
    """One change `--write` can prove from an artifact.

    `kind`: "set" (a row field), "set-variant" (a field of the variant `tag`), "add-variant",
    "append" (an item to a list field) or "add-row". `row` is the row's key: a torch version
    listed in `versions`, or a cuDNN `version`.
    """

    file: str
    row: str
    kind: str
    field: str
    value: str | tuple[str, ...]
    source: str
    evidence: str  # the sentence appended to the row's note
    tag: str = ""
    status: str = READ  # for a new row, or a row that was "unverified"


@dataclass(frozen=True, slots=True)
class Difference:
    """One row missing from the tables, or one field that disagrees with an artifact."""

    subject: str  # "torch 2.11.0 cu130"
    text: str  # "cudnn tables 9.17.1.4, wheel metadata 9.19.0.56 (Requires-Dist: ...)"
    source: str  # the artifact's URL
    missing: bool
    edit: Edit | None = None
    why_not: str = ""  # why --write leaves it, when `edit` is None

    def line(self) -> str:
        """`subject: text`, the one-line form."""
        return f"{self.subject}: {self.text}"


# --- torch ----------------------------------------------------------------------------------


def arch_list_from_flags(flags: Iterable[str]) -> tuple[str, ...]:
    """`torch.cuda.get_arch_list()` in the tables' form: sm_120 and compute_120 -> "12.0+PTX"."""
    cubins: dict[str, bool] = {}
    for flag in flags:
        match = re.fullmatch(r"(sm|compute)_(\d+)(\d)([a-z]?)", flag.strip())
        if match:
            cc = f"{match[2]}.{match[3]}{match[4]}"
            cubins[cc] = cubins.get(cc, False) or match[1] == "compute"
    ordered = sorted(cubins, key=lambda cc: (int(cc.split(".")[0]), cc.split(".")[1]))
    return tuple(cc + ("+PTX" if cubins[cc] else "") for cc in ordered)


def _torch_edit(facts: TorchFacts, kind: str, field: str, value: str | tuple[str, ...],
                what: str, tag: str = "") -> Edit:
    read = ("the PyPI wheel's metadata" if facts.evidence == "wheel metadata"
            else "PyPI's JSON API (requires_dist)")
    if facts.version_py_cuda or facts.arch_list is not None:
        read = "the PyPI wheel itself (its METADATA, torch/version.py, get_arch_list())"
    if facts.arch_evidence:
        read = f"the PyPI wheel itself (its METADATA, torch/version.py; {facts.arch_evidence})"
    evidence = f"{what} VERIFIED from {read} by tools/refresh_compat.py ({facts.source})."
    return Edit("torch.toml", facts.version, kind, field, value, facts.source, evidence, tag)


def _requires(*pins: Pin | None, version_py: str | None = None) -> str:
    """" (torch/version.py: cuda = '13.0'; Requires-Dist: a==1, b==2)", or "" for nothing."""
    texts = [pin.text for pin in pins if pin]
    parts = [f"torch/version.py: cuda = {version_py!r}"] if version_py else []
    parts += [f"Requires-Dist: {', '.join(texts)}"] if texts else []
    return f" ({'; '.join(parts)})" if parts else ""


def compare_torch(tables: Tables, read: Sequence[TorchFacts]) -> list[Difference]:
    """Each torch release's PyPI default variant against its row in torch.toml."""
    rows = {row.version: row for row in tables.torch_releases}
    out: list[Difference] = []
    for facts in read:
        tag, pins, version = facts.tag, facts.pins, facts.version
        cuda_why = _requires(None if facts.version_py_cuda else pins.cuda,
                             version_py=facts.version_py_cuda)
        row = rows.get(version)
        if row is None:
            what = (f"PyPI default {tag}{cuda_why}" if tag
                    else "its wheel metadata pins no CUDA package")
            if pins.cudnn:
                what += f", cuDNN {pins.cudnn.version}"
            out.append(Difference(f"torch {version}", f"missing from torch.toml; {what}",
                                  facts.source, True, why_not=NO_TORCH_ROW))
            continue
        if tag is None:
            continue
        variant = row.variant(tag)
        subject = f"torch {version} {tag}"
        if variant is None:
            what = f"{tag} variant with cuDNN {pins.cudnn.version}" if pins.cudnn else \
                f"{tag} variant"
            edit = _torch_edit(facts, "add-variant", "cudnn",
                               pins.cudnn.version if pins.cudnn else "", what, tag)
            why = _requires(None if facts.version_py_cuda else pins.cuda, pins.cudnn,
                            version_py=facts.version_py_cuda)
            out.append(Difference(subject, f"variant missing from the tables; the PyPI wheel is "
                                  f"{tag}{why}", facts.source, True, edit))
        else:
            if pins.cudnn and variant.cudnn != pins.cudnn.version:
                edit = _torch_edit(facts, "set-variant", "cudnn", pins.cudnn.version,
                                   f"{tag} cuDNN {pins.cudnn.version}", tag)
                out.append(Difference(subject, f"cudnn tables {variant.cudnn or '(none)'}, "
                                      f"{facts.evidence} {pins.cudnn.version}"
                                      f"{_requires(pins.cudnn)}", facts.source,
                                      variant.cudnn is None, edit))
            if facts.arch_list is not None and variant.arch_list != facts.arch_list:
                edit = _torch_edit(facts, "set-variant", "arch_list", facts.arch_list,
                                   f"{tag} arch list (torch.cuda.get_arch_list())", tag)
                have = ", ".join(variant.arch_list) if variant.arch_list else "(none)"
                out.append(Difference(subject, f"arch_list tables [{have}], wheel "
                                      f"get_arch_list [{', '.join(facts.arch_list)}]",
                                      facts.source, variant.arch_list is None, edit))
        if row.pypi_default != tag:
            edit = _torch_edit(facts, "set", "pypi_default", tag, f"PyPI default {tag}")
            said = "wheel" if facts.version_py_cuda else facts.evidence
            out.append(Difference(f"torch {version}", f"pypi_default tables "
                                  f"{row.pypi_default or '(none)'}, {said} {tag}"
                                  f"{cuda_why}", facts.source, row.pypi_default is None, edit))
    return out


# --- cuDNN ----------------------------------------------------------------------------------


def _covers_major(builds: Sequence[str], major: int) -> bool:
    for build in builds:
        ends = [int(part.split(".")[0]) for part in build.split("-")]
        if ends[0] <= major <= ends[-1]:
            return True
    return False


def _cudnn_edit(build: CudnnBuild, kind: str, field: str, value: str | tuple[str, ...],
                source: str, what: str) -> Edit:
    evidence = (f"{what}: {build.pin} exists on PyPI (only its existence was checked, no "
                f"support matrix read; tools/refresh_compat.py).")
    return Edit("cudnn.toml", build.release, kind, field, value, source, evidence,
                status=EXISTS)


def compare_cudnn(tables: Tables, builds: Sequence[CudnnBuild],
                  page: dict[str, str]) -> list[Difference]:
    """The `nvidia-cudnn-cuNN` releases against cudnn.toml; `page` maps a build's pin to a URL."""
    by_release: dict[str, list[CudnnBuild]] = defaultdict(list)
    for build in builds:
        by_release[build.release].append(build)
    rows = {row.version: row for row in tables.cudnn_releases}
    out: list[Difference] = []
    for release in sorted(by_release, key=Version):
        found = sorted(by_release[release], key=lambda b: (b.major, Version(b.build)))
        numbers = sorted({b.build for b in found}, key=Version)
        pins = ", ".join(b.pin for b in found)
        first, row = found[-1], rows.get(release)
        source = page[first.pin]
        if row is None:
            majors = tuple(str(m) for m in sorted({b.major for b in found}))
            edit = _cudnn_edit(first, "add-row", "", (numbers[-1], *majors), source,
                               f"Build {numbers[-1]} for CUDA {', '.join(majors)}") \
                if len(numbers) == 1 else None
            out.append(Difference(f"cudnn {release}", f"missing from cudnn.toml; on PyPI as "
                                  f"{pins}", source, True, edit,
                                  "" if edit else "PyPI has several builds of it"))
            continue
        wheel = row.wheel_build or row.build  # NVIDIA's tarballs may carry another number
        if wheel not in numbers:
            edit = _cudnn_edit(first, "set", "build", numbers[0], source,
                               f"Build {numbers[0]}") if len(numbers) == 1 and \
                row.wheel_build is None else None
            out.append(Difference(f"cudnn {release}", f"build tables {wheel or '(none)'}, "
                                  f"PyPI {' and '.join(numbers)} ({pins})", source,
                                  row.build is None, edit,
                                  "" if edit else "PyPI has several builds of it"))
        for major in sorted({b.major for b in found}):
            if not _covers_major(row.cuda_builds, major):
                build = next(b for b in found if b.major == major)
                out.append(Difference(
                    f"cudnn {release}", f"no CUDA {major} build in cuda_builds "
                    f"[{', '.join(row.cuda_builds)}]; PyPI has {build.pin}", page[build.pin],
                    True, _cudnn_edit(build, "append", "cuda_builds", str(major),
                                      page[build.pin], f"A CUDA {major} build")))
    return out


# --- CUDA -----------------------------------------------------------------------------------


def short(version: Version) -> str:
    """12.8.2.0 -> "12.8.2": the cuda-toolkit files carry a fourth 0 now and then."""
    release = list(version.release)
    while len(release) > 3 and release[-1] == 0:
        release.pop()
    pre = f"{version.pre[0]}{version.pre[1]}" if version.pre else ""
    return ".".join(map(str, release)) + pre


def compare_cuda(tables: Tables, toolkit: Sequence[Version], toolkit_url: str,
                 runtimes: Sequence[tuple[str, Version]], urls: dict[str, str]
                 ) -> list[Difference]:
    """`cuda-toolkit` releases (and the minors of the CUDA runtime wheels) against cuda.toml.

    `runtimes` are (package, version) pairs; `urls` maps a package to its index page.
    """
    rows = {v: row for row in tables.cuda_releases if (v := _ver(row.version))}
    minors = {v.release[:2] for v in rows}
    finals = {v for v in toolkit if v.pre is None}
    out: list[Difference] = []
    for version in toolkit:
        base = Version(version.base_version)
        row, pin = rows.get(base), f"cuda-toolkit=={short(version)}"
        subject = f"cuda {short(base)}"
        if version.pre is not None:
            if base in finals:
                continue
            if row is None:
                out.append(Difference(subject, f"missing from cuda.toml; on PyPI only as a "
                                      f"pre-release ({pin})", toolkit_url, True,
                                      why_not=NO_CUDA_ROW))
            elif row.kind != "rc":
                out.append(Difference(subject, f"kind tables {row.kind} ({row.label}), but PyPI "
                                      f"has only a pre-release of it ({pin})", toolkit_url,
                                      False, why_not="the label and kind are NVIDIA's words"))
        elif row is None:
            out.append(Difference(subject, f"missing from cuda.toml; on PyPI as {pin}",
                                  toolkit_url, True, why_not=NO_CUDA_ROW))
        elif row.kind == "rc":
            out.append(Difference(subject, f"kind tables rc, PyPI has the final release ({pin})",
                                  toolkit_url, False, why_not="the label and kind are NVIDIA's "
                                  "words"))
    covered = minors | {v.release[:2] for v in toolkit}
    newest: dict[tuple[int, ...], tuple[str, Version]] = {}
    for package, version in runtimes:
        key = version.release[:2]
        if key not in covered and (key not in newest or version > newest[key][1]):
            newest[key] = (package, version)
    for key in sorted(newest):
        package, version = newest[key]
        out.append(Difference(f"cuda {key[0]}.{key[1]}", f"no release of this minor in cuda.toml; "
                              f"PyPI has {package}=={short(version)}", urls[package], True,
                              why_not=NO_CUDA_ROW))
    return out
