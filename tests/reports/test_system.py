"""What `ls -l /dev/nvidia*`, `lspci` and nouveau's kernel lines state → host facts, and the
verdicts on them. The texts are real: round 4's dev set (each file's thread is in its
index.toml) and excerpts named with their thread."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, HostFacts, NvmlFacts, Reason, Status, Unavailable
from gpudoctor.reports import system
from gpudoctor.reports.read import ReportError, read_reports
from tests.reports.reading_kit import statuses

HELDOUT = Path(__file__).parents[1] / "fixtures" / "heldout"

# https://github.com/negativo17/nvidia-driver/issues/73 — `lspci -vv`: the driver line comes
# after a dozen of the device's lines
LSPCI_VV_NOUVEAU = """\
$ lspci -vv
01:00.0 VGA compatible controller: NVIDIA Corporation GM204 [GeForce GTX 970] (rev a1) (prog-if 00 [VGA controller])
\tSubsystem: eVga.com. Corp. Device 1972
\tControl: I/O+ Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+
\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-
\tLatency: 0, Cache Line Size: 64 bytes
\tInterrupt: pin A routed to IRQ 29
\tRegion 0: Memory at f2000000 (32-bit, non-prefetchable) [size=16M]
\tRegion 1: Memory at e0000000 (64-bit, prefetchable) [size=256M]
\tRegion 3: Memory at f0000000 (64-bit, prefetchable) [size=32M]
\tRegion 5: I/O ports at e000 [size=128]
\tExpansion ROM at f3000000 [disabled] [size=512K]
\tCapabilities: <access denied>
\tKernel driver in use: nouveau
\tKernel modules: nouveau, nvidia_drm, nvidia
"""  # noqa: E501 - verbatim

# https://github.com/vanities/GPU-Passthrough-Arch-Linux-to-Windows10/issues/6 — `lspci -nnk`
LSPCI_NNK_NVIDIA = """\
01:00.0 VGA compatible controller [0300]: NVIDIA Corporation TU117M [GeForce GTX 1650 Mobile / Max-Q] [10de:1f91] (rev a1)
        Subsystem: Hewlett-Packard Company Device [103c:85fc]
        Kernel driver in use: nvidia
        Kernel modules: nouveau, nvidia_drm, nvidia
01:00.1 Audio device [0403]: NVIDIA Corporation Device [10de:10fa] (rev a1)
        Subsystem: Hewlett-Packard Company Device [103c:85fc]
        Kernel driver in use: snd_hda_intel
        Kernel modules: snd_hda_intel
