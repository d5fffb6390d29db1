"""probe_toolkits against prepared toolkit trees.

`Deps(root=tmp)` stands for /, so /usr/local/cuda* and /opt/cuda are looked for under tmp;
CUDA_HOME, CUDA_PATH and PATH come from `Deps.environ` only. nvcc is a shell script, and the
libcudart of the pip-assembled toolkit is the real one from NVIDIA's wheel when pip can fetch it
(`cudaRuntimeGetVersion` works without a driver).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import runner

from gpudoctor.model import (
    NamedRoot,
    Reason,
    ToolkitFacts,
    ToolkitsFacts,
    Unavailable,
)
from gpudoctor.probes import toolkit as toolkit_probe
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.toolkit import probe_toolkits

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

CUDART_WHEEL = "nvidia-cuda-runtime-cu12==12.4.127"
ENV = {"PATH": "/usr/bin:/bin"}  # no nvcc there: the machine's own toolkit stays out of view


def make_toolkit(
    root: Path,
    *,
    version_json: str | None = None,
    version_txt: str | None = None,
    cuda_h: int | None = None,
    nvcc: str | None = None,
    dist_info: str | None = None,
) -> Path:
    """A toolkit directory with the given version sources."""
    root.mkdir(parents=True, exist_ok=True)
    if version_json is not None:
        (root / "version.json").write_text(
            json.dumps({"cuda": {"name": "CUDA SDK", "version": version_json}})
        )
    if version_txt is not None:
        (root / "version.txt").write_text(f"CUDA Version {version_txt}\n")
    if cuda_h is not None:
        (root / "include").mkdir(exist_ok=True)
        (root / "include" / "cuda.h").write_text(
            f"#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n#define CUDA_VERSION {cuda_h}\n"
        )
    if nvcc is not None:
        (root / "bin").mkdir(exist_ok=True)
        (root / "bin" / "nvcc").write_text(nvcc)
        (root / "bin" / "nvcc").chmod(0o755)
    if dist_info is not None:
        (root / "dist-info" / dist_info).mkdir(parents=True)
    return root


def nvcc_printing(release: str, build: str) -> str:
    return (
        "#!/bin/sh\n"
        "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
        "echo 'Copyright (c) 2005-2024 NVIDIA Corporation'\n"
        f"echo 'Cuda compilation tools, release {release}, V{build}'\n"
    )


def facts_of(deps: Deps) -> ToolkitsFacts:
    facts = probe_toolkits(deps)
    assert isinstance(facts, ToolkitsFacts), facts
    return facts


def only(deps: Deps) -> ToolkitFacts:
    (toolkit,) = facts_of(deps).toolkits
    return toolkit


def readings(toolkit: ToolkitFacts) -> dict[str, str | Unavailable]:
    return {r.method: r.value for r in toolkit.readings}


def unavailable(value: object, reason: Reason) -> Unavailable:
    assert isinstance(value, Unavailable), value
    assert value.reason is reason, value
    return value


# ---------------------------------------------------------------------------- version sources


def test_version_json_third_field_is_a_date(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", version_json="12.1.20230222")
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    assert (t.version, t.found_by, t.root, t.in_use) == ("12.1", "--cuda-home", str(kit), True)
    assert readings(t) == {"version.json": "12.1"}
    assert t.nvcc is None
    assert t.pip_assembled is False


@pytest.mark.parametrize(
    "text",
    ["{not json", '{"cuda": "12.4"}', '["cuda"]', '{"cuda": {"version": "twelve"}}', ""],
    ids=["broken-json", "cuda-is-a-string", "a-list", "not-a-version", "empty"],
)
def test_garbage_version_json(tmp_path: Path, text: str) -> None:
    kit = make_toolkit(tmp_path / "cuda", cuda_h=12040)
    (kit / "version.json").write_text(text)
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    unavailable(readings(t)["version.json"], Reason.ERROR)
    assert t.version == "12.4"  # the next reading is used


def test_unreadable_version_json_root_proof(tmp_path: Path) -> None:
    # a directory where the file should be: unreadable even for root
    kit = make_toolkit(tmp_path / "cuda", cuda_h=11080)
    (kit / "version.json").mkdir()
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    u = unavailable(readings(t)["version.json"], Reason.ERROR)
    assert "IsADirectoryError" in (u.detail or "")
    assert t.version == "11.8"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_version_json_permission(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", version_json="12.4.1", cuda_h=12040)
    (kit / "version.json").chmod(0)
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    unavailable(readings(t)["version.json"], Reason.PERMISSION_DENIED)
    assert t.version == "12.4"


def test_version_txt_of_old_toolkits(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", version_txt="10.0.130")
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    assert t.version == "10.0.130"
    assert readings(t) == {"version.txt": "10.0.130"}


def test_garbage_version_txt(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", cuda_h=10020)
    (kit / "version.txt").write_text("\x00\xff garbage")
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    unavailable(readings(t)["version.txt"], Reason.ERROR)
    assert t.version == "10.2"


def test_cuda_h(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", cuda_h=12040)
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    assert t.version == "12.4"
    assert readings(t) == {"cuda.h": "12.4"}


def test_garbage_cuda_h_and_nothing_else(tmp_path: Path) -> None:
    kit = tmp_path / "cuda"
    (kit / "include").mkdir(parents=True)
    (kit / "include" / "cuda.h").write_bytes(b"#define CUDA_VERSION twelve\n\xff\xfe")
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    u = unavailable(readings(t)["cuda.h"], Reason.ERROR)
    assert "CUDA_VERSION" in u.message
    v = unavailable(t.version, Reason.ERROR)
    assert v.message == f"no readable version information under {kit}"


def test_nvcc_release_line(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", cuda_h=12040, nvcc=nvcc_printing("12.4", "12.4.131"))
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    assert readings(t) == {"cuda.h": "12.4", "nvcc": "12.4.131"}
    assert t.nvcc == str(kit / "bin" / "nvcc")
    assert t.version == "12.4"  # cuda.h is preferred to nvcc


def test_nvcc_that_exits_non_zero(tmp_path: Path) -> None:
    script = "#!/bin/sh\necho 'nvcc fatal   : cannot find libnvvm' >&2\nexit 1\n"
    kit = make_toolkit(tmp_path / "cuda", cuda_h=12040, nvcc=script)
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    u = unavailable(readings(t)["nvcc"], Reason.ERROR)
    assert u.message == f"`{kit / 'bin' / 'nvcc'} --version` exited 1 without a release line"
    assert u.detail == "nvcc fatal   : cannot find libnvvm"
    assert t.version == "12.4"


def test_nvcc_that_cannot_be_executed(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", cuda_h=12040, nvcc=nvcc_printing("12.4", "12.4.131"))
    (kit / "bin" / "nvcc").chmod(0o644)  # no x bit: not even root may exec it
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    u = unavailable(readings(t)["nvcc"], Reason.ERROR)
    assert "PermissionError" in (u.detail or "")


@pytest.mark.slow
def test_nvcc_that_hangs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolkit_probe, "NVCC_TIMEOUT", 0.5)
    kit = make_toolkit(tmp_path / "cuda", cuda_h=12040, nvcc="#!/bin/sh\nsleep 60\n")
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    u = unavailable(readings(t)["nvcc"], Reason.TIMEOUT)
    assert u.message == f"`{kit / 'bin' / 'nvcc'} --version` did not finish in 0.5 s"
    assert t.version == "12.4"


def test_unloadable_libcudart(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", cuda_h=12040)
    (kit / "lib64").mkdir()
    (kit / "lib64" / "libcudart.so.12").write_bytes(b"garbage")
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    u = unavailable(readings(t)["libcudart"], Reason.NOT_INSTALLED)
    assert "file too short" in (u.detail or "")


def test_pip_assembled_toolkit_without_version_json(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", dist_info="nvidia_cuda_runtime-12.4.127.dist-info")
    make_toolkit(kit, dist_info="nvidia_cuda_nvcc-12.4.131.dist-info")
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    assert t.pip_assembled is True
    assert t.version == "12.4"
    assert readings(t) == {"dist-info": "12.4"}
    assert t.readings[0].path == str(kit / "dist-info" / "nvidia_cuda_runtime-12.4.127.dist-info")


def test_dist_info_without_the_runtime(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", dist_info="nvidia_cuda_nvcc-12.4.131.dist-info",
                       cuda_h=12040)
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    unavailable(readings(t)["dist-info"], Reason.NOT_INSTALLED)
    assert t.version == "12.4"


def test_version_json_present_is_not_pip_assembled(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "cuda", version_json="12.4.1",
                       dist_info="nvidia_cuda_runtime-12.4.127.dist-info")
    t = only(Deps(root=tmp_path, environ=ENV, cuda_home=str(kit)))
    assert t.pip_assembled is False
    assert t.version == "12.4"


# ---------------------------------------------------------------------------- the real libcudart


@pytest.fixture(scope="session")
def cudart_wheel(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NVIDIA's cuda-runtime wheel, downloaded once into pytest's cache; skipped offline."""
    cache = getattr(request.config, "cache", None)
    folder: Path = (
        cache.mkdir("gpudoctor-wheels") if cache is not None
        else tmp_path_factory.mktemp("wheels")
    )
    found = sorted(folder.glob("nvidia_cuda_runtime_cu12-12.4.127-*.whl"))
    if not found:
        try:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                 "--disable-pip-version-check", "--retries", "0", "--timeout", "15", "-q",
                 "-d", str(folder), CUDART_WHEEL],
                capture_output=True, timeout=120, check=True,
            )
        except (subprocess.SubprocessError, OSError) as e:
            pytest.skip(f"cannot download {CUDART_WHEEL}: {e}")
        found = sorted(folder.glob("nvidia_cuda_runtime_cu12-12.4.127-*.whl"))
    if not found:
        pytest.skip(f"pip did not fetch a Linux wheel of {CUDART_WHEEL}")
    return found[0]


