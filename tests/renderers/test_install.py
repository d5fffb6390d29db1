"""`gpudoctor.renderers.install`: what install-cudnn planned and did (every file on a dry run,
the undo line whole, the stop), and what uninstall-cudnn removed, restored and kept; as text
and JSON, paths from outside escaped. The results are built by hand: real installs of real
tarballs are in tests/actions/test_install_cudnn.py."""

from __future__ import annotations

import io
import json

from rich.console import Console

from gpudoctor.actions.install_cudnn import InstallPlan, InstallResult, PlannedFile
from gpudoctor.actions.system import ActionError
from gpudoctor.actions.uninstall_cudnn import KeptFile, UninstallResult
from gpudoctor.renderers.install import (
    install_json,
    render_install,
    render_uninstall,
    uninstall_json,
)

LIB = "/usr/local/cuda/lib64"


def plan(prefix: str = "/usr/local/cuda", notes: tuple[str, ...] = ()) -> InstallPlan:
    files = (PlannedFile(f"{LIB}/libcudnn.so.9.1.0", "create", "file", "lib/libcudnn.so.9.1.0",
                         size=1 << 20, mode=0o644),
             PlannedFile(f"{LIB}/libcudnn.so.9", "create", "symlink", "lib/libcudnn.so.9",
                         target="libcudnn.so.9.1.0"),
             PlannedFile("/usr/local/cuda/include/cudnn.h", "replace", "file", "include/cudnn.h",
                         size=4096, mode=0o644),
             PlannedFile(f"{LIB}/libcudnn.so.8", "remove", "symlink", None))
    return InstallPlan("cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz", prefix, "xz",
                       "archive (lib/, include/)", "9.1.0", "12", "the directory name", "12.4",
                       "/usr/local/cuda/include", LIB, files, ("LICENSE",), notes,
                       (1 << 20) + 4096)


def text(render: object, width: int = 200) -> list[str]:
    console = Console(file=io.StringIO(), width=width, no_color=True, legacy_windows=False)
    if isinstance(render, InstallResult):
        return render_install(render, console).splitlines()
    assert isinstance(render, UninstallResult)
    return render_uninstall(render, console).splitlines()


def test_a_dry_run_lists_every_file() -> None:
    lines = text(InstallResult(dry_run=True, plan=plan(notes=("CUDA build not checked",))))
    assert lines[0] == "cuDNN 9.1.0, the CUDA 12 build (from the directory name) → /usr/local/cuda"
    assert lines[2] == "  toolkit   CUDA 12.4"
    assert "  files: 2 create, 1 replace, 1 remove; 1.0 MiB to write" in lines
    assert f"    create  {LIB}/libcudnn.so.9.1.0 (1048576 bytes, mode 644)" in lines
    assert f"    create  {LIB}/libcudnn.so.9 -> libcudnn.so.9.1.0" in lines
    assert f"    remove  {LIB}/libcudnn.so.8 (backed up)" in lines
    assert "  note: CUDA build not checked" in lines
    assert lines[-1] == "dry run: nothing was written"
    assert not [line for line in lines if "installed" in line or "undo" in line]


def test_an_install_says_how_to_undo_it_on_one_line() -> None:
    prefix = "/opt/my cuda; rm -rf ~"
    done = InstallResult(dry_run=False, plan=plan(prefix), manifest=f"{prefix}/.manifest.json",
                         ldconfig="ran ldconfig")
    lines = text(done)
    assert f"installed; manifest {prefix}/.manifest.json" in lines
    assert "  undo: gpudoctor uninstall-cudnn --prefix '/opt/my cuda; rm -rf ~'" in lines
    assert "  ldconfig: ran ldconfig" in lines and lines[-1] == "placement checks:"
    assert not [line for line in lines if line.startswith("    create ")]  # dry run only
    narrow = text(done, width=40)  # the undo line pastes whole
    assert "  undo: gpudoctor uninstall-cudnn --prefix '/opt/my cuda; rm -rf ~'" in narrow


def test_an_install_that_stopped() -> None:
    error = ActionError("the tarball is not a cuDNN archive", "download it again")
    assert text(InstallResult(dry_run=False, plan=None, error=error)) == [
        "install-cudnn stopped (nothing was written)"]
    assert text(InstallResult(dry_run=False, plan=None, error=error, rolled_back=True)) == [
        "install-cudnn stopped (rolled back, the prefix is unchanged)"]


def test_paths_from_outside_are_escaped() -> None:
    evil = plan(prefix="/usr/local/cuda\ninstalled; manifest /etc/passwd\x1b[2J")
    lines = text(InstallResult(dry_run=True, plan=evil), width=400)
    assert lines[0].endswith("→ /usr/local/cuda\\ninstalled; manifest /etc/passwd\\x1b[2J")
    assert not [line for line in lines if line.startswith("installed")]


def test_install_json() -> None:
    error = ActionError("no space left on /usr/local/cuda", None)
    data = json.loads(install_json(InstallResult(dry_run=False, plan=plan(), error=error,
                                                 rolled_back=True)))
    assert (data["command"], data["ok"], data["dry_run"], data["rolled_back"]) == (
        "install-cudnn", False, False, True)
    assert data["error"] == {"message": "no space left on /usr/local/cuda", "fix": None}
    assert data["plan"]["version"] == "9.1.0" and len(data["plan"]["files"]) == 4
    assert data["plan"]["files"][1]["target"] == "libcudnn.so.9.1.0"
    assert data["checks"] == [] and isinstance(data["schema_version"], int)
    ok = json.loads(install_json(InstallResult(dry_run=True, plan=plan())))
    assert (ok["ok"], ok["error"], ok["manifest"]) == (True, None, None)


def uninstalled(**kw: object) -> UninstallResult:
    base: dict[str, object] = {
        "prefix": "/usr/local/cuda", "version": "9.1.0",
        "removed": (f"{LIB}/libcudnn.so.9.1.0", "/usr/local/cuda/include/cudnn.h"),
        "restored": ("/usr/local/cuda/include/cudnn.h",)}
    return UninstallResult(**{**base, **kw})  # type: ignore[arg-type]


def test_uninstall_text() -> None:
    assert text(uninstalled()) == [
        "removed cuDNN 9.1.0 from /usr/local/cuda",
        f"  removed  {LIB}/libcudnn.so.9.1.0",
        "  restored /usr/local/cuda/include/cudnn.h"]
    kept = (KeptFile(f"{LIB}/libcudnn.so.9", "4096 bytes now, the install wrote 1234", None),)
    lines = text(uninstalled(kept=kept), width=200)
    assert lines[0] == ("removed cuDNN 9.1.0 from /usr/local/cuda, except 1 file changed since "
                        "the install (kept)")
    assert lines[-1] == (f"  kept     {LIB}/libcudnn.so.9 (changed since the install: 4096 "
                         "bytes now, the install wrote 1234)")
    stopped = uninstalled(error=ActionError("no manifest in /usr/local/cuda"))
    assert text(stopped) == ["uninstall-cudnn stopped; the prefix is unchanged"]


def test_uninstall_json() -> None:
    data = json.loads(uninstall_json(uninstalled()))
    assert (data["command"], data["ok"], data["prefix"], data["version"]) == (
        "uninstall-cudnn", True, "/usr/local/cuda", "9.1.0")
    assert data["restored"] == ["/usr/local/cuda/include/cudnn.h"] and data["kept"] == []
    kept = KeptFile(f"{LIB}/libcudnn.so.9", "changed", "/usr/local/cuda/.bak/libcudnn.so.9")
    assert json.loads(uninstall_json(uninstalled(kept=(kept,))))["ok"] is False
