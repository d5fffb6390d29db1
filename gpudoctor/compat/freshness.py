"""What on a machine was released after the compat tables were last checked.

The tables hold every release up to their `known_until` date (cuda.toml). A version newer than
the newest release of its kind in them (a torch, a CUDA toolkit or runtime, a cuDNN, a driver
branch) may be one they have not caught up with: checks then judge it by the family rules, and
the report should say so. `beyond_tables` lists those versions; `note` is the sentence a check or
a renderer shows. Pure: no I/O; versions that do not parse are left out, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.versions import minor_key, parse_version, release3

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


@dataclass(frozen=True, slots=True)
class Beyond:
    """One version newer than every release of its kind in the tables."""

    what: str  # "torch", "CUDA", "cuDNN", "driver"
    version: str  # as the machine reported it
    newest: str  # the newest the tables hold

    def text(self) -> str:
        """"torch 2.16.0 (newest in the tables: 2.15.0)"."""
        return f"{self.what} {self.version} (newest in the tables: {self.newest})"


def beyond_tables(tables: Tables, *, torch: str | None = None, cuda: str | None = None,
                  cudnn: str | None = None, driver: str | None = None) -> tuple[Beyond, ...]:
    """The given versions that are newer than every release of their kind in `tables`."""
    out = []
    version = parse_version(torch.partition("+")[0]) if torch else None
    newest_torch = tables.newest_torch(include_unverified=True).version
    if torch and version is not None and version > (parse_version(newest_torch) or version):
        out.append(Beyond("torch", torch, newest_torch))
    newest_cuda = tables.newest_cuda(include_unverified=True).version
    mine, theirs = minor_key(cuda or ""), minor_key(newest_cuda)
    if cuda and mine is not None and theirs is not None and mine > theirs:
        out.append(Beyond("CUDA", cuda, newest_cuda))
    newest_cudnn = tables.newest_cudnn(include_unverified=True).version
    have, known = release3(cudnn or ""), release3(newest_cudnn)
    if cudnn and have is not None and known is not None and have > known:
        out.append(Beyond("cuDNN", cudnn, newest_cudnn))
    branch = parse_version(driver or "")
    last = max((b.branch for b in tables.driver_branches), default=None)
    if driver and branch is not None and last is not None and branch.release[0] > last:
        out.append(Beyond("driver", driver, f"R{last}"))
    return tuple(out)


def note(tables: Tables, beyond: tuple[Beyond, ...]) -> str | None:
    """The report's sentence for `beyond_tables`' answer; None when nothing is newer."""
    if not beyond:
        return None
    until = tables.known_until.isoformat() if tables.known_until else "an unknown date"
    return (f"released after the compat tables (known until {until}): "
            f"{'; '.join(b.text() for b in beyond)}. Verdicts that need their rows use the "
            "family rules; a newer gpudoctor may know them")
