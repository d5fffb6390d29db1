"""JSON round-trip of the model's frozen dataclasses.

The encoding is plain JSON with a stable key order (the dataclass field order). A union
`X | Unavailable` is told apart by the key `"unavailable"`, which only an `Unavailable` has.
Decoding is driven by the type hints, so `load(dump(env)) == env` holds for every Environment.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from types import MappingProxyType
from typing import Any, TypeVar, Union

from gpudoctor import schemas
from gpudoctor.model import OMITTED_WHEN_NONE, Environment, Unavailable

T = TypeVar("T")


class SnapshotError(ValueError):
    """A snapshot file that cannot be read back."""


def to_data(value: Any) -> Any:
    """Turn a model value into JSON-ready data."""
    if isinstance(value, Unavailable):
        return {
            "unavailable": str(value.reason),
            "message": value.message,
            "detail": value.detail,
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)
                if getattr(value, f.name) is not None or not f.metadata.get(OMITTED_WHEN_NONE)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_data(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return _NONFINITE[str(value)]  # a smoke test's NaN loss: strict JSON has no NaN
    return value


# non-finite floats as strings, so that every report is strict JSON (jq, JSON.parse)
_NONFINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def from_data(tp: Any, data: Any, where: str = "$") -> Any:
    """Rebuild a value of type `tp` from `to_data` output; `where` names the place on error."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return _from_union(typing.get_args(tp), data, where)
    if tp is Any:
        return data
    if tp is type(None):
        if data is not None:
            raise SnapshotError(f"{where}: expected null")
        return None
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list):
            raise SnapshotError(f"{where}: expected a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_data(args[0], d, f"{where}[{i}]") for i, d in enumerate(data))
        if len(args) != len(data):
            raise SnapshotError(f"{where}: expected {len(args)} items")
        pairs = enumerate(zip(args, data, strict=True))
        return tuple(from_data(a, d, f"{where}[{i}]") for i, (a, d) in pairs)
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(data)
        except ValueError as e:
            raise SnapshotError(f"{where}: {e}") from None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _from_dataclass(tp, data, where)
    if tp is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    if tp is float and data in _NONFINITE.values():
        return float(data)
    if isinstance(tp, type) and isinstance(data, tp) and not (tp is int and isinstance(data, bool)):
        return data
    raise SnapshotError(f"{where}: expected {getattr(tp, '__name__', tp)}, got {data!r:.60}")


def _from_union(args: tuple[Any, ...], data: Any, where: str) -> Any:
    if isinstance(data, dict) and "unavailable" in data and Unavailable in args:
        return _from_dataclass(
            Unavailable,
            {"reason": data["unavailable"], "message": data.get("message", ""),
             "detail": data.get("detail")},
            where,
        )
    if data is None and type(None) in args:
        return None
    errors = []
    for arg in args:
        if arg is Unavailable or arg is type(None):
            continue
        try:
            return from_data(arg, data, where)
        except SnapshotError as e:
            errors.append(str(e))
    raise SnapshotError("; ".join(errors) or f"{where}: no type matches {data!r:.60}")


# (dataclass, field) → the key older documents wrote it under, read when the field's own key
# is absent: snapshots, check and smoke-test reports of schema_version 1 keep reading
FORMER_KEYS: Mapping[tuple[type, str], str] = MappingProxyType({
    (Environment, "toolkits"): "cuda",  # schema_version 1: Environment.cuda, the toolkits
})


def _from_dataclass(tp: type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise SnapshotError(f"{where}: expected an object for {tp.__name__}")
    hints = typing.get_type_hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):  # type: ignore[arg-type]
        if not f.init:
            continue
        key = f.name
        if key not in data:
            key = FORMER_KEYS.get((tp, f.name), key)  # a document written before the rename
        if key not in data:
            if f.default is not dataclasses.MISSING:
                continue
            raise SnapshotError(f"{where}.{f.name}: missing")
        value = from_data(hints[f.name], data[key], f"{where}.{f.name}")
        _check_value(tp.__name__, f.name, value, f"{where}.{f.name}")
        kwargs[f.name] = value
    return tp(**kwargs)


def dumps(env: Environment) -> str:
    """The snapshot file's text."""
    return json.dumps(
        {"schema_version": schemas.version(schemas.SNAPSHOT), "environment": to_data(env)}, indent=2
    ) + "\n"


def loads(text: str) -> Environment:
    """Read a snapshot, or a `check --format json` report (which embeds one)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SnapshotError(f"not JSON ({e.msg} at line {e.lineno})") from None
    except RecursionError:
        raise SnapshotError("not a snapshot: JSON nested too deeply") from None
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        raise SnapshotError(f"not a snapshot: {e}") from None
    if not isinstance(data, dict) or "environment" not in data:
        raise SnapshotError("no 'environment' object: not a gpudoctor snapshot or report")
    refused = schemas.accepts(data)  # a snapshot's, check or smoke-test report's own version
    if refused is not None:
        raise SnapshotError(refused)
    try:
        env = from_data(Environment, data["environment"])
    except RecursionError:
        raise SnapshotError("$: nested too deeply") from None
    assert isinstance(env, Environment)
    return env


# --------------------------------------------------------------------------- impossible values
# A well-formed snapshot can still state what no machine has; decoding refuses it, naming the
# field, so that no check is asked to judge a negative memory size or a compute capability
# "x.y" (a usage error for the CLI, never a crash inside a check). Rules are per field, for the
# fields checks compute with; every int must also fit in 64 bits.

# 580.65.06, 12.4, 8.9.7: parts of at most 9 digits (a longer one is no real version, and
# past 4300 digits int() itself refuses it)
_VERSION = re.compile(r"\d{1,9}(\.\d{1,9}){0,3}", re.ASCII)
_CAPABILITY = re.compile(r"\d{1,2}\.\d{1,2}", re.ASCII)  # 8.6, 12.0
_PACKAGE_VERSION = re.compile(r"\d[0-9A-Za-z.+!_-]{0,127}", re.ASCII)  # 2.5.1+cu124
_NO_METADATA = "unknown (no package metadata)"  # the torch child on a torch without any


def _count(v: Any) -> str | None:
    return None if isinstance(v, int) and v >= 0 else "must be a whole number ≥ 0"


def _version(v: Any) -> str | None:
    return None if _VERSION.fullmatch(v) else "is not a version (like 580.65.06 or 12.4)"


def _package_version(v: Any) -> str | None:
    """A version as package metadata and torch.__version__ write it (2.5.1+cu124,
    2.6.0a0+gitabc1234, 2.5.0a0+e000cf0ad9.nv24.10): a digit first, then only the characters
    versions use. Not PEP 440 itself: legacy metadata a real machine may hold is not refused."""
    ok = _PACKAGE_VERSION.fullmatch(v)
    return None if ok else "is not a package version (like 2.5.1+cu124)"


def _installed_version(v: Any) -> str | None:
    """TorchStatic.version: a package version, or what the probe writes for a torch without
    any (gpudoctor/probes/_torch_child.py)."""
    return None if v == _NO_METADATA else _package_version(v)


def _package_versions(v: Any) -> str | None:
    """TorchStatic.distributions, (version, where) pairs: every version is one, or "None",
    what the probe writes for a dist-info whose metadata has no Version."""
    return next((f"has {p[0]!r:.40}, which {problem}" for p in v if p[0] != "None"
                 and (problem := _package_version(p[0])) is not None), None)


def _capability(v: Any) -> str | None:
    return None if _CAPABILITY.fullmatch(v) else "is not a compute capability (like 8.6)"


def _not_empty(v: Any) -> str | None:
    return None if len(v) else "must not be empty (a fact without any item is unavailable)"


def _dtype(v: Any) -> str | None:
    """The smoke test's autocast dtype: one the smoke checks have a tolerance for."""
    return None if v in ("float32", "float16", "bfloat16") else (
        "is not a smoke-test dtype (float32, float16, bfloat16)")


def _seconds(v: Any) -> str | None:
    return None if math.isfinite(v) and v >= 0 else "must be a number of seconds ≥ 0"


_RULES: dict[tuple[str, str], Callable[[Any], str | None]] = {
    ("NvmlFacts", "driver_version"): _version,
    ("NvmlFacts", "cuda_driver_version"): _count,
    ("LibcudaFacts", "driver_version"): _version,
    ("LibcudaFacts", "cuda_driver_version"): _count,
    ("GpuFacts", "index"): _count,
    ("GpuFacts", "compute_capability"): _capability,
    ("GpuFacts", "memory_total"): _count,
    ("GpuFacts", "memory_free"): _count,
    ("HostFacts", "shm_bytes"): _count,
    ("ToolkitFacts", "version"): _version,
    ("ToolkitsFacts", "toolkits"): _not_empty,
    ("TorchStatic", "version"): _installed_version,
    ("TorchStatic", "distributions"): _package_versions,
    ("TorchRuntime", "version"): _package_version,
    ("TorchRuntime", "cuda"): _version,
    ("TorchRuntime", "cudnn_version"): _count,
    ("TorchRuntime", "device_count"): _count,
    ("TorchDevice", "index"): _count,
    ("TorchDevice", "capability"): _capability,
    ("TorchDevice", "total_memory"): _count,
    ("TorchFacts", "seconds"): _seconds,
    ("CudnnFacts", "installs"): _not_empty,
    ("CudnnInstall", "header_version"): _version,
    ("CudnnInstall", "library_version"): _version,
    ("CudnnInstall", "cuda_build"): _version,
    ("ElfFacts", "e_type"): _count,
    ("ElfFacts", "extent"): _count,
    ("DeviceInfo", "cudnn_version"): _count,  # the smoke test's device
    ("SmokeRun", "dtype"): _dtype,
}


def _check_value(owner: str, name: str, value: Any, where: str) -> None:
    """Raise SnapshotError naming `where` when the decoded value is impossible. Unavailable
    and None (a fact stated as absent) are never judged here."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise SnapshotError(f"{where}: a number too large for any fact (more than 64 bits)")
    rule = _RULES.get((owner, name))
    if rule is None or value is None or isinstance(value, Unavailable):
        return
    problem = rule(value)
    if problem is not None:
        shown = "" if isinstance(value, tuple) else f" {value!r:.60}"
        raise SnapshotError(f"{where}:{shown} {problem}")
