"""Host and process-environment checks (GD5xx)."""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import check, failed, passed, skipped, warned
from gpudoctor.linux import hides_every_gpu
from gpudoctor.model import (
    Environment,
    Finding,
    HostFacts,
    Layer,
    NvmlFacts,
    Reason,
    Severity,
    Unavailable,
)

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

@check("GD501", "cuda-visible-devices", "CUDA_VISIBLE_DEVICES names real GPUs", Layer.HOST,
       Severity.ERROR, "environment, NVML", reads={"host", "nvml"})
def check_visible_devices(env: Environment, tables: Tables) -> Finding:
    """`CUDA_VISIBLE_DEVICES` filters the GPUs a CUDA program sees. Empty or `-1` hides them
    all; an index past the last GPU or an unknown UUID hides that one, and CUDA stops reading
    the list at the first invalid entry, hiding the rest too.

    Fix: unset CUDA_VISIBLE_DEVICES, or list indices or UUIDs that exist (`nvidia-smi -L`).

    Sources: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars
    """
    if not isinstance(env.host, HostFacts):
        return skipped(V.reason_of(env.host))
    value = env.host.getenv("CUDA_VISIBLE_DEVICES")
    if isinstance(value, Unavailable):
        return skipped(value.message)
    if value is None:
        return passed("CUDA_VISIBLE_DEVICES is not set: every GPU is visible")
    ev = (("CUDA_VISIBLE_DEVICES", repr(value)),)
    if hides_every_gpu(value):
        return failed(f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU",
                      "unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use (e.g. 0,1)", ev)
    gpus = V.gpus(env)
    if not isinstance(env.nvml, NvmlFacts):
        return skipped("cannot compare with the GPU list: " + V.reason_of(env.nvml), ev)
    uuids = {g.uuid for g in gpus if isinstance(g.uuid, str)}
    bad = []
    for item in (x.strip() for x in value.split(",")):
        if item.isascii() and item.isdigit():  # "²" is a digit to isdigit, not to int()
            if len(item) > 9 or int(item) >= len(env.nvml.gpus):
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


DEV_NODES_FIX = ("add yourself to the group owning them (ls -l /dev/nvidia*; usually: sudo "
                 "usermod -aG video $USER, then log in again)")


@check("GD502", "device-nodes-accessible", "/dev/nvidia* usable by this user", Layer.HOST,
       Severity.ERROR, "/dev/nvidia*, NVML", reads={"host", "nvml", "libcuda"})
def check_dev_nodes(env: Environment, tables: Tables) -> Finding:
    """CUDA talks to the driver through /dev/nvidia0…, /dev/nvidiactl and /dev/nvidia-uvm; the
    user needs read and write access. In a container they exist only when it was started with
    GPU support (`--gpus all`). WSL uses /dev/dxg instead.

    Fix: add the user to the group that owns /dev/nvidia* (often `video`), or start the container
    with `--gpus all` (NVIDIA Container Toolkit).

    NVML's "Insufficient Permissions" (NVML_ERROR_NO_PERMISSION when it starts: this user
    cannot open /dev/nvidiactl or a GPU's node) is this failure too, also where a pasted report
    states nothing else of the host (GD101 then names this check instead of failing as well).

    Sources: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/index.html,
    https://docs.nvidia.com/deploy/nvml-api/group__nvmlReturn.html
    """
    denied = env.nvml if isinstance(env.nvml, Unavailable) and (
        env.nvml.reason is Reason.PERMISSION_DENIED) else None
    nodes = env.host.dev_nodes if isinstance(env.host, HostFacts) else env.host
    if isinstance(nodes, Unavailable):  # a pasted report: the nodes are not listed
        if denied:
            return failed("NVML says this user has no permission to use the driver: it cannot "
                          "open the /dev/nvidia* device nodes", DEV_NODES_FIX,
                          (("NVML", denied.message),))
        return skipped(nodes.message)
    assert isinstance(env.host, HostFacts)
    ev = tuple((n.path, ("r" if n.readable else "-") + ("w" if n.writable else "-"))
               for n in nodes)
    if env.host.wsl is True:
        return passed("WSL: the GPU is reached through /dev/dxg", ev)
    if not nodes:
        if not V.driver_present(env):
            return skipped("no /dev/nvidia* and no driver (see GD101)")
        fix = ("start the container with GPU access: docker run --gpus all … (NVIDIA Container "
               "Toolkit)" if isinstance(env.host.container, str) else
               "load the driver (sudo modprobe nvidia; nvidia-smi creates the nodes)")
        return failed("no /dev/nvidia* device nodes", fix, ev)
    blocked = [n.path for n in nodes if not (n.readable and n.writable)]
    if blocked:
        return failed(f"this user cannot open {', '.join(blocked)}", DEV_NODES_FIX, ev)
    if denied:
        return failed("NVML says this user has no permission to use the driver, though the "
                      f"{len(nodes)} device node(s) are readable and writable",
                      DEV_NODES_FIX, (*ev, ("NVML", denied.message)))
    return passed(f"{len(nodes)} device node(s) readable and writable", ev)


