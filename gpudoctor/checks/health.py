"""GPU health and driver-state checks (GD105–GD110): memory errors, clocks and heat, the PCIe
link, persistence mode, nouveau bound to a GPU, the compute mode.

Each reads `GpuFacts.health`, which the NVML probe fills on this machine and the `nvidia-smi -q`
/ `-q -x` readers fill from a paste, so a pasted dump gets the verdicts the live probe gets. A
counter the GPU does not have (ECC on a GeForce, remapped rows before Ampere: NOT_SUPPORTED) is
no evidence either way; a check with nothing to judge on any GPU skips and says why.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import Evidence, check, failed, noted, passed, skipped, warned
from gpudoctor.model import (
    Environment,
    Finding,
    GpuFacts,
    GpuHealth,
    GpuProcess,
    HostFacts,
    Layer,
    NvmlFacts,
    Severity,
    Unavailable,
)

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

XID_URL = "https://docs.nvidia.com/deploy/xid-errors/index.html"
# a problem found on one GPU: (level, what, fix); level 3 fail, 2 warn, 1 note
Problem = tuple[int, str, str]


def _healthy_gpus(env: Environment) -> list[tuple[GpuFacts, GpuHealth]]:
    return [(g, g.health) for g in V.gpus(env) if isinstance(g.health, GpuHealth)]


def _num(value: object) -> int | float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _verdict(problems: list[tuple[GpuFacts, Problem]], ok: str, evidence: Evidence) -> Finding:
    """The worst problem decides; every one is named with its GPU."""
    if not problems:
        return passed(ok, evidence)
    worst = max(p[1][0] for p in problems)
    ranked = sorted(problems, key=lambda p: -p[1][0])
    by_text: dict[tuple[str, str], list[int]] = {}  # the same problem on several GPUs: once
    for g, p in ranked:
        by_text.setdefault((p[1], g.name), []).append(g.index)
    message = "; ".join(f"GPU {', '.join(map(str, idx))} ({name}): {text}"
                        for (text, name), idx in by_text.items())
    fixes = list(dict.fromkeys(p[2] for _, p in ranked if p[0] == worst))
    make: Callable[[str, str | None, Evidence], Finding] = {
        3: failed, 2: warned, 1: noted}[worst]
    return make(message, "; ".join(fixes), evidence)


def _skip_or(env: Environment, what: str) -> Finding | None:
    if not isinstance(env.nvml, NvmlFacts):
        return skipped(V.reason_of(env.nvml))
    if not V.gpus(env):
        return skipped("the GPUs are not in the report" if V.named_in_words(env) is not None
                       else "no GPU answered NVML (see GD102)")
    if not _healthy_gpus(env):
        first = next(g.health for g in V.gpus(env))
        return skipped(f"{what} unavailable: {getattr(first, 'message', first)}")
    return None


# --------------------------------------------------------------------------- memory


def _memory_problems(h: GpuHealth, index: int) -> Iterable[Problem]:
    reset = (f"stop the processes on it, then reset the GPU: sudo nvidia-smi -r -i {index} "
             "(or reboot)")
    rma = ("take the GPU out of service and run NVIDIA's field diagnostics; contact the "
           "vendor for an RMA")
    if h.remapped_rows_failure is True:
        yield 3, "a row remapping failed: the memory has no spare rows left", rma
    if h.remapped_rows_pending is True:
        yield 3, "a row remap is pending: it takes effect at the next GPU reset", reset
    if h.retired_pages_pending is True:
        yield 3, ("a page retirement is pending: the bad page is used until the driver "
                  "reloads"), reset
    vol = _num(h.ecc_volatile_uncorrectable)
    if vol:
        yield 3, (f"{vol} uncorrectable ECC error(s) since the driver loaded: the processes "
                  "that hit them were killed (Xid 48/63/94/95) and results since may be "
                  "wrong"), (f"run `sudo dmesg | grep -i xid`, then {reset}; if errors come "
                             f"back, {rma}")
    agg = _num(h.ecc_aggregate_uncorrectable)
    if agg and not vol:
        yield 1, f"{agg} uncorrectable ECC error(s) over the GPU's life, none since the " \
                 "driver loaded", "watch for new ones: nvidia-smi -q -d ECC"
    retired = sum(_num(x) or 0 for x in (h.retired_pages_single_bit, h.retired_pages_double_bit))
    if retired:
        yield 1, f"{retired} memory page(s) retired", "nothing to do while the count is stable"
    rows = (_num(h.remapped_rows_uncorrectable) or 0) + (_num(h.remapped_rows_correctable) or 0)
    if rows:
        yield 1, f"{rows} memory row(s) remapped to spares", \
            "nothing to do unless a remap is pending or fails"
    corr = _num(h.ecc_volatile_correctable) or _num(h.ecc_aggregate_correctable)
    if corr:
        yield 1, f"{corr} corrected ECC error(s)", "watch the count: nvidia-smi -q -d ECC"
    if isinstance(h.ecc_mode_pending, str) and isinstance(h.ecc_mode, str) and \
            h.ecc_mode_pending != h.ecc_mode:
        yield 1, f"ECC mode changes from {h.ecc_mode} to {h.ecc_mode_pending} at the next " \
                 "reboot", "reboot to apply it"


@check("GD105", "gpu-memory-errors", "GPU memory has no uncorrectable errors or pending repairs",
       Layer.DRIVER, Severity.ERROR, "NVML health / nvidia-smi -q: ECC, retired pages, remapped "
       "rows", reads={"nvml"})
def check_memory_errors(env: Environment, tables: Tables) -> Finding:
    """A GPU's memory must have no uncorrectable ECC error since the driver loaded, no page
    retirement or row remap waiting to be applied, and no failed remap.

    - Uncorrectable (double-bit) ECC errors kill the process that touched the memory (Xid 48,
      63, 64, 94, 95) and make what was computed since suspect: FAIL. Lifetime ("aggregate")
      counts with none since the driver loaded are history: a note.
    - Before Ampere, a bad page is retired when the driver reloads; "pending" means it is still
      in use: FAIL, fix by resetting the GPU (`sudo nvidia-smi -r -i N`) or rebooting.
    - Ampere and later remap a bad row to a spare at the next GPU reset; "pending" → reset;
      "remapping failure occurred" means no spare was left: field diagnostics and RMA.
    - Corrected errors, retired pages and applied remaps are the GPU doing its job: notes.

    ECC and these counters are datacenter features: on a GeForce they are "N/A"
    (NOT_SUPPORTED), which is no fault. Nothing here needs root.

    Sources: https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html,
    https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html,
    https://docs.nvidia.com/deploy/xid-errors/index.html
    """
    early = _skip_or(env, "the memory-error counters")
    if early:
        return early
    problems = [(g, p) for g, h in _healthy_gpus(env) for p in _memory_problems(h, g.index)]
    evidence = tuple(
        (f"GPU {g.index}", f"ECC {_show(h.ecc_mode)}, uncorrectable volatile "
         f"{_show(h.ecc_volatile_uncorrectable)} / aggregate {_show(h.ecc_aggregate_uncorrectable)}"
         f", remap pending {_show(h.remapped_rows_pending)}, retirement pending "
         f"{_show(h.retired_pages_pending)}") for g, h in _healthy_gpus(env))
    judged = sum(1 for _, h in _healthy_gpus(env) if not isinstance(h.ecc_mode, Unavailable)
                 or not isinstance(h.remapped_rows_pending, Unavailable)
                 or not isinstance(h.retired_pages_pending, Unavailable))
    if not problems and not judged:
        return skipped("no GPU reports ECC or row-remapping state (a GeForce, or a report "
                       "without them): nothing to judge", evidence)
    return _verdict(problems, f"no memory errors or pending repairs on {judged} GPU(s)",
                    evidence)


def _show(value: object) -> str:
    if isinstance(value, Unavailable):
        return "n/a"
    return {True: "yes", False: "no"}.get(value, str(value)) if isinstance(value, bool) \
        else str(value)


# --------------------------------------------------------------------------- clocks and heat

_HW = ("HW Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown")
_NOTE_EVENTS = ("SW Power Cap", "Sync Boost", "Applications Clocks Setting",
                "Display Clock Setting")


def _heat_problems(h: GpuHealth, index: int) -> Iterable[Problem]:
    events = h.clock_events if isinstance(h.clock_events, tuple) else ()
    hw = [e for e in events if e in _HW]
    if hw:
        yield 3, (f"clocks cut by {' + '.join(hw)}: the board signalled overheating or a "
                  "power-supply problem and runs at a fraction of its speed"), (
            "check the cooling (fans, airflow, inlet temperature) and the power cables and "
            "supply; in a server, the BMC's event log (ipmitool sel list) names the cause")
    temp, slow, shut = (_num(h.temperature), _num(h.temperature_slowdown),
                        _num(h.temperature_shutdown))
    if temp is not None and slow is not None and temp >= slow:
        yield 3, f"{temp} °C, at or past its slowdown temperature ({slow} °C" + (
            f"; shutdown at {shut} °C)" if shut else ")"), "improve the cooling now"
    elif temp is not None and slow is not None and temp >= slow - 5:
        yield 2, f"{temp} °C, within 5 °C of its slowdown temperature ({slow} °C)", \
            "improve the cooling (fans, airflow) before it slows down"
    if "SW Thermal Slowdown" in events:
        yield 2, "clocks lowered by the driver to keep the GPU cool (SW Thermal Slowdown)", \
            "improve the cooling (fans, airflow)"
    soft = [e for e in events if e in _NOTE_EVENTS]
    if soft:
        yield 1, (f"clocks held by {', '.join(soft)}" + (" (normal at full load: it runs at "
                  "its power limit)" if "SW Power Cap" in soft else "")), \
            "nothing to do unless it stays there at light load"


def _median(values: list[float]) -> float:
    """`statistics.median` of a non-empty list, without importing statistics (fractions and
    decimal with it: ~5 ms at every start-up, for a rule that needs three busy twins)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _stray(gpus: list[tuple[GpuFacts, GpuHealth]]) -> Iterable[tuple[GpuFacts, Problem]]:
    """A busy GPU drawing far less power than its busy twins (same product) under one load."""
    busy = [(g, h) for g, h in gpus if h.gpu_idle is False and _num(h.power_draw)]
    for name in {g.name for g, _ in busy}:
        mates = [(g, h) for g, h in busy if g.name == name]
        if len(mates) < 3:
            continue
        median = _median([float(h.power_draw) for _, h in mates])  # type: ignore[arg-type]
        for g, h in mates:
            draw = float(h.power_draw)  # type: ignore[arg-type]
            if median > 0 and abs(draw - median) / median > 0.3:
                yield g, (2, f"draws {draw:.0f} W where its {len(mates) - 1} busy twins' median "
                          f"is {median:.0f} W", "if they run the same job, check this GPU's "
                          "clocks (nvidia-smi -q -d PERFORMANCE,CLOCK) and cooling")


