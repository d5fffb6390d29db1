"""Host and process-environment checks (GD5xx)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.checks import facts as F
from gpudoctor.checks.base import check, failed, passed, skipped, warned
from gpudoctor.model import Environment, Finding, HostFacts, Layer, NvmlFacts, Severity

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

_HIDE_ALL = ("", "-1", "NoDevFiles", "none", "void")


@check("GD501", "cuda-visible-devices", "CUDA_VISIBLE_DEVICES names real GPUs", Layer.HOST,
       Severity.ERROR, "environment, NVML")
def check_visible_devices(env: Environment, tables: Tables) -> Finding:
    """`CUDA_VISIBLE_DEVICES` filters the GPUs a CUDA program sees. Empty or `-1` hides them
    all; an index past the last GPU or an unknown UUID hides that one, and CUDA stops reading
    the list at the first invalid entry, hiding the rest too."""
    if not isinstance(env.host, HostFacts):
        return skipped(F.reason_of(env.host))
    value = env.host.getenv("CUDA_VISIBLE_DEVICES")
    if value is None:
        return passed("CUDA_VISIBLE_DEVICES is not set: every GPU is visible")
    ev = (("CUDA_VISIBLE_DEVICES", repr(value)),)
    if value.strip() in _HIDE_ALL:
        return failed(f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU",
                      "unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use (e.g. 0,1)", ev)
    gpus = F.gpus(env)
    if not isinstance(env.nvml, NvmlFacts):
        return skipped("cannot compare with the GPU list: " + F.reason_of(env.nvml), ev)
    uuids = {g.uuid for g in gpus}
    bad = []
    for item in (x.strip() for x in value.split(",")):
        if item.isdigit():
            if int(item) >= len(env.nvml.gpus):
                bad.append(item)
        elif item.startswith(("GPU-", "MIG-")):
            if not any(u.startswith(item) for u in uuids) and item.startswith("GPU-"):
                bad.append(item)
        else:
            bad.append(item)
    if bad:
        return failed(
            f"CUDA_VISIBLE_DEVICES={value!r} names {', '.join(bad)}, which is not a GPU here "
            f"({len(env.nvml.gpus)} GPU(s): indices 0–{len(env.nvml.gpus) - 1}); CUDA ignores "
            "that entry and every one after it",
            "set CUDA_VISIBLE_DEVICES to existing indices or UUIDs (see `nvidia-smi -L`)", ev)
    return passed(f"CUDA_VISIBLE_DEVICES={value!r}", ev)


@check("GD502", "device-nodes-accessible", "/dev/nvidia* usable by this user", Layer.HOST,
       Severity.ERROR, "/dev/nvidia*, NVML")
def check_dev_nodes(env: Environment, tables: Tables) -> Finding:
    """CUDA talks to the driver through /dev/nvidia0…, /dev/nvidiactl and /dev/nvidia-uvm; the
    user needs read and write access. In a container they exist only when it was started with
    GPU support (`--gpus all`). WSL uses /dev/dxg instead."""
    if not isinstance(env.host, HostFacts):
        return skipped(F.reason_of(env.host))
    nodes = env.host.dev_nodes
    ev = tuple((n.path, ("r" if n.readable else "-") + ("w" if n.writable else "-"))
               for n in nodes)
    if env.host.wsl:
        return passed("WSL: the GPU is reached through /dev/dxg", ev)
    if not nodes:
        if not F.driver_present(env):
            return skipped("no /dev/nvidia* and no driver (see GD101)")
        fix = ("start the container with GPU access: docker run --gpus all … (NVIDIA Container "
               "Toolkit)" if env.host.container else
               "load the driver (sudo modprobe nvidia; nvidia-smi creates the nodes)")
        return failed("no /dev/nvidia* device nodes", fix, ev)
    blocked = [n.path for n in nodes if not (n.readable and n.writable)]
    if blocked:
        return failed(
            f"this user cannot open {', '.join(blocked)}",
            "add yourself to the group owning them (ls -l /dev/nvidia*; usually: sudo usermod "
            "-aG video $USER, then log in again)",
            ev,
        )
    return passed(f"{len(nodes)} device node(s) readable and writable", ev)


@check("GD503", "ld-library-path-valid", "LD_LIBRARY_PATH entries exist", Layer.HOST,
       Severity.WARNING, "environment")
def check_ld_library_path(env: Environment, tables: Tables) -> Finding:
    """Every LD_LIBRARY_PATH entry should be a directory. Stale entries are left over from an
    old CUDA install; they cost a look-up per library and often mean the live ones are stale
    too (an old libcudnn found before torch's own)."""
    if not isinstance(env.host, HostFacts):
        return skipped(F.reason_of(env.host))
    value = env.host.getenv("LD_LIBRARY_PATH")
    if not value:
        return passed("LD_LIBRARY_PATH is not set")
    missing = env.host.ld_library_path_missing
    if missing:
        return warned(
            f"LD_LIBRARY_PATH has {len(missing)} entr{'y' if len(missing) == 1 else 'ies'} that "
            f"do not exist: {', '.join(missing)}",
            "remove them from LD_LIBRARY_PATH (in ~/.bashrc or the job script)",
            (("LD_LIBRARY_PATH", value),),
        )
    return passed(f"{len(value.split(':'))} entries, all present", (("LD_LIBRARY_PATH", value),))


@check("GD504", "shm-size", "shared memory is large enough for data loaders", Layer.HOST,
       Severity.WARNING, "/dev/shm")
def check_shm(env: Environment, tables: Tables) -> Finding:
    """PyTorch's DataLoader workers pass batches through /dev/shm. Docker's default 64 MiB makes
    them die with 'bus error' or 'unable to write to file </torch_…>'."""
    if not isinstance(env.host, HostFacts):
        return skipped(F.reason_of(env.host))
    shm = env.host.shm_bytes
    if not isinstance(shm, int):
        return skipped(F.reason_of(shm))
    ev = (("/dev/shm", f"{shm / 2**20:.0f} MiB"),)
    if shm < 1 << 30:
        fix = ("restart the container with --shm-size=8g (or --ipc=host)"
               if env.host.container else "remount larger: sudo mount -o remount,size=8G /dev/shm")
        return warned(f"/dev/shm is only {shm / 2**20:.0f} MiB; DataLoader workers need more",
                      fix, ev)
    return passed(f"/dev/shm is {shm / 2**30:.1f} GiB", ev)


CHECKS = (check_visible_devices, check_dev_nodes, check_ld_library_path, check_shm)
