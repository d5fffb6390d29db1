"""`python -m gpudoctor` and the `gpudoctor` console script.

The entry point lives here rather than in `gpudoctor.cli` for two reasons:

- `gpudoctor check` starts the `import torch` child ~20 ms in, before the model, the probes,
  typer and rich are imported (~0.15 s; `gpudoctor.probes.prestart` imports only the child
  runner): the two then overlap, and `check` costs about as much as `import torch` alone. It
  does so only when a selected check reads torch's facts (`check host` never waits for a
  hanging torch). A plain `check` or `snapshot` (every check, this machine, the default
  inputs) then starts every probe too (`gpudoctor.probes.gather.start_early`), so that their
  children (nvcc, ldd, the cuDNN loader) run while typer, the checks and the renderers load;
  the command takes them when it asks for the very same inputs, else it starts its own.
- the signal handlers go in first thing (`gpudoctor.childproc`), so that Ctrl-C or SIGTERM at
  any moment, start-up included, kills every child's process group and ends with one line and
  exit status 128 + the signal (130, 143), never a traceback.
"""

# no `from __future__ import annotations` here: it imports the __future__ module, and a Ctrl-C
# during that import (before the handler below is in) printed a traceback
import os
import sys

# Signals caught before the child runner's handlers are in: noted here, acted on in `main`.
# Installed as this module is executed as the program (`python -m gpudoctor`, or the console
# script importing it), before anything else of gpudoctor runs: the console script's own
# `re.sub` on argv[0] comes after this import and before `main`, and a Ctrl-C there printed a
# traceback. Imported as a library (a test), it installs nothing.
from gpudoctor import _CAUGHT, _install_early  # the package's, installed there for `-m`

if __name__ == "__main__" or os.path.basename(sys.argv[0] if sys.argv else "") == "gpudoctor":
    _install_early()

# The options of `check` and `snapshot` (the commands started early) that take a value: what
# follows one is its value, not a selector. Written out here, as importing the CLI to ask it
# would cost the time the early start saves; tests/test___main__.py fails when the commands'
# options and this list part.
_VALUED = frozenset(("--format", "-f", "--output", "-o", "--only", "--skip", "--from-snapshot",
                     "--from-json", "--from-report", "--cuda-home", "--python", "--timeout",
                     "--require"))


