"""Out of memory: the numbers of PyTorch's message (both wordings) tell fragmentation, other
processes and an oversized request apart."""

from __future__ import annotations

from tests.explain.explain_kit import best

OLD = ("CUDA out of memory. Tried to allocate {req} (GPU 0; {total} total capacity; {alloc} "
       "already allocated; {free} free; {reserved} reserved in total by PyTorch)")


def test_fragmentation_only_when_reserved_unallocated_memory_would_hold_the_request() -> None:
    tiny = best(OLD.format(req="20.00 GiB", total="23.69 GiB", alloc="2.50 MiB",
                           free="1.94 GiB", reserved="2.50 MiB"))
    assert tiny.match.signature.id != "cuda-oom-fragmentation"
    assert "expandable_segments" not in tiny.fix
    frag = best(OLD.format(req="2.87 GiB", total="14.76 GiB", alloc="8.77 GiB",
                           free="19.75 MiB", reserved="13.71 GiB"))
    assert frag.match.signature.id == "cuda-oom-fragmentation"
    assert "expandable_segments" in frag.fix


NEW = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total "
       "capacity of {total} of which {free} is free. Including non-PyTorch memory, this process "
       "has {proc} memory in use. Of the allocated memory {alloc} is allocated by PyTorch, and "
       "{unalloc} is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
       "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
       "fragmentation.")


def test_pytorchs_fragmentation_hint_is_not_taken_for_the_cause() -> None:
    """The hint is in every message; 2.50 MiB reserved-unallocated cannot hold 20 GiB."""
    d = best(NEW.format(req="20.00 GiB", total="23.65 GiB", free="1.06 GiB", proc="22.50 GiB",
                        alloc="22.49 GiB", unalloc="2.50 MiB"))
    assert d.match.signature.id == "cuda-oom-gpu-capacity"
    assert "expandable_segments" not in d.fix
    d = best(NEW.format(req="22.00 MiB", total="23.65 GiB", free="11.06 MiB", proc="23.60 GiB",
                        alloc="22.90 GiB", unalloc="194.87 MiB"))
    assert d.match.signature.id == "cuda-oom-fragmentation"


def test_out_of_memory_names_other_processes_and_oversized_requests() -> None:
    others = best(OLD.format(req="1.69 GiB", total="14.56 GiB", alloc="649.97 MiB",
                             free="1.31 GiB", reserved="1.01 GiB"))
    assert others.match.signature.id == "cuda-oom-other-processes" and "nvidia-smi" in others.fix
    huge = best(OLD.format(req="40.00 GiB", total="23.69 GiB", alloc="1.00 GiB",
                           free="22.00 GiB", reserved="1.00 GiB"))
    assert "larger than the whole GPU" in huge.cause
    for d in (others, huge):
        assert d.match.signature.cause_class == "out-of-memory"
