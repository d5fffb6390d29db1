"""GPU state checks (GD111–GD113): the driver's own recovery action, the NVSwitch fabric
(Fabric Manager), and the processes holding GPU memory.

Like GD105–GD110 they read `GpuFacts.health`, filled by the NVML probe here and by the
`nvidia-smi -q` / `-q -x` readers from a paste. A fact the driver does not report (a driver
before the query, a GPU without NVSwitch: NOT_SUPPORTED) is no evidence; a check with nothing
to judge on any GPU skips and says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import check, skipped
from gpudoctor.checks.health import Problem, _healthy_gpus, _skip_or, _verdict
from gpudoctor.model import (
    Environment,
    Finding,
    GpuFacts,
    GpuHealth,
    GpuProcess,
    Layer,
    Severity,
)

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

GIB = 1 << 30
BUSY_SHARE = 0.5  # other processes holding more than this share of a GPU's memory: WARN


# --------------------------------------------------------------------------- recovery action


def recovery_fix(action: str, index: int) -> str:
    """What to do for one of the driver's recovery actions (nvidia-smi's names)."""
    reset = f"sudo nvidia-smi -r -i {index}"
    fixes = {
        "reset": f"stop the processes on GPU {index}, then reset it: {reset} (or reboot)",
        "reboot": "reboot the node (sudo reboot): the driver cannot recover the GPU without it",
        "system reboot": "reboot the node (sudo reboot): the driver cannot recover the GPU "
                         "without it",
        "drain p2p": f"drain the node: let the jobs using peer-to-peer (NVLink, PCIe P2P) "
                     f"traffic on GPU {index} finish, start no new ones, then reset it: {reset}",
        "drain and reset": f"drain the node: let the jobs on GPU {index} finish, schedule no "
                           f"new ones, then reset it: {reset}",
        "bus reset": "reset the GPU's PCIe bus: reboot the node",
        "recover imex domain": "restart the IMEX domain the GPU belongs to (sudo systemctl "
                               "restart nvidia-imex on its nodes)",
    }
    return fixes.get(action.lower(), f"follow the driver's recovery action '{action}' (its "
                     "Xid 154 line in `sudo dmesg` says more)")


@check("GD111", "gpu-recovery-action", "the driver asks for no recovery action on any GPU",
       Layer.DRIVER, Severity.ERROR, "NVML field GPU_RECOVERY_ACTION / nvidia-smi -q: GPU "
       "Recovery Action", reads={"nvml"})
def check_recovery_action(env: Environment, tables: Tables) -> Finding:
    """Since the 550-series drivers, NVML reports the driver's own verdict on a GPU after a
    fault (`NVML_FI_DEV_GET_GPU_RECOVERY_ACTION`; nvidia-smi -q's "GPU Recovery Action"; Xid 154
    in the kernel log when it changes): None, Reset, Reboot (node), Drain P2P, Drain and Reset.
    Anything but None means the GPU is not fit for work until that action is taken: FAIL, with
    the action as the fix (`sudo nvidia-smi -r -i N` for a reset, a reboot of the node, or
    draining its jobs first). Older drivers do not report it (NOT_SUPPORTED: skipped).

    Sources: https://docs.nvidia.com/deploy/nvml-api/group__nvmlFieldValueEnums.html,
    https://docs.nvidia.com/deploy/xid-errors/index.html
    """
    early = _skip_or(env, "the GPU recovery action")
    if early:
        return early
    gpus = [(g, h.recovery_action) for g, h in _healthy_gpus(env)
            if isinstance(h.recovery_action, str)]
    if not gpus:
        first = _healthy_gpus(env)[0][1].recovery_action
        return skipped("no GPU reports a recovery action (drivers before the 550 series do "
                       f"not): {V.reason_of(first)}")
    evidence = tuple((f"GPU {g.index}", f"recovery action: {a}") for g, a in gpus)
    problems: list[tuple[GpuFacts, Problem]] = [
        (g, (3, f"the driver's recovery action is '{a}': the GPU is not fit for work until "
             "it is done", recovery_fix(a, g.index)))
        for g, a in gpus if a.strip().lower() != "none"]
    return _verdict(problems, f"{len(gpus)} GPU(s): no recovery action pending", evidence)


# --------------------------------------------------------------------------- fabric


@check("GD112", "nvswitch-fabric", "NVSwitch GPUs are registered with the fabric (Fabric "
       "Manager)", Layer.DRIVER, Severity.ERROR, "NVML nvmlDeviceGetGpuFabricInfo / "
       "nvidia-smi -q: Fabric State, Status", reads={"nvml"})
def check_fabric(env: Environment, tables: Tables) -> Finding:
    """On NVSwitch systems (HGX / DGX A100, H100, H200, B200 boards) a GPU can run CUDA only
    after NVIDIA Fabric Manager has registered it with the NVLink fabric: until then every
    CUDA program fails with "system not yet initialized" (cudaErrorSystemNotReady, 802) and
    NCCL cannot use NVLink. NVML reports the GPU's fabric state (Not Started, In Progress,
    Completed) and status: a state other than Completed, or a status other than Success, is
    a FAIL. The usual cause is the `nvidia-fabricmanager` service not running, or a Fabric
    Manager whose version differs from the driver's (it refuses to start; its version must
    equal the driver's exactly).

    A GPU without NVSwitch reports no fabric (state N/A, NOT_SUPPORTED): skipped.

    Registered, the fabric also reports its health (drivers from the 550 series,
    `nvmlDeviceGetGpuFabricInfoV`): a summary "Unhealthy" FAILs; "Limited Capacity", or any
    problem the health mask names (degraded bandwidth, a route unhealthy or recovering, an
    access-timeout recovery, an incorrect configuration, Fabric Manager disconnected) WARNs:
    NCCL still runs, slower or on fewer links. A driver that reports no health is judged on
    the state alone.

    Fix: `sudo systemctl enable --now nvidia-fabricmanager`; install the
    nvidia-fabricmanager package of exactly the driver's version; `journalctl -u
    nvidia-fabricmanager` says why it failed. For a fabric registered but unhealthy: drain
    the node, check the NVLink and NVSwitch health (`nvidia-smi nvlink -s`, `nvidia-smi -q`'s
    Fabric section) and have the NVSwitch tray or the GPU baseboard serviced.

    Sources: https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html,
    https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    early = _skip_or(env, "the NVSwitch fabric state")
    if early:
        return early
    gpus = [(g, h.fabric_state, h.fabric_status, h) for g, h in _healthy_gpus(env)
            if isinstance(h.fabric_state, str)]
    if not gpus:
        return skipped("no GPU reports an NVSwitch fabric state (no NVSwitch here: Fabric "
                       "Manager is not needed; or a driver or report without it)")
    drv = V.driver_version(env)
    fix = ("start Fabric Manager: sudo systemctl enable --now nvidia-fabricmanager (its "
           f"version must equal the driver's{f', {drv}' if drv else ''}: nv-fabricmanager "
           "--version); if it fails, journalctl -u nvidia-fabricmanager says why")
    evidence = tuple((f"GPU {g.index}", f"fabric state {s}, status "
                      f"{st if isinstance(st, str) else 'n/a'}{_health_text(h)}")
                     for g, s, st, h in gpus)
    problems: list[tuple[GpuFacts, Problem]] = []
    for g, state, status, h in gpus:
        if state.strip().lower() != "completed":
            problems.append((g, (3, f"NVSwitch fabric registration is '{state}': CUDA fails "
                                 "on it with 'system not yet initialized' until Fabric Manager "
                                 "completes it", fix)))
        elif isinstance(status, str) and status.strip().lower() not in ("success", "n/a"):
            problems.append((g, (3, f"NVSwitch fabric registration failed: {status}", fix)))
        else:
            problems += [(g, p) for p in _fabric_health_problems(h)]
    return _verdict(problems, f"{len(gpus)} GPU(s) registered with the NVSwitch fabric",
                    evidence)


FABRIC_HEALTH_FIX = ("drain the node, then check its NVLinks and NVSwitches (`nvidia-smi nvlink "
                     "-s`; `nvidia-smi -q`, section Fabric; `journalctl -u "
                     "nvidia-fabricmanager`): a link or switch that stays degraded needs service")


