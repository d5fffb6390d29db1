"""`--format prometheus -o FILE` through the real CLI: the textfile written whole, read back by
prometheus_client's own parser. (The renderer's unit tests: tests/renderers/test_prometheus.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from runner import gpudoctor

from tests.ci.cikit import H100, families

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


@pytest.mark.slow
def test_cli_writes_the_textfile_atomically(tmp_path: Path) -> None:
    target = tmp_path / "gpudoctor.prom"
    target.write_text("old\n")
    p = gpudoctor("check", "--from-snapshot", str(H100), "--format", "prometheus",
                  "-o", str(target))
    assert p.returncode == 0, p.stderr
    assert [x.name for x in tmp_path.iterdir()] == ["gpudoctor.prom"]  # no temporary left
    assert "gpudoctor_check_status" in families(target.read_text())
    p = gpudoctor("check", "--format", "prometheus", "-o", str(tmp_path / "no" / "x.prom"),
                  "--from-snapshot", str(H100))
    assert p.returncode == 2 and "cannot write" in p.stderr
