"""The renderer protocol, and facts every renderer shows the same way."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, NoReturn, Protocol

from gpudoctor import views as V
from gpudoctor.model import (
    Environment,
    NvmlFacts,
    Reason,
    Report,
    Result,
    TorchFacts,
    Unavailable,
)
from gpudoctor.policy import Verdict, counts

# docs/checks.md in this repository, generated from the registry (`gpudoctor checks --format
# markdown`); a test keeps it current. Repo-relative: it resolves in a checkout, on GitHub and
# in the sdist alike, and never names a site that may not exist.
DOCS_PATH = "docs/checks.md"


class OutputFormat(str, Enum):
    """How a report is written."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    JUNIT = "junit"
    PROMETHEUS = "prometheus"  # node_exporter's textfile collector

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
    """Where a check's documentation lives: its anchored section of docs/checks.md."""
    return f"{DOCS_PATH}#{check_id.lower()}"


# C0 and C1 control characters (ESC starts terminal escape sequences, BEL ends OSC ones, CR
# overwrites the line; VT, FF, NEL and the information separators break lines for
# str.splitlines), the Unicode line and paragraph separators, and the bidirectional overrides
# that reorder what a terminal shows.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return {9: "\\t", 10: "\\n", 13: "\\r"}.get(c) or (
        f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}")


def clean(text: str, newlines: bool = False) -> str:
    """`text` from a snapshot or report with every control character shown escaped (`\\x1b`),
    so that no string can drive the reader's terminal, and every line break too (`\\n`,
    `\\u2028`), so that no string can start a line that looks like the report's own. With
    `newlines`, a line feed stays (the only break left: split on "\\n", not splitlines) for
    the few places that show a multi-line value as a block of its own (a captured stderr in
    the evidence, a traceback on stderr) or escape it themselves (Markdown, Prometheus)."""
    return (_CONTROL if newlines else _CONTROL_OR_NL).sub(_escape, text)


def finding_dict(r: Result) -> dict[str, Any]:
    """One result as the JSON object every command writes (`check`, `smoke-test`,
    `install-cudnn`): id, slug, title, layer, severity, status, message, fix, evidence, docs."""
    f = r.finding
    return {
        "id": r.check_id,
        "slug": r.slug,
        "title": r.title,
        "layer": r.layer.value,
        "severity": r.severity.name.lower(),
        "status": f.status.value,
        "message": f.message,
        "fix": f.fix,
        "evidence": [list(e) for e in f.evidence],
        "docs_url": docs_url(r.check_id),
    }


def tally(report: Report) -> str:
    """'9 passed, 1 warning, 2 failed, 3 skipped': the policy's counts, in words."""
    n = counts(report.results)
    parts = [f"{n[Verdict.PASS]} passed"]
    if n[Verdict.WARNING]:
        parts.append(f"{n[Verdict.WARNING]} warning{'s' if n[Verdict.WARNING] != 1 else ''}")
    if n[Verdict.NOTE]:
        parts.append(f"{n[Verdict.NOTE]} note{'s' if n[Verdict.NOTE] != 1 else ''}")
    parts.append(f"{n[Verdict.FAILURE]} failed")
    parts.append(f"{n[Verdict.SKIP]} skipped")
    return ", ".join(parts)


# a fact nobody looked for: a selector skipped its probe (`check host`), or a pasted report
# does not state it; the header says so, never "no driver" or "none found"
_UNLOOKED = (Reason.SKIPPED, Reason.NOT_REPORTED)


def _unlooked(fact: Unavailable) -> str:
    """A fact nobody looked for, in the header: "not gathered (no selected check reads it)"."""
    head, _, why = fact.message.partition(": ")
    return f"{head} ({why})" if fact.reason is Reason.SKIPPED and why else fact.message


def cuda_versions(env: Environment) -> tuple[tuple[str, str], ...]:
    """The three different "CUDA versions", labelled so they are never confused."""
    if isinstance(env.nvml, Unavailable) and isinstance(env.libcuda, Unavailable):
        # NVML's word, unless a selector skipped NVML alone and libcuda found no driver
        seen = env.nvml if env.nvml.reason is not Reason.SKIPPED or (
            env.libcuda.reason in _UNLOOKED) else env.libcuda
        driver = (_unlooked(seen) if seen.reason in _UNLOOKED
                  else f"no driver ({seen.message})")
    else:
        drv = V.driver_version(env) or "version unknown"
        cuda = V.reported_driver_cuda(env)
        driver = f"{drv}, supports CUDA ≤ {cuda[0]}" if cuda else drv
        stated = env.nvml.cuda_driver_version if isinstance(env.nvml, NvmlFacts) else None
        if isinstance(stated, Unavailable) and stated.reason is Reason.ERROR:
            driver += f" ({stated.message})"  # a CUDA version no such driver reports
    missing = V.torch_missing(env)
    if missing is None and isinstance(env.torch, TorchFacts) and isinstance(
            env.torch.runtime, Unavailable) and env.torch.runtime.reason in _UNLOOKED:
        # a report that names the release but not its build: neither CPU-only nor a failure
        named = env.torch.stated_version or "version not in the report"
        torch = f"{named} ({_unlooked(env.torch.runtime)})"
    elif missing is None and isinstance(env.torch, TorchFacts):
        tv, tc = V.torch_version(env), V.torch_cuda(env)
        torch = (f"{tv or 'version not in the report'}, built with CUDA {tc}" if tc else
                 f"{tv or 'version not in the report'}, a CUDA build (its CUDA version is not "
                 "in the report)" if V.cuda_build_unstated(env) else
                 f"{tv or 'version not in the report'}, CPU-only build (no CUDA)")
        if isinstance(env.torch.runtime, Unavailable):
            torch += f" — import failed: {env.torch.runtime.message}"
    else:
        torch = _unlooked(missing) if missing is not None else "not available"
    tk = V.toolkit(env)
    if tk is None:
        toolkit = _unlooked(env.toolkits) if isinstance(env.toolkits, Unavailable) and (
            env.toolkits.reason in _UNLOOKED) else "none found"
    else:
        v = tk.version if isinstance(tk.version, str) else "version unknown"
        toolkit = f"{v} at {tk.root} ({tk.found_by})"
    read = (("Read from", "; ".join(env.sources)),) if env.sources else ()  # a pasted report
    return (
        *read,
        ("Driver (max CUDA it runs)", driver),
        ("PyTorch (CUDA it was built with)", torch),
        ("CUDA toolkit (nvcc, for building)", toolkit),
    )
