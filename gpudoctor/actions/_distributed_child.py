# mypy: ignore-errors
# (runs under the diagnosed interpreter, 3.8+, untyped like the other child scripts)
"""Child-process half of `gpudoctor smoke-test --distributed`: one rank's work.

Run as source (`python -c SOURCE CONFIG_JSON`) under the diagnosed interpreter, by the
gpudoctor process of each rank (torchrun starts those and gives them RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR and MASTER_PORT, which reach this child unchanged). Standard library
and torch only, Python 3.8 syntax. `gpudoctor.actions.distributed` documents what the parent
makes of it; the protocol is the smoke child's: `GPUDOCTOR:` JSON lines, `error` or `result`.

Phases, each marked in the rendezvous store (`gpudoctor/phase/<phase>/<rank>`) as the rank
reaches it, so that rank 0 can name a rank that hangs and say where:
1. device: open the device (cuda:LOCAL_RANK, or cuda:0 where the rank sees one GPU only, as
   under Slurm's per-task GPU binding; or the CPU) and check a small integer-valued matmul
   against the CPU's, exactly;
2. rendezvous (torch's env:// handler: the elastic agent's store under torchrun), with the
   deadline as timeout, and init_process_group (NCCL on GPUs, gloo on the CPU), whose timeout
   (the collectives' too) is twice the deadline: NCCL's watchdog aborts the process when a
   collective outlives it, and that must come after ours, which reports the hang;
3. allreduce: rank r contributes (r + 1) x (i mod 7 + 1) for element i; the sum over ranks
   is n(n + 1)/2 x (i mod 7 + 1), an integer float32 holds exactly, checked on every element;
4. bandwidth: `iterations` timed all-reduces of `bandwidth_bytes`, after two untimed ones:
   algbw = bytes / time, busbw = algbw x 2(n - 1)/n (the nccl-tests convention); with one
   rank an all-reduce moves nothing, so neither is measured (None);
5. each rank puts its result in the store; rank 0 waits for all of them until the deadline
   (counted from the end of the rendezvous) and names every rank without one: a rank behind
   the furthest one hung in the phase it last entered, the ranks level with the furthest
   were waiting for it; when none is behind, the collective itself hangs on every rank.
A watchdog thread ends a rank whose work outlives the deadline (rank 0 at the deadline, the
others at 1.5 times it, so rank 0 reports first): rank 0 reports what it has, another rank
reports its own hang; either way the process exits, so nothing lingers.
"""

import json
import os
import socket
import sys
import threading
import time
import traceback
from datetime import timedelta

PREFIX = "GPUDOCTOR:"
HANG_RANK = "_GD_TEST_HANG_RANK"  # a test hook: this rank sleeps before the all-reduce
HANG_SECONDS = "_GD_TEST_HANG_SECONDS"
LOCK = threading.Lock()
PHASES = ("device", "rendezvous", "init", "allreduce", "bandwidth", "done")
EMITTED = []


def emit(kind, payload):
    with LOCK:
        if kind in ("result", "error") and EMITTED:
            return
        if kind in ("result", "error"):
            EMITTED.append(kind)
        sys.stdout.write(PREFIX + json.dumps({"kind": kind, "data": payload}) + "\n")
        sys.stdout.flush()


def error_text(e):
    lines = str(e).strip().splitlines()
    return type(e).__name__ + ": " + (lines[0] if lines else "")


class Rank:
    def __init__(self, cfg):
        self.cfg = cfg
        self.rank = int(os.environ.get("RANK", "0"))
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.local = int(os.environ.get("LOCAL_RANK", "0"))
        self.master = f"{os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')}"
        self.deadline = float(cfg["deadline"])
        self.started = time.monotonic()
        self.store = None
        self.t0 = self.started
        self.me = {"rank": self.rank, "local_rank": self.local, "host": socket.gethostname(),
                   "device": cfg["device"], "label": "", "state": "ok", "phase": "start"}

    def mark(self, phase):
        self.me["phase"] = phase
        emit("progress", {"done": 0, "total": 0, "label": f"rank {self.rank} {phase}"})
        if self.store is not None:
            self.store.set(f"phase/{phase}/{self.rank}", "1")

    def report(self, ranks, error=None):
        return {"backend": self.cfg["backend"], "world_size": self.world, "master": self.master,
                "elements": self.cfg["elements"], "bandwidth_bytes": self.cfg["bandwidth_bytes"],
                "iterations": self.cfg["iterations"], "deadline": self.deadline,
                "python": sys.executable, "torch": self.cfg.get("torch", ""), "ranks": ranks,
                "seconds": time.monotonic() - self.started, "rank": self.rank, "error": error}




