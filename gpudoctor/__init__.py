"""gpudoctor: a doctor for the NVIDIA deep-learning stack (driver, CUDA, cuDNN, PyTorch)."""

import sys

__version__ = "0.1.0"

# `python -m gpudoctor` imports this package before it runs gpudoctor/__main__.py, and a
# Ctrl-C that lands between the two (in importlib's weakref callback for this package's module
# lock) was raised where Python swallows it ("Exception ignored in …"): the command then ran to
# the end and exited 0. Run as that program, the signals are caught from here on, noted, and
# acted on by `gpudoctor.__main__.main` (whose module installs this same handler for the
# console script, whose import of this package has no `-m`).
_CAUGHT: list[int] = []


def _early(signum: int, frame: object) -> None:
    _CAUGHT.append(signum)


def _install_early() -> None:
    import _signal  # type: ignore[import-not-found]  # the C module: `signal` imports enum

    for signum in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
        _signal.signal(signum, _early)


def _run_as_program() -> bool:
    argv = getattr(sys, "orig_argv", [])
    return "-m" in argv and argv[argv.index("-m") + 1:argv.index("-m") + 2] == ["gpudoctor"]


if _run_as_program():
    _install_early()
