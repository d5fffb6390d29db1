#!/usr/bin/env python3
"""Write docs/schemas/<document>.schema.json: one JSON Schema (draft 2020-12) for each JSON
document gpudoctor writes (gpudoctor/schemas.py names them and their versions).

    python tools/write_schemas.py           write every schema
    python tools/write_schemas.py --check   exit 1 naming the schemas that are stale

Every data class a document embeds (the Environment of a snapshot, a check or smoke-test
report; a smoke test's measurements; an install plan; a recommendation) is described by
walking its type hints with the rules `gpudoctor.snapshot.from_data` decodes it by: `X |
Unavailable` is X or the object with an `"unavailable"` reason, a tuple is an array, a float
is a number or "NaN"/"Infinity"/"-Infinity", a field without a default is required, and no
other key is written; the reader's rules for impossible values (`snapshot._RULES`: counts ≥ 0,
version and compute-capability patterns, facts that must not be empty; every integer within
64 bits) become constraints of the field. Change the model and tests/test_schemas.py fails
until this is rerun.
The keys each renderer writes around those classes are described here, document by document,
with the renderer named. Each file is self-contained: its data classes are under `$defs`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any, Union

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpudoctor import schemas  # noqa: E402
from gpudoctor import snapshot as reader  # noqa: E402
from gpudoctor.actions.distributed import DistributedOptions  # noqa: E402
from gpudoctor.actions.install_cudnn import InstallPlan  # noqa: E402
from gpudoctor.actions.smoke import SmokeOptions  # noqa: E402
from gpudoctor.actions.system import ActionError  # noqa: E402
from gpudoctor.actions.uninstall_cudnn import UninstallResult  # noqa: E402
from gpudoctor.checks.smoke import TOLERANCE  # noqa: E402
from gpudoctor.compat.query import QUERIES  # noqa: E402
from gpudoctor.compat.recommend import Recommendation  # noqa: E402
from gpudoctor.explain.core import State  # noqa: E402
from gpudoctor.fleet import FACTS  # noqa: E402
from gpudoctor.model import Environment, Layer, Severity, SmokeFailure, Status  # noqa: E402
from gpudoctor.model_base import Unavailable  # noqa: E402
from gpudoctor.model_smoke import ConfigRun, DistributedRun, SmokeRun  # noqa: E402

Schema = dict[str, Any]
DRAFT = "https://json-schema.org/draft/2020-12/schema"
NONFINITE = ["NaN", "Infinity", "-Infinity"]  # gpudoctor.snapshot._NONFINITE's strings

STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
COUNT: Schema = {"type": "integer", "minimum": 0}
BOOL: Schema = {"type": "boolean"}
NUMBER: Schema = {"type": "number"}


def nullable(s: Schema) -> Schema:
    """`s` or null."""
    return {"anyOf": [s, {"type": "null"}]}


def array(s: Schema) -> Schema:
    """An array of `s`."""
    return {"type": "array", "items": s}


def obj(properties: Mapping[str, Schema], required: list[str] | None = None) -> Schema:
    """An object with exactly these keys (all of them required unless `required` says)."""
    return {"type": "object", "properties": dict(properties),
            "required": list(properties) if required is None else required,
            "additionalProperties": False}


def ref(name: str) -> Schema:
    """A reference to a definition of this file's `$defs`."""
    return {"$ref": f"#/$defs/{name}"}


