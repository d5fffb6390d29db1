"""Every JSON document gpudoctor writes validates against its published schema
(docs/schemas/<document>.schema.json, gpudoctor/schemas.py), on real output of every command;
the schemas are current with the model and can fail."""

from __future__ import annotations

import copy
import functools
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runner import ROOT, environment, gpudoctor, invoke

from gpudoctor import schemas
from gpudoctor.fleet import NodeError, read_node
from gpudoctor.snapshot import SnapshotError, dumps, loads
from tests.cudnn_kit import (  # noqa: F401 - the fixtures
    MakeTarball,
    cudnn_kit_fixture,
    gpu_env_fixture,
    make_tarball_fixture,
    toolkit_fixture,
)
from tools import write_schemas

jsonschema = pytest.importorskip("jsonschema")  # 4.18+: the test extra
Draft = jsonschema.Draft202012Validator

ENVS = sorted((ROOT / "tests" / "fixtures" / "envs").glob("*.json"))
H100 = ROOT / "tests" / "fixtures" / "envs" / "h100-healthy.json"
REPORTS = [ROOT / "tests" / "fixtures" / "reports" / name for name in (
    "collect_env-h100-cu126-healthy.txt", "collect_env-titanxp-cu101-driver410-too-old.txt",
    "collect_env-conda-cpuonly-2x-rtx3090.txt", "collect_env-rocm60-7900xtx.txt")]
ERROR_TEXT = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def schema(document: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / schemas.schema_path(document)).read_text())
    return data


def written(path: Path) -> dict[str, Any]:
    """A snapshot fixture as this gpudoctor writes it: the fixtures are version-1 inputs
    (`environment.cuda`, read through snapshot.FORMER_KEYS), the schema is the current one."""
    data: dict[str, Any] = json.loads(dumps(loads(path.read_text())))
    return data


@functools.cache
def validator(document: str) -> Any:
    return Draft(schema(document), format_checker=Draft.FORMAT_CHECKER)


def errors(document: str, data: Any) -> list[str]:
    """Every way `data` breaks the document's schema, one line each ([] when it is valid)."""
    return [f"{e.json_path}: {e.message:.200}" for e in validator(document).iter_errors(data)]


def run_json(*args: str) -> Any:
    """`gpudoctor ARGS` in-process; its stdout as JSON (exit 0 or 1: never a usage error)."""
    r = invoke(*args)
    assert r.exit_code in (0, 1), (args, r.exit_code, r.output[-2000:])
    return json.loads(r.stdout)


# ------------------------------------------------------------------------------ the schemas
# the metaschema check takes ~0.7 s on each schema that holds the Environment
_BIG = (schemas.SNAPSHOT, schemas.CHECK, schemas.SMOKE_TEST, schemas.SMOKE_TEST_DISTRIBUTED)


@pytest.mark.parametrize("document", [
    pytest.param(d, marks=pytest.mark.slow) if d in _BIG else d for d in schemas.VERSIONS])
def test_schema_is_valid_and_names_its_document(document: str) -> None:
    s = schema(document)
    Draft.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["$id"] == schemas.schema_id(document)
    if document == schemas.CHECKS:  # a bare list: the objects in it are closed
        assert s["type"] == "array" and s["items"]["additionalProperties"] is False
        return
    assert s["additionalProperties"] is False
    assert s["properties"]["schema_version"] == {"const": schemas.version(document)}
    assert "schema_version" in s["required"]


def test_every_document_has_a_schema_file_and_no_file_is_left_over() -> None:
    files = {p.name for p in (ROOT / schemas.SCHEMA_DIR).glob("*.json")}
    assert files == {Path(schemas.schema_path(d)).name for d in schemas.VERSIONS}


def test_schema_files_are_current() -> None:
    """docs/schemas is generated from the model's type hints and the renderers' shapes:
    regenerate it with `python tools/write_schemas.py`."""
    stale = [d for d in schemas.VERSIONS
             if (ROOT / schemas.schema_path(d)).read_text() != write_schemas.text_of(d)]
    assert not stale, f"stale schemas {stale}: run `python tools/write_schemas.py`"