def _parse(args: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The positional arguments and the values of each option of `_VALUED` (`--x v` and
    `--x=v` alike, in order), as the command's own parser will read them."""
    positional: list[str] = []
    values: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if a.startswith("-") and name in _VALUED:
            if not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            values.setdefault(name, []).append(value)
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    return positional, values


def _selection(args: list[str]) -> tuple[list[str], list[str]]:
    """The selectors (positional and --only) and --skip values of `check`'s arguments."""
    positional, values = _parse(args)

    def each(option: str) -> list[str]:
        return [v.strip() for value in values.get(option, ()) for v in value.split(",")
                if v.strip()]

    return positional + each("--only"), each("--skip")


def _needs_torch(args: list[str]) -> bool:
    """Whether the selected checks read torch's facts (or --smoke asks for it)."""
    if "--smoke" in args:
        return True
    only, skip = _selection(args)
    if not only and not skip:
        return True
    from gpudoctor.checks import REGISTRY, select

    checks, _ = select(REGISTRY, only, skip)
    return any("torch" in c.reads for c in checks)


def _prestart_torch(argv: list[str]) -> None:
    """Start the torch probe's child early when argv is a plain `check` / `snapshot` whose
    checks read torch's facts."""
    if len(argv) < 2 or argv[1] not in ("check", "snapshot"):
        return
    if any(a in ("--no-torch", "--help", "-h") or a.startswith(("--from-", "--timeout"))
           for a in argv[2:]):
        return  # rare paths: let the probe start its child itself
    if argv[1] == "check" and not _needs_torch(argv[2:]):
        return
    # the interpreter the command will run: the last --python, else GPUDOCTOR_PYTHON (empty:
    # unset, as the option reads it), else this one; located as the command will resolve it
    # (`gpudoctor.interpreters`), so that the probe takes this child, without a child run
    python = _parse(argv[2:])[1].get("--python", [os.environ.get("GPUDOCTOR_PYTHON") or ""])[-1]
    from gpudoctor.probes.prestart import prestart

    if not python:
        prestart(sys.executable, os.environ)
        return
    from gpudoctor.interpreters import NotAnInterpreter, locate

    try:
        prestart(locate(python, os.environ), os.environ)
    except NotAnInterpreter:
        return  # the command says why, exit 2


# `check`'s and `snapshot`'s --timeout default (seconds), for torch and NVML alike
# (tests/test___main__.py fails when the commands' default and this part)
_TIMEOUT = 60.0
# what makes the probes' inputs other than the defaults below: left to the command
_NOT_EARLY = ("--help", "-h", "--from-", "--timeout", "--cuda-home", "--python", "--only",
              "--skip")


def _prestart_probes(argv: list[str]) -> None:
    """Start every probe now when argv is a plain `check` / `snapshot` of this machine with
    every check (`gpudoctor.probes.gather.start_early`): they then run while typer, the
    checks and the renderers are imported (~0.15 s). The command takes them only when it
    asks for the very same inputs (`gather.start` compares), so a guess wrong here costs
    time, never a fact."""
    if len(argv) < 2 or argv[1] not in ("check", "snapshot"):
        return
    if any(a.startswith(_NOT_EARLY) for a in argv[2:]) or _parse(argv[2:])[0]:
        return  # selectors, or probes of other inputs: the command starts them
    if any(os.environ.get(f"GPUDOCTOR_{v}") for v in ("CUDA_HOME", "PYTHON", "TIMEOUT")):
        return
    from gpudoctor.probes.gather import start_early
    from gpudoctor.probes.interface import Deps

    start_early(Deps(python=sys.executable, cuda_home=None, torch_timeout=_TIMEOUT,
                     nvml_timeout=_TIMEOUT, no_torch="--no-torch" in argv[2:]))


def _interrupted(exc: KeyboardInterrupt, caught: list[int]) -> None:
    """Ctrl-C / SIGTERM before the CLI took over: stop the children, one line, exit."""
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    from gpudoctor import childproc

    if caught and childproc.interrupted() is None:
        childproc.signal_received(caught[0])
    code, message = childproc.settle(exc)
    try:
        sys.stderr.write(f"gpudoctor: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # closed; None when fd 2 was closed at start
        pass
    os._exit(code)


def main() -> None:
    """Run the command line."""
    caught = _CAUGHT
    try:
        _install_early()  # until the runner's handlers are in (again: `main` may be called)
        _run(caught)
    except KeyboardInterrupt as e:  # where the CLI's own handling does not reach (imports)
        _interrupted(e, caught)
    except BaseException:
        # Python wraps an exception raised in some places (a class body's __set_name__ during
        # an import) in a RuntimeError: after a signal, whatever escapes is that signal
        runner = sys.modules.get("gpudoctor.childproc")
        if caught or (runner is not None and runner.interrupted() is not None):
            _interrupted(KeyboardInterrupt(), caught)
        raise


def _run(caught: list[int]) -> None:
    if sys.argv[1:2] in (["check"], ["snapshot"]):
        # no cyclic garbage collector for these two: most of what they allocate is the ~270
        # modules they import, which live until the end, and the collector walked them again
        # and again (~20 ms of CPU, ~5% of `check --no-torch`); the run is short and its
        # inputs bounded, so the little cyclic garbage it makes waits for the exit
        import gc

        gc.disable()
    from gpudoctor import childproc

    childproc.install_signal_handlers()
    if caught:
        raise childproc.signal_received(caught[0])
    _prestart_torch(sys.argv)
    _prestart_probes(sys.argv)
    from gpudoctor.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
