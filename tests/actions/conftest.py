"""Fixtures for the install-cudnn tests: a CUDA toolkit prefix and real cuDNN tarballs."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture

MakeTarball = Callable[..., Path]


@pytest.fixture
def toolkit(tmp_path: Path) -> Path:
    """A CUDA 12.4 toolkit prefix (version.json) with unrelated files of its own."""
    prefix = tmp_path / "cuda-12.4"
    (prefix / "include").mkdir(parents=True)
    (prefix / "lib64").mkdir()
    (prefix / "version.json").write_text(json.dumps(
        {"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}))
    (prefix / "include" / "cuda_runtime.h").write_text("/* not cuDNN */\n")
    (prefix / "lib64" / "libnvToolsExt.so.1").write_text("not cuDNN either\n")
    return prefix


@pytest.fixture
def make_tarball(tmp_path: Path, cudnn_kit: CudnnKit) -> MakeTarball:
    """Build a cuDNN tarball in NVIDIA's layout: layout="archive" (8.5+ `<stem>/include`,
    `<stem>/lib`, .tar.xz) or "legacy" (`cuda/include`, `cuda/lib64`, .tgz). Keyword arguments
    go to CudnnKit.populate; `extra(tf)` may append members; `name` overrides the file name."""
    counter = [0]

    def make(version: str = "8.9.7", layout: str = "archive", cuda: str = "12",
             compression: str | None = None, name: str | None = None,
             extra: Callable[[tarfile.TarFile], None] | None = None, **kw: object) -> Path:
        counter[0] += 1
        work = tmp_path / f"tarball-{counter[0]}"
        build = f"{version}.{29 if int(version[0]) >= 8 else 32}"
        if layout == "archive":
            top = f"cudnn-linux-x86_64-{build}_cuda{cuda}-archive"
            default, comp, lib = f"{top}.tar.xz", "xz", "lib"
        else:
            top, default, comp, lib = "cuda", f"cudnn-{cuda}-linux-x64-v{build}.tgz", "gz", "lib64"
        src = cudnn_kit.populate(work / "src", version, lib=lib, **kw)  # type: ignore[arg-type]
        (src / "LICENSE").write_text("NVIDIA Software License Agreement\n")
        out = work / (name or default)
        mode = f"w:{compression if compression is not None else comp}"
        with tarfile.open(out, mode) as tf:  # type: ignore[call-overload]
            tf.add(src, arcname=top)
            if extra is not None:
                extra(tf)
        return out

    return make