"""  # noqa: E501 - verbatim


def _host(env: Environment) -> HostFacts:
    assert isinstance(env.host, HostFacts)
    return env.host


def test_device_nodes_no_one_but_root_may_open() -> None:
    """`ls -al /dev/nvidia*` with c-w--wx-wT nodes after an update (Gentoo; round 4's
    r5-033): GD502 fails on the nodes the listing shows."""
    text = (HELDOUT / "round4" / "reports-C" / "r5-033.md").read_text(encoding="utf-8")
    env = read_reports([("r5-033.md", text)])
    listed = _host(env).dev_nodes
    assert isinstance(listed, tuple)
    nodes = {n.path: (n.readable, n.writable) for n in listed}
    assert nodes["/dev/nvidia0"] == (False, True)
    assert nodes["/dev/nvidia-uvm"] == (True, True)
    assert statuses(env)["GD502"] is Status.FAIL


def test_nouveau_in_the_kernel_log_holds_the_gpu() -> None:
    """nouveau's own lines for 0000:01:00.0 (NixOS; round 4's r5-030): GD109 fails."""
    text = (HELDOUT / "round4" / "reports-C" / "r5-030.md").read_text(encoding="utf-8")
    env = read_reports([("r5-030.md", text)])
    assert _host(env).pci_gpu_drivers == (("0000:01:00.0", "nouveau"),)
    assert statuses(env)["GD109"] is Status.FAIL


@pytest.mark.parametrize(("text", "driver", "gd109"), [
    (LSPCI_VV_NOUVEAU, "nouveau", Status.FAIL),
    (LSPCI_NNK_NVIDIA, "nvidia", Status.PASS),
])
def test_lspci_k_names_the_driver_in_use(text: str, driver: str, gd109: Status) -> None:
    env = read_reports([("issue", text)])
    host = _host(env)
    assert host.pci_gpu_drivers == (("0000:01:00.0", driver),)  # the audio function is no GPU
    assert statuses(env)["GD109"] is gd109


def test_plain_lspci_shows_the_gpu_but_not_its_driver() -> None:
    """`lspci` without -k (round 3's r1-063): the GPU is on the bus; which driver holds it is
    not stated, so GD109 is not judged."""
    text = (HELDOUT / "round3" / "reports-A" / "r1-063.md").read_text(encoding="utf-8")
    env = read_reports([("r1-063.md", text)])
    host = _host(env)
    assert host.pci_gpus == ("0000:01:00.0",) and host.pci_gpu_drivers == ()
    verdicts = statuses(env)
    assert verdicts["GD109"] is Status.SKIP


def test_what_the_report_does_not_show_stays_unknown() -> None:
    """A listing states the nodes and nothing else: the checks of the environment, the
    container and /dev/shm are not judged (never "not set")."""
    env = read_reports([("issue", LSPCI_NNK_NVIDIA)])
    host = _host(env)
    for fact in (host.env, host.container, host.shm_bytes, host.dev_nodes, host.os_name):
        assert isinstance(fact, Unavailable) and fact.reason is Reason.NOT_REPORTED
    assert host.getenv("CUDA_VISIBLE_DEVICES") is host.env
    verdicts = statuses(env)
    for gd in ("GD501", "GD502", "GD503", "GD504", "GD505", "GD506"):
        assert verdicts[gd] is Status.SKIP, gd


def test_no_device_nodes_at_all() -> None:
    """ls's own words when the glob matches nothing: there are no nodes."""
    partial = system.parse("$ ls -l /dev/nvidia*\nls: cannot access '/dev/nvidia*': No such "
                           "file or directory\n")
    assert partial is not None and isinstance(partial.host, HostFacts)
    assert partial.host.dev_nodes == ()


@pytest.mark.parametrize("text", [
    "crw-rw-rw- 1 root root 1, 3 Jun 25 11:05 /dev/null\n",  # not an NVIDIA node
    "00:02.0 VGA compatible controller: Intel Corporation HD Graphics 630 (rev 04)\n",
    "I blacklisted nouveau 0000:01:00.0 yesterday\n",  # no "nouveau <address>: " kernel line
])
def test_what_is_not_read(text: str) -> None:
    assert system.parse(text) is None
    with pytest.raises(ReportError):
        read_reports([("issue", text)])


# --------------------------------------------------------------------------- a container


@pytest.mark.parametrize(("text", "kind"), [
    ("$ kubectl exec -it trainer-0 -- nvidia-smi\n", "kubernetes"),
    ("sudo docker run --rm -it nvcr.io/nvidia/pytorch:24.05-py3 bash\n", "docker"),
    ("docker compose up -d\n", "docker"),
    ("podman exec -it dev nvidia-smi\n", "podman"),
    ("root@00921839c781:/anomalib# nvidia-smi\n", "docker"),  # docker's default hostname
    ("SSH into the container: `ssh <run-name>`\n", "container"),
    ("the same script works inside the pod\n", "kubernetes"),
    # round 6's r11-011 and r11-017 (tests/fixtures/heldout/round6/reports-E/index.toml)
    ("Nvidia-smi is not working after few hours inside docker(NVML error)\n", "docker"),
    ("在容器中报告 nvidia-smi 时，报错如下：\n", "container"),
    # round 21's r45-033: "installing the NVIDIA driver in docker failed"
    ("在docker中安装英伟达驱动失败\n", "docker"),
    ("docker容器里运行 nvidia-smi\n", "docker"),
    ("all the pods using vgpu failed to run `nvidia-smi` (a k8s cluster)\n", "kubernetes"),
    # round 12's r28-019 (https://github.com/Project-HAMi/HAMi, its index.toml): no article,
    # kubectl under its alias; round 4's r5-022; round 3's r2-059, a prompt labelled
    ("nvidia-smi error in pod when cpu-memory limits!=requests\n", "kubernetes"),
    ("➜  k exec -it -n test gpustress-vgpu-ccc546647-vhl5c -- nvidia-smi\n", "kubernetes"),
    ("And the `devicel.list` in container as below:\n", "container"),
    ("(container) $ nvidia-smi -L\n", "container"),
    # round 14's r32-009 (its index.toml): a Pod manifest, then nvidia-smi inside it
    ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: gpu-pod2\nspec:\n  containers:\n"
     "    - name: test\n", "kubernetes"),
    # round 13's r29-009 (ollama): entering the container, and the template's OS field
    ("Upon entering the container to investigate, I discovered that the GPU cannot be used\n",
     "container"),
    ("### OS\n\nLinux, Docker\n\n### GPU\n\nNvidia\n", "docker"),
    # round 23's r50-016 (LocalAI's template: the environment field answered "Docker")
    ("**Environment, CPU architecture, OS, and Version:**\nDocker\nOS: Ubuntu 24.10\n", "docker"),
    ("- OS: Docker on Ubuntu 22.04\n", "docker"),
    # round 7's r14-025 (tkestack gpu-manager, Chinese) and round 9's r20-030 (an exporter)
    ("但是，我可以在pod中找到`libnvidia-ml.so`：\n", "kubernetes"),
    ("when I create the nvidia-gpu-prometheus-exporter, the pod error, the message is\n",
     "container"),
])
def test_a_text_that_ran_in_a_container_says_which(text: str, kind: str) -> None:
    partial = system.parse(text)
    assert partial is not None and partial.kind == system.CONTAINER_ONLY
    assert _host(read_reports([("issue", "Failed to initialize NVML: Unknown Error\n" + text)])
                 ).container == kind