# ------------------------------------------------------------------------- the type-hint walk
class Walker:
    """The schema of data classes as `gpudoctor.snapshot.to_data` writes them and `from_data`
    reads them back; each class once, in `defs`. `extra` adds keys a renderer writes into a
    class's objects (a smoke-test report's `training_ok`): such a class, and every class that
    holds one, is defined again under its name with `prefix`, the plain one left as it is."""

    def __init__(self, defs: dict[str, Schema], extra: Mapping[type, Mapping[str, Schema]]
                 | None = None, prefix: str = "") -> None:
        self.defs, self.extra, self.prefix = defs, extra or {}, prefix
        self._touches: dict[type, bool] = {}

    def of(self, tp: Any) -> Schema:
        """The schema of a value of type `tp` (the cases of `from_data`, in its order)."""
        origin = typing.get_origin(tp)
        if origin in (Union, types.UnionType):
            return {"anyOf": [self.of(a) for a in typing.get_args(tp)]}
        if tp is Any:
            return {}
        if tp is type(None):
            return {"type": "null"}
        if origin is tuple:
            args = typing.get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                return array(self.of(args[0]))
            return {"type": "array", "prefixItems": [self.of(a) for a in args],
                    "minItems": len(args), "maxItems": len(args), "items": False}
        if isinstance(tp, type) and issubclass(tp, Enum):
            return {"enum": [m.value for m in tp]}
        if tp is Unavailable:
            return self._unavailable()
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self._dataclass(tp)
        if tp is float:  # an int reads as a float; a non-finite one is written as a string
            return {"anyOf": [NUMBER, {"enum": NONFINITE}]}
        if tp is int:  # the reader refuses an integer past 64 bits, whatever the field
            return {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1}
        simple = {bool: BOOL, str: STR}
        if tp in simple:
            return dict(simple[tp])
        raise TypeError(f"no JSON Schema for {tp!r}: teach tools/write_schemas.py, as "
                        "gpudoctor.snapshot.from_data was taught to read it")

    def fields(self, tp: type) -> tuple[dict[str, Schema], list[str]]:
        """A data class's keys (field order) and the required ones (those without a default,
        which `from_data` cannot do without)."""
        hints = typing.get_type_hints(tp)
        props, required = {}, []
        for f in dataclasses.fields(tp):
            props[f.name] = self.of(hints[f.name])
            rule = reader._RULES.get((tp.__name__, f.name))
            if rule is not None and tp.__module__.startswith("gpudoctor.model"):
                props[f.name] = _constrained(rule.__name__, props[f.name])
            no_default = (f.default is dataclasses.MISSING
                          and f.default_factory is dataclasses.MISSING)
            if f.init and no_default:
                required.append(f.name)
        extra = self.extra.get(tp, {})
        return {**props, **extra}, required + list(extra)

    def _dataclass(self, tp: type) -> Schema:
        name = (self.prefix if self._touched(tp) else "") + tp.__name__
        if name not in self.defs:
            self.defs[name] = {}  # a placeholder while the fields are walked (recursion)
            props, required = self.fields(tp)
            doc = (tp.__doc__ or "").strip().split("\n\n")[0]
            self.defs[name] = {"description": " ".join(doc.split()), **obj(props, required)}
        return ref(name)

    def _touched(self, tp: type) -> bool:
        """Whether `tp` is one of `extra`'s classes or holds one, however deep."""
        if tp not in self._touches:
            self._touches[tp] = tp in self.extra
            hints = typing.get_type_hints(tp)
            self._touches[tp] = tp in self.extra or any(
                self._touched(t) for f in dataclasses.fields(tp) for t in _classes(hints[f.name]))
        return self._touches[tp]

    def _unavailable(self) -> Schema:
        if "Unavailable" not in self.defs:
            reason = self.of(typing.get_type_hints(Unavailable)["reason"])
            self.defs["Unavailable"] = {
                "description": "a fact that could not be gathered, and why",
                **obj({"unavailable": reason, "message": STR, "detail": nullable(STR)},
                      ["unavailable"])}
        return ref("Unavailable")


