"""Reading and validating `compat_tables/*.toml` into the row tuples of `gpudoctor.compat.Tables`.

Every field of every row is checked against `_SPECS`; anything malformed raises
`CompatTableError` naming the file and the row. Callers use `gpudoctor.compat.load_tables`,
which caches the shipped tables and builds `Tables` from `load_rows`; this module imports only
`gpudoctor.compat.rows`, so the package has no import cycle.
"""

from __future__ import annotations

import datetime
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpudoctor.compat.rows import (
    _V,
    STATUSES,
    CompatTableError,
    CudaFamily,
    CudaRelease,
    CudnnLayout,
    CudnnRelease,
    CudnnSupport,
    DriverBranch,
    GpuArch,
    GpuProduct,
    KnownBadCudnn,
    Sourced,
    TarballFormat,
    TorchIndex,
    TorchRelease,
    TorchVariant,
)
from gpudoctor.versions import parse_cc
from gpudoctor.versions import parse_version as _ver

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from importlib.abc import Traversable

# Field codes: s text, v version, c compute capability "X.Y", i integer, b boolean, t torch tag
# "cuXYZ", k a CUDA build ("10.1", "11.0-11.8", "12"); S/V/C/B: a list of s/v/c/k; M a
# {version = version} table; L a list of tables. A trailing "?" marks the field optional.

_COMMON = {"source": "s", "status": "s", "note": "s?"}
_CHOICES = {"status": STATUSES, "kind": ("ga", "update", "rc"), "cuda_key": ("minor", "major"),
            "install": ("find-links", "extra-index-url", "index-url"),
            "segment": ("data center", "workstation/consumer", "jetson")}
_BUILD = r"\d+(\.\d+(-\d+\.\d+)?)?"
_PATTERNS = {"c": r"\d+\.\d+", "t": r"cu\d\d+", "B": _BUILD, "k": _BUILD}
_SPECS: dict[str, dict[str, tuple[type[Sourced], dict[str, str]]]] = {
    "cuda.toml": {
        "release": (CudaRelease, {"version": "v", "label": "s", "kind": "s",
                                  "min_driver_linux": "v?", "min_driver_windows": "v?"}),
        "family": (CudaFamily, {"major": "i", "min_driver_linux": "v",
                                "min_driver_windows": "v?", "driver_range": "s?"}),
        "driver_branch": (DriverBranch, {"branch": "i", "cuda": "v", "min_driver": "v?"}),
    },
    "cudnn.toml": {
        "release": (CudnnRelease, {"version": "v", "build": "v?", "wheel_build": "v?",
                                   "cuda_builds": "B",
                                   "tarballs": "S?", "min_driver": "M?",
                                   "compute_capabilities": "C?"}),
        "layout": (CudnnLayout, {"major": "i", "headers": "S", "libraries": "S",
                                 "version_header": "s", "version_multiplier": "i"}),
        "tarball_format": (TarballFormat, {"first": "v", "last": "v?", "pattern": "s",
                                           "cuda_key": "s", "include_dir": "s", "lib_dir": "s"}),
        "known_bad": (KnownBadCudnn, {"version": "v", "reason": "s"}),
    },
    "gpu.toml": {
        "arch": (GpuArch, {"cc": "c", "family": "s", "first_cuda": "v?", "last_cuda": "v?"}),
        "product": (GpuProduct, {"cc": "c", "segment": "s", "names": "S"}),
        "cudnn_support": (CudnnSupport, {"first": "v", "last": "v?", "cuda": "k?",
                                         "min_cc": "c", "max_cc": "c"}),
    },
    "torch.toml": {  # [[index]] first: a release's variants read their index URL from it
        "index": (TorchIndex, {"install": "s", "url": "s"}),
        "release": (TorchRelease, {"versions": "V", "install": "s", "index_url": "s?",
                                   "pypi_default": "t?", "torchvision": "M?", "torchaudio": "M?",
                                   "python": "S?", "variants": "L"}),
    },
}
# `Tables` field -> "file.table" it is read from, in the order of the dataclass's fields.
FIELDS = {
    "cuda_releases": "cuda.release", "cuda_families": "cuda.family",
    "driver_branches": "cuda.driver_branch", "cudnn_releases": "cudnn.release",
    "cudnn_layouts": "cudnn.layout", "tarball_formats": "cudnn.tarball_format",
    "known_bad": "cudnn.known_bad", "torch_releases": "torch.release", "gpu_archs": "gpu.arch",
    "cudnn_support": "gpu.cudnn_support", "gpu_products": "gpu.product",
}
# Top-level scalars (not arrays of tables) a file may hold: `known_until` in cuda.toml, the
# date up to which the tables were checked against their sources (README: the monthly step).
_SCALARS = {"cuda.toml": ("known_until",)}
_VARIANT = {"tag": "t", "cudnn": "v?", "arch_list": "S?", "experimental": "b?", "source": "s?",
            "status": "s?"}