@pytest.mark.parametrize("text", [
    "we ship a container image\n",  # no "in/inside the container"
    "--feature-gates=SupportPodPidsLimit=true on kubernetes\n",  # no pod: a word inside one
    "the CD daemon pod (see https://github.com/NVIDIA/k8s-dra-driver-gpu/issues/625)\n",  # a link
    "docker pull nvidia/cuda:12.4.0-base\n",  # pulling runs nothing
    "root@myserver:~# nvidia-smi\n",  # a named host, not a container's id
    "pulled from container registry ghcr.io\n",  # "from" needs "the/a/my … container"
    "(host) # nvidia-smi -L\n",  # the reporter's label for the host
    "the bulk exec -it flag\n",  # "k exec" only as a word of its own
    "kind: Service\nspec:\n  ports:\n",  # a manifest with no containers
    "### OS\n\nLinux\n\nI also tried Docker Desktop on another machine\n",  # not the field
    "**Environment:**\nDocker version 27.1.1 installed, the app runs on the host\n",  # installed
    "Environment: Ubuntu 22.04, Docker too\n",  # the field's answer is not Docker
    "synced to my iPod, then a pod of whales\n",  # a word inside one; no "the/my …" before
])
def test_what_is_no_container(text: str) -> None:
    assert system.parse(text) is None


def test_a_text_that_names_a_container_and_nothing_else_is_no_report() -> None:
    with pytest.raises(ReportError):
        read_reports([("issue", "It fails inside the container, works on the host.\n")])


def test_nvml_unknown_error_in_a_container_is_its_lost_device_access() -> None:
    # https://github.com/dstackai/dstack/issues/2601 (round 5's development report r8-012):
    # NVML's "Unknown Error" in a container after `systemctl daemon-reload` on the host
    text = (HELDOUT / "round5" / "reports-D" / "r8-012.md").read_text(encoding="utf-8")
    env = read_reports([("r8-012.md", text)])
    assert _host(env).container == "container"
    assert isinstance(env.nvml, Unavailable)
    assert env.nvml.message.endswith("NVML: Unknown Error")  # not the prose after it
    status = statuses(env)
    assert status["GD505"] is Status.FAIL
    assert status["GD101"] is Status.SKIP  # one cause, counted once: not the host's driver


