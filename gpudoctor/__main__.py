"""`python -m gpudoctor` and the `gpudoctor` console script.

The entry point lives here rather than in `gpudoctor.cli` so that `gpudoctor check` can start
the `import torch` child before typer, rich and pydantic are imported (~0.2 s): the two then
overlap, and `check` costs about as much as `import torch` alone.
"""

from __future__ import annotations

import os
import sys


def _prestart_torch(argv: list[str]) -> None:
    """Start the torch probe's child early when argv is a plain `check` / `snapshot`."""
    if len(argv) < 2 or argv[1] not in ("check", "snapshot"):
        return
    if any(a in ("--no-torch", "--help", "-h") or a.startswith(("--from-", "--timeout"))
           for a in argv[2:]):
        return  # rare paths: let the probe start its child itself
    python = os.environ.get("GPUDOCTOR_PYTHON")
    for i, a in enumerate(argv):
        if a == "--python" and i + 1 < len(argv):
            python = argv[i + 1]
        elif a.startswith("--python="):
            python = a.split("=", 1)[1]
    from gpudoctor.probes.interface import Deps
    from gpudoctor.probes.pytorch import prestart

    if python is None:
        prestart(Deps())
    elif os.path.isabs(python) and os.path.exists(python):
        prestart(Deps(python=python))


def main() -> None:
    """Run the command line."""
    _prestart_torch(sys.argv)
    from gpudoctor.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
