"""Capture the error texts a real GPU machine prints when it is made to fail, in one run.

    python benchmarks/gpu_error_texts.py OUT.json [--cases a,b]   # on the GPU machine

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

import argparse
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
_NCCL_ONE = """
import torch, torch.distributed as dist
torch.cuda.set_device(0)
dist.init_process_group("nccl")
t = torch.ones(1, device="cuda:0")
dist.all_reduce(t)
torch.cuda.synchronize()
print("all_reduce", t.item())
"""
# a plain CUDA program: the check every CUDA sample wraps a launch in, printing the runtime's own
# name and message for the error
_KERNEL_CU = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void add_one(float* x) { x[threadIdx.x] += 1.0f; }
int main() {
  float* d = nullptr;
  cudaError_t e = cudaMalloc(&d, 64 * sizeof(float));
  if (e == cudaSuccess) { add_one<<<1, 64>>>(d); e = cudaGetLastError(); }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorString(e), cudaGetErrorName(e),
            __FILE__, __LINE__);
    return 1;
  }
  printf("ok\n");
  return 0;
}
"""
_HOLD = ("import pathlib, time, torch; x = torch.empty(125 * 2**30, dtype=torch.uint8, "
         "device='cuda'); pathlib.Path('{dir}/held').touch(); time.sleep(60)")
_ALLOC = "import torch; torch.empty(30 * 2**30, dtype=torch.uint8, device='cuda')"
SCRIPTS = {"nccl_two_ranks_one_gpu.py": _NCCL_TWO_ON_ONE, "nccl_one_rank.py": _NCCL_ONE,
           "add_one.cu": _KERNEL_CU}

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
                                "--nproc_per_node=2", "{dir}/nccl_two_ranks_one_gpu.py"], {}),
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
    "nccl-no-socket-interface": ("NCCL_SOCKET_IFNAME names an interface that does not exist",
                                 [PY, "-m", "torch.distributed.run", "--standalone",
                                  "--nproc_per_node=1", "{dir}/nccl_one_rank.py"],
                                 {"NCCL_SOCKET_IFNAME": "doesnotexist0"}),
    "kernel-image-missing": ("a CUDA program built for sm_80 only (no PTX) run on the sm_90 "
                             "GPU; the wrapper's words are the CUDA samples' check, the message "
                             "the runtime's",
                             ["bash", "-c", "cd {dir} && /usr/local/cuda/bin/nvcc -gencode "
                              "arch=compute_80,code=sm_80 -o add_one add_one.cu && ./add_one"],
                             {}),
    "triton-ptxas-missing": ("TRITON_PTXAS_PATH names a ptxas that does not exist, then "
                             "torch.compile",
                             [PY, "-c", "import torch; f = torch.compile(lambda x: x.sin() + 1); "
                              "print(f(torch.randn(8, device='cuda')).sum().item())"],
                             {"TRITON_PTXAS_PATH": "/nonexistent/bin/ptxas"}),
    "checkpoint-cuda-hidden": ("a checkpoint saved from the GPU, loaded with every GPU hidden",
                               ["bash", "-c", f"{PY} -c \"import torch; torch.save(torch.ones(2, "
                                "device='cuda'), '{dir}/t.pt')\" && CUDA_VISIBLE_DEVICES= "
                                f"{PY} -c \"import torch; torch.load('{{dir}}/t.pt')\""], {}),
    "oom-other-process": ("out of memory: another process holds 125 GiB of the card",
                          ["bash", "-c", f"{PY} -c \"{_HOLD}\" & for i in $(seq 60); do "
                           "[ -e {dir}/held ] && break; sleep 0.5; done; "
                           f"{PY} -c \"{_ALLOC}\"; rc=$?; kill %1; exit $rc"], {}),
    "collect-env-hidden": ("collect_env with every GPU hidden (CUDA_VISIBLE_DEVICES empty)",
                           [PY, "-m", "torch.utils.collect_env"], {"CUDA_VISIBLE_DEVICES": ""}),
}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--cases", help="comma-separated case names (default: every case)")
    args_ = ap.parse_args(argv[1:])
    wanted = args_.cases.split(",") if args_.cases else list(CASES)
    unknown = [c for c in wanted if c not in CASES]
    if unknown:
        ap.error(f"no such case: {', '.join(unknown)}")
    out: Path = args_.out
    found: dict[str, dict[str, object]] = {}
    work = Path(tempfile.mkdtemp())
    for file, body in SCRIPTS.items():
        (work / file).write_text(body, encoding="utf-8")
    for name in wanted:
        cause, template, extra = CASES[name]
        args = [a.replace("{dir}", str(work)) for a in template]
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
        print(f"{name}: rc={code} {found[name]['seconds']} s", flush=True)
        out.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
