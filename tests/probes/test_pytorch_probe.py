"""`check --python` through the CLI: what is not a Python is a usage error (exit 2) (the torch
probe itself: tests/probes/test_pytorch.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import runner

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes


@pytest.mark.slow
def test_cli_refuses_what_is_not_python_with_exit_2(tmp_path: Path) -> None:
    for value in ("/bin/ls", str(tmp_path)):
        result = runner.gpudoctor("check", "--python", value, "--only", "host", timeout=120)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith(f"gpudoctor: error: --python {value}: ")
        assert "Traceback" not in result.stderr