@check("GD106", "gpu-clocks-and-heat", "no GPU is slowed by heat or a hardware signal",
       Layer.DRIVER, Severity.ERROR, "NVML health / nvidia-smi -q: clock-event reasons, "
       "temperature, power", reads={"nvml"})
def check_clocks_and_heat(env: Environment, tables: Tables) -> Finding:
    """The clock-event ("throttle") reasons say why a GPU runs below its top clocks.

    - HW Slowdown, HW Thermal Slowdown, HW Power Brake Slowdown: the board (or the server's
      BMC, through the power-brake pin) cut the clocks, typically by half or more, for heat
      or a power-supply fault: FAIL, whatever the load.
    - A temperature at or past the GPU's slowdown threshold: FAIL; within 5 °C of it: WARN.
    - SW Thermal Slowdown: the driver lowers clocks to stay cool: WARN.
    - SW Power Cap, Sync Boost, Applications Clocks Setting, Display Clock Setting: normal
      (SW Power Cap is what a GPU at full load shows): a note. "GPU Idle" is no event.
    - Among three or more busy GPUs of one product, one drawing over 30% more or less power
      than their median: WARN (only meaningful when they run the same job).

    Fix: check cooling, power cabling and the BMC's event log; the finding names the GPU.

    Sources: https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html,
    https://docs.nvidia.com/deploy/nvidia-smi/index.html
    """
    early = _skip_or(env, "the clock-event reasons")
    if early:
        return early
    gpus = _healthy_gpus(env)
    problems = [(g, p) for g, h in gpus for p in _heat_problems(h, g.index)]
    problems += list(_stray(gpus))
    evidence = tuple(
        (f"GPU {g.index}", f"events: {', '.join(h.clock_events) or 'none'}"
         if isinstance(h.clock_events, tuple) else f"events: {_show(h.clock_events)}")
        for g, h in gpus) + tuple(
        (f"GPU {g.index} heat/power", f"{_show(h.temperature)} °C (slowdown "
         f"{_show(h.temperature_slowdown)} °C), {_show(h.power_draw)} W of "
         f"{_show(h.power_limit)} W") for g, h in gpus)
    if all(isinstance(h.clock_events, Unavailable) and _num(h.temperature) is None
           for _, h in gpus):
        return skipped("no GPU reports its clock-event reasons or temperature", evidence)
    return _verdict(problems, f"{len(gpus)} GPU(s): no thermal or hardware slowdown", evidence)


