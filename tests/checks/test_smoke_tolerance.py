"""GD451's tolerance against a CPU emulation of what a healthy GPU computes.

With cuDNN disabled, PyTorch's CUDA convolution (`slow_conv2d`, ConvolutionMM2d.cu) computes the
weight gradient one sample at a time: each sample's GEMM (float32 inside cuBLAS) is added into
the gradient tensor itself (beta = 1), which under autocast is float16 or bfloat16, so the
running sum is rounded to that type once per sample. cuDNN accumulates in float32 and rounds
once. The emulation replays both on the CPU for the smoke test's own LeNet, its own seeded
batch and weights (the child's `build_model`, SEED), in float64 apart from those roundings:
the difference it finds is the one a healthy GPU shows, and it grows as √batch.

It checks that such a device passes the new bound (`tolerance`) where the old constant one
(TOLERANCE alone) failed it, and that the bound's constant holds with room to spare.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from gpudoctor.actions.smoke import CHILD_SOURCE
from gpudoctor.checks.smoke import ACCUMULATION_SIGMAS, TOLERANCE, UNIT_ROUNDOFF, tolerance

torch = pytest.importorskip("torch", reason="torch is not installed")
# the first convolution's input needs no gradient; its output's is what the hook reads
pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing")


def child() -> dict[str, Any]:
    """The smoke child's namespace (build_model, SIZES, SEED, LOSS_SCALE)."""
    ns: dict[str, Any] = {"__name__": "gpudoctor_smoke_child"}
    exec(compile(CHILD_SOURCE, "_smoke_child.py", "exec"), ns)
    return ns


def native_vs_cudnn(kind: str, batch: int, dtype: str) -> float:
    """max|native - cudnn| / max|cudnn| of the convolutions' weight gradients (the largest
    over the layers), emulated: both from the same half-precision inputs and output
    gradients; native rounds its running sum per sample, cuDNN once."""
    ns = child()
    half: torch.dtype = getattr(torch, dtype)
    torch.manual_seed(ns["SEED"])
    model = ns["build_model"](torch, kind).double()
    size = ns["SIZES"][kind]["cuda"][0]
    gen = torch.Generator().manual_seed(ns["SEED"])
    x = torch.randn(batch, 3, size, size, generator=gen).double()
    y = torch.randint(0, 10, (batch,), generator=gen)
    convs = [m for m in model if isinstance(m, torch.nn.Conv2d)]
    inputs: dict[int, Any] = {}
    grads: dict[int, Any] = {}
    for i, conv in enumerate(convs):
        conv.register_forward_hook(lambda m, a, o, i=i: inputs.__setitem__(i, a[0].detach()))
        conv.register_full_backward_hook(
            lambda m, gi, go, i=i: grads.__setitem__(i, go[0].detach()))
    scale = ns["LOSS_SCALE"].get(dtype, 1.0)
    (torch.nn.functional.cross_entropy(model(x), y) * scale).backward()
    worst = 0.0
    for i, conv in enumerate(convs):
        xi = inputs[i].to(half).double()
        gi = grads[i].to(half).double()
        cols = torch.nn.functional.unfold(xi, conv.kernel_size, padding=conv.padding)
        per_sample = torch.einsum("bol,bkl->bok", gi.flatten(2), cols)  # (B, out, in*k*k)
        cudnn = per_sample.sum(0).to(half).double()
        native = torch.zeros_like(cudnn).to(half)
        for contribution in per_sample:
            native = (native.double() + contribution.float().double()).to(half)
        worst = max(worst, float((native.double() - cudnn).abs().max() / cudnn.abs().max()))
    return worst


@pytest.mark.slow
@pytest.mark.parametrize(("dtype", "batch"), [("bfloat16", 1024), ("float16", 2048)])
def test_a_healthy_device_passes_the_new_bound_and_failed_the_old(dtype: str,
                                                                  batch: int) -> None:
    diff = native_vs_cudnn("lenet", batch, dtype)
    assert diff > TOLERANCE[dtype], diff  # the old, constant bound: a false failure
    assert diff <= tolerance(dtype, batch), diff
    assert tolerance(dtype, batch) < 0.5  # still far below a wrong kernel's O(1)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_difference_grows_as_the_square_root_of_the_batch(dtype: str) -> None:
    """diff / (u·√B) stays of order one from batch 32 to 512 (0.5-0.7 in this emulation;
    the bound takes 3), where a worst-case (B - 1)·u bound would be 5 to 22 times it."""
    u = UNIT_ROUNDOFF[dtype]
    ratios = [native_vs_cudnn("lenet", b, dtype) / (u * math.sqrt(b)) for b in (32, 128, 512)]
    assert all(0.1 < r < ACCUMULATION_SIGMAS / 2 for r in ratios), ratios


def test_default_batches_stay_well_below_a_wrong_kernel() -> None:
    """At the smoke test's CUDA batches (LeNet 128, ConvNet 32) the bound stays small."""
    sizes = child()["SIZES"]
    for kind in ("lenet", "convnet"):
        batch = sizes[kind]["cuda"][1]
        assert tolerance("float32", batch) < 1.01e-3
        assert tolerance("float16", batch) < 0.03
        assert tolerance("bfloat16", batch) < 0.2
