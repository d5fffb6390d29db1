"""Which Python `--python` names: the one resolver of every command that takes it.

- `locate(value, environ)`: pure, no child. `value` as a shell runs it: a bare name
  (`python3`) from the PATH of `environ`, a path (`~` from `environ`'s HOME) made absolute,
  symlinks kept (a venv's python is one). A missing file, a directory or a file that cannot
  be executed is refused. The entry point uses it to start the torch child early, where a
  child run of its own would cost the time the early start saves.
- `resolve(value, environ, timeout)`: `locate`, then one brief run (`-E -s -S`) that must
  answer as Python >= 3.8 within `timeout` seconds. The command line calls it once per run;
  the probes and actions below it receive the path it returns.

Both raise `NotAnInterpreter`, whose text is the one-line usage error (exit 2) to print.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping

from gpudoctor import childproc

# Python 2 syntax too, so that a Python 2 answers with its version instead of a SyntaxError
_WHO = "import sys; sys.stdout.write('GPUDOCTOR-PYTHON %d.%d\\n' % sys.version_info[:2])"
_ANSWER = re.compile(r"^GPUDOCTOR-PYTHON (\d+)\.(\d+)$", re.MULTILINE)
WHO_TIMEOUT = 10.0  # seconds to answer when the caller gives no bound
OLDEST = (3, 8)  # the torch probe's and the smoke test's child scripts run on 3.8


class NotAnInterpreter(ValueError):
    """`--python` names no usable Python; `str(e)` is the one-line usage error."""


def _expand_home(value: str, environ: Mapping[str, str]) -> str:
    """`~` and `~/x` from `environ`'s HOME (else the account's); `~user/x` from the system."""
    if value == "~" or value.startswith("~/"):
        home = environ.get("HOME")
        if home:
            return home + value[1:]
    return os.path.expanduser(value)


def locate(value: str, environ: Mapping[str, str]) -> str:
    """The absolute path `--python VALUE` names, without running it (see the module doc).

    Raises `NotAnInterpreter` for an empty value, a name not on PATH, a missing file, a
    directory, or a file this user cannot execute.
    """
    if not value.strip():
        raise NotAnInterpreter(f"--python {value!r}: an empty value names no interpreter")
    if "/" not in value and not value.startswith("~"):
        found = shutil.which(value, path=environ.get("PATH", os.defpath))
        if found is None:
            raise NotAnInterpreter(f"--python {value}: no {value} on PATH")
        path = os.path.abspath(found)
    else:
        path = os.path.abspath(_expand_home(value, environ))
    shown = _shown(value, path)
    if not os.path.lexists(path):
        raise NotAnInterpreter(f"--python {shown}: no such file")
    if os.path.isdir(path):
        raise NotAnInterpreter(f"--python {shown}: a directory, not a Python interpreter")
    if not os.path.exists(path):
        raise NotAnInterpreter(f"--python {shown}: cannot be run (a broken symbolic link)")
    if not os.access(path, os.X_OK):
        raise NotAnInterpreter(f"--python {shown}: cannot be run (not executable)")
    return path


def resolve(value: str, environ: Mapping[str, str], timeout: float | None = None) -> str:
    """`locate(value, environ)`, proven to be Python >= 3.8 by running it once, briefly, in
    `environ` (`timeout` seconds; default WHO_TIMEOUT: the CLI passes its --timeout).

    Raises `NotAnInterpreter` for what `locate` refuses, a file that cannot be run, a program
    that is not Python (`/bin/ls`), a Python older than 3.8, or one that does not answer
    within `timeout` seconds.
    """
    timeout = WHO_TIMEOUT if timeout is None else timeout
    path = locate(value, environ)
    shown = _shown(value, path)
    try:
        result = childproc.run([path, "-E", "-s", "-S", "-c", _WHO], timeout, dict(environ),
                               limit=4096)
    except childproc.ChildTimeout:
        raise NotAnInterpreter(f"--python {shown}: did not answer within {timeout:g} s"
                               ) from None
    except OSError as e:
        raise NotAnInterpreter(f"--python {shown}: cannot be run ({e.strerror or e})") from None
    m = _ANSWER.search(result.stdout)
    if m is None:
        raise NotAnInterpreter(f"--python {shown}: not a Python interpreter")
    version = (int(m.group(1)), int(m.group(2)))
    if version < OLDEST:
        raise NotAnInterpreter(f"--python {shown}: Python {version[0]}.{version[1]} is too "
                               f"old (gpudoctor's child scripts need {OLDEST[0]}.{OLDEST[1]} "
                               "or newer)")
    return path


def _shown(value: str, path: str) -> str:
    return value if value == path else f"{value} ({path})"