def _classes(tp: Any) -> list[type]:
    """The data classes named in a type hint."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return [tp]
    return [c for a in typing.get_args(tp) for c in _classes(a)]


# ------------------------------------------------------- the reader's impossible values
def _exact(rx: Any) -> str:
    """A full-match pattern that means the same in ECMA-262 and in Python's `re.search`
    (jsonschema's): `\\d` spelled [0-9], and no trailing newline let through by `$`."""
    return f"^(?:{rx.pattern.replace(chr(92) + 'd', '[0-9]')})(?!\\n)$"


def _narrow(s: Schema, kind: str, extra: Schema, drop_nonfinite: bool = False) -> Schema:
    """`s` with `extra` added to its arm of JSON type `kind` (the others, Unavailable and
    null, stay as they are: the reader judges neither)."""
    if "anyOf" in s:
        arms = [_narrow(a, kind, extra, drop_nonfinite) for a in s["anyOf"]
                if not (drop_nonfinite and a.get("enum") == NONFINITE)]
        return arms[0] if len(arms) == 1 else {**s, "anyOf": arms}
    return {**s, **extra} if s.get("type") == kind else s


def _constrained(rule: str, s: Schema) -> Schema:
    """The field's schema `s` narrowed by the reader's rule of that name."""
    version = {"pattern": _exact(reader._VERSION)}
    package = {"pattern": _exact(reader._PACKAGE_VERSION)}
    if rule == "_count":
        return _narrow(s, "integer", {"minimum": 0})
    if rule in ("_version", "_package_version", "_capability"):
        rx = {"_version": version, "_package_version": package,
              "_capability": {"pattern": _exact(reader._CAPABILITY)}}[rule]
        return _narrow(s, "string", rx)
    if rule == "_installed_version":
        return _narrow(s, "string", {"anyOf": [{"const": reader._NO_METADATA}, package]})
    if rule == "_package_versions":  # (version, where) pairs; "None": metadata without one
        pair = s["items"]
        first = {**pair["prefixItems"][0], "anyOf": [{"const": "None"}, package]}
        return {**s, "items": {**pair, "prefixItems": [first, *pair["prefixItems"][1:]]}}
    if rule == "_not_empty":
        return _narrow(s, "array", {"minItems": 1})
    if rule == "_dtype":
        return _narrow(s, "string", {"enum": list(TOLERANCE)})
    if rule == "_seconds":
        return _narrow(s, "number", {"minimum": 0}, drop_nonfinite=True)
    raise TypeError(f"gpudoctor.snapshot has a rule {rule} that tools/write_schemas.py does "
                    "not know: say in _constrained what it allows")


# ----------------------------------------------------------------------------- the documents
def _statuses() -> Schema:
    return obj({s.value: COUNT for s in Status})


def _finding() -> Schema:
    """renderers/interface.finding_dict: one check's result, in every command's JSON."""
    return obj({
        "id": {"type": "string", "pattern": "^GD[0-9]{3}$"},
        "slug": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
        "title": STR,
        "layer": {"enum": [layer.value for layer in Layer]},
        "severity": {"enum": [s.name.lower() for s in Severity]},
        "status": {"enum": [s.value for s in Status]},
        "message": STR,
        "fix": nullable(STR),
        "evidence": array({"type": "array", "prefixItems": [STR, STR], "minItems": 2,
                           "maxItems": 2, "items": False}),
        "docs_url": {"type": "string", "pattern": "^docs/checks\\.md#gd[0-9]{3}$"},
    })


FINDINGS = array(ref("Finding"))


def snapshot(w: Walker) -> dict[str, Schema]:
    """gpudoctor.snapshot.dumps."""
    return {"environment": w.of(Environment)}


def check(w: Walker) -> dict[str, Schema]:
    """renderers/json.JsonRenderer."""
    return {"gpudoctor_version": STR, "summary": _statuses(),
            "compat_tables_known_until": nullable({"type": "string", "format": "date"}),
            "unknown_selectors": array(STR), "notes": array(STR), "findings": FINDINGS,
            "environment": w.of(Environment)}


def _head(command: str, options: Schema) -> dict[str, Schema]:
    """renderers/smoke.json_head."""
    return {"gpudoctor_version": STR, "command": {"const": command}, "options": options,
            "summary": _statuses(), "findings": FINDINGS}


def _failure(w: Walker) -> Schema:
    return obj({"failure": w.of(SmokeFailure)})


def smoke_test(w: Walker) -> dict[str, Schema]:
    """renderers/smoke.render_json; `smoke` is actions/smoke.outcome_to_dict: the report with
    each configuration's `training_ok`, or the failure."""
    run = Walker(w.defs, extra={ConfigRun: {"training_ok": BOOL}}, prefix="Written")
    tolerance = {"type": "object", "propertyNames": {"enum": list(TOLERANCE)},
                 "additionalProperties": NUMBER}
    return {**_head("smoke-test", obj(*w.fields(SmokeOptions))),
            "thresholds": obj({"max_rel_diff": tolerance, "cudnn_slower_margin": NUMBER}),
            "smoke": {"anyOf": [run.of(SmokeRun), _failure(w)]},
            "environment": w.of(Environment)}


def smoke_test_distributed(w: Walker) -> dict[str, Schema]:
    """renderers/distributed.render_json."""
    return {**_head("smoke-test --distributed", obj(*w.fields(DistributedOptions))),
            "distributed": {"anyOf": [w.of(DistributedRun), _failure(w)]},
            "environment": w.of(Environment)}


def diff(w: Walker) -> dict[str, Schema]:
    """renderers/diff.to_dict."""
    layer = {"enum": [layer.value for layer in Layer]}
    side = obj({"status": {"enum": [s.value for s in Status]}, "message": STR})
    return {
        "gpudoctor_version": STR, "command": {"const": "diff"}, "a": STR, "b": STR,
        "summary": obj({"facts_compared": COUNT, "facts_differ": COUNT,
                        "verdicts_changed": COUNT, "a": _statuses(), "b": _statuses()}),
        "facts": array(obj({"layer": layer, "fact": STR, "a": STR, "b": STR})),
        "verdicts": array(obj({"id": STR, "slug": STR, "title": STR, "layer": layer,
                               "a": side, "b": side})),
    }


def explain(w: Walker) -> dict[str, Schema]:
    """renderers/explain.explain_json."""
    decoded = obj({"name": STR, "kind": STR, "value": STR, "meaning": STR})
    diagnosis = obj({
        "id": STR, "title": STR, "family": STR, "cause_class": STR,
        "state": {"enum": [s.value for s in State]}, "line": {"type": "integer", "minimum": 1},
        "matched": STR, "decoded": array(decoded), "cause": STR, "why": STR, "fix": STR,
        "general_fix": STR, "checks": FINDINGS, "sources": array(STR)})
    return {"gpudoctor_version": STR, "command": {"const": "explain"}, "found": BOOL,
            "checked_against": STR, "diagnoses": array(diagnosis), "note": nullable(STR)}


def fleet(w: Walker) -> dict[str, Schema]:
    """renderers/fleet.to_dict."""
    ids = array(STR)
    return {
        "gpudoctor_version": STR, "command": {"const": "fleet"},
        "summary": obj({"nodes": COUNT, "failing": COUNT, "deviating": COUNT,
                        "unreadable": COUNT}),
        "facts": array(obj({"fact": {"enum": list(FACTS)}, "majority": STR, "count": COUNT,
                            "deviants": array(obj({"value": STR, "nodes": array(STR)}))})),
        "failing": array(obj({"node": STR, "path": STR, "checks": ids})),
        "unreadable": array(obj({"path": STR, "reason": STR})),
        "nodes": array(obj({"node": STR, "path": STR, "facts": obj(dict.fromkeys(FACTS, STR)),
                            "failed": ids, "warned": ids})),
    }


def install_cudnn(w: Walker) -> dict[str, Schema]:
    """renderers/install.install_json."""
    return {"command": {"const": "install-cudnn"}, "ok": BOOL, "dry_run": BOOL,
            "error": nullable(w.of(ActionError)), "rolled_back": BOOL,
            "plan": nullable(w.of(InstallPlan)), "manifest": nullable(STR),
            "ldconfig": nullable(STR), "checks": FINDINGS}


def uninstall_cudnn(w: Walker) -> dict[str, Schema]:
    """renderers/install.uninstall_json: the result's every field."""
    props, _ = w.fields(UninstallResult)  # to_data writes the defaults too
    return {"command": {"const": "uninstall-cudnn"}, "ok": BOOL, **props}


def compat(w: Walker) -> dict[str, Schema]:
    """compat/query/answer.Answer.to_dict: a row holds its values (their keys depend on the
    kind and section), then where it comes from."""
    row = {"type": "object", "properties": {"status": STR, "source": STR, "note": nullable(STR)},
           "required": ["status", "source", "note"]}
    section = obj({"title": STR, "note": nullable(STR), "rows": array(row)})
    return {"kind": {"enum": list(QUERIES)}, "query": STR, "subject": STR,
            "sections": {"type": "object", "additionalProperties": section}}


def recommend(w: Walker) -> dict[str, Schema]:
    """renderers/compat.recommendation_json: every field of the Recommendation."""
    props, _ = w.fields(Recommendation)  # dataclasses.asdict writes every field
    return props


def checks() -> Schema:
    """renderers/catalog.catalog_json: a bare list, one object per check (no schema_version
    key; the version is this schema's)."""
    return array(obj({
        "id": {"type": "string", "pattern": "^GD[0-9]{3}$"}, "slug": STR, "title": STR,
        "layer": {"enum": [layer.heading for layer in Layer]},
        "severity": {"enum": [s.name.lower() for s in Severity]}, "needs": STR, "doc": STR,
        "docs_url": {"type": "string", "pattern": "^docs/checks\\.md#gd[0-9]{3}$"}}))


DOCUMENTS: dict[str, tuple[str, Callable[[Walker], dict[str, Schema]]]] = {
    schemas.SNAPSHOT: ("a machine's facts (`gpudoctor snapshot`)", snapshot),
    schemas.CHECK: ("the verdicts and the facts (`gpudoctor check --format json`)", check),
    schemas.SMOKE_TEST: ("a smoke test's measurements and verdicts (`gpudoctor smoke-test "
                         "--format json`)", smoke_test),
    schemas.SMOKE_TEST_DISTRIBUTED: ("every rank's measurements and the verdicts (`gpudoctor "
                                     "smoke-test --distributed --format json`)",
                                     smoke_test_distributed),
    schemas.DIFF: ("what differs between two machines (`gpudoctor diff --format json`)", diff),
    schemas.EXPLAIN: ("what an error means (`gpudoctor explain --format json`)", explain),
    schemas.FLEET: ("many nodes at a glance (`gpudoctor fleet --format json`)", fleet),
    schemas.INSTALL_CUDNN: ("a cuDNN install's plan and result (`gpudoctor install-cudnn "
                            "--format json`)", install_cudnn),
    schemas.UNINSTALL_CUDNN: ("a cuDNN uninstall's result (`gpudoctor uninstall-cudnn "
                              "--format json`)", uninstall_cudnn),
    schemas.COMPAT: ("an answer from the compatibility tables (`gpudoctor compat KIND QUERY "
                     "--format json`)", compat),
    schemas.RECOMMEND: ("the install lines that fit a machine (`gpudoctor recommend --format "
                        "json`)", recommend),
}


def schema_of(document: str) -> Schema:
    """The JSON Schema of one document."""
    head: Schema = {"$schema": DRAFT, "$id": schemas.schema_id(document),
                    "title": f"gpudoctor {document} document, version "
                             f"{schemas.version(document)}"}
    if document == schemas.CHECKS:
        return {**head, "description": "the check catalogue (`gpudoctor checks --format "
                "json`), a bare list: its version is this schema's", **checks()}
    description, build = DOCUMENTS[document]
    defs: dict[str, Schema] = {}
    w = Walker(defs)
    props = build(w)
    if ref("Finding")["$ref"] in json.dumps(props):
        defs["Finding"] = {"description": "one check's result", **_finding()}
    body = obj({"schema_version": {"const": schemas.version(document)}, **props})
    return {**head, "description": description, **body, "$defs": dict(sorted(defs.items()))}


def text_of(document: str) -> str:
    """The schema file's text."""
    return json.dumps(schema_of(document), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, compare) every schema file; 1 when one is stale."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only say which files are stale")
    args = parser.parse_args(argv)
    stale = []
    for document in schemas.VERSIONS:
        path = ROOT / schemas.schema_path(document)
        text = text_of(document)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(str(path.relative_to(ROOT)))
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for name in stale:
        print(f"{'stale' if args.check else 'wrote'}: {name}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
