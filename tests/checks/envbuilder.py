"""Builders for Environments, and the hand-built GPU scenarios under tests/fixtures/envs/.

The GPU machines cannot exist here, so their snapshots are built from NVML's and torch's
documented return shapes (driver strings as NVIDIA prints them, `cudaDriverGetVersion`'s
1000*major + 10*minor encoding, `torch.cuda.get_arch_list()` of the official wheels). Captures
from real machines replace them as they come in.

`python tests/checks/envbuilder.py` rewrites the JSON fixtures from SCENARIOS. Do not, for a
rename: the fixtures are schema_version 1 (`environment.cuda`), kept as the proof that older
snapshots read (tests/test_snapshot.py::test_every_v1_snapshot_still_reads fails once they
are rewritten).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    DeviceNode,
    Environment,
    Finding,
    GpuFacts,
    HostFacts,
    LibcudaFacts,
    NvmlFacts,
    Reason,
    Result,
    ToolkitFacts,
    ToolkitsFacts,
    TorchDevice,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
    VersionReading,
)
from gpudoctor.snapshot import dumps

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "envs"

NO_NVML = Unavailable(
    Reason.NOT_INSTALLED,
    "the NVIDIA driver's libnvidia-ml.so.1 was not found: no driver is installed here",
    "NVMLError_LibraryNotFound: NVML Shared Library Not Found",
)
NO_LIBCUDA = Unavailable(Reason.NOT_INSTALLED, "libcuda.so.1 is not on the loader path")
NO_CUDNN = Unavailable(Reason.NOT_INSTALLED, "no cuDNN found")

ARCH_CU126 = ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
ARCH_CU128 = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
ARCH_CU130 = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120")

PCI_RTX3090 = "0000:17:00.0 10de:2204"  # /sys/bus/pci/devices: vendor 0x10de, class 0x0300

GPU_SPECS = {
    "H100": ("NVIDIA H100 80GB HBM3", "9.0", 85_520_809_984),
    "RTX3090": ("NVIDIA GeForce RTX 3090", "8.6", 25_769_803_776),
    "GTX1080": ("NVIDIA GeForce GTX 1080", "6.1", 8_589_934_592),
    "RTX4090": ("NVIDIA GeForce RTX 4090", "8.9", 25_757_220_864),
    "RTX5090": ("NVIDIA GeForce RTX 5090", "12.0", 34_190_917_632),
}


def host(**kw: object) -> HostFacts:
    """A bare-metal Ubuntu host with the usual device nodes."""
    base = HostFacts(
        os_name="Ubuntu 22.04.4 LTS",
        kernel="5.15.0-105-generic",
        machine="x86_64",
        glibc="2.35",
        python_version="3.11.7",
        python_executable="/usr/bin/python3",
        container=None,
        wsl=False,
        env=(),
        ld_library_path_missing=(),
        dev_nodes=tuple(
            DeviceNode(p, True, True)
            for p in ("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm")
        ),
        shm_bytes=16 * 2**30,
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def gpu(kind: str, index: int = 0) -> GpuFacts:
    """One healthy GPU of a known kind."""
    name, cc, mem = GPU_SPECS[kind]
    return GpuFacts(
        index=index,
        name=name,
        uuid=f"GPU-{index:08x}-1111-2222-3333-444455556666",
        compute_capability=cc,
        memory_total=mem,
        memory_free=mem - 600 * 2**20,
        pci_bus_id=f"00000000:{0x17 + index:02X}:00.0",
        persistence_mode=True,
        mig_mode=Unavailable(Reason.NOT_SUPPORTED, "MIG mode: NVML said Not Supported"),
    )


def nvml(driver: str, cuda: int, *gpus: GpuFacts | Unavailable) -> NvmlFacts:
    """NVML facts as the probe would record them."""
    return NvmlFacts(driver, cuda, driver.split(".")[0] + ".00", "nvidia-ml-py 13.580.82", gpus)


def torch(version: str, cuda: str | None, gpus: tuple[str, ...] = (), arch: tuple[str, ...] = (),
          cudnn: int | None = None, init_error: str | None = None) -> TorchFacts:
    """A torch that imported; `gpus` are GPU_SPECS keys it can see."""
    devices = tuple(
        TorchDevice(i, GPU_SPECS[k][0], GPU_SPECS[k][1], GPU_SPECS[k][2])
        for i, k in enumerate(gpus)
    )
    available = bool(devices)
    libs = ("/usr/lib/python3/site-packages/nvidia/cudnn/lib/libcudnn.so.9",) if cudnn else ()
    return TorchFacts(
        python="/usr/bin/python3",
        static=TorchStatic(version, "/usr/lib/python3/site-packages/torch",
                           (("__version__", version), ("cuda", str(cuda))), ()),
        runtime=TorchRuntime(
            version=version, cuda=cuda, hip=None, cudnn_version=cudnn if cuda else None,
            cuda_available=available,
            cuda_init_error=None if available else (
                init_error or ("AssertionError: Torch not compiled with CUDA enabled"
                               if cuda is None else "RuntimeError: No CUDA GPUs are available")),
            device_count=len(devices), arch_list=arch if cuda else (), devices=devices,
            cudnn_conv="ok" if available else "not-run: CUDA is not available",
            mapped_libraries=libs if available else (),
        ),
        seconds=1.8,
    )


def cuda_unavailable(env: Environment, error: str = "RuntimeError: The NVIDIA driver on your "
                     "system is too old") -> Environment:
    """`env` with torch's CUDA not initialising (as on a machine whose driver is too old)."""
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    runtime = dataclasses.replace(env.torch.runtime, cuda_available=False,
                                  cuda_init_error=error, devices=(), device_count=0,
                                  cudnn_conv="not-run: CUDA is not available")
    return dataclasses.replace(env, torch=dataclasses.replace(env.torch, runtime=runtime))


