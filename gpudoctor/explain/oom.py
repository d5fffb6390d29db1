"""PyTorch's out-of-memory message, read by its numbers: what was asked, what the GPU has, what
this process holds, and how much of that is reserved but unallocated.

The cause follows the numbers, and the fix follows the cause:
- the one allocation is larger than the whole GPU: the model or batch cannot fit;
- *fragmentation* only when the memory PyTorch reserved but did not allocate could hold the
  request (at least the request, and at least `FRAGMENT_MIN`): the caching allocator has the
  space but not in one piece, and `expandable_segments` is the fix;
- *other processes* when what the GPU lacks is held outside this process (total − free −
  this process ≥ `OTHERS_MIN` and a tenth of the GPU);
- the request is not above the free memory: the free memory is not in one piece (or was
  taken meanwhile);
- otherwise *capacity*: this process itself fills the GPU.
Without the numbers it is named as out of memory, no more.
"""

from __future__ import annotations

import re

from gpudoctor.explain.decode import Decoded, parse_size
from gpudoctor.explain.found import Match, derived, found, hits

FRAGMENT_MIN = 64 * 2**20
OTHERS_MIN = 2**30
_S = r"[\d.]+ ?(?:[KMGT]?i?B|bytes?)"
_NEW = re.compile(
    rf"Tried to allocate (?P<req>{_S})\.? GPU (?P<gpu>\d+) has a total capac\w{{1,3}} of "
    rf"(?P<total>{_S}) of which (?P<free>{_S}) is free\.[^\n]{{0,1500}}?this process has "
    rf"(?P<proc>{_S}) memory in use\. Of the allocated memory (?P<alloc>{_S}) is allocated by "
    rf"PyTorch, and (?P<unalloc>{_S}) is reserved by PyTorch but unallocated")
_OLD = re.compile(
    rf"Tried to allocate (?P<req>{_S}) \(GPU (?P<gpu>\d+); (?P<total>{_S}) total capacity; "
    rf"(?P<alloc>{_S}) already allocated; (?P<free>{_S}) free;(?: (?:{_S}) allowed;)? "
    rf"(?P<reserved>{_S}) (?:reserved in total by PyTorch|cached)")
# the caching allocator's message where a memory fraction is set
# (torch.cuda.set_per_process_memory_fraction): "Allocation on device 0 would exceed allowed
# memory. (out of memory)", then its numbers, one per line ("\n" as two characters where a
# program prints the message's repr, as Rust's Debug does): "Currently allocated" is what the
# allocator holds, "Device limit" the GPU's memory, "Free (according to CUDA)" the GPU's free
_FRACTION = re.compile(
    rf"Allocation on device (?P<gpu>\d+) would exceed allowed memory\. \(out of memory\)"
    rf"(?:\\n|\s){{1,8}}Currently allocated[ \t]{{0,30}}: (?P<held>{_S})"
    rf"(?:\\n|\s){{1,8}}Requested[ \t]{{0,30}}: (?P<req>{_S})"
    rf"(?:\\n|\s){{1,8}}Device limit[ \t]{{0,30}}: (?P<total>{_S})"
    rf"(?:\\n|\s){{1,8}}Free \(according to CUDA\)[ \t]{{0,30}}: (?P<free>{_S})")
