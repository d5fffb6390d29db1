"""What every probe receives: the outside world as parameters with real defaults.

Tests replace the parts that cannot exist here (a driver, a GPU) at the lowest level: `root`
points /proc, /dev and /etc at a prepared tree, `environ` is a plain dict, `python` another
interpreter. Probes read nothing from the machine except through these; they start child
processes only through `gpudoctor.childproc`.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TORCH_TIMEOUT = 60.0
DEFAULT_NVML_TIMEOUT = 30.0  # nvmlInit of many GPUs without persistence mode takes seconds


@dataclass(frozen=True, slots=True)
class Deps:
    """The world a probe may look at."""

    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    root: Path = Path("/")  # prefix for /proc, /dev, /etc, /usr/local, /opt
    python: str = sys.executable  # interpreter whose torch is probed
    cuda_home: str | None = None  # --cuda-home
    torch_timeout: float = DEFAULT_TORCH_TIMEOUT
    nvml_timeout: float = DEFAULT_NVML_TIMEOUT  # past it, a blocked NVML call is abandoned
    no_torch: bool = False
    machine: str = field(default_factory=platform.machine)  # whose library directories

    def path(self, absolute: str) -> Path:
        """A system path under `root`."""
        return self.root / absolute.lstrip("/")

    def child_env(self) -> dict[str, str]:
        """Environment for child processes: ours, with output unbuffered and no user site noise."""
        from gpudoctor.probes.prestart import child_env

        return child_env(self.environ)