# --------------------------------------------------------------------------- PCIe


def _pcie_problems(h: GpuHealth) -> Iterable[Problem]:
    gen, gmax = _num(h.pcie_gen), _num(h.pcie_gen_max)
    width, wmax = _num(h.pcie_width), _num(h.pcie_width_max)
    reseat = ("reseat the card in a full-width slot (no riser or a x16 one), check the BIOS "
              "slot settings (bifurcation, Gen); laptops and some multi-GPU boards are wired "
              "narrower by design")
    if width and wmax and width < wmax:
        yield 2, f"PCIe link x{width} of x{wmax}: host↔GPU copies run at a fraction of " \
                 "their speed", reseat
    if gen and gmax and gen < gmax:
        if h.gpu_idle is True:
            pass  # links drop to Gen1 at idle to save power: not a fault
        elif h.gpu_idle is False:
            yield 2, f"PCIe Gen{gen} of Gen{gmax} while busy", reseat
        else:
            yield 1, f"PCIe Gen{gen} of Gen{gmax} (idle or not is unknown)", \
                "look again under load: nvidia-smi -q -d PCI while a job runs"
    replays = _num(h.pcie_replays)
    if replays and replays > PCIE_REPLAYS_PER_MINUTE:
        yield 1, f"{replays} PCIe replays since the driver loaded (resent packets; a fast-" \
                 "growing count means a marginal link)", \
            "compare two readings a minute apart: nvidia-smi -q -d PCI"


