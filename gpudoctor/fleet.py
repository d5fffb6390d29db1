"""`gpudoctor fleet`: many node reports in, one view out — nodes × key facts, the majority
value of each fact, and the nodes that deviate from it or fail, named.

Reading is built for a thousand reports in well under two seconds: each file is parsed with
`json.loads` and only the fields the view needs are picked out of the raw data (no dataclass
decode of the whole environment), and a `check --format json` report's own findings give the
verdicts (no check is re-run). A plain snapshot (no findings) is decoded in full and judged.
A file that cannot be read, is not JSON or is no gpudoctor report is a node problem: it is
listed by path with the reason, never fatal.

`read_node(path, text) -> Node` and `aggregate(nodes, unreadable) -> Fleet` are pure;
`expand(paths)` lists the files of directories (the CLI reads them, bounded).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gpudoctor import schemas
from gpudoctor.policy import Verdict, verdict, verdict_of
from gpudoctor.versions import decode_cuda_version, format_cudnn_version

# the fleet's key facts (`Node.key_facts`, `Fleet.summaries`), in column order
FACTS = ("driver", "driver CUDA", "GPUs", "torch", "torch CUDA", "torch cuDNN", "toolkit",
         "OS", "kernel", "Python", "container")
NONE = "-"


class NodeError(ValueError):
    """A report that cannot be used; `str(e)` says why in one line."""


@dataclass(frozen=True, slots=True)
class Node:
    """One node's report: its name, file, key facts and verdicts."""

    name: str
    path: str
    key_facts: tuple[str, ...]  # its value of each of FACTS, in that order
    failed: tuple[str, ...]  # ids of the failing checks
    warned: tuple[str, ...]  # ids of the warning ones (a note is none: `gpudoctor.policy`)
    judged: bool  # the report held findings (False: none were made, e.g. checks not run)


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A report that could not be used, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class KeyFactSummary:
    """One key fact over the fleet: the majority value and the nodes holding every other value."""

    fact: str
    majority: str
    count: int  # nodes with the majority value
    deviants: tuple[tuple[str, tuple[str, ...]], ...]  # (value, node names), most common first


@dataclass(frozen=True, slots=True)
class Fleet:
    """The whole view."""

    nodes: tuple[Node, ...]
    unreadable: tuple[Unreadable, ...]
    summaries: tuple[KeyFactSummary, ...]  # one per key fact, in FACTS order (none: no node)

    @property
    def failing(self) -> tuple[Node, ...]:
        """The nodes with a failing check."""
        return tuple(n for n in self.nodes if n.failed)

    @property
    def deviating(self) -> tuple[str, ...]:
        """Names of the nodes that differ from the majority in any fact."""
        names = {n for s in self.summaries for _, ns in s.deviants for n in ns}
        return tuple(n.name for n in self.nodes if n.name in names)

    @property
    def ok(self) -> bool:
        """No node fails and every report was read (exit 0)."""
        return not self.failing and not self.unreadable


# --------------------------------------------------------------------------- reading


def _text(value: Any) -> str:
    if isinstance(value, dict) and "unavailable" in value:
        return f"unavailable ({value['unavailable']})"
    if value is None or value == "":
        return NONE
    return str(value)


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _cuda(n: Any) -> str:
    return decode_cuda_version(n) if isinstance(n, int) and n > 0 else _text(n)


def _cudnn(n: Any) -> str:
    """torch's cuDNN as GD309 says it: 92000 → "9.20.0"."""
    ok = isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**63
    return format_cudnn_version(n) if ok else _text(n)


def _gpus(nvml: Any) -> str:
    gpus = _get(nvml, "gpus")
    if not isinstance(gpus, list):
        return _text(nvml) if isinstance(nvml, dict) else NONE
    names = Counter(str(g.get("name", "?")) if isinstance(g, dict) and "name" in g
                    else "unavailable" for g in gpus)
    return " + ".join(f"{n} × {name}" for name, n in names.items()) or "0"