_Err = Callable[[str], CompatTableError]


def _text(value: object, key: str, code: str, err: _Err) -> str:
    if not isinstance(value, str) or not value.strip():
        raise err(f"{key!r} must be a non-empty string, got {value!r}")
    if code in "vV" and _ver(value) is None:
        raise err(f"{key!r}: {value!r} is not a version")
    pattern = _PATTERNS.get(code if code in "tB" else code.lower())
    if (pattern and not re.fullmatch(pattern, value)) or value not in _CHOICES.get(key, (value,)):
        raise err(f"{key!r}: {value!r} is not allowed here")
    if key == "source" and not value.startswith("https://"):
        raise err(f"'source' must be an https:// URL, got {value!r}")
    return value


def _fields(row: object, spec: dict[str, str], err: _Err) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise err("not a table")
    if unknown := sorted(set(row) - set(spec)):
        raise err(f"unknown field(s): {', '.join(unknown)}")
    out: dict[str, Any] = {}
    for key, code in spec.items():
        if key not in row:
            if not code.endswith("?"):
                raise err(f"missing {key!r}")
            continue
        value: Any = row[key]
        code = code.rstrip("?")
        kind: type[Any] = {"i": int, "b": bool, "M": dict}.get(code, str)
        kind = list if code in "SVCBL" else kind
        if not isinstance(value, kind) or (code == "i" and isinstance(value, bool)):
            raise err(f"{key!r} must be of type {kind.__name__}, got {value!r}")
        if code in "SVCB":
            value = tuple(_text(item, key, code, err) for item in value)
        elif code == "M":
            value = tuple((_text(k, key, "v", err), _text(v, key, "v", err))
                          for k, v in value.items())
        elif code in "svctk":
            value = _text(value, key, code, err)
        out[key] = value
    return out


_AARCH64 = {"arch_lists": "L", "source": "s", "status": "s"}


def _aarch64(raw: object, err: _Err) -> tuple[tuple[tuple[str, ...], ...], str | None,
                                              str | None]:
    """A variant's `aarch64 = { arch_lists = [[…], …], source, status }`: the Linux aarch64
    wheel's arch list, or the lists its sources leave open (each one a list of compute
    capabilities, "12.0+PTX"); () and Nones where the row has none."""
    if raw is None:
        return (), None, None
    fields = _fields(raw, _AARCH64, lambda message: err(f"aarch64: {message}"))
    lists = fields["arch_lists"]
    if not lists or not all(isinstance(one, list) and one and all(
            isinstance(cc, str) and parse_cc(cc) is not None for cc in one) for one in lists):
        raise err("aarch64: 'arch_lists' must be non-empty lists of compute capabilities")
    return tuple(tuple(one) for one in lists), fields["source"], fields["status"]


def _error(file: str, table: str, index: int, row: object) -> _Err:
    ident = next((row[k] for k in ("version", "versions", "cc", "major", "branch", "first")
                  if isinstance(row, dict) and k in row), None)
    where = f"{file}: [[{table}]] row {index + 1}" + (f" ({ident})" if ident is not None else "")
    return lambda message: CompatTableError(f"{where}: {message}")


def _torch_rows(fields: dict[str, Any], indexes: tuple[TorchIndex, ...], err: _Err
                ) -> list[TorchRelease]:
    install, template = fields.pop("install"), fields.pop("index_url", None)
    if template is None:
        template = next((i.url for i in indexes if i.install == install), None)
        if template is None:
            raise err(f"no [[index]] row gives the index of install = {install!r}")
    variants = []
    for number, raw in enumerate(fields.pop("variants"), 1):

        def variant_err(message: str, number: int = number) -> CompatTableError:
            return err(f"variant {number}: {message}")

        arm = _aarch64(raw.pop("aarch64", None) if isinstance(raw, dict) else None,
                       variant_err)
        v = _fields(raw, _VARIANT, variant_err)
        digits = v["tag"][2:]
        variants.append(TorchVariant(v["tag"], f"{int(digits[:-1])}.{digits[-1]}",
                                     template.format(tag=v["tag"]), v.get("cudnn"),
                                     v.get("arch_list"), v.get("experimental", False),
                                     v.get("source"), v.get("status"), *arm))
    tags = [v.tag for v in variants]
    if len(set(tags)) != len(tags) or fields.get("pypi_default") not in (*tags, None):
        raise err("duplicate variant tags, or pypi_default is not one of the variants")
    versions = fields.pop("versions")
    vision, audio = (dict(fields.pop(key, ())) for key in ("torchvision", "torchaudio"))
    if not set(vision) | set(audio) <= set(versions):
        raise err("torchvision or torchaudio maps a version that is not in 'versions'")
    return [TorchRelease(version=version, variants=tuple(variants), install=install,
                         torchvision=vision.get(version), torchaudio=audio.get(version),
                         **fields) for version in versions]


