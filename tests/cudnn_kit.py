"""Real, tiny cuDNN-shaped installs and tarballs for the cuDNN probe, check and action tests.

`CudnnKit` compiles real shared libraries with gcc (`-Wl,-soname,...`) that export
`size_t cudnnGetVersion(void)`, so probes load them, `ldd` reads them and `ldconfig` links them
like the genuine article. Each (soname, version, needs) is compiled once per session. Tests
that use the `cudnn_kit` fixture are skipped cleanly when gcc is missing.

Make the fixtures visible to a test module (or a conftest) with
`from tests.cudnn_kit import cudnn_kit_fixture, toolkit_fixture, make_tarball_fixture` (tests/
is a package): `toolkit` is a CUDA 12.4 prefix, `make_tarball` builds
a real cuDNN tarball in NVIDIA's layout, `gpu_env` (`gpu_env_fixture`) makes the environment of a
`python -m gpudoctor install-cudnn` child that sees the GPUs a test names and no other.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

SUBLIBS = {
    7: ("libcudnn",),
    8: ("libcudnn", "libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer",
        "libcudnn_cnn_train", "libcudnn_adv_infer", "libcudnn_adv_train"),
    9: ("libcudnn", "libcudnn_graph", "libcudnn_engines_precompiled",
        "libcudnn_engines_runtime_compiled", "libcudnn_heuristic", "libcudnn_ops",
        "libcudnn_cnn", "libcudnn_adv"),
}
HEADERS = {
    7: ("cudnn.h",),
    8: ("cudnn.h", "cudnn_version.h", "cudnn_ops_infer.h", "cudnn_ops_train.h",
        "cudnn_cnn_infer.h", "cudnn_cnn_train.h", "cudnn_adv_infer.h", "cudnn_adv_train.h",
        "cudnn_backend.h"),
    9: ("cudnn.h", "cudnn_version.h", "cudnn_graph.h", "cudnn_ops.h", "cudnn_cnn.h",
        "cudnn_adv.h", "cudnn_backend.h"),
}


def encode(version: str) -> int:
    """"8.9.7" → 8907, "9.1.0" → 90100: cudnnGetVersion()'s value."""
    major, minor, patch = (int(x) for x in version.split("."))
    return major * (10000 if major >= 9 else 1000) + minor * 100 + patch


def version_header(version: str) -> str:
    """A cudnn_version.h (v8+) / the macro block of cudnn.h (v7) as NVIDIA writes them."""
    major, minor, patch = version.split(".")
    mult = "10000" if int(major) >= 9 else "1000"
    return (
        "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
        f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n"
        f"#define CUDNN_PATCHLEVEL {patch}\n\n"
        f"#define CUDNN_VERSION (CUDNN_MAJOR * {mult} + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
        "\n#endif\n"
    )


class CudnnKit:
    """Compiles and caches tiny shared libraries; builds install trees and tarballs."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._cache: dict[tuple[str, int, tuple[str, ...], bool], Path] = {}
        self.stubs = workdir / "stubs"  # libcublas.so.N stubs to link against (then absent)
        self.stubs.mkdir(exist_ok=True)

    def compile(self, soname: str, value: int = 0, needs: Iterable[str] = (),
                abort: bool = False) -> Path:
        """A real .so with that SONAME exporting cudnnGetVersion() == value; `needs` are
        sonames it links (stubs built here, absent at run time); `abort` aborts on load."""
        key = (soname, value, tuple(needs), abort)
        if key in self._cache:
            return self._cache[key]
        out = self.workdir / f"{len(self._cache)}-{soname}"
        src = out.with_suffix(".c")
        body = f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {value}; }}\n"
        if abort:
            body += ("#include <stdlib.h>\n"
                     "__attribute__((constructor)) static void boom(void) { abort(); }\n")
        src.write_text(body)
        link = []
        for dep in needs:
            stub = self.stubs / dep
            if not stub.exists():
                stub_src = self.stubs / f"{dep}.c"
                stub_src.write_text("int cublasCreate_v2(void *h) { return 0; }\n")
                _gcc(["-shared", "-fPIC", f"-Wl,-soname,{dep}", "-o", str(stub), str(stub_src)])
            link.append(f"-l:{dep}")
        args = ["-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(out), str(src)]
        if link:  # Debian's gcc passes --as-needed, which would drop the unused stub
            args += [f"-L{self.stubs}", "-Wl,--no-as-needed", *link]
        _gcc(args)
        self._cache[key] = out
        return out

    def populate(self, root: Path, version: str, *, include: str = "include",
                 lib: str = "lib64", chain: bool = True, needs: Iterable[str] = (),
                 mode: int = 0o644, sublibs: Iterable[str] | None = None,
                 abort: bool = False) -> Path:
        """Write cuDNN `version` into root/include and root/lib64: real files
        `libX.so.<version>`, and (chain=True) symlinks `libX.so.<major>` and `libX.so`;
        chain=False writes copies, as plain `cp` does. `needs` go to the sub-libraries."""
        major = int(version.split(".")[0])
        inc, libdir = root / include, root / lib
        inc.mkdir(parents=True, exist_ok=True)
        libdir.mkdir(parents=True, exist_ok=True)
        for h in HEADERS[major]:
            text = f"/* {h} */\n"
            if (major < 8 and h == "cudnn.h") or h == "cudnn_version.h":
                text = version_header(version)
            elif h == "cudnn.h":
                text = '#include "cudnn_version.h"\n'
            (inc / h).write_text(text)
            (inc / h).chmod(mode)
        for name in sublibs if sublibs is not None else SUBLIBS[major]:
            soname = f"{name}.so.{major}"
            deps = tuple(needs) if name != "libcudnn" else ()
            built = self.compile(soname, encode(version), deps, abort and name == "libcudnn")
            real = libdir / f"{name}.so.{version}"
            shutil.copyfile(built, real)
            real.chmod(mode)
            for alias in (soname, f"{name}.so"):
                if chain:
                    (libdir / alias).symlink_to(real.name if alias == soname else soname)
                else:
                    shutil.copyfile(built, libdir / alias)
                    (libdir / alias).chmod(mode)
        return root

    def shared_object(self, size: int = 0, patch: dict[int, bytes] | None = None) -> bytes:
        """The bytes of a real ELF shared object, zero-padded to `size` (the loader ignores the
        tail); `patch` overwrites bytes at offsets (e.g. {18: e_machine})."""
        data = bytearray(self.compile("libcudnn_blob.so.8", 8907).read_bytes())
        data += bytes(max(0, size - len(data)))
        for offset, value in (patch or {}).items():
            data[offset:offset + len(value)] = value
        return bytes(data)

    def program(self) -> bytes:
        """The bytes of a real position-independent executable (`gcc -fPIE -pie`): ELF type
        ET_DYN like a shared object, with a PT_INTERP header naming the loader."""
        out = self.workdir / "pie-program"
        if not out.exists():
            src = out.with_suffix(".c")
            src.write_text("int main(void) { return 0; }\n")
            _gcc(["-fPIE", "-pie", "-o", str(out), str(src)])
        return out.read_bytes()

    @staticmethod
    def make_tarball(src: Path, out: Path, top: str, compression: str = "gz") -> Path:
        """Tar `src`'s contents under the directory `top` (symlinks kept as symlinks)."""
        with tarfile.open(out, f"w:{compression}") as tf:  # type: ignore[call-overload]
            tf.add(src, arcname=top, recursive=True)
        return out

    @staticmethod
    def add_member(tf: tarfile.TarFile, name: str, data: bytes = b"x", **attrs: object) -> None:
        """Append one hand-made member (type, linkname, mode… via attrs)."""
        info = tarfile.TarInfo(name)
        info.size = len(data) if attrs.get("type", tarfile.REGTYPE) == tarfile.REGTYPE else 0
        info.mode = 0o644
        for k, v in attrs.items():
            setattr(info, k, v)
        tf.addfile(info, io.BytesIO(data) if info.size else None)

    @staticmethod
    def tree_state(root: Path) -> dict[str, tuple[str, ...]]:
        """Every entry under root: kind, mode, symlink target or sha256 — for byte-identity."""
        state: dict[str, tuple[str, ...]] = {}
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                rel = str(p.relative_to(root))
                st = p.lstat()
                if p.is_symlink():
                    state[rel] = ("link", os.readlink(p))
                elif p.is_dir():
                    state[rel] = ("dir", oct(st.st_mode & 0o7777))
                else:
                    digest = hashlib.sha256(p.read_bytes()).hexdigest()
                    state[rel] = ("file", oct(st.st_mode & 0o7777), digest)
        return state


