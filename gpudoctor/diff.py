"""`gpudoctor diff`: what differs between two environments, layer by layer, and which verdicts
that changes ("works on my machine, fails on yours").

Pure: `diff_environments(a, b, tables)` reads two `Environment`s (from snapshots, JSON reports
or pasted reports), lists the facts each layer states, runs the same checks over both, and
returns a `Diff`. Nothing here reads files or prints.

A fact is compared as the text a reader sees: a version, a GPU line, an environment variable's
value. A fact one side lacks is "(none)"; one that could not be gathered is
"unavailable (<reason>)", so a report that does not state the driver differs from a machine
with no driver, but two snapshots that both lack it for the same reason do not.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.model import (
    CudnnFacts,
    Environment,
    GpuFacts,
    HostFacts,
    Layer,
    NvmlFacts,
    Report,
    Status,
    ToolkitsFacts,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.probes.host import ENV_VARS
from gpudoctor.versions import format_cudnn_version, sm_of

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

NONE = "(none)"


@dataclass(frozen=True, slots=True)
class FactChange:
    """One fact that differs: its layer, its name, and its value on each side."""

    layer: Layer
    name: str
    a: str
    b: str


@dataclass(frozen=True, slots=True)
class VerdictChange:
    """A check whose status differs between the two sides, with each side's message."""

    check_id: str
    slug: str
    title: str
    layer: Layer
    a: Status
    b: Status
    a_message: str
    b_message: str


@dataclass(frozen=True, slots=True)
class Diff:
    """Every fact that differs (in layer order) and every verdict that changes."""

    facts: tuple[FactChange, ...]
    verdicts: tuple[VerdictChange, ...]
    compared: int  # how many facts were compared
    a_report: Report
    b_report: Report

    @property
    def verdict_changed(self) -> bool:
        """Whether a difference changes a verdict (the command's exit 1)."""
        return bool(self.verdicts)


def diff_environments(a: Environment, b: Environment, tables: Tables) -> Diff:
    """Compare the facts of `a` and `b` layer by layer and run every check over both."""
    from gpudoctor.checks import REGISTRY, run_checks

    fa, fb = dict(_keyed(a)), dict(_keyed(b))
    keys = list(dict.fromkeys([*fa, *fb]))
    keys.sort(key=lambda k: list(Layer).index(k[0]))  # stable: each side's order within a layer
    changes = tuple(FactChange(layer, name, fa.get((layer, name), NONE),
                               fb.get((layer, name), NONE))
                    for layer, name in keys
                    if fa.get((layer, name), NONE) != fb.get((layer, name), NONE))
    ra, rb = run_checks(a, tables, REGISTRY), run_checks(b, tables, REGISTRY)
    verdicts = tuple(
        VerdictChange(x.check_id, x.slug, x.title, x.layer, x.finding.status, y.finding.status,
                      x.finding.message, y.finding.message)
        for x, y in zip(ra.results, rb.results, strict=True)
        if x.finding.status is not y.finding.status)
    return Diff(changes, verdicts, len(keys), ra, rb)


def _keyed(env: Environment) -> Iterator[tuple[tuple[Layer, str], str]]:
    for layer, name, value in stack_facts(env):
        yield (layer, name), value


def shown(value: object) -> str:
    """A fact as text: an Unavailable by its reason, None as "(none)", a bool as yes/no."""
    if isinstance(value, Unavailable):
        return f"unavailable ({value.reason})"
    if value is None or value == "" or value == ():
        return NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return " ".join(map(str, value))
    return str(value)


def _gib(n: int | Unavailable) -> str:
    return shown(n) if isinstance(n, Unavailable) else f"{n / 2**30:.1f} GiB"


def stack_facts(env: Environment) -> Iterator[tuple[Layer, str, str]]:
    """Every fact `diff` compares, as (layer, name, text), in layer order."""
    yield from _driver(env)
    yield from _cuda(env)
    yield from _cudnn(env)
    yield from _torch(env)
    yield from _host(env)