@pytest.mark.slow
def test_real_libcudart_from_the_wheel(tmp_path: Path, cudart_wheel: Path) -> None:
    """A toolkit assembled the way pip lays the wheel out: dist-info, cuda.h, libcudart."""
    kit = tmp_path / "usr" / "local" / "cuda-12.4"
    with zipfile.ZipFile(cudart_wheel) as whl:
        for name in whl.namelist():
            base = name.rsplit("/", 1)[-1]
            if name.endswith("/lib/libcudart.so.12"):
                dest = kit / "lib64" / base
            elif name.endswith("/include/cuda.h"):
                dest = kit / "include" / base
            elif ".dist-info/" in name:
                dest = kit / "dist-info" / name
            else:
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(whl.read(name))
    t = only(Deps(root=tmp_path, environ=ENV))
    assert t.found_by == "/usr/local/cuda-*"
    assert t.pip_assembled
    assert readings(t) == {"dist-info": "12.4", "cuda.h": "12.4", "libcudart": "12.4"}
    assert t.version == "12.4"


# ---------------------------------------------------------------------------- discovery


def test_discovery_order_and_provenance(tmp_path: Path) -> None:
    root = tmp_path / "root"
    cli = make_toolkit(tmp_path / "cli-cuda", cuda_h=12060)
    home = make_toolkit(tmp_path / "home-cuda", cuda_h=12050)
    path = make_toolkit(tmp_path / "path-cuda", cuda_h=12040)
    by_nvcc = make_toolkit(tmp_path / "nvcc-cuda", cuda_h=12030,
                           nvcc=nvcc_printing("12.3", "12.3.107"))
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvcc").symlink_to(by_nvcc / "bin" / "nvcc")
    local = root / "usr" / "local"
    make_toolkit(local / "cuda-12.4", version_json="12.4.1")
    make_toolkit(local / "cuda-11.8", version_json="11.8.0")
    (local / "cuda").symlink_to("cuda-12.4")  # the same toolkit twice: listed once
    make_toolkit(root / "opt" / "cuda", version_txt="10.2.89")
    environ = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "CUDA_HOME": str(home),
               "CUDA_PATH": str(path)}
    facts = facts_of(Deps(root=root, environ=environ, cuda_home=str(cli)))
    assert [(t.root, t.found_by, t.version) for t in facts.toolkits] == [
        (str(cli), "--cuda-home", "12.6"),
        (str(home), "CUDA_HOME", "12.5"),
        (str(path), "CUDA_PATH", "12.4"),
        (str(by_nvcc), "nvcc on PATH", "12.3"),
        (str(local / "cuda"), "/usr/local/cuda", "12.4"),
        (str(local / "cuda-11.8"), "/usr/local/cuda-*", "11.8"),
        (str(root / "opt" / "cuda"), "/opt/cuda", "10.2.89"),
    ]
    assert [t.in_use for t in facts.toolkits] == [True] + [False] * 6
    assert facts.in_use is facts.toolkits[0]