@check("GD503", "ld-library-path-valid", "LD_LIBRARY_PATH entries exist", Layer.HOST,
       Severity.WARNING, "environment", reads={"host"})
def check_ld_library_path(env: Environment, tables: Tables) -> Finding:
    """Every LD_LIBRARY_PATH entry should be a directory. Stale entries are left over from an
    old CUDA install; they cost a look-up per library and often mean the live ones are stale
    too (an old libcudnn found before torch's own). An empty entry (`::`, or a leading or
    trailing `:`, as `export LD_LIBRARY_PATH=/x:$LD_LIBRARY_PATH` leaves when it was unset)
    means the current directory to the loader: every program then loads libraries from
    wherever it is started. The fix is the cleaned value."""
    if not isinstance(env.host, HostFacts):
        return skipped(V.reason_of(env.host))
    value = env.host.getenv("LD_LIBRARY_PATH")
    missing = env.host.ld_library_path_missing
    if isinstance(value, Unavailable):
        return skipped(value.message)
    if isinstance(missing, Unavailable):
        return skipped(missing.message)
    if value is None:
        return passed("LD_LIBRARY_PATH is not set")
    if value == "":
        return passed("LD_LIBRARY_PATH is set but empty (the loader ignores it)")
    entries = re.split(r"[:;]", value)  # the loader splits on both
    where = [w for w, empty in (("a leading ':'", entries[0] == ""),
                                ("'::'", "" in entries[1:-1]),
                                ("a trailing ':'", len(entries) > 1 and entries[-1] == ""))
             if empty]
    ev = (("LD_LIBRARY_PATH", value),)
    if not missing and not where:
        return passed(f"{len(entries)} entries, all present", ev)
    problems = []
    if where:
        problems.append(f"empty entries ({', '.join(where)}), which the loader reads as the "
                        "current directory: libraries are loaded from wherever a program is "
                        "started")
    if missing:
        problems.append(f"{len(missing)} entr{'y' if len(missing) == 1 else 'ies'} that do "
                        f"not exist: {', '.join(missing)}")
    kept = [e for e in entries if e and e not in missing]
    fix = (f"export LD_LIBRARY_PATH={shlex.quote(':'.join(kept))}" if kept
           else "unset LD_LIBRARY_PATH")
    fix += " (and where it is set, in ~/.bashrc or the job script"
    fix += (", append with ${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} so an unset value adds no "
            "empty entry)" if where else ", remove them)")
    return warned("LD_LIBRARY_PATH has " + "; and ".join(problems), fix, ev)


@check("GD504", "shm-size", "shared memory is large enough for data loaders", Layer.HOST,
       Severity.WARNING, "/dev/shm", reads={"host"})
def check_shm(env: Environment, tables: Tables) -> Finding:
    """PyTorch's DataLoader workers pass batches through /dev/shm. Docker's default 64 MiB makes
    them die with 'bus error' or 'unable to write to file </torch_…>'.

    Fix: start the container with `--shm-size=8g` (or `--ipc=host`), or use fewer DataLoader
    workers.

    Sources: https://pytorch.org/docs/stable/data.html#multi-process-data-loading
    """
    if not isinstance(env.host, HostFacts):
        return skipped(V.reason_of(env.host))
    shm = env.host.shm_bytes
    if not isinstance(shm, int):
        return skipped(V.reason_of(shm))
    ev = (("/dev/shm", f"{shm / 2**20:.0f} MiB"),)
    if shm < 1 << 30:
        fix = ("restart the container with --shm-size=8g (or --ipc=host)"
               if isinstance(env.host.container, str)
               else "remount larger: sudo mount -o remount,size=8G /dev/shm")
        return warned(f"/dev/shm is only {shm / 2**20:.0f} MiB; DataLoader workers need more",
                      fix, ev)
    return passed(f"/dev/shm is {shm / 2**30:.1f} GiB", ev)


CHECKS = (check_visible_devices, check_dev_nodes, check_ld_library_path, check_shm)