def _health_text(h: GpuHealth) -> str:
    parts = []
    if isinstance(h.fabric_health_summary, str):
        parts.append(f"health {h.fabric_health_summary}")
    if isinstance(h.fabric_health, tuple):
        parts.append(", ".join(h.fabric_health) or "no health problem")
    return f"; {', '.join(parts)}" if parts else ""


def _fabric_health_problems(h: GpuHealth) -> Iterable[Problem]:
    summary = h.fabric_health_summary
    summary = summary.strip().lower() if isinstance(summary, str) else ""
    named = ", ".join(h.fabric_health) if isinstance(h.fabric_health, tuple) else ""
    detail = f" ({named})" if named else ""
    degraded = "the NVSwitch fabric is registered but degraded: {}: NCCL runs slower or over " \
               "fewer links"
    if summary == "unhealthy":
        yield 3, (f"the NVSwitch fabric reports itself unhealthy{detail}: NCCL over NVLink "
                  "fails or hangs on it"), FABRIC_HEALTH_FIX
    elif summary == "limited capacity":
        yield 2, degraded.format(f"limited capacity{detail}"), FABRIC_HEALTH_FIX
    elif named:
        yield 2, degraded.format(named), FABRIC_HEALTH_FIX


# --------------------------------------------------------------------------- processes