def device_index(local, count):
    """The CUDA device of the rank with LOCAL_RANK `local` that sees `count` devices:
    cuda:LOCAL_RANK, or cuda:0 when it sees exactly one (a launcher that gives each rank its
    own GPU through CUDA_VISIBLE_DEVICES); RuntimeError otherwise."""
    if local < count:
        return local
    if count == 1:
        return 0
    raise RuntimeError(f"LOCAL_RANK {local} but torch sees {count} CUDA device(s)")


def collective_timeout(deadline):
    """init_process_group's timeout: past the watchdogs (1.5 x deadline at most), so that a
    hang is reported as one instead of NCCL aborting the process (a crash, with no report)."""
    return 2.0 * deadline


def open_device(torch, r):
    if r.cfg["device"] == "cpu":
        device = torch.device("cpu")
        r.me["label"] = f"{torch.get_num_threads()} CPU threads"
    else:
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False on this rank")
        index = device_index(r.local, torch.cuda.device_count())
        torch.cuda.set_device(index)
        device = torch.device("cuda", index)
        r.me["label"] = torch.cuda.get_device_name(index)
    r.me["device"] = str(device)
    a = (torch.arange(64 * 64) % 5).float().reshape(64, 64)
    b = (torch.arange(64 * 64) % 3).float().reshape(64, 64)
    got = (a.to(device) @ b.to(device)).cpu()
    r.me["device_ok"] = bool(torch.equal(got, a @ b))
    return device


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def allreduce_check(torch, dist, r, device):
    n = int(r.cfg["elements"])
    base = (torch.arange(n, dtype=torch.int64) % 7 + 1)
    t = (base * (r.rank + 1)).to(torch.float32).to(device)
    dist.all_reduce(t)
    factor = r.world * (r.world + 1) // 2
    expected = (base * factor).to(torch.float32).to(device)
    r.me["mismatches"] = int((t != expected).sum().item())
    r.me["sum"] = int(t.double().sum().item())
    r.me["expected_sum"] = int(base.sum().item()) * factor


def bandwidth(torch, dist, r, device):
    if r.world == 1:  # nothing crosses between ranks: no bandwidth to measure
        r.me["algbw_gbs"] = r.me["busbw_gbs"] = None
        return
    count = int(r.cfg["bandwidth_bytes"]) // 4
    t = torch.ones(count, dtype=torch.float32, device=device)
    for _ in range(2):
        dist.all_reduce(t)
    sync(torch, device)
    iters = int(r.cfg["iterations"])
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(t)
    sync(torch, device)
    seconds = (time.perf_counter() - start) / iters
    algbw = count * 4 / seconds / 1e9
    r.me["algbw_gbs"] = algbw
    r.me["busbw_gbs"] = algbw * 2 * (r.world - 1) / r.world


def reached(r, rank):
    """The last phase a rank marked (PHASES index; -1: none)."""
    last = -1
    for i, phase in enumerate(PHASES):
        if not r.store.check([f"phase/{phase}/{rank}"]):
            break
        last = i
    return last


def gathered(r, why):
    """Every rank's result from the store, and every rank without one named. The culprits are
    the ranks behind the furthest phase any rank reached: without a result they hung there,
    with one they failed there. A rank at the furthest phase while there are culprits was
    waiting for them (its own timeout is their doing); with no culprit, a rank without a
    result hung in a collective that completes nowhere."""
    results, info, idx = {}, {}, {}
    for rank in range(r.world):
        key = f"result/{rank}"
        if rank == r.rank and (r.me["phase"] == "done" or r.me["state"] != "ok"):
            results[rank] = dict(r.me)
        elif rank != r.rank and r.store.check([key]):
            results[rank] = json.loads(r.store.get(key).decode())
        elif rank == r.rank:
            info[rank], idx[rank] = dict(r.me), PHASES.index(r.me["phase"])
        else:
            idx[rank] = reached(r, rank)
            if r.store.check([f"info/{rank}"]):
                info[rank] = json.loads(r.store.get(f"info/{rank}").decode())
    for rank, res in results.items():
        idx[rank] = PHASES.index(res["phase"]) if res.get("phase") in PHASES else 0
    front = max(idx.values())
    culprits = sorted(k for k, v in idx.items() if v < front)
    waiting = "waited in the {} phase for rank(s) " + ", ".join(map(str, culprits))
    ranks = []
    for rank in range(r.world):
        phase = PHASES[idx[rank]] if idx[rank] >= 0 else "start"
        if rank in results:
            res = results[rank]
            if res.get("state") != "ok" and idx[rank] == front and culprits:
                res.update(state="waiting", error=waiting.format(phase))
            ranks.append(res)
            continue
        me = info.get(rank) or {"rank": rank, "local_rank": -1, "host": "?", "device": "?",
                                "label": ""}
        if idx[rank] < front:
            state = "hung"
            error = (f"stuck in the {phase} phase: the other ranks reached "
                     f"{PHASES[front]} and waited {why} for it")
        elif culprits:
            state, error = "waiting", waiting.format(phase)
        else:
            state = "hung"
            error = (f"stuck in the {phase} phase after {why}: every rank reached it, so "
                     "the collective itself does not complete")
        me.update(state=state, phase=phase, error=error)
        ranks.append(me)
    return ranks