@pytest.mark.parametrize(("path", "driver"), [
    # https://github.com/ollama/ollama (round 7's r14-024, its index.toml): the host's table
    # (A30, 535.288.01), and inside the Ollama container "Failed to initialize NVML: Unknown
    # Error" after a while
    (HELDOUT / "round7" / "reports-F" / "r14-024.md", "535.288.01"),
    # round 3's r2-059: "(container) $ nvidia-smi -L" fails, "(host) # nvidia-smi -L" lists
    # 2x A10 + 2x T4 on 570.133.20
    (HELDOUT / "round3" / "reports-A" / "r2-059.md", "570.133.20"),
])
def test_nvml_unknown_error_in_a_container_beside_the_hosts_working_driver(
        path: Path, driver: str) -> None:
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == driver  # the host's
    host = _host(env)
    assert host.container_nvml_error is not None
    assert "Unknown Error" in host.container_nvml_error  # the container's, kept beside it
    status = statuses(env)
    assert (status["GD505"], status["GD101"]) == (Status.FAIL, Status.PASS)


def test_nvmls_enum_name_for_its_unknown_error_in_a_pod() -> None:
    # round 14's r32-009 (HAMi vGPU pod on an RTX 4090 node): "Failed to initialize NVML:
    # ERROR_UNKNOWN", NVML_ERROR_UNKNOWN as a binding names it, after the Pod's manifest
    path = HELDOUT / "round14" / "reports-M" / "r32-009.txt"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert _host(env).container == "kubernetes"
    status = statuses(env)
    assert (status["GD505"], status["GD101"]) == (Status.FAIL, Status.SKIP)


def test_a_working_driver_and_an_nvml_error_outside_a_container_keep_the_driver() -> None:
    text = ("$ nvidia-smi -L\nGPU 0: NVIDIA A10 (UUID: GPU-f15ae561-21b1-6003-c768-861fc285203b)"
            "\n$ nvidia-smi\nFailed to initialize NVML: Unknown Error\n")
    env = read_reports([("issue", text)])
    assert isinstance(env.host, Unavailable) or env.host.container_nvml_error is None
    assert statuses(env)["GD505"] is Status.SKIP


def test_nvml_unknown_error_outside_a_container_stays_a_driver_failure() -> None:
    env = read_reports([("issue", "$ nvidia-smi\nFailed to initialize NVML: Unknown Error\n")])
    status = statuses(env)
    assert (status["GD101"], status["GD505"]) == (Status.FAIL, Status.SKIP)


def test_nvmls_unknown_error_as_a_user_retypes_it_inside_docker() -> None:
    # round 6's r11-011 (https://github.com/alibaba/BladeDISC/issues/1248): lower
    # case, no colon, in Markdown's bold
    text = ("Nvidia-smi is not working after few hours inside docker(NVML error)\n"
            "After few hours , nvidia-smi gives  **failed to initialize nvml unknown error** "
            "which results in blocking the GPU usage inside the docker.\n")
    env = read_reports([("issue", text)])
    assert isinstance(env.nvml, Unavailable) and env.nvml.message.endswith(": unknown error")
    assert statuses(env)["GD505"] is Status.FAIL


def test_lshw_display_names_the_driver_bound_and_nvidia_smi_missing_from_python() -> None:
    # https://github.com/peci1/nvidia-htop/issues/23 (round 10, r23-002): a script's
    # FileNotFoundError for 'nvidia-smi', and `sudo lshw -C display` showing a GeForce 9300 GS
    # bound to nouveau ("configuration: driver=nouveau latency=0")
    path = HELDOUT / "round10" / "reports-I" / "r23-002.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.NOT_INSTALLED
    status = statuses(env)
    assert (status["GD109"], status["GD101"]) == (Status.FAIL, Status.FAIL)


