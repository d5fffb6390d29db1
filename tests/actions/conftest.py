"""Fixtures for the install-cudnn tests: a CUDA toolkit prefix, real cuDNN tarballs and the
environment of a gpudoctor child that sees only the GPUs a test names (they live in
tests/cudnn_kit.py, shared with tests/hostile/)."""

from __future__ import annotations

from tests.cudnn_kit import (  # noqa: F401 - the fixtures
    MakeTarball,
    cudnn_kit_fixture,
    gpu_env_fixture,
    make_tarball_fixture,
    toolkit_fixture,
)

__all__ = ["MakeTarball"]