def _driver(env: Environment) -> Iterator[tuple[Layer, str, str]]:
    d = Layer.DRIVER
    version = V.driver_version(env)
    yield d, "driver version", version if version else shown(env.nvml)
    reported = V.reported_driver_cuda(env)
    yield d, "driver's max CUDA", reported[0] if reported else NONE
    if not isinstance(env.nvml, NvmlFacts):
        return
    yield d, "GPUs", str(len(env.nvml.gpus))
    for i, g in enumerate(env.nvml.gpus):
        if not isinstance(g, GpuFacts):
            yield d, f"GPU {i}", shown(g)
            continue
        cc = g.compute_capability
        arch = sm_of(cc) if isinstance(cc, str) else shown(cc)
        yield d, f"GPU {g.index}", f"{g.name}, {arch}, {_gib(g.memory_total)}"
        yield d, f"GPU {g.index} MIG mode", shown(g.mig_mode)


def _cuda(env: Environment) -> Iterator[tuple[Layer, str, str]]:
    c = Layer.CUDA
    if V.torch_facts(env) is not None:
        yield c, "torch's CUDA", V.torch_cuda(env) or "none (CPU-only build)"
    tk = V.toolkit(env)
    if isinstance(env.toolkits, ToolkitsFacts):
        yield c, "toolkit in use", (f"{shown(tk.version)} at {tk.root}" if tk else NONE)
        yield c, "toolkits found", ", ".join(f"{shown(k.version)} at {k.root}"
                                             for k in env.toolkits.toolkits) or NONE
    else:
        yield c, "toolkit in use", shown(env.toolkits)


def _cudnn(env: Environment) -> Iterator[tuple[Layer, str, str]]:
    n = Layer.CUDNN
    rt = V.torch_runtime(env)
    if rt is not None:
        v = rt.cudnn_version
        yield n, "torch's cuDNN", shown(v) if not isinstance(v, int) else (
            format_cudnn_version(v))
    if not isinstance(env.cudnn, CudnnFacts):
        yield n, "cuDNN installs", shown(env.cudnn)
        return
    for inst in env.cudnn.installs:
        version = inst.library_version if isinstance(inst.library_version, str) else (
            inst.header_version)
        yield n, f"cuDNN at {inst.lib_dir}", f"{shown(version)} ({inst.origin})"


def _torch(env: Environment) -> Iterator[tuple[Layer, str, str]]:
    p = Layer.PYTORCH
    t, missing = env.torch, V.torch_missing(env)  # a missing torch reads alike in both shapes
    if missing is not None or not isinstance(t, TorchFacts):
        yield p, "torch", shown(missing)
        return
    yield p, "torch version", V.torch_version(env) or shown(t.runtime)
    yield p, "torch's Python", shown(t.python)
    st = t.static
    if isinstance(st, TorchStatic):
        yield p, "torch installed at", st.location
        for name, version in st.nvidia_wheels:
            yield p, f"wheel {name}", version
        for name, version in st.companions:
            yield p, name, version
    rt = t.runtime
    if not isinstance(rt, TorchRuntime):
        yield p, "import torch", shown(rt)
        return
    yield p, "build", (f"CUDA {rt.cuda}" if rt.cuda else f"ROCm {rt.hip}" if rt.hip
                       else "CPU-only")
    yield p, "arch list", shown(rt.arch_list)
    yield p, "CUDA available", shown(rt.cuda_available)
    yield p, "devices torch sees", shown(rt.device_count)


def _host(env: Environment) -> Iterator[tuple[Layer, str, str]]:
    e = Layer.HOST
    h = env.host
    if not isinstance(h, HostFacts):
        yield e, "host", shown(h)
        return
    yield e, "host name", shown(h.hostname)
    yield e, "OS", shown(h.os_name)
    yield e, "kernel", shown(h.kernel)
    yield e, "machine", shown(h.machine)
    yield e, "glibc", shown(h.glibc)
    yield e, "Python", shown(h.python_version)
    yield e, "container", shown(h.container) if h.container else "none (bare metal)"
    yield e, "WSL", shown(h.wsl)
    yield e, "/dev/shm", _gib(h.shm_bytes)
    yield e, "NVIDIA kernel module", shown(h.nvidia_module)
    yield e, "device nodes", shown(h.dev_nodes) if isinstance(h.dev_nodes, Unavailable) else (
        " ".join(f"{n.path}{'' if n.readable and n.writable else ' (no access)'}"
                 for n in h.dev_nodes) or NONE)
    if isinstance(h.env, Unavailable):
        yield e, "environment", shown(h.env)
        return
    recorded = dict(h.env)
    for name in (*ENV_VARS, *sorted(set(recorded) - set(ENV_VARS))):
        yield e, name, recorded.get(name, "(not set)")