def test_snapshot_schema_follows_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fact added to the Environment changes the generated snapshot schema, so the
    currency test above fails until the files are rewritten; with a default it is not
    required (old snapshots still read)."""
    import dataclasses

    from gpudoctor.model import Environment

    @dataclasses.dataclass(frozen=True, slots=True)
    class Environment2(Environment):
        new_fact: int = 0

    before = write_schemas.text_of(schemas.SNAPSHOT)
    monkeypatch.setattr(write_schemas, "Environment", Environment2)
    after = json.loads(write_schemas.text_of(schemas.SNAPSHOT))
    assert after != json.loads(before)
    grown = after["$defs"]["Environment2"]
    assert grown["properties"]["new_fact"]["type"] == "integer"
    assert "new_fact" not in grown["required"]  # it has a default: old snapshots still read


# ------------------------------------------------------------------- real output validates
COMPAT_QUERIES = (("cuda", "12.4"), ("cudnn", "8.9.7"), ("driver", "535.104.05"),
                  ("torch", "2.5.1"), ("gpu", "sm_86"), ("gpu", "RTX 3090"))


@pytest.fixture(scope="module")
def outputs() -> dict[str, list[Any]]:
    """Real output of each in-process command, by document: one or two of each (the sweep
    over every fixture is test_every_fixture_validates, slow)."""
    no_driver = ROOT / "tests" / "fixtures" / "envs" / "no-driver-cuda-torch.json"
    return {
        schemas.SNAPSHOT: [written(p) for p in ENVS],
        schemas.CHECK: [run_json("check", "--from-report", str(p), "-f", "json")
                        for p in (H100, REPORTS[1])],
        schemas.RECOMMEND: [run_json("recommend", "--from-report", str(H100), "-f", "json")],
        schemas.DIFF: [run_json("diff", str(H100), str(no_driver), "-f", "json"),
                       run_json("diff", str(H100), str(H100), "-f", "json")],
        schemas.EXPLAIN: [run_json("explain", "--no-probe", "-f", "json", text)
                          for text in (ERROR_TEXT, "nothing gpudoctor knows")],
        schemas.FLEET: [run_json("fleet", str(H100.parent), "-f", "json")],
        schemas.COMPAT: [run_json("compat", *COMPAT_QUERIES[0], "--format", "json")],
        schemas.CHECKS: [run_json("checks", "--format", "json")],
    }


REAL = [d for d in schemas.VERSIONS if d not in (
    schemas.SMOKE_TEST, schemas.SMOKE_TEST_DISTRIBUTED, schemas.INSTALL_CUDNN,
    schemas.UNINSTALL_CUDNN)]


@pytest.mark.slow
@pytest.mark.parametrize("document", REAL)
def test_real_output_validates(outputs: dict[str, list[Any]], document: str) -> None:
    assert outputs[document], f"no {document} output collected"
    for data in outputs[document]:
        assert errors(document, data) == []


@pytest.mark.slow
def test_every_fixture_validates() -> None:
    """check and recommend on every snapshot fixture and on pasted reports of each kind
    (healthy, old driver, CPU-only, ROCm), compat on each kind of query."""
    for path in [*ENVS, *REPORTS]:
        for command, document in (("check", schemas.CHECK), ("recommend", schemas.RECOMMEND)):
            data = run_json(command, "--from-report", str(path), "-f", "json")
            assert errors(document, data) == [], (command, path.name)
    for kind, query in COMPAT_QUERIES:
        data = run_json("compat", kind, query, "--format", "json")
        assert errors(schemas.COMPAT, data) == [], (kind, query)


@pytest.mark.slow
@pytest.mark.subprocess  # the probes run nvcc, ldconfig
def test_this_machines_snapshot_validates() -> None:
    data = run_json("snapshot", "--no-torch")
    assert errors(schemas.SNAPSHOT, data) == []


@pytest.mark.slow
def test_check_reports_of_every_kind_of_document_read_back(
        outputs: dict[str, list[Any]]) -> None:
    """What the check reader takes (a snapshot, a check report) is what the schemas allow."""
    for document in (schemas.SNAPSHOT, schemas.CHECK):
        for data in outputs[document][:3]:
            loads(json.dumps(data))


# ---------------------------------------------------------------- the schemas can fail
def _mutations(document: str, data: Any) -> Iterator[tuple[str, Any]]:
    """Documents that break the schema: each required key dropped, the version bumped, an
    unknown key added, a finding's status misspelt."""
    if document == schemas.CHECKS:
        for key in data[0]:
            bad = copy.deepcopy(data)
            del bad[0][key]
            yield f"{key} dropped from a check", bad
        return
    for key in schema(document)["required"]:
        bad = copy.deepcopy(data)
        del bad[key]
        yield f"{key} dropped", bad
    bad = copy.deepcopy(data)
    bad["schema_version"] += 1
    yield "version bumped", bad
    yield "unknown key", {**data, "surprise": 1}
    if data.get("findings"):
        bad = copy.deepcopy(data)
        bad["findings"][0]["status"] = "passed"
        yield "status misspelt", bad