_BARE = re.compile(r"CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError", re.I)
_SOURCE = ("https://pytorch.org/docs/stable/notes/cuda.html#memory-management",)
# cudaErrorMemoryAllocation: "The API call failed because it was unable to allocate enough
# memory or other resources to perform the requested operation."
# "… ran out of memory when allocating 0.": an allocation of nothing that failed
_ZERO = re.compile(r"[^\n]{0,30}?\ballocat\w{0,5} 0(?: bytes?)?\b(?![.,]\d)")
_RUNTIME_SOURCE = ("https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",)
# the same condition in any program's own words: AMReX's "Out of gpu memory. Free: 2293760
# Asked: 8388608", "GPU out of memory", "not enough GPU memory", "insufficient device memory",
# "failed to allocate 2.00 GiB on the GPU", ethminer's "CUDA error in func … out of memory"
_WORDS = re.compile(
    r"\bout of (?:gpu|device|video|vram|cuda) memory\b"
    r"|\b(?:gpu|device|video|vram)(?: memory)? (?:is |ran |has run )?out of memory\b"
    r"|\b(?:not enough|insufficient) (?:free )?(?:gpu|device|video|vram|cuda) memory\b"
    r"|\bfailed to allocate [\d.,]{1,20} ?(?:[KMGT]i?B|bytes)[^\n]{0,20}? (?:on|of) (?:the )?"
    r"(?:gpu|device)\b"
    # a miner's "CUDA error in func 'ethash_cuda_miner::init' at line 243 : out of memory."
    r"|\bCUDA error in func\b[^\n]{0,200}?\bout of memory\b", re.I)
# CuPy's memory pool (and Chainer's, which is CuPy's): "Out of memory allocating 1,073,741,824
# bytes (allocated so far: 9,663,676,416 bytes)." since v5, "out of memory to allocate N bytes
# (total M bytes)" before
_CUPY = re.compile(r"(?:Out of memory allocating (?P<req>[\d,]{1,26}) bytes \(allocated so far: "
                   r"(?P<held>[\d,]{1,26}) bytes|out of memory to allocate (?P<req0>\d{1,20}) "
                   r"bytes \(total (?P<held0>\d{1,20}) bytes\))")
_CUPY_SOURCE = ("https://github.com/cupy/cupy/blob/v13.3.0/cupy/cuda/memory.pyx",)


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.2f} MiB"


def oom_matches(text: str, lowered: str) -> list[Match]:
    """The out-of-memory diagnosis of the text (at most one: the first message)."""
    if "out of memory" not in lowered and "outofmemory" not in lowered and not (
            "memory" in lowered and _WORDS.search(text)):
        return []
    for pattern in (_NEW, _OLD, _FRACTION):
        for m in hits(pattern, text):
            return [_judge(m)]
    for m in hits(_CUPY, text):
        req = int((m["req"] or m["req0"]).replace(",", ""))
        held = int((m["held"] or m["held0"]).replace(",", ""))
        sig = derived("cupy-out-of-memory", "CuPy: out of GPU memory", "memory", "out-of-memory",
                      f"CuPy's memory pool could not get {_gib(req)} more from the GPU; it "
                      f"already holds {_gib(held)} for this process. The arrays (the batch) do "
                      "not fit in what the GPU has free.",
                      "reduce the batch or array sizes, free the pool's cached blocks "
                      "(cupy.get_default_memory_pool().free_all_blocks()) or cap it, and stop "
                      "other processes on the GPU (nvidia-smi)", _CUPY_SOURCE, priority=1,
                      confirm=("GD113",))
        return [found(sig, m)]
    for m in hits(_BARE, text):
        sig = derived("cuda-out-of-memory", "CUDA out of memory", "memory", "out-of-memory",
                      "The GPU had no free memory for an allocation (what this process holds, "
                      "what other processes hold, and fragmentation are not in the text).",
                      "reduce the batch size or sequence length, use mixed precision or "
                      "gradient checkpointing, and free other processes' memory (nvidia-smi)",
                      _SOURCE, confirm=())
        return [found(sig, m)]
    for m in hits(_WORDS, text):
        if _ZERO.match(text, m.end()):  # a request of zero bytes is no shortage: a bug
            continue
        sig = derived("gpu-out-of-memory", "out of GPU memory", "memory", "out-of-memory",
                      "The program could not get the GPU memory it asked for: what it holds "
                      "and what other processes hold are not in the text.",
                      "reduce the problem or batch size (or spread it over more GPUs), and "
                      "stop other processes on the GPU (nvidia-smi shows them)", _RUNTIME_SOURCE,
                      confirm=())
        return [found(sig, m)]
    return []


