"""A snapshot's torch versions must be versions: "-2.13.0" is refused, naming the field (exit 2
from `check`, an unreadable node in `fleet`), while every shape a real torch.__version__ or
package metadata takes, and what the probe writes when there is none, reads back. The smoke
test's cuDNN version is a whole number ≥ 0 like torch's own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from runner import gpudoctor

from gpudoctor.snapshot import SnapshotError, loads, to_data
from tests.smoke_kit import report

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

REPO_ROOT = Path(__file__).resolve().parents[1]
H100 = REPO_ROOT / "tests" / "fixtures" / "envs" / "h100-healthy.json"
BAD = ("-2.13.0", "latest", "", " 2.13.0", "2.13.0 ", "v2.13.0", "２.13.0", "2.13.0\n",
       "2.13 .0", "2.13.0\x1b[31m")
GOOD = ("2.13.0", "2.14.1+cu130", "2.6.0a0+gitabc1234", "2.5.0a0+e000cf0ad9.nv24.10",
        "2.6.0.dev20241112+cu124", "1.13.1+cu117", "2.1.0.post100", "2.13.0+cpu",
        "2.0.0-custom_build")  # legacy metadata, not PEP 440: a real machine may hold it


def snapshot(edit: Any) -> str:
    data = json.loads(H100.read_text())
    edit(data["environment"])
    return json.dumps(data)


def set_static(v: str) -> Any:
    return lambda env: env["torch"]["static"].__setitem__("version", v)


def set_runtime(v: str) -> Any:
    return lambda env: env["torch"]["runtime"].__setitem__("version", v)


def set_distributions(v: str) -> Any:
    loc = "/usr/lib/python3/site-packages/torch"
    return lambda env: env["torch"]["static"].__setitem__(
        "distributions", [["2.13.0+cu130", loc], [v, "/home/me/.local/lib/torch"]])


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize(("setter", "where"), [
    (set_static, "$.torch.static.version"),
    (set_runtime, "$.torch.runtime.version"),
    (set_distributions, "$.torch.static.distributions"),
])
def test_impossible_torch_version_refused(bad: str, setter: Any, where: str) -> None:
    with pytest.raises(SnapshotError, match=f"^{re.escape(where)}"):
        loads(snapshot(setter(bad)))


@pytest.mark.parametrize("good", GOOD)
def test_real_torch_versions_read_back(good: str) -> None:
    env = loads(snapshot(lambda e: (set_static(good)(e), set_runtime(good)(e),
                                    set_distributions(good)(e))))
    assert env.torch.runtime.version == good  # type: ignore[union-attr]
    assert env.torch.static.version == good  # type: ignore[union-attr]


def test_what_the_probe_writes_without_metadata_reads_back() -> None:
    """A torch without package metadata (a source tree on PYTHONPATH), and a dist-info without
    a Version, as the torch child records them (gpudoctor/probes/_torch_child.py)."""
    env = loads(snapshot(lambda e: (set_static("unknown (no package metadata)")(e),
                                    set_distributions("None")(e))))
    assert env.torch.static.version == "unknown (no package metadata)"  # type: ignore[union-attr]
    with pytest.raises(SnapshotError, match=r"^\$\.torch\.runtime\.version"):
        loads(snapshot(set_runtime("unknown (no package metadata)")))


def test_unreported_torch_version_still_reads() -> None:
    """A pasted report that does not state torch's version: an Unavailable is never judged."""
    unstated = {"unavailable": "not-reported", "message": "not in the report", "detail": None}
    env = loads(snapshot(lambda e: e["torch"]["runtime"].__setitem__("version", unstated)))
    assert env.torch.runtime.version.message == "not in the report"  # type: ignore[union-attr]


def test_recorded_fixtures_all_read() -> None:
    """Every recorded machine in tests/fixtures/envs still reads under the new rule."""
    for path in sorted((REPO_ROOT / "tests" / "fixtures" / "envs").glob("*.json")):
        loads(path.read_text())


def test_smoke_cudnn_version_must_be_a_count() -> None:
    data = json.loads(H100.read_text())
    smoke = to_data(report())
    smoke["device"]["cudnn_version"] = -90100
    data["environment"]["smoke"] = smoke
    with pytest.raises(SnapshotError, match=r"^\$\.smoke\.device\.cudnn_version: -90100"):
        loads(json.dumps(data))
    smoke["device"]["cudnn_version"] = 90100
    assert loads(json.dumps(data)).smoke.device.cudnn_version == 90100  # type: ignore[union-attr]




@pytest.mark.slow
def test_cli_refuses_with_exit_2_naming_the_field(tmp_path: Path) -> None:
    snap = tmp_path / "node.json"
    snap.write_text(snapshot(set_static("-2.13.0")))
    p = gpudoctor("check", "--from-snapshot", str(snap))
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "$.torch.static.version: '-2.13.0' is not a package version" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert "GD406" not in p.stdout
    fleet = gpudoctor("fleet", str(snap))
    assert fleet.returncode == 1, (fleet.stdout, fleet.stderr)
    assert "$.torch.static.version" in fleet.stdout + fleet.stderr
    assert "Traceback" not in fleet.stderr