@pytest.mark.parametrize(("name", "said"), [
    # runc's words starting a container (round 19's r41-017: 'exec: "nvidia-smi": executable
    # file not found in $PATH' under nvidia-container-runtime)
    ("r41-017.md", "nvidia-smi or the driver's libnvidia-ml.so is missing in this container"),
    # nvidia-docker2 named beside NVML's "Unknown Error" (r41-023: Debian 11's cgroup v2)
    ("r41-023.md", "NVML fails with 'Unknown Error' in this container (docker)"),
])
def test_runc_and_nvidia_docker_name_a_container(name: str, said: str) -> None:
    path = Path(__file__).parents[1] / "fixtures" / "heldout" / "round19" / "reports-R" / name
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    found = {str(r.check_id): r.finding for r in run_checks(env, load_tables()).results}
    assert found["GD505"].status is Status.FAIL and said in found["GD505"].message


def test_wsl_2_named_makes_the_windows_drivers_number_beside_linux_tools_no_warning() -> None:
    """Round 20's r43-034: "-----wsl2 ubuntu 22.04-------" above nvidia-smi's table with
    NVIDIA-SMI 525.60.13 beside the Windows driver's 522.25 (older than the tools: not the
    pairing `driver_parts.tools_apart` knows as WSL's). Named WSL 2, it is how WSL is built, and
    GD101 passes as labelled; alone, WSL named is no report."""
    text = (HELDOUT / "round20" / "reports-S" / "r43-034.txt").read_text(encoding="utf-8")
    env = read_reports([("r43-034.txt", text)])
    assert isinstance(env.host, HostFacts) and env.host.wsl is True
    assert statuses(env)["GD101"] is Status.PASS
    without = read_reports([("table", text.replace("-----wsl2 ubuntu 22.04-------", ""))])
    assert statuses(without)["GD101"] is Status.WARN  # the same table, WSL not named
    for sign in ("Linux 5.15.90.1-microsoft-standard-WSL2 x86_64", "/usr/lib/wsl/lib/nvidia-smi",
                 "under WSL 2"):
        part = system.parse(sign)
        assert part is not None and part.kind == system.WSL_ONLY, sign
        assert isinstance(part.host, HostFacts) and part.host.wsl is True
    assert system.parse("a file named my.wsl2 and awsl2") is None  # inside other words
    with pytest.raises(ReportError):
        read_reports([("words", "I use WSL2 on Windows 11")])


def test_ollamas_gpu_field_naming_another_vendor_is_no_nvidia_gpu() -> None:
    """Round 13's r29-024 (Ollama's template, "### GPU" answered "AMD"; nvidia-smi "couldn't
    communicate with the NVIDIA driver" from packages its installer left): the report's GPU is
    AMD's, so the failing NVIDIA tools are leftovers (GD101 warns, it failed before: the one
    false failure of that set); with no NVIDIA tools at all, GD101 has nothing to judge."""
    text = (HELDOUT / "round13" / "reports-L" / "r29-024.md").read_text(encoding="utf-8")
    env = read_reports([("r29-024.md", text)])
    assert isinstance(env.host, HostFacts) and env.host.other_gpu_vendor == "AMD"
    assert statuses(env)["GD101"] is Status.WARN
    missing = read_reports([("o", "### GPU\n\nAMD\n\n$ nvidia-smi\nbash: nvidia-smi: command not "
                                  "found\n")])
    assert statuses(missing)["GD101"] is Status.SKIP
    for answer, vendor in (("Nvidia", None), ("AMD, Nvidia", None), ("Intel", "Intel"),
                           ("Apple", "Apple"), ("Other", None)):
        part = system.parse(f"### GPU\n\n{answer}\n\n### CPU\n\nAMD\n")
        assert (part.host.other_gpu_vendor if part is not None and isinstance(
            part.host, HostFacts) else None) == vendor, answer
    # an NVIDIA GPU the report shows outranks the field: GD101 judges as before
    # (the negativo17 issue's lspci -vv above, with the field and a failing nvidia-smi beside)
    smi = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
    shown = read_reports([("o", "### GPU\n\nAMD\n\n" + LSPCI_VV_NOUVEAU + "\n" + smi)])
    assert statuses(shown)["GD101"] is Status.FAIL
