"""The cause classes every diagnosis of `gpudoctor explain` carries: one vocabulary, shared with
the held-out sets' labels (their label rules name the same classes), so a diagnosis can be
scored. A leaf: the knowledge base, the catalog and the reasoning all validate against it.

Each class has a sentence (what it means), the checks that confirm it on a machine, and the
general fix used when an enumerated code or message of that class is all the text names.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CauseClass:
    """One cause class: what it means, what confirms it, what to do in general."""

    name: str
    meaning: str
    confirm: tuple[str, ...]  # check ids
    fix: str


_CLASSES = (
    CauseClass("no-driver", "the NVIDIA kernel driver is not installed, not loaded or not "
               "reachable", ("GD101", "GD109"),
               "install the NVIDIA driver for the running kernel (or let DKMS rebuild it) and "
               "reboot; with Secure Boot on, enroll the module's signing key (MOK) or sign the "
               "module; check `dmesg | grep -i nvrm`"),
    CauseClass("driver-too-old", "the installed driver is older than the CUDA the program, "
               "library or container needs", ("GD103", "GD104"),
               "update the NVIDIA driver to a branch that runs the program's CUDA, or use a "
               "build (wheel, container image) made for an older CUDA"),
    CauseClass("driver-mismatch", "the kernel module and the user-space driver libraries come "
               "from different driver versions", ("GD101",),
               "reboot (or reload the nvidia kernel modules) so the module matches the "
               "libraries; reinstall one driver version for both if they still differ"),
    CauseClass("cuda-init-failure", "the driver is there but CUDA cannot initialise for a "
               "system reason", ("GD502", "GD501", "GD403"),
               "load the UVM module (sudo modprobe nvidia_uvm), check the /dev/nvidia* device "
               "nodes and their permissions, or reboot after a suspend or a driver update"),
    CauseClass("no-gpu-visible", "the driver works but the process sees no GPU, or not the one "
               "it asks for", ("GD501", "GD507"),
               "check CUDA_VISIBLE_DEVICES (and the launcher's device index, MIG UUIDs); "
               "`nvidia-smi -L` lists what exists"),
    CauseClass("container-gpu-setup", "the container stack is not set up, or the container "
               "lost its GPU access", ("GD505", "GD502"),
               "install and configure the NVIDIA Container Toolkit (sudo nvidia-ctk runtime "
               "configure --runtime=docker && sudo systemctl restart docker) and run with "
               "--gpus all; restart a container that lost its devices"),
    CauseClass("hardware-fault", "the GPU or its link faulted", ("GD102", "GD105", "GD111"),
               "drain the GPU's jobs, reset it (nvidia-smi -r) or reboot; check nvidia-smi -q "
               "-d ECC,ROW_REMAPPER and the kernel log for Xids; service the GPU if it recurs"),
    CauseClass("fabric-manager", "an NVSwitch system whose Fabric Manager is not running or "
               "does not match the driver", ("GD112", "GD101"),
               "install and start nvidia-fabricmanager of the driver's exact version: sudo "
               "systemctl enable --now nvidia-fabricmanager"),
    CauseClass("forward-compat", "the CUDA forward-compatibility package is used where it is "
               "not supported, or mismatches", ("GD103", "GD104"),
               "remove the cuda-compat libraries from LD_LIBRARY_PATH (GeForce and workstation "
               "GPUs do not support them), or update the driver"),
    CauseClass("arch-not-in-build", "a binary has no kernels or PTX for this GPU's compute "
               "capability", ("GD404", "GD311"),
               "install a build that includes the GPU's architecture, or rebuild with it "
               "(TORCH_CUDA_ARCH_LIST / -gencode / CMAKE_CUDA_ARCHITECTURES)"),
    CauseClass("compiler-too-old-for-arch", "a compiler (nvcc, ptxas, LLVM in Triton) does not "
               "know the GPU's architecture", ("GD204", "GD201"),
               "use a CUDA toolkit (or a Triton) new enough for the GPU, or leave that "
               "architecture out of the build"),
    CauseClass("host-compiler-unsupported", "nvcc refuses or breaks on the host compiler or its "
               "standard library", ("GD201",),
               "build with a host compiler the toolkit supports (nvcc -ccbin g++-N, or "
               "CC/CXX/CUDAHOSTCXX), or install a newer CUDA toolkit"),
    CauseClass("cpu-only-build", "the framework installed is a build without CUDA", ("GD402",),
               "install the framework's CUDA build"),
    CauseClass("toolkit-missing", "building needs the CUDA toolkit and it is not found",
               ("GD201",),
               "install the CUDA toolkit (with nvcc) that matches the framework's CUDA and set "
               "CUDA_HOME to it"),
    CauseClass("toolkit-version-mismatch", "the toolkit used to build differs from the CUDA the "
               "framework was built with", ("GD203", "GD201"),
               "point CUDA_HOME at a toolkit of the framework's CUDA, or install the "
               "framework built for the toolkit's CUDA"),
    CauseClass("library-not-found", "a shared library is not found by the loader",
               ("GD306", "GD503"),
               "install the library of the version the program was built for and put its "
               "directory on the loader path (LD_LIBRARY_PATH, or PATH for a Windows DLL)"),
    CauseClass("library-version-conflict", "a library is found but is the wrong version, or two "
               "versions are mixed", ("GD309", "GD307", "GD503"),
               "remove the other copy from the loader path (LD_LIBRARY_PATH, a toolkit's "
               "lib64, conda's lib) so one consistent set is loaded"),
    CauseClass("extension-abi-mismatch", "a compiled extension was built for another framework "
               "version or CUDA than the one installed", ("GD406",),
               "reinstall (or rebuild) the extension for the installed framework: a wheel built "
               "for this exact torch and CUDA, or pip install --no-build-isolation from source"),
    CauseClass("out-of-memory", "GPU memory exhausted", ("GD113",),
               "reduce the batch size or sequence length, use mixed precision or gradient "
               "checkpointing, and free the GPU of other processes"),
    CauseClass("nccl-setup", "NCCL fails for an environment reason (P2P, network, InfiniBand, "
               "shared memory)", ("GD504",),
               "rerun with NCCL_DEBUG=INFO; set NCCL_SOCKET_IFNAME to a working interface, "
               "NCCL_P2P_DISABLE=1 where P2P is broken, NCCL_IB_DISABLE=1 without working IB, "
               "and give containers --ipc=host or a large --shm-size"),
    CauseClass("device-busy", "the GPU is in an exclusive or prohibited compute mode, or held "
               "by another process", ("GD110", "GD113"),
               "set the compute mode to Default (sudo nvidia-smi -c DEFAULT) or stop the "
               "process holding the GPU"),
    CauseClass("other-environment", "an environment cause none of the other classes names",
               (), "see the cause above"),
    CauseClass("not-environment", "the program's own code, data or use of an API (not the "
               "machine)", (),
               "fix the program: rerun with CUDA_LAUNCH_BLOCKING=1 to see the failing call, "
               "then check the shapes, indices, dtypes and devices it passes"),
)

CAUSE_CLASSES: dict[str, CauseClass] = {c.name: c for c in _CLASSES}
NOT_ENVIRONMENT = "not-environment"


def cause_class(name: str) -> CauseClass:
    """The class of that name; KeyError for a name outside the vocabulary."""
    return CAUSE_CLASSES[name]
