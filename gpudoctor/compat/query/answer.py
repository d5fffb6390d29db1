"""The shape of a `compat` answer, its errors, and the table look-ups several queries share."""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import Version

from gpudoctor import schemas
from gpudoctor.compat import CudnnRelease, Sourced, Tables, TorchRelease, TorchVariant
from gpudoctor.compat.rows import _build_covers
from gpudoctor.compat.rules import driver_runs as rule_driver_runs
from gpudoctor.versions import minor_key as _minor_key
from gpudoctor.versions import minor_of

SCHEMA_VERSION = schemas.version(schemas.COMPAT)  # the JSON document's (to_dict)
VERIFIED = ("verified", "copy")  # `copy` is a verbatim copy of the primary document


class QueryError(ValueError):
    """The argument is not a version (or GPU) at all: a usage error."""


class NotInTables(LookupError):
    """The argument is well-formed but the tables do not hold it."""


@dataclass(frozen=True, slots=True)
class Row:
    """One fact of an answer: a sentence, its values, and the table row it comes from."""

    text: str
    values: tuple[tuple[str, object], ...]
    status: str
    source: str
    note: str | None = None

    @property
    def verified(self) -> bool:
        """Whether the row is read in the primary document (or a verbatim copy of it)."""
        return self.status in VERIFIED

    def to_dict(self) -> dict[str, object]:
        """The values, then status, source and note (JSON)."""
        return {**dict(self.values), "status": self.status, "source": self.source,
                "note": self.note}


@dataclass(frozen=True, slots=True)
class Section:
    """A titled group of rows; `note` says once what the tables do not know here."""

    key: str
    title: str
    rows: tuple[Row, ...]
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """Everything `gpudoctor compat <kind> <query>` prints."""

    kind: str
    query: str
    subject: str
    sections: tuple[Section, ...]

    def section(self, key: str) -> Section:
        """The section with this key."""
        return next(s for s in self.sections if s.key == key)

    def to_dict(self) -> dict[str, object]:
        """The JSON document: stable key order, one object per section."""
        return {
            "schema_version": SCHEMA_VERSION, "kind": self.kind, "query": self.query,
            "subject": self.subject,
            "sections": {s.key: {"title": s.title, "note": s.note,
                                 "rows": [r.to_dict() for r in s.rows]} for s in self.sections},
        }


def fact(text: str, origin: Sourced, **values: object) -> Row:
    """A row built from a table row (`origin` gives status, source and note)."""
    return Row(text, tuple(values.items()), origin.status, origin.source, origin.note)


def parse_arg(pattern: str, text: str, what: str) -> str:
    """`text` stripped, when it matches `pattern` in full (digits are ASCII 0-9 only); else
    QueryError naming `what`."""
    text = ascii_digits(text.strip())
    if not re.fullmatch(pattern, text, re.ASCII):
        raise QueryError(f"{text!r} is not a {what}")
    return text


def ascii_digits(text: str) -> str:
    """`text`, unless it holds digits other than 0-9 ("１２.４", Arabic-Indic): QueryError.

    Python's int() and regular expressions accept any Unicode digit as one; the tables hold
    ASCII versions only."""
    odd = next((c for c in text if c.isdigit() and not c.isascii()), None)
    if odd is not None:
        raise QueryError(f"{text!r} has the non-ASCII digit {odd!r} "
                         f"(U+{ord(odd):04X}); type the number with the digits 0-9")
    return text


def same_release(a: str, b: str) -> bool:
    """Whether two versions have exactly the same numbers: "2.1" is not "2.1.0"."""
    return Version(a).release == Version(b).release


