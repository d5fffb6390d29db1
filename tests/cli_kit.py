"""The real CLI in a new process, as a user on a machine without a driver runs it: no fake
libnvidia-ml on the loader path, no gpudoctor settings from the environment, this checkout
importable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def gpudoctor(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`python -m gpudoctor ARGS`, its output captured as text."""
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("FAKE_NVML_", "GPUDOCTOR_"))
               and k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    environ["PYTHONPATH"] = str(REPO_ROOT)
    return subprocess.run([sys.executable, "-m", "gpudoctor", *args], capture_output=True,
                          text=True, env=environ, timeout=timeout, check=False)