def test_cuda_home_beats_usr_local_cuda_and_dedupes(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "usr" / "local" / "cuda-12.4", version_json="12.4.1")
    (tmp_path / "usr" / "local" / "cuda").symlink_to(kit)
    facts = facts_of(Deps(root=tmp_path, environ={**ENV, "CUDA_HOME": str(kit)}))
    assert [(t.root, t.found_by, t.in_use) for t in facts.toolkits] == [
        (str(kit), "CUDA_HOME", True)
    ]


def test_versioned_dirs_newest_first(tmp_path: Path) -> None:
    local = tmp_path / "usr" / "local"
    for v in ("11.8", "12.10", "12.4", "9.2"):
        make_toolkit(local / f"cuda-{v}", version_json=f"{v}.0")
    facts = facts_of(Deps(root=tmp_path, environ=ENV))
    assert [t.version for t in facts.toolkits] == ["12.10", "12.4", "11.8", "9.2"]
    assert [t.in_use for t in facts.toolkits] == [True, False, False, False]


def test_nvcc_wrapper_script_leads_to_its_toolkit(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "opt" / "nv" / "cuda-12.4", cuda_h=12040)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvcc").write_text(f'#!/bin/sh\nexec {kit}/bin/nvcc "$@"\n')
    (tmp_path / "bin" / "nvcc").chmod(0o755)
    t = only(Deps(root=tmp_path / "empty", environ={"PATH": str(tmp_path / "bin")}))
    assert (t.root, t.found_by) == (str(kit), "nvcc on PATH")