# DCGM's PCIe health watch warns above 8 replays in a minute ("the maximum recommended by RM",
# DCGM's GpuHardwareLimits.h, DCGM_LIMIT_MAX_PCIREPLAY_RATE). A count since the driver loaded
# that is not above it cannot have breached it in any minute: not worth a note.
PCIE_REPLAYS_PER_MINUTE = 8


@check("GD107", "gpu-pcie-link", "each GPU's PCIe link runs at its full width and speed",
       Layer.DRIVER, Severity.WARNING, "NVML health / nvidia-smi -q: PCIe generation, width, "
       "replays", reads={"nvml"})
def check_pcie_link(env: Environment, tables: Tables) -> Finding:
    """A GPU's PCIe link should run at the highest generation and width that the GPU and its
    slot both support (NVML's "max" is already the lesser of the two).

    Idle links down-train on purpose: a GPU with the "GPU Idle" clock event at Gen1 is saving
    power, and its link returns to full speed under load. So a lower generation is judged only
    when the GPU is busy (WARN), and is a note when that is unknown; to tell the two apart, run
    `nvidia-smi -q -d PCI` while a job runs. Width does not change with load: a narrower link
    (x8 of x16) is a card in a narrow slot, a riser, bifurcation, or a badly seated card: WARN
    (laptops and some multi-GPU boards are wired narrower by design). PCIe replays (packets
    resent after errors) are a note when there are more than 8 in all, the most DCGM's health
    watch allows in one minute: fewer cannot have breached that rate (a healthy H200 showed 3);
    more may have, so compare two readings a minute apart.

    Sources: https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html,
    https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/feature-overview.html,
    https://github.com/NVIDIA/DCGM (dcgmlib/src/GpuHardwareLimits.h)
    """
    early = _skip_or(env, "the PCIe link state")
    if early:
        return early
    gpus = _healthy_gpus(env)
    evidence = tuple((f"GPU {g.index}", f"Gen{_show(h.pcie_gen)} of {_show(h.pcie_gen_max)}, "
                      f"x{_show(h.pcie_width)} of x{_show(h.pcie_width_max)}, replays "
                      f"{_show(h.pcie_replays)}, idle {_show(h.gpu_idle)}") for g, h in gpus)
    if all(_num(h.pcie_gen) is None and _num(h.pcie_width) is None for _, h in gpus):
        return skipped("no GPU reports its PCIe link state", evidence)
    problems = [(g, p) for g, h in gpus for p in _pcie_problems(h)]
    idle = [g.index for g, h in gpus if h.gpu_idle is True and _num(h.pcie_gen)
            and _num(h.pcie_gen_max) and h.pcie_gen < h.pcie_gen_max]  # type: ignore[operator]
    few = [f"GPU {g.index}: {h.pcie_replays}" for g, h in gpus if _num(h.pcie_replays)]
    ok = f"{len(gpus)} GPU(s) at full link width" + (
        f"; GPU {', '.join(map(str, idle))} down-trained at idle (power saving, normal)"
        if idle else "") + (
        f"; PCIe replays since the driver loaded ({', '.join(few)}) within DCGM's "
        f"{PCIE_REPLAYS_PER_MINUTE} per minute" if few else "")
    return _verdict(problems, ok, evidence)