def not_in_tables(what: str, wanted: str, known: list[str], newest: str,
                  hint: str = "") -> NotInTables:
    """"<what> <wanted> is not in the tables (newest known: N; nearest known: A, B)".

    Nearest: the known versions `wanted` is a prefix of ("7.6" -> 7.6.0 … 7.6.5), else those of
    its patch series ("12.4.7" -> 12.4.0, 12.4.1), else the known version on either side of it
    (none above: the newest, already named)."""
    ordered = sorted(set(known), key=Version)
    parts = wanted.split(".")
    width = max((len(k.split(".")) for k in ordered), default=0)
    stem = parts if len(parts) < width else parts[:-1] if len(parts) >= 3 else []
    series = [k for k in ordered if stem and k.split(".")[:len(stem)] == stem]
    if not series:
        below = [k for k in ordered if Version(k) < Version(wanted)]
        above = [k for k in ordered if Version(k) > Version(wanted)]
        series = below[-1:] + above[:1] if above else []
    if len(series) > 8:
        series = [*series[:3], "…", *series[-3:]]
    near = f"; nearest known: {', '.join(series)}" if series else ""
    return NotInTables(f"{what} {wanted} is not in the tables (newest known: {newest}{near})"
                       + (f"; {hint}" if hint else ""))


# --- Shared by `compat` and `recommend` --------------------------------------------------------


def driver_runs(tables: Tables, driver: str, cuda: str) -> str | None:
    """How a Linux driver runs CUDA "X.Y": "full", "mvc" (only by minor-version compatibility,
    CUDA >= 11), or None: the driver rule's (`gpudoctor.compat.rules.driver_for_cuda`)."""
    return rule_driver_runs(tables, driver, cuda)


def cudnn_tarball(tables: Tables, release: CudnnRelease, build: str) -> tuple[str, bool] | None:
    """The Linux x86_64 tarball of `release`'s CUDA build `build` ("10.1", "11.0-11.8", "12"),
    and whether that name was seen on NVIDIA's server (True) or follows the era's naming scheme
    (False). None when the name cannot be told: no build number, or a range of CUDA minors in
    an era that names one minor (NVIDIA picked the minor; it is not derivable)."""
    fmt = tables.cudnn_tarball_format(release.version)
    if fmt is None:
        return None
    low, _, high = build.partition("-")
    major = low.split(".")[0]
    for name in release.tarballs:
        parsed = tables.cudnn_tarball(name)
        if parsed is None:
            continue
        if fmt.cuda_key == "major" and parsed.cuda == major:
            return name, True
        if fmt.cuda_key == "minor" and "." in parsed.cuda and "." in low and (
                minor_of(low) <= minor_of(parsed.cuda) <= minor_of(high or low)):
            return name, True
    if release.build is None:
        return None
    if fmt.cuda_key == "major":
        return fmt.pattern.format(cuda=major, build=release.build), False
    if high or "." not in low:
        return None
    return fmt.pattern.format(cuda=low, build=release.build), False


def build_for(release: CudnnRelease, cuda: str) -> str | None:
    """The key of `release`'s CUDA build that covers CUDA "X.Y" (None: no build for it)."""
    key = _minor_key(cuda)
    return next((b for b in release.cuda_builds if key and _build_covers(b, key)), None)


def torch_series(tables: Tables) -> list[tuple[TorchRelease, ...]]:
    """PyTorch releases grouped as their table rows (one minor series, shared variants),
    newest first; each group oldest patch first."""
    groups: list[list[TorchRelease]] = []
    for r in tables.torch_releases:
        last = groups[-1][-1] if groups else None
        if last and minor_of(last.version) == minor_of(r.version) and last.variants == r.variants \
                and last.install == r.install and last.status == r.status:
            groups[-1].append(r)
        else:
            groups.append([r])
    return [tuple(g) for g in reversed(groups)]


def versions_text(series: tuple[TorchRelease, ...]) -> str:
    """"2.1.0, 2.1.1, 2.1.2"."""
    return ", ".join(r.version for r in series)


def tag_text(variant: TorchVariant, pypi_default: str | None = None) -> str:
    """"cu121", marked "(experimental)" and "(PyPI default)" where it is."""
    marks = [m for m, on in (("experimental", variant.experimental),
                             ("PyPI default", variant.tag == pypi_default)) if on]
    return variant.tag + "".join(f" ({m})" for m in marks)


def arch_text(arch_list: tuple[str, ...] | None) -> str:
    """The arch list as text, or that the tables do not have it."""
    return "arch list not in the tables" if arch_list is None else "arch " + " ".join(arch_list)


