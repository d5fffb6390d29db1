"""Shared by the CI tests: the recorded environments (the CLI runs through `runner`)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "envs"
H100 = FIXTURES / "h100-healthy.json"
GPU_LESS = FIXTURES / "gpu-less-ci-cuda-torch.json"