# --------------------------------------------------------------------------- persistence

_DATACENTER = re.compile(
    r"\b(Tesla|[ABHL]\d{2,3}[A-Z]?|[BH]\d{3}|GB\d{3}|GH\d{3}|V100|P100|P40|P4|T4|K80|K40|"
    r"M60|M40|A2|L4|L40S?|RTX PRO \d+ Blackwell Server)\b")


def server_reasons(gpus: Sequence[GpuFacts]) -> list[str]:
    """Why this looks like a server: a datacenter product name, a MIG-capable GPU, or 4+ GPUs."""
    why = [f"{g.name} is a datacenter GPU" for g in gpus if _DATACENTER.search(g.name)][:1]
    why += [f"GPU {g.index} is MIG-capable" for g in gpus if isinstance(g.mig_mode, bool)][:1]
    if len(gpus) >= 4:
        why.append(f"{len(gpus)} GPUs")
    return why


@check("GD108", "persistence-mode", "persistence mode is on (servers)", Layer.DRIVER,
       Severity.WARNING, "NVML: persistence mode, GPU names, MIG", reads={"nvml"})
def check_persistence(env: Environment, tables: Tables) -> Finding:
    """With persistence mode off, the driver tears the GPU state down whenever no process holds
    it and rebuilds it (seconds per GPU) at the next CUDA start or `nvidia-smi`; on servers
    that slows every job start and can reset clocks and ECC state between jobs. NVIDIA
    recommends the persistence daemon on Linux servers.

    The rule: a server is a machine with a datacenter GPU (Tesla, A100, H100, L40, T4, …), a
    MIG-capable GPU, or four GPUs or more; there, persistence off is a WARN. On a workstation
    (a GeForce or RTX desktop, fewer than four GPUs) it is a note: the display keeps the driver
    loaded anyway. Persistence mode does not exist on Windows (NOT_SUPPORTED: skipped).

    Fix: `sudo systemctl enable --now nvidia-persistenced` (or `sudo nvidia-smi -pm 1`, lost at
    reboot).

    Sources: https://docs.nvidia.com/deploy/driver-persistence/index.html
    """
    if not isinstance(env.nvml, NvmlFacts):
        return skipped(V.reason_of(env.nvml))
    gpus = V.gpus(env)
    known = [g for g in gpus if isinstance(g.persistence_mode, bool)]
    if not known:
        return skipped("no GPU reports its persistence mode" + (
            f" ({getattr(gpus[0].persistence_mode, 'message', '')})" if gpus else ""))
    off = [g for g in known if g.persistence_mode is False]
    evidence = tuple((f"GPU {g.index}", f"{g.name}: persistence "
                      f"{'on' if g.persistence_mode else 'off'}") for g in known)
    if not off:
        return passed(f"persistence mode on for {len(known)} GPU(s)", evidence)
    why = server_reasons(gpus)
    message = f"persistence mode is off on GPU {', '.join(str(g.index) for g in off)}"
    fix = "sudo systemctl enable --now nvidia-persistenced (or: sudo nvidia-smi -pm 1)"
    if why:
        return warned(f"{message} on a server ({'; '.join(why)}): every job start re-"
                      "initialises the GPUs", fix, (*evidence, ("server because", "; ".join(why))))
    return noted(f"{message} (a workstation: the driver reloads GPU state when no process "
                 "holds it, a second or so at each start)", fix, evidence)


