"""JSON round-trip of the model's frozen dataclasses.

The encoding is plain JSON with a stable key order (the dataclass field order). A union
`X | Unavailable` is told apart by the key `"unavailable"`, which only an `Unavailable` has.
Decoding is driven by the type hints, so `load(dump(env)) == env` holds for every Environment.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from enum import Enum
from typing import Any, TypeVar, Union

from gpudoctor.model import SCHEMA_VERSION, Environment, Unavailable

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
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_data(v) for v in value]
    return value


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


def _from_dataclass(tp: type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise SnapshotError(f"{where}: expected an object for {tp.__name__}")
    hints = typing.get_type_hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):  # type: ignore[arg-type]
        if not f.init:
            continue
        if f.name not in data:
            if f.default is not dataclasses.MISSING:
                continue
            raise SnapshotError(f"{where}.{f.name}: missing")
        kwargs[f.name] = from_data(hints[f.name], data[f.name], f"{where}.{f.name}")
    return tp(**kwargs)


def dumps(env: Environment) -> str:
    """The snapshot file's text."""
    return json.dumps(
        {"schema_version": SCHEMA_VERSION, "environment": to_data(env)}, indent=2
    ) + "\n"


def loads(text: str) -> Environment:
    """Read a snapshot, or a `check --format json` report (which embeds one)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SnapshotError(f"not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, dict) or "environment" not in data:
        raise SnapshotError("no 'environment' object: not a gpudoctor snapshot or report")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise SnapshotError(
            f"schema_version {version!r}; this gpudoctor reads {SCHEMA_VERSION}"
        )
    env = from_data(Environment, data["environment"])
    assert isinstance(env, Environment)
    return env
