"""Capture the error texts a real GPU machine prints when it is made to fail, in one run.

    python benchmarks/gpu_error_texts.py OUT.json        # on the GPU machine, within a lease

Each case runs a short child (its own process group, a deadline, bounded output, through
gpudoctor's one runner) that provokes one known cause on the real machine: every GPU hidden, a
device ordinal that does not exist, memory beyond the card, a device-side assert, two NCCL
ranks on one GPU, nvidia-smi asked for a GPU that is not there. The texts are what torch,
NCCL and nvidia-smi print, unedited, with the cause we provoked as the label: development data
for `explain` that nobody here worded. Writes one JSON document: {case: {"cause", "argv",
"returncode", "text"}}. Exit 0 when every case ran (a case that did not fail is recorded with
its text too: the label then says the machine did not show that cause).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpudoctor import childproc  # noqa: E402 - after the checkout is on sys.path

PY = sys.executable
_NCCL_TWO_ON_ONE = """
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
torch.cuda.set_device(0)
t = torch.ones(1, device="cuda:0")
dist.all_reduce(t)
torch.cuda.synchronize()
print("all_reduce", t.item())
"""

# case name -> (cause label, argv, extra environment)
CASES: dict[str, tuple[str, list[str], dict[str, str]]] = {
    "no-visible-gpu": ("every GPU hidden (CUDA_VISIBLE_DEVICES empty)",
                       [PY, "-c", "import torch; torch.zeros(1).cuda()"],
                       {"CUDA_VISIBLE_DEVICES": ""}),
    "visible-devices-bad-value": ("CUDA_VISIBLE_DEVICES names a GPU that is not there",
                                  [PY, "-c", "import torch; torch.zeros(1, device='cuda')"],
                                  {"CUDA_VISIBLE_DEVICES": "7"}),
    "invalid-ordinal": ("a device ordinal beyond the GPUs present",
                        [PY, "-c", "import torch; torch.zeros(1, device='cuda:5')"], {}),
    "set-device-ordinal": ("torch.cuda.set_device beyond the GPUs present",
                           [PY, "-c", "import torch; torch.cuda.set_device(3)"], {}),
    "oom": ("out of memory: one allocation larger than the card",
            [PY, "-c", "import torch; torch.empty(400 * 2**30, dtype=torch.uint8, device='cuda')"],
            {}),
    "oom-fragmented": ("out of memory after many allocations fill the card",
                       [PY, "-c", "import torch\nxs=[]\nwhile True:\n"
                        "    xs.append(torch.empty(2**33, dtype=torch.uint8, device='cuda'))"], {}),
    "device-assert": ("a device-side assert (an index out of range in a kernel): a program bug",
                      [PY, "-c", "import torch; x=torch.zeros(4, device='cuda'); "
                       "i=torch.tensor([9], device='cuda'); print(x[i].sum().item())"], {}),
    "device-assert-blocking": ("a device-side assert with CUDA_LAUNCH_BLOCKING=1: a program bug",
                               [PY, "-c", "import torch; x=torch.zeros(4, device='cuda'); "
                                "i=torch.tensor([9], device='cuda'); print(x[i].sum().item())"],
                               {"CUDA_LAUNCH_BLOCKING": "1"}),
    "embedding-index": ("nn.Embedding given an index beyond its size: a program bug",
                        [PY, "-c", "import torch; e=torch.nn.Embedding(10, 4).cuda(); "
                         "print(e(torch.tensor([12], device='cuda')).sum().item())"], {}),
    "cross-entropy-label": ("cross_entropy with a label beyond the classes: a program bug",
                            [PY, "-c", "import torch, torch.nn.functional as F; "
                             "x=torch.randn(2, 3, device='cuda'); t=torch.tensor([0, 5], "
                             "device='cuda'); print(F.cross_entropy(x, t).item())"], {}),
    "nccl-two-ranks-one-gpu": ("two NCCL ranks on one GPU",
                               [PY, "-m", "torch.distributed.run", "--standalone",
                                "--nproc_per_node=2", "{script}"], {}),
    "nvidia-smi-missing-gpu": ("nvidia-smi asked for a GPU index that is not there",
                               ["nvidia-smi", "-i", "7"], {}),
    "mixed-devices": ("tensors on cuda and cpu in one operation: a program bug",
                      [PY, "-c", "import torch; print((torch.zeros(2, device='cuda') + "
                       "torch.zeros(3)).sum())"], {}),
    "cudnn-disabled-conv": ("a convolution in float64 with cuDNN off: no error expected",
                            [PY, "-c", "import torch; torch.backends.cudnn.enabled=False; "
                             "c=torch.nn.Conv2d(1,1,3).cuda().double(); "
                             "print(c(torch.randn(1,1,8,8,device='cuda',dtype=torch.float64))"
                             ".sum().item())"], {}),
    "collect-env-hidden": ("collect_env with every GPU hidden (CUDA_VISIBLE_DEVICES empty)",
                           [PY, "-m", "torch.utils.collect_env"], {"CUDA_VISIBLE_DEVICES": ""}),
}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out = Path(argv[1])
    found: dict[str, dict[str, object]] = {}
    script = Path(tempfile.mkdtemp()) / "nccl_two_ranks_one_gpu.py"
    script.write_text(_NCCL_TWO_ON_ONE, encoding="utf-8")
    for name, (cause, template, extra) in CASES.items():
        args = [str(script) if a == "{script}" else a for a in template]
        env = dict(os.environ, **extra)
        env.setdefault("PYTHONUNBUFFERED", "1")
        started = time.monotonic()
        try:
            res = childproc.run(args, timeout=90, env=env)
            code, text = res.returncode, (res.stdout or "") + (res.stderr or "")
        except childproc.ChildTimeout:
            code, text = -9, "(no end within 90 s)"
        except OSError as exc:
            code, text = 127, f"(not started: {exc.strerror})"
        found[name] = {"cause": cause, "argv": args[1:] if args[0] == PY else args,
                       "env": extra, "returncode": code,
                       "seconds": round(time.monotonic() - started, 1), "text": text}
        print(f"{name}: rc={res.returncode} {found[name]['seconds']} s", flush=True)
        out.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