# --------------------------------------------------------------------------- driver binding

BLACKLIST = ("printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
             "/etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot")


@check("GD109", "nouveau-not-bound", "no NVIDIA GPU is held by the nouveau driver", Layer.DRIVER,
       Severity.ERROR, "PCI bus (/sys/bus/pci/devices/*/driver)", reads={"host"})
def check_nouveau(env: Environment, tables: Tables) -> Finding:
    """Each NVIDIA GPU must be bound to the `nvidia` kernel driver. The open-source `nouveau`
    driver, loaded by default on most distributions, takes the GPU first when the NVIDIA
    driver was installed without blacklisting it (or the initramfs was not rebuilt): CUDA
    cannot use a GPU that nouveau holds, and `modprobe nvidia` fails with "No NVIDIA GPU
    found". A GPU bound to `vfio-pci` is passed through to a virtual machine (a note).

    Fix: blacklist nouveau, rebuild the initramfs and reboot (the fix line has the commands;
    on RHEL-like systems `sudo dracut --force` instead of `update-initramfs -u`).

    Sources: https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html
    """
    if not isinstance(env.host, HostFacts):
        return skipped(V.reason_of(env.host))
    bound = env.host.pci_gpu_drivers
    if not bound and isinstance(env.host.pci_gpus, tuple) and env.host.pci_gpus:
        return skipped(f"which driver holds the NVIDIA GPU ({env.host.pci_gpus[0]}) is not "
                       "recorded (a pasted report without `lspci -k`, or an older snapshot)")
    if not bound:
        return skipped("no NVIDIA GPU on the PCI bus (or the bus cannot be read: WSL, a "
                       "container, a pasted report)")
    ev = tuple((address, driver or "no driver") for address, driver in bound)
    nouveau = [a for a, d in bound if d == "nouveau"]
    if nouveau:
        return failed(f"GPU {', '.join(nouveau)} is bound to nouveau, the open-source driver: "
                      "CUDA cannot use it", BLACKLIST, ev)
    vfio = [a for a, d in bound if d.startswith("vfio")]
    if vfio:
        return noted(f"GPU {', '.join(vfio)} is bound to vfio-pci: passed through to a virtual "
                     "machine, not usable here", "nothing to do if it is meant for a VM", ev)
    drivers = sorted({d or "no driver" for _, d in bound})
    return passed(f"{len(bound)} NVIDIA GPU(s) on the PCI bus, bound to {', '.join(drivers)}",
                  ev)