def test_directories_that_are_not_toolkits_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "usr" / "local" / "cuda-12.4" / "bin").mkdir(parents=True)
    u = unavailable(probe_toolkits(Deps(root=tmp_path, environ={**ENV, "CUDA_PATH": ""})),
                    Reason.NOT_INSTALLED)
    assert u.message.startswith("no CUDA toolkit found")


# ---------------------------------------------------------------------------- named roots


def named_roots(tmp_path: Path) -> dict[str, Path]:
    """CUDA_HOME / CUDA_PATH values of every kind, as real paths."""
    roots = {"missing": tmp_path / "nowhere", "file": tmp_path / "a-file",
             "empty": tmp_path / "empty", "not-a-toolkit": tmp_path / "lib-only",
             "version-json-only": tmp_path / "runtime-only",
             "dangling": tmp_path / "dangling"}
    roots["file"].write_text("CUDA_HOME should be a directory\n")
    roots["empty"].mkdir()
    (roots["not-a-toolkit"] / "lib64").mkdir(parents=True)
    (roots["not-a-toolkit"] / "lib64" / "libcudart.so.12").write_bytes(b"\x7fELF")
    make_toolkit(roots["version-json-only"], version_json="12.4.1")
    roots["dangling"].symlink_to(tmp_path / "gone")
    return roots


