"""`gpudoctor.interpreters`: the one `--python` resolver (issue 22 item 1).

`locate` finds without running; `resolve` also runs the file once and needs Python >= 3.8.
Every refusal is one line naming the value; every command that takes `--python` refuses what
is not a Python with exit 2 and that line (the smoke test ran `/bin/ls` and failed with exit
1; a directory the same).
"""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

import pytest
from runner import invoke

from gpudoctor.interpreters import NotAnInterpreter, locate, resolve

PATH = {"PATH": "/usr/bin:/bin"}


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


# --------------------------------------------------------------------------- locate


@pytest.mark.subprocess
def test_bare_name_comes_from_the_path_of_environ_symlink_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "py3").symlink_to(sys.executable)  # a venv's python is a symlink: kept
    work = tmp_path / "work"
    work.mkdir()
    executable(work / "py3", "#!/bin/sh\necho decoy\n")  # in the working directory: not it
    monkeypatch.chdir(work)
    assert locate("py3", {"PATH": str(bin_dir)}) == str(bin_dir / "py3")
    assert resolve("py3", {"PATH": str(bin_dir)}) == str(bin_dir / "py3")
    assert locate("./py3", {"PATH": str(bin_dir)}) == str(work / "py3")  # a path: this one


def test_a_relative_path_is_made_absolute_and_home_comes_from_environ(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    python = tmp_path / "venv" / "bin" / "python"
    python.symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path / "venv")
    assert locate("bin/python", PATH) == str(python)
    assert locate("~/venv/bin/python", {**PATH, "HOME": str(tmp_path)}) == str(python)


@pytest.mark.subprocess
def test_locate_runs_nothing(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    script = executable(tmp_path / "python", f"#!/bin/sh\ntouch {ran}\n")
    assert locate(str(script), PATH) == str(script)
    assert not ran.exists()
    with pytest.raises(NotAnInterpreter):
        resolve(str(script), PATH)
    assert ran.exists()  # resolve did run it


@pytest.mark.parametrize(("kind", "says"), [
    ("empty", "an empty value names no interpreter"),
    ("not-on-path", "no no-such-python-here on PATH"),
    ("missing", "no such file"),
    ("directory", "a directory, not a Python interpreter"),
    ("not-executable", "cannot be run (not executable)"),
    ("broken-link", "cannot be run (a broken symbolic link)"),
])
def test_locate_refuses(tmp_path: Path, kind: str, says: str) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("just text\n")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    value = {"empty": "", "not-on-path": "no-such-python-here",
             "missing": str(tmp_path / "nope"), "directory": str(tmp_path),
             "not-executable": str(text), "broken-link": str(tmp_path / "dangling")}[kind]
    for find in (locate, resolve):  # resolve refuses the same, before running anything
        with pytest.raises(NotAnInterpreter) as e:
            find(value, PATH)
        message = str(e.value)
        assert message.startswith(f"--python {value or repr(value)}")
        assert says in message
        assert "\n" not in message


# --------------------------------------------------------------------------- resolve


@pytest.mark.subprocess
@pytest.mark.parametrize(("kind", "says"), [
    ("ls", "not a Python interpreter"),
    ("script", "not a Python interpreter"),
    ("python2", "Python 2.7 is too old"),
    ("no-shebang", "cannot be run"),
])
def test_resolve_refuses_what_is_not_a_python_of_3_8_or_newer(
        tmp_path: Path, kind: str, says: str) -> None:
    value = {
        "ls": "/bin/ls",
        "script": str(executable(tmp_path / "script", "#!/bin/sh\necho hello\n")),
        "python2": str(executable(tmp_path / "python2",
                                  "#!/bin/sh\necho 'GPUDOCTOR-PYTHON 2.7'\n")),
        "no-shebang": str(executable(tmp_path / "blob", "\x7fELF not really\n")),
    }[kind]
    with pytest.raises(NotAnInterpreter) as e:
        resolve(value, PATH)
    assert str(e.value).startswith(f"--python {value}")
    assert says in str(e.value)


@pytest.mark.slow
@pytest.mark.subprocess
def test_resolve_gives_up_at_its_timeout(tmp_path: Path) -> None:
    slow = executable(tmp_path / "python", "#!/bin/sh\nsleep 30\n")
    with pytest.raises(NotAnInterpreter, match=r"did not answer within 0\.5 s"):
        resolve(str(slow), PATH, 0.5)


@pytest.mark.subprocess
def test_resolve_accepts_real_pythons_from_3_8() -> None:
    assert resolve(sys.executable, PATH) == os.path.abspath(sys.executable)
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")))
    if found:
        assert resolve(found[0], PATH) == found[0]


# --------------------------------------------------------------------------- every command


@pytest.mark.subprocess
@pytest.mark.parametrize("args", [
    ["smoke-test", "--device", "cpu"],
    ["smoke-test", "--device", "cpu", "--distributed"],
    ["check", "host"],
    ["snapshot", "--no-torch"],
    ["recommend", "--no-torch"],
    ["explain", "no kernel image is available for execution on the device"],
])
@pytest.mark.parametrize("value", ["/bin/ls", "directory"])
def test_every_command_refuses_what_is_not_python_with_one_line(
        tmp_path: Path, args: list[str], value: str) -> None:
    value = str(tmp_path) if value == "directory" else value
    r = invoke(*args, "--python", value)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    says = ("not a Python interpreter" if value == "/bin/ls"
            else "a directory, not a Python interpreter")
    assert r.stderr.splitlines() == [f"gpudoctor: error: --python {value}: {says}"]