def watchdog(r):
    """After the deadline: rank 0 reports what it has; another rank reports its own hang.
    Then the process ends (os._exit: a thread stuck in a collective cannot hold it)."""
    why = f"{r.deadline:g} s"
    if r.rank == 0 and r.store is not None:
        try:
            emit("result", r.report(gathered(r, why)))
        except Exception as e:  # noqa: BLE001 - the store is gone too: say so
            emit("error", {"code": "hung", "message": f"rank 0 timed out in the {r.me['phase']} "
                           f"phase and the rendezvous store did not answer: {error_text(e)}"})
    else:
        emit("error", {"code": "hung", "message": f"rank {r.rank} did not finish the "
                       f"{r.me['phase']} phase within {why}"})
    sys.stdout.flush()
    os._exit(7)


def run(torch, dist, r):
    r.mark("device")
    try:
        device = open_device(torch, r)
    except Exception as e:  # noqa: BLE001 - posted below, so that rank 0 names this rank
        device = None
        r.me.update(state="error", error=f"device phase: {error_text(e)}")
    store, _, _ = next(dist.rendezvous("env://", timeout=timedelta(seconds=r.deadline)))
    r.store = dist.PrefixStore("gpudoctor/", store)
    r.store.set(f"info/{r.rank}", json.dumps(r.me))
    r.store.set(f"phase/device/{r.rank}", "1")
    timer = threading.Timer(r.deadline * (1.0 if r.rank == 0 else 1.5), watchdog, (r,))
    timer.daemon = True
    timer.start()
    r.t0 = time.monotonic()
    if device is not None:
        try:
            collectives(torch, dist, r, device, store)
        except Exception as e:  # noqa: BLE001 - a collective's failure is this rank's finding
            r.me.update(state="error", error=f"{r.me['phase']} phase: {error_text(e)}")
    if r.me["state"] == "ok":
        r.mark("done")
    r.store.set(f"result/{r.rank}", json.dumps(r.me))
    if r.rank != 0:
        emit("result", r.report([r.me]))
    else:
        for rank in range(1, r.world):
            left = r.deadline - (time.monotonic() - r.t0)
            try:
                r.store.wait([f"result/{rank}"], timedelta(seconds=max(left, 0.1)))
            except Exception:  # noqa: BLE001 - torch's timeout error: named below as hung
                break
        emit("result", r.report(gathered(r, f"{r.deadline:g} s")))
    timer.cancel()  # then os._exit: destroying the group could wait on a peer that hangs


def collectives(torch, dist, r, device, store):
    r.mark("rendezvous")
    r.mark("init")
    dist.init_process_group(r.cfg["backend"], store=dist.PrefixStore("pg/", store),
                            rank=r.rank, world_size=r.world,
                            timeout=timedelta(seconds=collective_timeout(r.deadline)))
    if os.environ.get(HANG_RANK) == str(r.rank):
        time.sleep(float(os.environ.get(HANG_SECONDS, "3600")))
    r.mark("allreduce")
    allreduce_check(torch, dist, r, device)
    r.mark("bandwidth")
    bandwidth(torch, dist, r, device)


def main():
    cfg = json.loads(sys.argv[1])
    emit("progress", {"done": 0, "total": 0, "label": "importing torch"})
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:  # noqa: BLE001 - a broken torch raises anything on import
        emit("error", {"code": "import", "message": error_text(e),
                       "detail": traceback.format_exc()[-2000:]})
        return 3
    cfg["torch"] = str(torch.__version__)
    if not dist.is_available():
        emit("error", {"code": "no-distributed", "message": "this torch build has no "
                       "torch.distributed (torch.distributed.is_available() is False)"})
        return 4
    r = Rank(cfg)
    try:
        run(torch, dist, r)
    except Exception as e:  # noqa: BLE001 - the device or the rendezvous: the rank's finding
        r.me.update(state="error", error=f"{r.me['phase']} phase: {error_text(e)}")
        emit("result", r.report([r.me], error=f"rank {r.rank}: {r.me['error']}"))
    return 0


if __name__ == "__main__":  # `python -c`
    try:
        code = main()
    except Exception as exc:  # noqa: BLE001 - a bug here or a torch too old: no traceback
        emit("error", {"code": "internal", "message": error_text(exc),
                       "detail": traceback.format_exc()[-2000:]})
        code = 5
    sys.stdout.flush()
    os._exit(code)  # no wait on threads stuck in a collective
