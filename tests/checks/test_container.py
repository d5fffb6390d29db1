"""`gpudoctor.checks.container`: GD505 (a container wired to the GPUs), GD506 (debugging and
profiling CUDA variables left set) and GD507 (CUDA_VISIBLE_DEVICES on MIG GPUs), branch by
branch on hand-built facts."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from gpudoctor.checks import container
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import (
    DeviceNode,
    Environment,
    Finding,
    HostFacts,
    NvmlFacts,
    Reason,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.reports.read import read_reports
from tests.checks.envbuilder import NO_NVML, PCI_RTX3090, env, gpu, host, nvml
from tests.checks.test_health import run

pytestmark = pytest.mark.subprocess  # the mark these tests had in test_health.py


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


# ----------------------------------------------------------------------- GD505


def test_container_branches(tables: Tables) -> None:
    nodes = tuple(DeviceNode(p, True, True) for p in ("/dev/nvidia0", "/dev/nvidiactl"))
    libs = (("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "580.65.06"),)
    c = container.check_container

    def judge(nvml_facts: object = None, **kw: Any) -> Finding:
        fields = {"container": "docker", "dev_nodes": nodes, "nvml_libraries": libs, **kw}
        e = env(host=host(**fields))
        if nvml_facts is not None:
            e = dataclasses.replace(e, nvml=nvml_facts)
        return run(c, e, tables)

    assert judge().status is Status.PASS
    assert judge(container=None).status is Status.SKIP
    unknown = Unavailable(Reason.ERROR, "nvmlInit: NVML said Unknown Error",
                          "NVMLError_Unknown: Unknown Error")
    f = judge(unknown)
    assert f.status is Status.FAIL and "daemon-reload" in f.message
    f = judge(NO_NVML, nvml_libraries=())
    assert f.status is Status.FAIL and "NVIDIA_DRIVER_CAPABILITIES" in (f.fix or "")
    # GPUs on the bus, no nodes, no driver: GD101 fails on it, counted once
    f = judge(NO_NVML, dev_nodes=(), nvml_libraries=(), pci_gpus=(PCI_RTX3090,))
    assert f.status is Status.SKIP and "--gpus all" in f.message
    f = judge(NO_NVML, dev_nodes=(), nvml_libraries=(), pci_gpus=(),
              env=(("NVIDIA_VISIBLE_DEVICES", "all"),))
    assert f.status is Status.WARN and f.severity is Severity.INFO
    f = judge(env=(("NVIDIA_VISIBLE_DEVICES", "void"),))
    assert f.status is Status.WARN and "on purpose" in f.message
    f = judge(container=None, cdi_specs=("/etc/cdi/nvidia.yaml",))
    assert ("CDI specs", "/etc/cdi/nvidia.yaml") in f.evidence


# ----------------------------------------------------------------------- GD506


@pytest.mark.parametrize(("variables", "status", "severity"), [
    ((), Status.PASS, None),
    ((("CUDA_LAUNCH_BLOCKING", "1"),), Status.WARN, None),
    ((("CUDA_LAUNCH_BLOCKING", "0"),), Status.PASS, None),
    ((("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),), Status.WARN, None),
    ((("CUDA_INJECTION64_PATH", "/opt/nsight/libToolsInjection64.so"),), Status.WARN, None),
    ((("CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "1"),), Status.WARN, None),
    ((("CUDA_CACHE_DISABLE", "1"),), Status.WARN, None),
    ((("CUDA_DEVICE_MAX_CONNECTIONS", "1"),), Status.WARN, Severity.INFO),
    ((("CUDA_PROFILE", "1"),), Status.WARN, Severity.INFO),
])
def test_cuda_env_vars(tables: Tables, variables: tuple[tuple[str, str], ...], status: Status,
                       severity: Severity | None) -> None:
    f = run(container.check_cuda_env, env(host=host(env=variables)), tables)
    assert f.status is status
    assert f.severity is severity
    for name, _ in variables:
        if status is not Status.PASS:
            assert name in f.message and f"unset {name}" in (f.fix or "")


def test_host_probe_records_the_variables() -> None:
    from gpudoctor.probes.host import ENV_VARS

    for _, names, *_ in ((None, [v[0] for v in container._VARS]),):
        assert set(names) <= set(ENV_VARS)


# ----------------------------------------------------------------------- GD507


@pytest.mark.parametrize(("mig", "visible", "status"), [
    (False, None, Status.PASS),
    (True, None, Status.WARN),
    (True, "0", Status.WARN),
    (True, "MIG-4b4a6f36-1c2d-5e6f-8a9b-0c1d2e3f4a5b", Status.PASS),
])
def test_mig_visible_devices(tables: Tables, mig: bool, visible: str | None,
                             status: Status) -> None:
    e = env(nvml=nvml("580.65.06", 13000, dataclasses.replace(gpu("H100"), mig_mode=mig)),
            host=host(env=(("CUDA_VISIBLE_DEVICES", visible),) if visible else ()))
    f = run(container.check_mig_visible, e, tables)
    assert f.status is status, f
    if status is Status.WARN:
        assert f.severity is Severity.INFO and "MIG-<uuid>" in (f.fix or "")


# NVIDIA/nvidia-docker#876 (round 7's r14-033): the image's nvidia-smi, in a container started
# with the NVIDIA runtime, cannot find the driver's library
NVIDIA_DOCKER_876 = """\
 aigpu@aiPC1:~$ docker run --runtime=nvidia --rm -ti -e NVIDIA_DRIVER_CAPABILITIES=video,compute,utility nvidia/cuda:9.0-base nvidia-smi
NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.
"""  # noqa: E501 - verbatim
# a collect_env run in a container that could not collect the driver: no sign of a GPU
COLLECT_ENV_IN_DOCKER = """\
root@185d009a60c8:/workspace# python3 -m torch.utils.collect_env
Collecting environment information...
PyTorch version: 1.12.1
Is debug build: False
CUDA used to build PyTorch: 11.3
ROCM used to build PyTorch: N/A

OS: Ubuntu 18.04.6 LTS (x86_64)
Is CUDA available: False
CUDA runtime version: 11.3.109
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
"""


def test_a_report_of_nvidia_smi_missing_in_a_container_fails(tables: Tables) -> None:
    from gpudoctor.reports.read import read_reports

    found = run(container.check_container, read_reports([("876", NVIDIA_DOCKER_876)]), tables)
    assert found.status is Status.FAIL and "docker" in found.message
    assert "--gpus all" in (found.fix or "")
    # collect_env's "Could not collect" is no such sign: the container may have no GPU at all
    found = run(container.check_container, read_reports([("env", COLLECT_ENV_IN_DOCKER)]),
                tables)
    assert found.status is Status.SKIP


def test_the_device_plugin_templates_checked_box_names_kubernetes() -> None:
    """gpu-operator / k8s-device-plugin issues (round 9's r20-029) tick "Are you running
    Kubernetes v1.13+?"; an unticked box names nothing."""
    from gpudoctor.reports.system import _container

    assert _container("- [x] Are you running Kubernetes v1.13+?\n") == "kubernetes"
    assert _container("- [ ] Are you running Kubernetes v1.13+?\n") is None


# NVIDIA/nvidia-docker#865 (round 12's r28-028): the runtime's own words, its quotes escaped
NVIDIA_DOCKER_865 = r"""$ nvidia-docker run --rm nvidia/cuda nvidia-smi
docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container process caused "exec: \"nvidia-smi\": executable file not found in $PATH": unknown.
"""  # noqa: E501 - verbatim


def test_the_runtime_finding_no_nvidia_smi_in_the_container_fails(tables: Tables) -> None:
    from gpudoctor.reports.read import read_reports

    env = read_reports([("865", NVIDIA_DOCKER_865)])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.NOT_INSTALLED
    assert run(container.check_container, env, tables).status is Status.FAIL


def test_device_nodes_but_no_nvidia_smi_in_a_container_is_the_libraries_unmounted(
        tables: Tables) -> None:
    """A Coder workspace in podman (round 13's r30-024, coder/coder's issue in its index.toml):
    `ls -l /dev/nvidia*` lists the nodes, world-writable, and `nvidia-smi: command not found`.
    The nodes were passed, the driver's user-space libraries were not (the toolkit mounts
    nvidia-smi and libnvidia-ml.so with the utility capability): GD505 fails saying so.
    Before, the listed nodes made it skip ("environment or device nodes are not known")."""
    from pathlib import Path

    from gpudoctor.reports.read import read_reports

    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round13"
            / "reports-L" / "r30-024.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    found = run(container.check_container, env, tables)
    assert found.status is Status.FAIL, found
    assert "podman container has the GPU device nodes" in found.message
    assert "libraries were not mounted" in found.message
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in (found.fix or "")


def test_an_ngc_images_no_driver_banner_is_the_container_not_given_the_gpus(
        tables: Tables) -> None:
    """Round 19's r42-035 (a Triton image's log, triton-inference-server's issue in its
    index.toml), refused before: NVIDIA's NGC images check for libcuda.so.1 and /dev/nvidiactl
    as they start and print "WARNING: The NVIDIA Driver was not detected.  GPU functionality
    will not be available." where either is missing. The banner names the container; GD505
    fails on it, and GD101 leaves the host's driver (not in the report) to it."""
    from gpudoctor.checks.driver import check_driver_present
    from gpudoctor.reports.interface import NGC_NO_DRIVER

    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round19"
            / "reports-R" / "r42-035.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, Unavailable) and env.nvml.message == NGC_NO_DRIVER
    assert isinstance(env.host, HostFacts) and env.host.container == "container"
    found = run(container.check_container, env, tables)
    assert found.status is Status.FAIL, found
    assert "The NVIDIA Driver was not detected" in found.message
    assert "--gpus all" in (found.fix or "")
    driver = run(check_driver_present, env, tables)
    assert driver.status is Status.SKIP and "GD505" in driver.message
    # a host's nvidia-smi table (round 10's r22-033) pasted beside the container's banner:
    # the host's driver answers, the container still was not given it
    heldout = Path(__file__).resolve().parents[1] / "fixtures" / "heldout"
    table = heldout / "round10" / "reports-I" / "r22-033.txt"
    both = read_reports([(table.name, table.read_text(encoding="utf-8")),
                         (path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(both.nvml, NvmlFacts)
    found = run(container.check_container, both, tables)
    assert found.status is Status.FAIL and "host's driver answers" in found.message, found
    assert "The NVIDIA Driver was not detected" in found.message
    # the words alone, outside any container: no driver here, nothing about a container
    alone = read_reports([("log", "WARNING: The NVIDIA Driver was not detected.  GPU "
                                  "functionality will not be available.\n")])
    assert isinstance(alone.nvml, Unavailable) and alone.nvml.message == NGC_NO_DRIVER


def test_torch_finding_no_driver_in_a_container_is_the_container_not_given_the_gpus(
        tables: Tables) -> None:
    """Round 20's r43-017 (detectron2 in docker-compose on Windows 10 with a GTX 1660, its
    prompt "appuser@2c33616b558b"): torch's "Found no NVIDIA driver on your system" there
    means no libcuda.so.1 in the container: GD505 fails on it as on nvidia-smi missing there,
    and GD101 leaves the host's driver to it."""
    from gpudoctor.checks.driver import check_driver_present
    from gpudoctor.reports.interface import TORCH_NO_DRIVER

    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round20"
            / "reports-S" / "r43-017.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, Unavailable) and env.nvml.message == TORCH_NO_DRIVER
    found = run(container.check_container, env, tables)
    assert found.status is Status.FAIL and "Found no NVIDIA driver" in found.message, found
    assert run(check_driver_present, env, tables).status is Status.SKIP
    # every in-container no-driver message has its words in GD505, and no other
    from gpudoctor.reports.interface import NO_DRIVER_INSIDE
    assert set(container._MISSING) == NO_DRIVER_INSIDE


@pytest.mark.parametrize(("rnd", "name"), [
    ("round12/reports-K", "r28-029.txt"),  # docker snap: runc finds no nvidia-smi inside
    ("round7/reports-F", "r14-025.md"),  # a Kubernetes vcuda pod: no libnvidia-ml.so inside
])
def test_no_nvidia_smi_in_the_container_beside_the_hosts_working_one_fails(
        tables: Tables, rnd: str, name: str) -> None:
    """The host's nvidia-smi table answers and the container has no nvidia-smi (the runtime's
    'exec: "nvidia-smi": executable file not found in $PATH', or nvidia-smi's own "couldn't
    find libnvidia-ml.so"): the driver is fine (GD101 passes on the host's table), the
    container was not given it. Before, the host's table hid the container's error and GD505
    skipped (their threads are in each set's index.toml)."""
    from pathlib import Path

    from gpudoctor.reports.read import read_reports

    path = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / rnd / name
    env = read_reports([(name, path.read_text(encoding="utf-8"))])
    found = run(container.check_container, env, tables)
    assert found.status is Status.FAIL, found
    assert "nvidia-smi is missing in this" in found.message
    assert "--gpus all" in (found.fix or "")


def test_no_nvidia_smi_before_a_driver_was_installed_on_a_host_is_not_a_container(
        tables: Tables) -> None:
    """The same two blocks outside a container (a host's shell before and after installing
    the driver): GD505 does not apply."""
    from gpudoctor.reports.read import read_reports

    text = ("$ nvidia-smi\nnvidia-smi: command not found\n\n$ nvidia-smi\n"
            "+-----------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 550.90.07    Driver Version: 550.90.07    CUDA Version: 12.4     |\n")
    found = run(container.check_container, read_reports([("host", text)]), tables)
    assert found.status is Status.SKIP


@pytest.mark.parametrize("name", ["r37-016.md", "r37-028.txt"])
def test_cuda_version_na_in_a_container_is_the_compute_capability_left_out(
        tables: Tables, name: str) -> None:
    """Round 17's r37-016 (a ROS image run with --runtime=nvidia) and r37-028 (docker run
    --gpus all … nvidia-smi): nvidia-smi answers inside the container, its table says "CUDA
    Version: N/A" (no libcuda.so.1 there): the toolkit mounted NVML without the compute
    capability. Their threads are in round17/reports-P/index.toml."""
    from pathlib import Path

    from gpudoctor.reports.read import read_reports

    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round17"
            / "reports-P" / name)
    env = read_reports([(name, path.read_text(encoding="utf-8"))])
    found = run(container.check_container, env, tables)
    assert found.status is Status.FAIL, found
    assert "CUDA Version: N/A" in found.message and "compute" in found.message
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in (found.fix or "")


def test_cuda_version_na_on_a_host_is_not_a_container_finding(tables: Tables) -> None:
    """The same table on a host (no container named): GD505 does not apply."""
    from gpudoctor.reports.read import read_reports

    table = ("+-----------------------------------------------------------------------------+\n"
             "| NVIDIA-SMI 455.45.01    Driver Version: 455.45.01    CUDA Version: N/A      |\n"
             "|-------------------------------+----------------------+----------------------+\n")
    found = run(container.check_container, read_reports([("smi", table)]), tables)
    assert found.status is Status.SKIP, found


HELDOUT = Path(__file__).parents[1] / "fixtures" / "heldout"


def _pasted(path: str) -> Environment:
    file = HELDOUT / path
    return read_reports([(file.name, file.read_text(encoding="utf-8"))])


@pytest.mark.parametrize("path", [
    "round19/reports-R/r41-012.txt",  # docker run --rm --gpus all nvidia/cuda:11.0-base nvidia-smi
    "round19/reports-R/r41-010.txt",  # docker exec -it frigate nvidia-smi
    "round19/reports-R/r41-034.txt",  # root@2558da61a312:/usr/local/nvidia/bin# nvidia-smi
    "round19/reports-R/r41-011.txt",  # a Compose service's log: "frigate    | | NVIDIA-SMI …"
    # round 23's r50-026: "When I run nvidia-smi from inside the container I get:", the paste
    # cut after the table's header (with its CUDA version: no GPU, and nvidia-smi prints "No
    # devices were found" instead)
    "round23/reports-V/r50-026.md",
])
def test_nvidia_smi_run_inside_a_container_passes(path: str) -> None:
    """Round 19's healthy containers: nvidia-smi's table from inside the container, its GPUs
    and its CUDA version (libcuda.so.1 found there). GD505 passed none of them (it skipped: the
    container's device nodes are not in the report); six of its seven such reports pass now."""
    f = container.check_container.run(_pasted(path), load_tables())
    assert f.status is Status.PASS, f.message
    assert f.message.startswith("nvidia-smi answers in this")


@pytest.mark.parametrize("path", ["round5/reports-D/r6-027.md", "round17/reports-P/r37-027.md"])
def test_the_hosts_table_beside_a_containers_trouble_does_not_pass(path: str) -> None:
    """Round 5's r6-027 ("Output from my vm's nvidia-smi" after a container without --gpus)
    and round 17's r37-027 (the host's table; in the container 'CUDA Version: N/A', cut): the
    table is the host's, not the container's view, so it passes nothing for the container."""
    f = container.check_container.run(_pasted(path), load_tables())
    assert f.status is not Status.PASS


def test_no_devices_inside_a_container_does_not_pass() -> None:
    """nvidia-smi in a container that has the driver's libraries but no GPU device: "No
    devices were found", no header: nothing shows the GPUs were given to it."""
    text = "When I run nvidia-smi inside the container I get:\n\nNo devices were found\n"
    f = container.check_container.run(read_reports([("smi", text)]), load_tables())
    assert f.status is not Status.PASS, f.message