@pytest.mark.slow
@pytest.mark.parametrize("document", REAL)
def test_a_mutated_document_is_invalid(outputs: dict[str, list[Any]], document: str) -> None:
    data = outputs[document][0]
    assert errors(document, data) == []
    for what, bad in _mutations(document, data):
        assert errors(document, bad), f"{document}: {what} still validates"


def test_an_impossible_environment_is_invalid(outputs: dict[str, list[Any]]) -> None:
    """Deep in the generated part: a Reason that does not exist, a GPU index as a string."""
    data = copy.deepcopy(outputs[schemas.SNAPSHOT][0])
    data["environment"]["torch"] = {"unavailable": "no-such-reason"}
    assert errors(schemas.SNAPSHOT, data)
    h100 = written(H100)
    assert errors(schemas.SNAPSHOT, h100) == []
    h100["environment"]["nvml"]["gpus"][0]["index"] = "0"
    assert errors(schemas.SNAPSHOT, h100)


# (path into the h100 snapshot's environment, a value the reader refuses there)
IMPOSSIBLE = [
    (("nvml", "gpus", 0, "memory_total"), -1),
    (("nvml", "gpus", 0, "index"), 2**64),
    (("nvml", "gpus", 0, "compute_capability"), "x.y"),
    (("nvml", "gpus", 0, "compute_capability"), "9.0\n"),
    (("nvml", "driver_version"), "550.54.15\n"),
    (("nvml", "driver_version"), "\u0665\u0665\u0660.54"),  # Arabic-Indic digits
    (("nvml", "cuda_driver_version"), -12040),
    (("toolkits", "toolkits"), []),
    (("torch", "static", "version"), "two"),
    (("torch", "static", "distributions"), [["not a version", "/x"]]),
    (("torch", "seconds"), "NaN"),
    (("torch", "seconds"), -1.0),
]


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


@pytest.mark.parametrize(("path", "value"), IMPOSSIBLE)
def test_schema_refuses_what_the_reader_refuses(path: tuple[Any, ...], value: Any) -> None:
    """The reader's rules for impossible values (gpudoctor.snapshot._RULES) are in the
    generated schema: a value the reader refuses is invalid, and in its field."""
    data = written(H100)
    assert errors(schemas.SNAPSHOT, data) == []
    loads(json.dumps(data))
    env = data["environment"]
    for key in path[:-1]:
        env = env[key]
    assert path[-1] in env, f"the fixture changed: {path} is not in it"
    _set(data["environment"], path, value)
    with pytest.raises(SnapshotError):
        loads(json.dumps(data))
    found = errors(schemas.SNAPSHOT, data)
    assert found, f"{path} = {value!r} validates"


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "Float32"])
def test_smoke_dtype_rule_is_the_readers(dtype: str) -> None:
    from gpudoctor.snapshot import _RULES

    s = schema(schemas.SNAPSHOT)["$defs"]["SmokeRun"]["properties"]["dtype"]
    valid = not list(Draft(s).iter_errors(dtype))
    assert valid == (_RULES[("SmokeRun", "dtype")](dtype) is None)