def key_facts(env: dict[str, Any]) -> tuple[str, ...]:
    """The fleet's key facts (FACTS order) from a raw `environment` object."""
    nvml, libcuda, host = env.get("nvml"), env.get("libcuda"), env.get("host")
    driver = _get(nvml, "driver_version") or _get(libcuda, "driver_version") or nvml
    drv_cuda = _get(nvml, "cuda_driver_version")
    if not isinstance(drv_cuda, int):
        drv_cuda = _get(libcuda, "cuda_driver_version")
    torch = env.get("torch")
    runtime, static = _get(torch, "runtime"), _get(torch, "static")
    if _get(static, "unavailable") == _get(runtime, "unavailable") == "not-installed":
        torch = static  # no torch in the named interpreter: as the bare Unavailable reads
    rt_ok = isinstance(runtime, dict) and "unavailable" not in runtime
    version = _get(runtime, "version") if rt_ok else _get(static, "version")
    if rt_ok:
        tcuda = runtime.get("cuda") or "CPU-only"
        cudnn = runtime.get("cudnn_version")
    else:
        pairs = _get(static, "version_py")
        vpy = {p[0]: p[1] for p in pairs if isinstance(p, list) and len(p) == 2
               and isinstance(p[0], str)} if isinstance(pairs, list) else {}
        tcuda = vpy.get("cuda") if vpy.get("cuda") not in (None, "None") else (
            "CPU-only" if vpy else None)
        cudnn = None
    kits = env["toolkits"] if "toolkits" in env else env.get("cuda")  # v1 wrote "cuda"
    toolkits = _get(kits, "toolkits")
    in_use = next((t for t in toolkits if isinstance(t, dict) and t.get("in_use")),
                  None) if isinstance(toolkits, list) else None
    toolkit = _get(in_use, "version") if in_use else (kits if isinstance(
        kits, dict) and "unavailable" in kits else None)
    return (
        _text(driver), _cuda(drv_cuda), _gpus(nvml), _text(version or torch),
        _text(tcuda if tcuda or rt_ok else torch), _cudnn(cudnn), _text(toolkit),
        _text(_get(host, "os_name")), _text(_get(host, "kernel")),
        _text(_get(host, "python_version")),
        _text(_get(host, "container") or ("none" if isinstance(host, dict) and
                                          "kernel" in host else None)),
    )


def read_node(path: str, text: str) -> Node:
    """One node from a report's text; NodeError when it is not a usable gpudoctor report."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise NodeError(f"not JSON ({e.msg} at line {e.lineno})") from None
    except (ValueError, RecursionError) as e:
        raise NodeError(f"not a report: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("environment"), dict):
        raise NodeError("no 'environment' object: not a gpudoctor report or snapshot")
    refused = schemas.accepts(data)
    if refused is not None:
        raise NodeError(refused)
    env = data["environment"]
    findings = data.get("findings")
    if findings is None:
        failed, warned, judged = _judge(text)
    else:
        failed, warned = _verdicts(findings)
        judged = bool(findings)
    hostname = _get(env, "host", "hostname")
    name = hostname if isinstance(hostname, str) and hostname else Path(path).stem
    return Node(name, path, key_facts(env), failed, warned, judged)


_STATUSES = ("pass", "warn", "fail", "skip")
_CHECK_ID = re.compile(r"GD[0-9]{3}")


def _verdicts(findings: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The failing and warning check ids of a report's findings, validated: a list of objects,
    each with a check id (`GD` and three digits: a node on a newer gpudoctor may run a check
    this one lacks) at most once, and a status gpudoctor writes. A hand-edited finding
    (`"id": "GD101\\n→ fix: …"`, `"status": "ok"`, a check twice) makes the report unusable,
    named with the reason; it is never shown or counted."""
    if not isinstance(findings, list):
        raise NodeError("'findings' is not a list of findings")
    seen: set[str] = set()
    for n, f in enumerate(findings):
        if not isinstance(f, dict):
            raise NodeError(f"finding {n} is not an object")
        check_id, status = f.get("id"), f.get("status")
        if not isinstance(check_id, str) or not _CHECK_ID.fullmatch(check_id):
            raise NodeError(f"finding {n}: {str(check_id)[:40]!r} is not a gpudoctor check id")
        if check_id in seen:
            raise NodeError(f"finding {n}: {check_id} appears twice")
        if status not in _STATUSES:
            raise NodeError(f"finding {n} ({check_id}): status {str(status)[:20]!r} is not one of "
                            f"{', '.join(_STATUSES)}")
        seen.add(check_id)
    judged = [(f["id"], verdict_of(f["status"], _severity(f.get("severity")))) for f in findings]
    return (tuple(i for i, v in judged if v is Verdict.FAILURE),
            tuple(i for i, v in judged if v is Verdict.WARNING))


