"""What Linux fixes for every NVIDIA program: where its libraries live on each architecture,
and the environment values that hide every GPU. A leaf: probes, checks and actions read it.
"""

from __future__ import annotations

# Debian's multiarch triplet of each `uname -m` (the directory under /usr/lib and /usr/include
# where Debian and Ubuntu put a machine's libraries, NVIDIA's packages among them). Arm servers
# (SBSA) report aarch64 too.
MULTIARCH = {
    "x86_64": "x86_64-linux-gnu",
    "aarch64": "aarch64-linux-gnu",
    "arm64": "aarch64-linux-gnu",
    "ppc64le": "powerpc64le-linux-gnu",
}
DEFAULT_MACHINE = "x86_64"

# where the driver's user-space libraries are put besides the system's own: the NVIDIA
# Container Toolkit's mounts, and WSL's
DRIVER_DIRS = ("/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/wsl/lib")

# CUDA_VISIBLE_DEVICES values that hide every GPU from a CUDA program: empty, -1, Slurm's
# NoDevFiles, and the container spellings none and void (CUDA stops at the first entry it
# cannot read, so any of these leaves no device)
CUDA_HIDE_ALL = ("", "-1", "NoDevFiles", "none", "void")

# NVIDIA_VISIBLE_DEVICES values with which the NVIDIA Container Toolkit mounts no GPU
# (another variable: the toolkit reads it when the container starts)
NVIDIA_VISIBLE_NONE = ("void", "none", "")


def multiarch(machine: str | None) -> str:
    """The multiarch triplet of a machine (`aarch64-linux-gnu`); x86_64's for one not known."""
    return MULTIARCH.get(machine or DEFAULT_MACHINE, MULTIARCH[DEFAULT_MACHINE])


def library_dirs(machine: str | None) -> tuple[str, ...]:
    """The system's library directories on `machine`, as the loader trusts them: the
    multiarch ones, then lib64 and lib (/usr's first: with a merged /usr, a library found in
    both is named by its /usr path)."""
    triplet = multiarch(machine)
    return (f"/usr/lib/{triplet}", f"/lib/{triplet}", "/usr/lib64", "/lib64", "/usr/lib", "/lib")


def include_dirs(machine: str | None) -> tuple[str, ...]:
    """The system's header directories on `machine`: the multiarch one, then /usr/include."""
    return (f"/usr/include/{multiarch(machine)}", "/usr/include")


def hides_every_gpu(value: str) -> bool:
    """Whether a CUDA_VISIBLE_DEVICES value hides every GPU from a CUDA program."""
    return value.strip() in CUDA_HIDE_ALL


def container_hides_every_gpu(value: str) -> bool:
    """Whether an NVIDIA_VISIBLE_DEVICES value makes the container toolkit mount no GPU."""
    return value.strip().lower() in NVIDIA_VISIBLE_NONE