@pytest.mark.parametrize(
    ("name", "kind", "lacks"),
    [("missing", "missing", ()), ("file", "file", ()), ("empty", "empty", ()),
     ("not-a-toolkit", "not-a-toolkit", ()), ("dangling", "missing", ()),
     ("version-json-only", "toolkit", ("bin/nvcc", "include/cuda_runtime.h"))],
)
def test_what_cuda_home_names_is_recorded(tmp_path: Path, name: str, kind: str,
                                          lacks: tuple[str, ...]) -> None:
    root = named_roots(tmp_path)[name]
    facts = facts_of(Deps(root=tmp_path / "sys", environ={**ENV, "CUDA_HOME": str(root)}))
    assert facts.named == (NamedRoot(str(root), "CUDA_HOME", kind, lacks),)
    assert toolkit_probe.describe_root(root) == (kind, lacks)
    if kind != "toolkit":  # nothing else found: the facts stay, with no toolkit in use
        assert (facts.toolkits, facts.in_use) == ((), None)
    else:
        assert facts.in_use is not None
        assert facts.in_use.lacks == lacks


def test_named_roots_in_order_with_a_real_toolkit_behind(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "usr" / "local" / "cuda-12.4", version_json="12.4.1",
                       cuda_h=12040, nvcc=nvcc_printing("12.4", "12.4.131"))
    (kit / "include" / "cuda_runtime.h").write_text("/* cuda_runtime.h */\n")
    roots = named_roots(tmp_path)
    environ = {**ENV, "CUDA_HOME": str(roots["missing"]), "CUDA_PATH": str(roots["empty"])}
    facts = facts_of(Deps(root=tmp_path, environ=environ, cuda_home=str(kit)))
    assert [(n.named_by, n.kind) for n in facts.named] == [
        ("--cuda-home", "toolkit"), ("CUDA_HOME", "missing"), ("CUDA_PATH", "empty")]
    assert facts.in_use is not None
    assert (facts.in_use.root, facts.in_use.lacks) == (str(kit), ())


def test_headers_under_targets_count(tmp_path: Path) -> None:
    kit = make_toolkit(tmp_path / "conda", cuda_h=12040, nvcc=nvcc_printing("12.4", "12.4.131"))
    (kit / "targets" / "x86_64-linux" / "include").mkdir(parents=True)
    (kit / "targets" / "x86_64-linux" / "include" / "cuda_runtime.h").write_text("\n")
    assert toolkit_probe.lacks(kit) == ()
    (kit / "bin" / "nvcc").unlink()
    assert toolkit_probe.lacks(kit) == ("bin/nvcc",)


def _check_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return runner.gpudoctor("check", "--no-torch", *args, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["missing", "file", "empty", "not-a-toolkit"])
def test_cuda_home_option_that_is_no_toolkit_is_a_usage_error(tmp_path: Path, name: str) -> None:
    root = named_roots(tmp_path)[name]
    result = _check_cli("--cuda-home", str(root))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"gpudoctor: error: --cuda-home {root} ")
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_cuda_home_option_with_only_version_json_runs(tmp_path: Path) -> None:
    root = named_roots(tmp_path)["version-json-only"]
    result = _check_cli("--cuda-home", str(root), "--format", "json", "GD201")
    assert result.returncode == 0, result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["status"] == "warn" and finding["severity"] == "warning"
    assert f"--cuda-home={root} is not a toolkit for building" in finding["message"]
    assert "no bin/nvcc and no include/cuda_runtime.h" in finding["message"]
