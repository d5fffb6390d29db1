"""The renderer protocol, and facts every renderer shows the same way."""

from __future__ import annotations

from enum import Enum
from typing import NoReturn, Protocol

from gpudoctor.checks import facts as F
from gpudoctor.model import Environment, Report, Result, Severity, Status, TorchFacts, Unavailable

DOCS_URL = "https://github.com/gpudoctor/gpudoctor/blob/main/docs/checks.md#{id}"


class OutputFormat(str, Enum):
    """How a report is written."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    JUNIT = "junit"

    def __str__(self) -> str:
        return self.value


def assert_never(value: NoReturn) -> NoReturn:
    """`typing.assert_never` for Python 3.10."""
    raise AssertionError(f"unhandled value: {value!r}")


class Renderer(Protocol):
    """Turns a Report into text. Renderers never decide pass/fail or exit codes."""

    def render(self, report: Report) -> str:
        """The whole output."""


def docs_url(check_id: str) -> str:
    """Where a check's documentation lives."""
    return DOCS_URL.format(id=check_id.lower())


def is_info(result: Result) -> bool:
    """A WARN from an INFO-severity check is information, not a warning."""
    return result.finding.status is Status.WARN and result.severity is Severity.INFO


def tally(report: Report) -> str:
    """'9 passed, 1 warning, 2 failed, 3 skipped'."""
    warn = sum(1 for r in report.results if r.finding.status is Status.WARN and not is_info(r))
    info = sum(1 for r in report.results if is_info(r))
    parts = [f"{report.count(Status.PASS)} passed"]
    if warn:
        parts.append(f"{warn} warning{'s' if warn != 1 else ''}")
    if info:
        parts.append(f"{info} note{'s' if info != 1 else ''}")
    parts.append(f"{report.count(Status.FAIL)} failed")
    parts.append(f"{report.count(Status.SKIP)} skipped")
    return ", ".join(parts)


def cuda_versions(env: Environment) -> tuple[tuple[str, str], ...]:
    """The three different "CUDA versions", labelled so they are never confused."""
    if isinstance(env.nvml, Unavailable) and isinstance(env.libcuda, Unavailable):
        driver = f"no driver ({env.nvml.message})"
    else:
        drv = F.driver_version(env) or "version unknown"
        cuda = F.reported_driver_cuda(env)
        driver = f"{drv}, supports CUDA ≤ {cuda[0]}" if cuda else drv
    if isinstance(env.torch, TorchFacts):
        tv, tc = F.torch_version(env), F.torch_cuda(env)
        torch = f"{tv}, built with CUDA {tc}" if tc else f"{tv}, CPU-only build (no CUDA)"
        if isinstance(env.torch.runtime, Unavailable):
            torch += f" — import failed: {env.torch.runtime.message}"
    else:
        torch = env.torch.message
    tk = F.toolkit(env)
    if tk is None:
        toolkit = "none found"
    else:
        v = tk.version if isinstance(tk.version, str) else "version unknown"
        toolkit = f"{v} at {tk.root} ({tk.found_by})"
    return (
        ("Driver (max CUDA it runs)", driver),
        ("PyTorch (CUDA it was built with)", torch),
        ("CUDA toolkit (nvcc, for building)", toolkit),
    )