def _severity(value: Any) -> str | None:
    """A finding's severity as the JSON report writes it; anything else weighs as the
    status alone (a warn is then a warning, not a note)."""
    return value if value in ("info", "warning", "error") else None


def _judge(text: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """A snapshot without findings: read it as `check --from-snapshot` does (the one reader
    entry, `gpudoctor.reports.read.read_inputs`) and run every check."""
    from gpudoctor.checks import REGISTRY, run_checks
    from gpudoctor.compat import load_tables
    from gpudoctor.reports.read import ReportError, read_inputs

    tables = load_tables()
    try:
        env = read_inputs([("the report", text)], tables)
    except ReportError as e:
        # "not a usable gpudoctor snapshot: …", "states what no machine has: …"
        raise NodeError(str(e).removeprefix("the report is ").removeprefix("the report ")
                        ) from None
    report = run_checks(env, tables, REGISTRY)
    return (tuple(r.check_id for r in report.results if verdict(r) is Verdict.FAILURE),
            tuple(r.check_id for r in report.results if verdict(r) is Verdict.WARNING), True)


# --------------------------------------------------------------------------- aggregating


def _unique(nodes: Sequence[Node]) -> tuple[Node, ...]:
    """Two reports naming the same host (a node that reported twice, cloned images) keep
    both, told apart by their file."""
    seen = Counter(n.name for n in nodes)
    return tuple(n if seen[n.name] == 1 else replace(n, name=f"{n.name} ({n.path})")
                 for n in nodes)


def aggregate(nodes: Iterable[Node], unreadable: Iterable[Unreadable] = ()) -> Fleet:
    """The fleet view: nodes sorted by name, each key fact's majority and deviants."""
    ordered = _unique(sorted(nodes, key=lambda n: (n.name, n.path)))
    summaries = []
    for i, fact in enumerate(FACTS):
        holders: dict[str, list[str]] = {}
        for n in ordered:
            holders.setdefault(n.key_facts[i], []).append(n.name)
        ranked = sorted(holders.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        if not ranked:
            continue
        (value, names), rest = ranked[0], ranked[1:]
        summaries.append(KeyFactSummary(fact, value, len(names),
                                        tuple((v, tuple(ns)) for v, ns in rest)))
    return Fleet(ordered, tuple(sorted(unreadable, key=lambda u: u.path)), tuple(summaries))


# --------------------------------------------------------------------------- files


def expand(paths: Sequence[str]) -> tuple[list[str], list[Unreadable]]:
    """Files to read: each path given, a directory's `*.json` files (not recursive); a path
    that does not exist is unreadable (a node whose report is missing)."""
    files: list[str] = []
    missing: list[Unreadable] = []
    for p in paths:
        if os.path.isdir(p):
            with os.scandir(p) as it:
                files += sorted(os.path.join(p, e.name) for e in it
                                if e.name.endswith(".json") and not e.name.startswith("."))
        elif os.path.exists(p):
            files.append(p)
        else:
            missing.append(Unreadable(p, "no such file"))
    return list(dict.fromkeys(files)), missing