def _gib(n: int) -> str:
    return f"{n / GIB:.1f} GiB"


def _describe(p: GpuProcess) -> str:
    used = _gib(p.used_memory) if isinstance(p.used_memory, int) else "memory n/a"
    named = p.name if p.name.startswith("pid ") else f"pid {p.pid} {p.name}"
    return f"{named} ({used})"


def _process_problems(g: GpuFacts, procs: tuple[GpuProcess, ...], free: list[int]
                      ) -> Iterable[Problem]:
    if not procs:
        return
    held = sum(p.used_memory for p in procs if isinstance(p.used_memory, int))
    total = g.memory_total if isinstance(g.memory_total, int) else 0
    who = ", ".join(_describe(p) for p in procs)
    if total and held > BUSY_SHARE * total:
        other = f"; GPU {', '.join(map(str, free))} hold(s) none: CUDA_VISIBLE_DEVICES=" \
                f"{free[0]}" if free else ""
        yield 2, (f"other processes hold {_gib(held)} of its {_gib(total)} "
                  f"({100 * held / total:.0f}%): training may run out of memory ({who})"), (
            f"stop them if they are stale (check with nvidia-smi, then kill the pid){other}")
    else:
        yield 1, f"{len(procs)} process(es) hold {_gib(held)}: {who}", \
            "nothing to do if they are meant to share the GPU"


@check("GD113", "gpu-processes", "no other process holds most of a GPU's memory", Layer.DRIVER,
       Severity.WARNING, "NVML running processes / nvidia-smi -q: Processes", reads={"nvml"})
def check_processes(env: Environment, tables: Tables) -> Finding:
    """Processes already holding memory on a GPU (another job, a stale notebook kernel, a
    zombie from a crashed run, a display server) shrink what a new job can allocate, and it
    fails with "CUDA out of memory" although the model fits the card. NVML lists them with
    the memory each holds (`nvmlDeviceGetComputeRunningProcesses` and `…Graphics…`); their
    names come from /proc/PID/comm where this process can see them, and read "pid N (not
    visible from this namespace)" where it cannot: in a container, NVML reports the host's
    pids.

    They hold more than half of a GPU's memory: WARN, naming them and a free GPU if there is
    one. Fewer: a note listing them. None on any GPU: PASS. A driver that does not list them
    (NOT_SUPPORTED) gives a skip.

    Sources: https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    early = _skip_or(env, "the GPU processes")
    if early:
        return early
    gpus = [(g, h.processes) for g, h in _healthy_gpus(env) if isinstance(h.processes, tuple)]
    if not gpus:
        first = _healthy_gpus(env)[0][1].processes
        return skipped(f"no GPU lists its processes: {V.reason_of(first)}")
    free = [g.index for g, procs in gpus if not procs]
    evidence = tuple((f"GPU {g.index}", ", ".join(_describe(p) for p in procs) or "none")
                     for g, procs in gpus)
    problems = [(g, p) for g, procs in gpus for p in _process_problems(g, procs, free)]
    return _verdict(problems, f"no process holds memory on {len(gpus)} GPU(s)", evidence)


CHECKS = (check_recovery_action, check_fabric, check_processes)