def toolkit(version: str, root: str = "/usr/local/cuda") -> ToolkitsFacts:
    """One toolkit with agreeing readings."""
    return ToolkitsFacts((ToolkitFacts(
        root=root, found_by="/usr/local/cuda", version=version,
        readings=(VersionReading("version.json", f"{root}/version.json", version),
                  VersionReading("nvcc", f"{root}/bin/nvcc", version + ".85")),
        nvcc=f"{root}/bin/nvcc", pip_assembled=False, in_use=True),))


def env(**kw: object) -> Environment:
    """An Environment with a healthy H100 / driver 580 / torch 2.13 cu130 machine as default."""
    base = Environment(
        gpudoctor_version="0.1.0",
        created="2026-11-21T00:00:00+00:00",
        host=host(),
        nvml=nvml("580.65.06", 13000, gpu("H100")),
        libcuda=LibcudaFacts("libcuda.so.1", 13000, "580.65.06"),
        toolkits=toolkit("13.0"),
        torch=torch("2.13.0+cu130", "13.0", ("H100",), ARCH_CU130, 92000),
        cudnn=NO_CUDNN,
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


SCENARIOS: dict[str, Environment] = {
    "h100-healthy": env(),
    "old-driver-new-torch": env(
        nvml=nvml("535.104.05", 12020, gpu("RTX3090")),
        libcuda=LibcudaFacts("libcuda.so.1", 12020, "535.104.05"),
        toolkits=toolkit("12.2"),
        torch=torch("2.13.0+cu130", "13.0", (), ARCH_CU130, 92000,
                    "RuntimeError: The NVIDIA driver on your system is too old (found version "
                    "12020)."),
    ),
    "cpu-torch-on-gpu-machine": env(
        nvml=nvml("550.54.15", 12040, gpu("RTX3090")),
        libcuda=LibcudaFacts("libcuda.so.1", 12040, "550.54.15"),
        torch=torch("2.13.0+cpu", None),
        toolkits=Unavailable(Reason.NOT_INSTALLED, "no CUDA toolkit found"),
    ),
    "pascal-gpu-cu130-torch": env(
        nvml=nvml("580.65.06", 13000, gpu("GTX1080")),
        torch=torch("2.13.0+cu130", "13.0", ("GTX1080",), ARCH_CU130, 92000),
    ),
    "visible-devices-hide-all": env(
        host=host(env=(("CUDA_VISIBLE_DEVICES", ""),)),
        torch=torch("2.13.0+cu130", "13.0", (), ARCH_CU130, 92000),
    ),
    "visible-devices-bad-index": env(
        host=host(env=(("CUDA_VISIBLE_DEVICES", "1"),)),
    ),
    "driver-lib-mismatch": env(
        nvml=Unavailable(Reason.VERSION_MISMATCH, "the driver's user-space library and kernel "
                         "module differ", "NVMLError_LibRmVersionMismatch: RM has detected an "
                         "NVML/RM version mismatch."),
        libcuda=Unavailable(Reason.ERROR, "cuDriverGetVersion returned error 803"),
        torch=torch("2.13.0+cu130", "13.0", (), ARCH_CU130, 92000),
    ),
    "no-driver-cuda-torch": env(  # a GPU on the PCI bus, no driver: a workstation to set up
        host=host(dev_nodes=(), pci_gpus=(PCI_RTX3090,)),
        nvml=NO_NVML,
        libcuda=NO_LIBCUDA,
        torch=torch("2.13.0+cu130", "13.0", (), ARCH_CU130, 92000,
                    "RuntimeError: Found no NVIDIA driver on your system."),
    ),
    "wsl-libcuda-only": env(
        host=host(wsl=True, kernel="5.15.153.1-microsoft-standard-WSL2", dev_nodes=(
            DeviceNode("/dev/dxg", True, True),)),
        nvml=NO_NVML,
        libcuda=LibcudaFacts("libcuda.so.1", 12080, Unavailable(
            Reason.NOT_INSTALLED, "/proc/driver/nvidia/version is not readable")),
        torch=torch("2.7.1+cu128", "12.8", ("RTX3090",), ARCH_CU128, 90701),
        toolkits=Unavailable(Reason.NOT_INSTALLED, "no CUDA toolkit found"),
    ),
    "container-no-gpus-flag": env(
        # the host's GPU is on the PCI bus (sysfs is not namespaced), its driver not mounted
        host=host(container="docker", dev_nodes=(), shm_bytes=64 * 2**20, pci_gpus=(
            PCI_RTX3090,)),
        nvml=NO_NVML,
        libcuda=NO_LIBCUDA,
        torch=torch("2.13.0+cu130", "13.0", (), ARCH_CU130, 92000,
                    "RuntimeError: Found no NVIDIA driver on your system."),
    ),
    "torch-import-crash": env(
        torch=TorchFacts(
            python="/usr/bin/python3",
            static=TorchStatic("2.13.0+cu130", "/usr/lib/python3/site-packages/torch",
                               (("__version__", "2.13.0+cu130"), ("cuda", "13.0")), ()),
            runtime=Unavailable(Reason.CRASHED, "`import torch` crashed the interpreter (SIGABRT)",
                                "Could not load library libcudnn_cnn_infer.so.8. Error: "
                                "libcublas.so.11: cannot open shared object file"),
            seconds=0.9,
        ),
    ),
    # no GPU at all (a CI runner): PyPI's default torch is a CUDA build
    "gpu-less-ci-cuda-torch": env(
        host=host(dev_nodes=(), pci_gpus=(), container="docker",
                  nvidia_module=Unavailable(Reason.NOT_INSTALLED, "not loaded")),
        nvml=NO_NVML,
        libcuda=NO_LIBCUDA,
        toolkits=Unavailable(Reason.NOT_INSTALLED, "no CUDA toolkit found"),
        torch=torch("2.13.0+cu130", "13.0", (), ARCH_CU130, 92000,
                    "RuntimeError: Found no NVIDIA driver on your system."),
    ),
    # a build host: a CPU torch beside a CUDA toolkit, no GPU
    "gpu-less-build-host-cpu-torch": env(
        host=host(dev_nodes=(), pci_gpus=()),
        nvml=NO_NVML,
        libcuda=NO_LIBCUDA,
        toolkits=toolkit("12.4"),
        torch=torch("2.13.0+cpu", None),
    ),
    # the driver was upgraded without a reboot: library 535.183.01, kernel module 535.104.05
    "driver-lib-mismatch-versions": env(
        host=host(nvidia_module="535.104.05", pci_gpus=(PCI_RTX3090,), nvml_libraries=((
            "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "535.183.01"),)),
        nvml=Unavailable(Reason.VERSION_MISMATCH, "the driver's user-space library and kernel "
                         "module differ", "NVMLError_LibRmVersionMismatch: RM has detected an "
                         "NVML/RM version mismatch."),
        libcuda=Unavailable(Reason.ERROR, "cuDriverGetVersion returned error 803"),
        torch=torch("2.13.0+cu130", "13.0", (), ARCH_CU130, 92000,
                    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 804: "
                    "forward compatibility was attempted on non supported HW"),
    ),
    "lost-gpu": env(
        nvml=nvml("580.65.06", 13000, gpu("H100", 0), Unavailable(
            Reason.ERROR, "GPU 1: NVML said GPU is lost", "NVMLError_GpuIsLost: GPU is lost")),
    ),
}


def not_reported(what: str) -> Unavailable:
    """A fact a pasted report does not state."""
    return Unavailable(Reason.NOT_REPORTED, f"{what} is not in the report")


def reported_gpu(name: str, index: int = 0) -> GpuFacts:
    """A GPU as collect_env or nvidia-smi's table reports it: its name, little else."""
    return GpuFacts(
        index=index, name=name, uuid=not_reported("the UUID"),
        compute_capability=not_reported("the compute capability"),
        memory_total=not_reported("the memory"), memory_free=not_reported("free memory"),
        pci_bus_id=not_reported("the bus id"), persistence_mode=not_reported("persistence"),
        mig_mode=not_reported("MIG mode"))


def reported_torch(version: str, cuda: str | None, available: bool = True,
                   arch: tuple[str, ...] | None = None) -> TorchFacts:
    """torch as collect_env reports it: version, CUDA build, is_available(); `arch` only when
    the report shows torch's arch list (its unsupported-GPU warning)."""
    return TorchFacts(
        python=not_reported("the interpreter"), static=not_reported("the package metadata"),
        runtime=TorchRuntime(
            version=version, cuda=cuda, hip=None, cudnn_version=not_reported("torch's cuDNN"),
            cuda_available=available,
            cuda_init_error=None if available else not_reported("torch's reason"),
            device_count=not_reported("the device count"),
            arch_list=arch if arch is not None else not_reported("the arch list"),
            devices=not_reported("torch's devices"), cudnn_conv=not_reported("a convolution"),
            mapped_libraries=not_reported("the mapped libraries")),
        seconds=not_reported("the probe's time"))


def reported_env(torch_facts: TorchFacts | Unavailable, *gpus: GpuFacts,
                 driver: str | None = "550.54.15") -> Environment:
    """An Environment read from a report: what is not given is not in it."""
    return Environment(
        gpudoctor_version="0.1.0", created="2026-11-21T00:00:00+00:00",
        host=not_reported("the host"),
        nvml=NvmlFacts(driver, not_reported("the driver's CUDA"), not_reported("NVML"),
                       "nvidia-smi, as collect_env reported it", gpus)
        if driver else not_reported("the driver"),
        libcuda=not_reported("libcuda"), toolkits=not_reported("the toolkit"),
        torch=torch_facts, cudnn=not_reported("cuDNN"), sources=("collect_env in test",))


def results(e: Environment) -> dict[str, Result]:
    """Every registered check's result on `e`, by id (the shipped tables)."""
    return {r.check_id: r for r in run_checks(e, load_tables(), REGISTRY).results}


def finding(e: Environment, check_id: str) -> Finding:
    """One check's finding on `e`."""
    return results(e)[check_id].finding


def main() -> None:
    """Rewrite tests/fixtures/envs/<scenario>.json."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, e in SCENARIOS.items():
        (FIXTURES / f"{name}.json").write_text(dumps(e))


if __name__ == "__main__":
    main()