@check("GD110", "compute-mode", "no GPU is in a compute mode that refuses work", Layer.DRIVER,
       Severity.WARNING, "NVML / nvidia-smi -q: compute mode", reads={"nvml"})
def check_compute_mode(env: Environment, tables: Tables) -> Finding:
    """NVML's compute mode says how many processes may use a GPU. "Prohibited": none; every
    CUDA program fails with "all CUDA-capable devices are busy or unavailable" (FAIL).
    "Exclusive_Process": one process at a time (clusters set it on purpose); a second process
    on that GPU (another job, a torchrun rank mapped to the same GPU, a DataLoader worker
    that touches CUDA) fails with the same error (a note). When NVML lists a compute process
    already on an exclusive GPU, the next one is refused: FAIL, naming the pid that holds it.

    Fix: `sudo nvidia-smi -i <index> -c DEFAULT` (an administrator's setting: ask first on a
    shared cluster).

    Sources: https://docs.nvidia.com/deploy/nvidia-smi/index.html,
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-modes
    """
    if not isinstance(env.nvml, NvmlFacts):
        return skipped(V.reason_of(env.nvml))
    gpus = [g for g in V.gpus(env) if isinstance(g.compute_mode, str)]
    if not gpus:
        return skipped("no GPU reports its compute mode")
    ev = tuple((f"GPU {g.index}", str(g.compute_mode)) for g in gpus)
    prohibited = [str(g.index) for g in gpus if g.compute_mode == "Prohibited"]
    exclusive = [str(g.index) for g in gpus if str(g.compute_mode).startswith("Exclusive")]
    if prohibited:
        return failed(f"GPU {', '.join(prohibited)} is in Prohibited compute mode: no process "
                      "may use it", f"sudo nvidia-smi -i {prohibited[0]} -c DEFAULT", ev)
    held = [(g, ps[0]) for g in gpus if str(g.compute_mode).startswith("Exclusive")
            and (ps := _compute_processes(g))]
    if held:
        g, p = held[0]
        who = p.name if p.name.startswith("pid ") else f"pid {p.pid} ({p.name})"
        return failed("; ".join(f"GPU {h.index} is in {h.compute_mode} compute mode: it "
                                f"accepts one process, and pid {q.pid} holds it" for h, q in held)
                      + ": a new CUDA process there fails with 'all CUDA-capable devices are "
                      "busy or unavailable'",
                      f"use another GPU (CUDA_VISIBLE_DEVICES), wait for {who} to finish, or "
                      f"share it: sudo nvidia-smi -i {g.index} -c DEFAULT", ev)
    if exclusive:
        return noted(f"GPU {', '.join(exclusive)} is in exclusive compute mode: one process at "
                     "a time; a second fails with 'all CUDA-capable devices are busy or "
                     "unavailable'", f"to share it: sudo nvidia-smi -i {exclusive[0]} -c "
                     "DEFAULT", ev)
    return passed(f"{len(gpus)} GPU(s) in Default compute mode", ev)


def _compute_processes(g: GpuFacts) -> list[GpuProcess]:
    """The CUDA processes NVML lists on a GPU (graphics ones do not count against exclusive
    compute mode)."""
    procs = g.health.processes if isinstance(g.health, GpuHealth) else ()
    return [p for p in procs if "C" in p.kind] if isinstance(procs, tuple) else []


CHECKS = (check_memory_errors, check_clocks_and_heat, check_pcie_link, check_persistence,
          check_nouveau, check_compute_mode)
