"""Shared by the CI tests: the CLI in a real subprocess, and the recorded environments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "envs"
H100 = FIXTURES / "h100-healthy.json"
GPU_LESS = FIXTURES / "gpu-less-ci-cuda-torch.json"


def gpudoctor(*args: str, env: dict[str, str] | None = None, timeout: float = 180,
              cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`python -m gpudoctor ARGS` in a child process, GitHub's variables cleared unless given."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("GITHUB_", "GPUDOCTOR_"))}
    e.update(env or {})
    e["NO_COLOR"] = "1"
    return subprocess.run([sys.executable, "-m", "gpudoctor", *args], capture_output=True,
                          text=True, env=e, timeout=timeout, cwd=cwd, check=False)