# ------------------------------------------------------------------------ the readers
def test_readers_accept_a_document_by_its_own_version(outputs: dict[str, list[Any]]) -> None:
    """The snapshot and fleet readers take each Environment carrier at its own version, and
    name the document when they refuse one."""
    report = copy.deepcopy(outputs[schemas.CHECK][0])
    assert schemas.carrier(report) == schemas.CHECK
    assert schemas.carrier(outputs[schemas.SNAPSHOT][0]) == schemas.SNAPSHOT
    assert schemas.carrier({"command": "smoke-test", "environment": {}}) == schemas.SMOKE_TEST
    read_node("node.json", json.dumps(report))
    report["schema_version"] = 4
    with pytest.raises(SnapshotError, match=r"schema_version 4; .* in a check document"):
        loads(json.dumps(report))
    with pytest.raises(NodeError, match="schema_version 4"):
        read_node("node.json", json.dumps(report))
    for unhashable in ([1], {"v": 1}):
        assert schemas.accepts({"schema_version": unhashable, "environment": {}})


# ------------------------------------------------- commands that need torch, gcc, a tarball
@pytest.mark.slow
@pytest.mark.subprocess  # the smoke test's child
@pytest.mark.needs_torch
def test_smoke_test_output_validates() -> None:
    data = run_json("smoke-test", "--device", "cpu", "--model", "lenet", "--steps", "2",
                    "--warmup", "0", "--format", "json")
    assert data["command"] == "smoke-test" and "failure" not in data["smoke"]
    assert errors(schemas.SMOKE_TEST, data) == []
    del data["smoke"]["models"][0]["configs"][0]["training_ok"]  # the renderer's own key
    assert errors(schemas.SMOKE_TEST, data)
    loads(json.dumps(data))  # and `check --from-snapshot` reads it


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.needs_torch
def test_distributed_smoke_test_output_validates(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "1",
            "--master-addr", "127.0.0.1", "--master-port", str(port), "-m", "gpudoctor",
            "smoke-test", "--distributed", "--device", "cpu", "--format", "json",
            "-o", str(tmp_path / "r.json")]
    env = {**environment(), "OMP_NUM_THREADS": "1"}
    p = subprocess.run(argv, capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path,
                       check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads((tmp_path / "r.json").read_text())
    assert errors(schemas.SMOKE_TEST_DISTRIBUTED, data) == []
    assert errors(schemas.SMOKE_TEST, data)  # not the other smoke-test document
    loads(json.dumps(data))


@pytest.mark.slow
@pytest.mark.subprocess
def test_install_and_uninstall_output_validates(
        make_tarball: MakeTarball, toolkit: Path, gpu_env: Any) -> None:
    tarball = str(make_tarball("9.1.0"))
    common = ("--prefix", str(toolkit), "--format", "json")

    def run(*args: str) -> Any:
        p = gpudoctor(*args, *common, env=gpu_env())
        assert p.returncode in (0, 1), p.stderr[-2000:]
        return json.loads(p.stdout)

    dry = run("install-cudnn", "--tarball", tarball, "--dry-run")
    assert dry["dry_run"] and dry["plan"]["files"]
    real = run("install-cudnn", "--tarball", tarball)
    assert real["ok"] and real["checks"]
    garbage = toolkit.parent / "cudnn-garbage.tgz"
    garbage.write_bytes(b"not a tarball")
    refused = run("install-cudnn", "--tarball", str(garbage))
    assert refused["error"] is not None and refused["plan"] is None
    for data in (dry, real, refused):
        assert errors(schemas.INSTALL_CUDNN, data) == []
    undone = run("uninstall-cudnn")
    assert undone["ok"] and undone["removed"]
    assert errors(schemas.UNINSTALL_CUDNN, undone) == []
    for document, data in ((schemas.INSTALL_CUDNN, dry), (schemas.UNINSTALL_CUDNN, undone)):
        for what, bad in _mutations(document, data):
            assert errors(document, bad), f"{document}: {what} still validates"
    assert errors(schemas.UNINSTALL_CUDNN, dry) and errors(schemas.INSTALL_CUDNN, undone)