def _judge(m: re.Match[str]) -> Match:
    sizes = {k: parse_size(v) for k, v in m.groupdict().items() if v and k != "gpu"}
    n = {k: v for k, v in sizes.items() if v is not None}
    req, total, free = n.get("req", 0.0), n.get("total", 0.0), n.get("free", 0.0)
    alloc = n.get("alloc", 0.0)
    holds = n.get("proc") or n.get("reserved") or n.get("held") or alloc
    # "held": what the allocator holds, how much of it unallocated not stated (taken as none)
    unalloc = n["unalloc"] if "unalloc" in n else 0.0 if "held" in n else max(0.0, holds - alloc)
    others = max(0.0, total - free - holds)
    gpu = m["gpu"]
    caps = tuple(Decoded(k, "size", v, _gib(n[k]) if k in n else "")
                 for k, v in m.groupdict().items() if v and k != "gpu")
    facts = (f"it asked for {_gib(req)} on GPU {gpu} ({_gib(total)} in total, {_gib(free)} "
             + (f"free); PyTorch's allocator holds {_gib(holds)}" if "held" in n else
                f"free); this process holds {_gib(holds)}, {_gib(unalloc)} of it reserved by "
                "PyTorch but unallocated"))
    if total and req > total:
        sid, title = "cuda-oom-gpu-capacity", "out of memory: larger than the GPU"
        cause = (f"One allocation is larger than the whole GPU: {facts}. The model or batch "
                 "cannot fit on this GPU as it is.")
        fix = ("reduce the batch size or sequence length, use a smaller model or lower "
               "precision, or shard it over several GPUs")
    elif unalloc >= max(req, FRAGMENT_MIN):
        sid, title = "cuda-oom-fragmentation", "out of memory: reserved memory fragmented"
        cause = (f"Fragmentation: {facts}. The reserved but unallocated memory would hold the "
                 "request, but not in one piece.")
        fix = ("set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before starting the "
               "program (max_split_size_mb on releases before 2.1)")
    elif free and req <= free:
        sid, title = "cuda-oom-not-contiguous", "out of memory although enough is free"
        cause = (f"The free memory looks enough: {facts}. The driver could not give "
                 f"{_gib(req)} in one piece, or another process took memory in between.")
        fix = ("allocate in smaller pieces (a smaller batch or sequence length), keep other "
               "processes off the GPU while it runs (nvidia-smi), and retry")
    elif others >= max(OTHERS_MIN, total / 10):
        sid, title = "cuda-oom-other-processes", (
            "out of memory: other processes hold the GPU" if "held" not in n else
            "out of memory: the GPU is held outside PyTorch's allocator")
        cause = (f"Other processes hold {_gib(others)} of GPU {gpu}: {facts}. Without them the "
                 "request would fit." if "held" not in n else
                 f"{_gib(others)} of GPU {gpu} is held outside PyTorch's allocator, by other "
                 f"processes or by this one's CUDA context and libraries: {facts}.")
        fix = ("list the GPU's processes (nvidia-smi) and stop the ones not needed, or run on a "
               "free GPU (CUDA_VISIBLE_DEVICES)")
    else:
        sid, title = "cuda-oom-gpu-capacity", "out of memory: this process fills the GPU"
        cause = (f"This process needs more memory than the GPU has: {facts}. Neither other "
                 "processes nor fragmentation account for the shortfall.")
        fix = ("reduce the batch size or sequence length, use mixed precision (bf16/fp16), "
               "gradient checkpointing or a smaller model, or spread it over more GPUs")
    confirm = ("GD113",) if sid == "cuda-oom-other-processes" else ()  # the GPU's processes
    return found(derived(sid, title, "memory", "out-of-memory", cause, fix, _SOURCE,
                         priority=1, confirm=confirm), m, caps)