def _date(value: object, where: str) -> datetime.date:
    """A TOML date (known_until = 2026-11-26) or its "YYYY-MM-DD" string."""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            pass
    raise CompatTableError(f"{where}: 'known_until' must be a date (2026-11-26), got {value!r}")


def _read(directory: Traversable, file: str) -> dict[str, Any]:
    try:
        data: dict[str, Any] = tomllib.loads((directory / file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CompatTableError(f"{file}: cannot read it in {directory}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CompatTableError(f"{file}: not valid TOML: {exc}") from exc
    return data


def known_until(directory: Traversable) -> datetime.date:
    """The date up to which the tables in `directory` were checked against their sources
    (`known_until` in cuda.toml). Reads that one file only, so `--version` stays cheap."""
    data = _read(directory, "cuda.toml")
    if "known_until" not in data:
        raise CompatTableError("cuda.toml: missing 'known_until' (the date the tables were "
                               "last checked against their sources)")
    return _date(data["known_until"], "cuda.toml")


def _identity(row: Any, table: str) -> str:
    """What, beside its key, makes a row unique: a [[cudnn_support]] row's CUDA build, a
    [[product]] row's segment and page."""
    if isinstance(row, CudnnSupport):
        return row.cuda or ""
    if isinstance(row, GpuProduct):
        return f"{row.segment}, {row.source}"
    return ""


def _with_products(archs: tuple[GpuArch, ...], products: tuple[GpuProduct, ...]
                   ) -> tuple[GpuArch, ...]:
    """Each [[arch]] row with the names of its compute capability's [[product]] rows (the one
    place product names are written), in file order; a product of an unknown cc is refused."""
    known = {a.cc for a in archs}
    for row in products:
        if row.cc not in known:
            raise CompatTableError(f"gpu.toml: [[product]] ({row.names[0]}): compute capability "
                                   f"{row.cc} has no [[arch]] row")
    return tuple(replace(a, products=tuple(n for p in products if p.cc == a.cc for n in p.names))
                 for a in archs)


def load_rows(directory: Traversable) -> dict[str, Any]:
    """Read and validate the table files in `directory`: the rows of each `Tables` field,
    sorted oldest first, keyed by the field's name, and `known_until`."""
    tables: dict[str, tuple[Any, ...]] = {}
    scalars: dict[str, Any] = {}
    for file, specs in _SPECS.items():
        data = _read(directory, file)
        allowed = _SCALARS.get(file, ())
        if unknown := sorted(set(data) - set(specs) - set(allowed)):
            raise CompatTableError(f"{file}: unknown table(s): {', '.join(unknown)}")
        scalars.update({k: data[k] for k in allowed if k in data})
        for table, (cls, spec) in specs.items():
            rows = data.get(table, [])
            if not isinstance(rows, list):
                raise CompatTableError(f"{file}: {table!r} must be an array of tables")
            built: list[Any] = []
            for index, row in enumerate(rows):
                err = _error(file, table, index, row)
                fields = _fields(row, {**spec, **_COMMON}, err)
                if cls is GpuArch:
                    fields["products"] = ()  # filled from [[product]] below
                built += (_torch_rows(fields, tables.get("torch.index", ()), err)
                          if cls is TorchRelease else [cls(**fields)])
            key = next(k for k in ("version", "cc", "major", "branch", "first", "install")
                       if k in spec or cls is TorchRelease)  # the row's identity
            ids = [getattr(row, key) for row in built]
            sort_keys = [_V(k) if isinstance(k, str) and key != "install" else k for k in ids]
            extra = [_identity(row, table) for row in built]
            idents = list(zip(sort_keys, extra, strict=True))
            for i, sort_key in enumerate(sort_keys):
                if idents[i] in idents[:i]:
                    more = f" ({extra[i]})" if extra[i] and cls is GpuProduct else (
                        f" (CUDA {extra[i]})" if extra[i] else "")
                    raise CompatTableError(f"{file}: [[{table}]] has {key} {sort_key}{more} twice")
            order = sorted(range(len(built)), key=lambda i: (
                (sort_keys[i],) if cls is GpuProduct else (sort_keys[i], extra[i])))
            tables[f"{file[:-5]}.{table}"] = tuple(built[i] for i in order)
    tables["gpu.arch"] = _with_products(tables["gpu.arch"], tables["gpu.product"])
    if "known_until" not in scalars:
        raise CompatTableError("cuda.toml: missing 'known_until' (the date the tables were last "
                               "checked against their sources)")
    out: dict[str, Any] = {field: tables[key] for field, key in FIELDS.items()}
    out["known_until"] = _date(scalars["known_until"], "cuda.toml")
    return out
