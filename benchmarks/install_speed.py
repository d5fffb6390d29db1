"""Time `gpudoctor install-cudnn` against NVIDIA's manual steps on the same generated tarball.

    python benchmarks/install_speed.py                  # ~1 GB, gzip -1, 3 repetitions
    python benchmarks/install_speed.py --size-mb 200 --reps 5 --compression none

The tarball is cuDNN 9-shaped (`cudnn-linux-x86_64-9.1.0.70_cuda12-archive/{include,lib}`, the
eight sub-libraries as `libX.so.9.1.0` with `.so.9` and `.so` symlinks, sized like the real
ones) and filled with random bytes, so compression cannot cheat; gzip at level 1 keeps its
generation time reasonable (xz of 1 GB of random data takes minutes).

Each repetition installs into a fresh copy of a CUDA 12.4 toolkit skeleton, both ways:

- manual: `tar -xf T -C work`, `cp -P work/*/include/cudnn*.h P/include/`,
  `cp -P work/*/lib/libcudnn* P/lib64/`, `chmod a+r P/include/cudnn*.h P/lib64/libcudnn*`;
- gpudoctor: `python -m gpudoctor install-cudnn --tarball T --prefix P` as a subprocess
  (interpreter start, validation, backup/manifest, and the placement checks included).

The order alternates between repetitions, and `sync` runs (untimed) after each install so that
one run's dirty pages do not slow the next. Prints each time, the medians and their ratio
(target: gpudoctor ≤ 1.2 x manual).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

VERSION, BUILD = "9.1.0", "9.1.0.70"
TOP = f"cudnn-linux-x86_64-{BUILD}_cuda12-archive"
# share of the total size per sub-library, roughly as in a real cuDNN 9 for CUDA 12
SHARES = {
    "libcudnn": 0.001, "libcudnn_graph": 0.005, "libcudnn_engines_precompiled": 0.62,
    "libcudnn_engines_runtime_compiled": 0.02, "libcudnn_heuristic": 0.05,
    "libcudnn_ops": 0.12, "libcudnn_cnn": 0.01, "libcudnn_adv": 0.174,
}
HEADERS = ("cudnn.h", "cudnn_graph.h", "cudnn_ops.h", "cudnn_cnn.h", "cudnn_adv.h",
           "cudnn_backend.h")
REPO = Path(__file__).resolve().parent.parent


def generate(out: Path, size_mb: int, compression: str) -> Path:
    """Write the cuDNN-shaped tarball; random library bytes, real headers and symlinks."""
    src = out.parent / "src"
    inc, lib = src / TOP / "include", src / TOP / "lib"
    inc.mkdir(parents=True)
    lib.mkdir(parents=True)
    major, minor, patch = VERSION.split(".")
    (inc / "cudnn_version.h").write_text(
        f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n"
        f"#define CUDNN_PATCHLEVEL {patch}\n"
        "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n")
    for h in HEADERS:
        (inc / h).write_text(f"/* {h} */\n" + "/* padding */\n" * 2000)
    chunk = 8 << 20
    for name, share in SHARES.items():
        remaining = max(4096, int(size_mb * share * (1 << 20)))
        real = lib / f"{name}.so.{VERSION}"
        # every library starts as a real ELF shared object (install-cudnn refuses a "library"
        # that is not one); libcudnn stays loadable, the others are padded with random bytes
        if not _shim(real, major, name):
            sys.exit("gcc is needed to build the fake cuDNN libraries")
        remaining = 0 if name == "libcudnn" else remaining - real.stat().st_size
        with open(real, "ab") as f:
            while remaining > 0:
                n = min(chunk, remaining)
                f.write(os.urandom(n))
                remaining -= n
        real.chmod(0o755)
        (lib / f"{name}.so.{major}").symlink_to(real.name)
        (lib / f"{name}.so").symlink_to(f"{name}.so.{major}")
    mode = "w:gz" if compression == "gzip" else "w"
    kwargs = {"compresslevel": 1} if compression == "gzip" else {}
    with tarfile.open(out, mode, **kwargs) as tf:  # type: ignore[call-overload]
        tf.add(src / TOP, arcname=TOP)
    shutil.rmtree(src)
    return out


def _shim(out: Path, major: str, name: str) -> bool:
    """Compile a real <name>.so.<major> (libcudnn exports cudnnGetVersion()), when gcc is
    there."""
    if shutil.which("gcc") is None:
        return False
    src = out.with_suffix(".c")
    value = int(major) * 10000 + 100
    src.write_text(f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {value}; }}\n"
                   if name == "libcudnn" else "int gpudoctor_bench_shim;\n")
    done = subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{name}.so.{major}", "-o",
                           str(out), str(src)], capture_output=True)
    src.unlink()
    return done.returncode == 0


def skeleton(path: Path) -> Path:
    """A CUDA 12.4 toolkit prefix with include/ and lib64/."""
    (path / "include").mkdir(parents=True)
    (path / "lib64").mkdir()
    (path / "version.json").write_text(json.dumps({"cuda": {"version": "12.4.1"}}))
    return path


def manual(tarball: Path, prefix: Path, work: Path) -> float:
    """NVIDIA's documented steps, timed."""
    work.mkdir()
    start = time.perf_counter()
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(work)], check=True)
    headers = sorted(glob.glob(str(work / "*" / "include" / "cudnn*.h")))
    libs = sorted(glob.glob(str(work / "*" / "lib" / "libcudnn*")))
    subprocess.run(["cp", "-P", *headers, str(prefix / "include")], check=True)
    subprocess.run(["cp", "-P", *libs, str(prefix / "lib64")], check=True)
    placed = [str(prefix / "include" / Path(h).name) for h in headers] + [
        str(prefix / "lib64" / Path(x).name) for x in libs]
    subprocess.run(["chmod", "a+r", *placed], check=True)
    return time.perf_counter() - start