def _gcc(args: list[str]) -> None:
    subprocess.run(["gcc", *args], check=True, capture_output=True)


_KITS: list[CudnnKit] = []  # one per session, shared by every module that imports the fixture


@pytest.fixture(name="cudnn_kit", scope="session")
def cudnn_kit_fixture(tmp_path_factory: pytest.TempPathFactory) -> CudnnKit:
    """The library compiler and tree builder (skips when gcc is missing)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed: cannot build the test's shared libraries")
    if not _KITS:
        _KITS.append(CudnnKit(tmp_path_factory.mktemp("cudnn-kit")))
    return _KITS[0]


MakeTarball = Callable[..., Path]


@pytest.fixture(name="toolkit")
def toolkit_fixture(tmp_path: Path) -> Path:
    """A CUDA 12.4 toolkit prefix (version.json) with unrelated files of its own."""
    prefix = tmp_path / "cuda-12.4"
    (prefix / "include").mkdir(parents=True)
    (prefix / "lib64").mkdir()
    (prefix / "version.json").write_text(json.dumps(
        {"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}))
    (prefix / "include" / "cuda_runtime.h").write_text("/* not cuDNN */\n")
    (prefix / "lib64" / "libnvToolsExt.so.1").write_text("not cuDNN either\n")
    return prefix


@pytest.fixture(name="make_tarball")
def make_tarball_fixture(tmp_path: Path, cudnn_kit: CudnnKit) -> MakeTarball:
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


# install-cudnn refuses a cuDNN that does not support a GPU that NVML shows on the machine
# (`machine_gpus()`). The tarball tests must not depend on the machine they run on: called
# in-process the action gets `gpus=()` (or the GPUs a test is about); a `python -m gpudoctor`
# child gets the environment `gpu_env` makes, whose NVML is the fake libnvidia-ml.
GpuEnv = Callable[..., dict[str, str]]
NVML_RTX5090 = "NVIDIA GeForce RTX 5090:12.0:34190917632"  # sm_120: a FAKE_NVML_GPUS entry


@pytest.fixture(name="gpu_env")
def gpu_env_fixture(fake_nvml: Path) -> GpuEnv:
    """`gpu_env(gpus="")` → the environment for a gpudoctor child that sees exactly `gpus`
    (FAKE_NVML_GPUS of tests/fakes/fake_nvml.c: "name:cc:bytes;…"; "" for none), whatever GPU
    and driver this machine has: LD_LIBRARY_PATH is searched before the loader cache, where a
    real driver's libnvidia-ml.so.1 is found. gpudoctor's own variables are left out."""

    def make(gpus: str = "") -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("FAKE_NVML_", "GPUDOCTOR_"))}
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(fake_nvml), env.get("LD_LIBRARY_PATH")) if p)
        env["FAKE_NVML_GPUS"] = gpus
        return env

    return make