def gpudoctor_argv() -> list[str]:
    """`python -m gpudoctor install-cudnn`, or the command function itself until it is wired."""
    probe = subprocess.run([sys.executable, "-m", "gpudoctor", "install-cudnn", "--help"],
                           capture_output=True, cwd=REPO)
    if probe.returncode == 0:
        return [sys.executable, "-m", "gpudoctor", "install-cudnn"]
    return [sys.executable, "-c", "import typer; from gpudoctor.cli.install import "
            "install_cudnn; typer.run(install_cudnn)"]


def tool(argv: list[str], tarball: Path, prefix: Path) -> float:
    """gpudoctor install-cudnn, timed as a whole process."""
    start = time.perf_counter()
    result = subprocess.run([*argv, "--tarball", str(tarball), "--prefix", str(prefix)],
                            capture_output=True, text=True, cwd=REPO)
    took = time.perf_counter() - start
    # exit 1 with the install done: a placement check judged the random library bytes
    if result.returncode != 0 and "installed; manifest" not in result.stdout:
        sys.exit(f"gpudoctor install-cudnn failed ({result.returncode}):\n{result.stdout}"
                 f"{result.stderr}")
    return took


def same_result(a: Path, b: Path) -> bool:
    """Both prefixes hold the same cuDNN files: names, link targets, sizes, modes."""
    def shape(p: Path) -> dict[str, tuple[object, ...]]:
        out: dict[str, tuple[object, ...]] = {}
        for d in ("include", "lib64"):
            for f in sorted((p / d).iterdir()):
                st = f.lstat()
                out[f"{d}/{f.name}"] = ((os.readlink(f),) if f.is_symlink()
                                        else (st.st_size, oct(st.st_mode & 0o777)))
        return out
    return shape(a) == shape(b)


def main() -> None:
    """Parse the arguments, generate, time, report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024, help="tarball payload (default 1024)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    ap.add_argument("--compression", choices=("gzip", "none"), default="gzip",
                    help="gzip -1 (default) or an uncompressed tar")
    ap.add_argument("--workdir", type=Path, default=None, help="where to work (default: a "
                    "temporary directory on the same file system as /tmp)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gpudoctor-bench-", dir=args.workdir))
    try:
        suffix = ".tgz" if args.compression == "gzip" else ".tar"
        start = time.perf_counter()
        tarball = generate(base / "gen" / f"{TOP}{suffix}", args.size_mb, args.compression)
        print(f"tarball: {tarball.name}, {tarball.stat().st_size / 2**20:.0f} MiB "
              f"({args.compression}), generated in {time.perf_counter() - start:.1f} s")
        argv = gpudoctor_argv()
        times: dict[str, list[float]] = {"manual": [], "gpudoctor": []}
        for rep in range(args.reps):
            order = ("manual", "gpudoctor") if rep % 2 == 0 else ("gpudoctor", "manual")
            for way in order:
                prefix = skeleton(base / f"{way}-{rep}" / "cuda")
                if way == "manual":
                    took = manual(tarball, prefix, base / f"{way}-{rep}" / "work")
                else:
                    took = tool(argv, tarball, prefix)
                os.sync()
                times[way].append(took)
            if rep == 0 and not same_result(base / "manual-0/cuda", base / "gpudoctor-0/cuda"):
                sys.exit("the two ways installed different files")
            for way in order:
                shutil.rmtree(base / f"{way}-{rep}")
            print(f"rep {rep + 1}: manual {times['manual'][-1]:.2f} s, "
                  f"gpudoctor {times['gpudoctor'][-1]:.2f} s")
        m, g = statistics.median(times["manual"]), statistics.median(times["gpudoctor"])
        print(f"median: manual {m:.2f} s, gpudoctor {g:.2f} s, ratio {g / m:.2f}x "
              f"(target <= 1.20x: {'met' if g / m <= 1.2 else 'NOT met'})")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
