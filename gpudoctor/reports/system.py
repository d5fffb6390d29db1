"""What the system's own tools print about the GPU's place in it, quoted anywhere in a paste:
the host facts they state.

- `ls -l /dev/nvidia*`: each device node's mode. A report does not say which user runs the
  program, so a node counts as usable when its group or others may read and write it (the
  driver creates them crw-rw-rw-); one only its owner may open is not. "ls: cannot access
  '/dev/nvidia*': No such file or directory" states that there are none.
- the NVIDIA GPUs on the PCI bus (`lspci`'s NVIDIA display and 3D controllers) and the driver
  bound to each: `lspci -k`'s "Kernel driver in use:" under the device's line, and the kernel
  log's lines of the nouveau driver for a PCI address ("nouveau 0000:01:00.0: DRM: VRAM: 2048
  MiB": nouveau holds that GPU), and `lshw -C display`'s NVIDIA entries ("bus info:
  pci@0000:03:00.0", "configuration: driver=nouveau latency=0"; no "driver=" when none is bound).

- that the text ran in a container: a command that enters or starts one (`docker run|exec`,
  `podman run|exec`, `kubectl exec`), docker's default prompt (`root@<12 hex digits of the
  container's id>:`), kubectl's usual alias at a prompt (`k exec -it …`), a prompt labelled
  `(container) $`, a Kubernetes manifest of a workload ("kind: Pod" … "containers:"), or prose
  that says so ("inside the container", "entering the container", "in the pod", "in pod",
  "the pod", a Chinese "容器中" or "pod中"), Ollama's issue template with "Docker" as its OS,
  another template's OS or environment field answered "Docker" (LocalAI's),
  the banner of NVIDIA's NGC images (its licence line, its start-up check's advice). Alone it
  is no report (a text that names a container says nothing of its GPU stack); beside one, it
  tells a container's lost device access (NVML's "Unknown Error", GD505) from a driver fault.
- that its GPU is another vendor's, in the report's own words: Ollama's issue template's "GPU"
  field answered "AMD", "Intel" or "Apple" without NVIDIA (GD101 then takes failing NVIDIA
  tools for leftovers). Alone it is no report.
- that it ran in WSL 2: its kernel's name ("-microsoft-standard-WSL2"), /usr/lib/wsl/lib, or the
  words "WSL2" / "WSL 2" (GD101 then reads nvidia-smi's Linux version beside the Windows
  driver's number as WSL builds it). Alone it is no report.

Every other host fact (the OS, the environment, /dev/shm) stays Unavailable(NOT_REPORTED).
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.model import DeviceNode, Unavailable
from gpudoctor.reports.interface import Partial, not_reported, unreported_host

LONGEST = 200_000  # a paste longer than this is searched in its first part only
# "crw-rw-rw- 1 root root 195,   0 Jun 25 11:27 /dev/nvidia0" (GNU ls; a trailing "." or "+"
# marks an SELinux context or an ACL)
_NODE = re.compile(r"^[ \t>]*c([r-][w-][xsS-])([r-][w-][xsS-])([r-][w-][xtT-])[.+]?[ \t]+\d+"
                   r"[ \t]+\S+[ \t]+\S+[ \t]+\d+,[ \t]*\d+[ \t]+[^\n]*?[ \t]"
                   r"(/dev/nvidia(?:\d{1,3}|ctl|-uvm|-uvm-tools|-modeset))[ \t]*$", re.MULTILINE)
_NO_NODES = re.compile(r"ls: cannot access '?/dev/nvidia\*'?: No such file or directory")
# lspci (-k, -nnk): "01:00.0 VGA compatible controller: NVIDIA Corporation GA102 … (rev a1)",
# then indented lines, one of them "Kernel driver in use: nouveau"
_LSPCI = re.compile(r"^[ \t]*((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])[ \t]+"
                    r"(?:VGA compatible controller|3D controller|Display controller)"
                    r"(?:[ \t]+\[[0-9a-f]{4}\])?:[ \t]+NVIDIA Corporation[^\n]*"
                    r"((?:\n[ \t]+[^\n]*){0,40})", re.MULTILINE)
_IN_USE = re.compile(r"Kernel driver in use:[ \t]*([\w-]+)")
# lshw -C display: "*-display" (or "*-display:0") and its indented "key: value" lines
_LSHW = re.compile(r"^[ \t]*\*-display(?::\d{1,2})?[ \t]*"
                   r"((?:\n[ \t]+[a-z][a-z ]{1,20}:[^\n]*){1,30})", re.MULTILINE)
_LSHW_BUS = re.compile(r"bus info:[ \t]*pci@((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}"
                       r"\.[0-7])")
_LSHW_DRIVER = re.compile(r"configuration:[^\n]*?\bdriver=([\w-]+)")
_PCI_ID = re.compile(r"\[(10de:[0-9a-f]{4})\]")
_CONTAINER: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bkubectl[ \t]+(?:exec|debug|run)\b"), "kubernetes"),
    # kubectl under its usual alias, at a prompt: "➜  k exec -it -n test pod-0 -- nvidia-smi"
    (re.compile(r"^[^\n]{0,40}?(?<![\w-])k[ \t]+exec[ \t]+-", re.MULTILINE), "kubernetes"),
    # a Kubernetes manifest of a workload and its containers ("kind: Pod" … "containers:")
    (re.compile(r"(?ms:^[ \t]*kind:[ \t]*(?:Pod|Job|Deployment|DaemonSet|StatefulSet)[ \t]*$"
                r".{0,2000}?^[ \t]*containers:)"), "kubernetes"),
    # a prompt the reporter labelled: "(container) $ nvidia-smi -L" beside "(host) # …"
    (re.compile(r"^[ \t]*\((?:container|pod)\)[ \t]*[$#]", re.MULTILINE), "container"),
    (re.compile(r"\bdocker(?:[ \t]+container)?[ \t]+(?:run|exec|attach)\b"
                r"|\bdocker[ -]compose[ \t]+(?:run|exec|up)\b"), "docker"),
    # Docker Compose's own output: "Attaching to frigate", "Recreating frigate ... done", a
    # service's "<name>_1 exited with code 1"; its services' lines are then "frigate    | …"
    (re.compile(r"(?m:^[ \t]*Attaching to [\w.-]{1,60}(?:, [\w.-]{1,60}){0,20}[ \t]*$"
                r"|^[ \t]*(?:Recreating|Creating|Starting) [\w.-]{1,60} \.{3} done[ \t]*$"
                r"|^[ \t]*[\w.-]{1,60}_\d{1,3} exited with code \d{1,3}[ \t]*$)"), "docker"),
    (re.compile(r"\bpodman[ \t]+(?:run|exec)\b"), "podman"),
    # runc's words starting one ("container_linux.go:345: starting container process caused"),
    # and nvidia-docker named (its wrapper, or its runtime package nvidia-docker2)
    (re.compile(r"\bcontainer_linux\.go:\d{1,5}: starting container process\b"), "container"),
    (re.compile(r"(?i:\bnvidia-docker2?\b)"), "docker"),
    (re.compile(r"^[^\n@]{0,40}\broot@[0-9a-f]{12}:", re.MULTILINE), "docker"),
    # the banner of NVIDIA's NGC images (CUDA, PyTorch, Triton …) as they start: its licence
    # line, and its start-up check's advice to start "this container" with the toolkit
    (re.compile(r"This container image and its contents are governed by the NVIDIA Deep "
                r"Learning Container License|Use (?:Docker with )?(?:the )?NVIDIA Container "
                r"Toolkit to start this container"), "container"),
    # (without the article too: "nvidia-smi error in pod", "happens in container")
    (re.compile(r"(?i:\b(?:inside|in|into|within)[ \t]+(?:(?:the|a|my|our|this|that)[ \t]+)?"
                r"(?:k8s[ \t]+|kubernetes[ \t]+)?pod\b"
                r"|\bfrom[ \t]+(?:the|a|my|our|this|that)[ \t]+(?:k8s[ \t]+|kubernetes[ \t]+)?"
                r"pod\b)"), "kubernetes"),
    (re.compile(r"(?i:\b(?:inside|in|into|within|entering|enter|entered)[ \t]+"
                r"(?:(?:the|a|my|our|this|that)[ \t]+)?(?:docker[ \t]+|podman[ \t]+)?container\b"
                r"|\bfrom[ \t]+(?:the|a|my|our|this|that)[ \t]+(?:docker[ \t]+|podman[ \t]+)?"
                r"container\b)"), "container"),
    # "in docker" in Chinese ("在docker中安装…", "docker里", "docker容器"): the English form below
    (re.compile(r"(?i:在[ \t]?docker(?:[ \t]?容器)?[ \t]?(?:中|内|里)"
                r"|\bdocker[ \t]?(?:中|内|里|容器))"), "docker"),
    (re.compile(r"(?:在|于)?容器(?:中|内|里)"), "container"),  # "in the container", in Chinese
    (re.compile(r"(?i:pod)(?:中|内|里)"), "kubernetes"),  # "in the pod", in Chinese
    # Ollama's issue template: its "OS" field, where "Docker" is one of the choices
    (re.compile(r"(?m:^###[ \t]*OS[ \t]*\n(?:[ \t]*\n){0,3}[^\n#]{0,40}\bDocker\b)"), "docker"),
    # another template's field for the OS or the environment answered "Docker" (LocalAI's
    # "**Environment, CPU architecture, OS, and Version:**" then "Docker"; "- OS: Docker")
    (re.compile(r"(?m:^[ \t]{0,4}(?:[-*][ \t]{1,4})?(?:\*\*|###[ \t]{0,4})?[^\n*#:]{0,60}"
                r"\b(?:OS|Environment)\b[^\n*#:]{0,60}(?::[ \t]*\*\*|\*\*[ \t]*:|:)[ \t]*"
                r"(?:\n[ \t]*){0,3}Docker\b(?![ \t]*version\b|-))"),
     "docker"),
    # "nvidia-smi inside the docker", "in docker"
    (re.compile(r"(?i:\b(?:inside|in|within)[ \t]+(?:the[ \t]+|a[ \t]+)?docker\b)"), "docker"),
    # the checked boxes of NVIDIA's device plugin / GPU operator issue template
    (re.compile(r"(?im:^[ \t]*[-*][ \t]+\[x\][ \t]+Are you running Kubernetes\b)"), "kubernetes"),
    (re.compile(r"(?im:^[ \t]*[-*][ \t]+\[x\][ \t]+Are you running Docker\b)"), "docker"),
    # a Kubernetes cluster's pods: both words on one line
    (re.compile(r"(?im:^[^\n]*\b(?:kubernetes|k8s)\b[^\n]*\bpods?\b"
                r"|^[^\n]*\bpods?\b[^\n]*\b(?:kubernetes|k8s)\b)"), "kubernetes"),
    # last: a pod named as a thing the reporter has ("the pod error", "my pod"): Kubernetes' or a
    # cloud's (RunPod's are containers too)
    (re.compile(r"(?i:\b(?:the|my|our|this|that|each|every)[ \t]+(?:gpu[ \t]+)?pods?\b)"),
     "container"),
)
_URL = re.compile(r"https?://\S{1,2000}")  # a link names a project, not where the paste ran
CONTAINER_ONLY = "a container the text names"
# WSL 2, where the text ran: its kernel ("5.15.90.1-microsoft-standard-WSL2"), the folder its
# driver libraries and nvidia-smi come from (/usr/lib/wsl/lib), or the words "WSL2" / "WSL 2"
_WSL = re.compile(r"-microsoft-standard-WSL2\b|/usr/lib/wsl/lib\b|(?i:(?<![\w.])WSL[ \t]?2\b)")
# Ollama's issue template's "GPU" field answered with another vendor ("### GPU\n\nAMD"): the
# machine's GPU, in the reporter's words
_OLLAMA_GPU = re.compile(r"(?m:^###[ \t]*GPU[ \t]*\n(?:[ \t]*\n){0,3}[ \t]*(?P<v>[^\n#]{1,60})$)")
_VENDOR = re.compile(r"(?i:\b(AMD|Intel|Apple)\b)")
_VENDOR_NAME = {"amd": "AMD", "intel": "Intel", "apple": "Apple"}  # as the vendors write them
WSL_ONLY = "WSL 2 as the text names it"
VENDOR_ONLY = "another vendor's GPU as the text names it"
# kinds of a text that is no report alone
SIGNS_ONLY = frozenset({CONTAINER_ONLY, WSL_ONLY, VENDOR_ONLY})
_NOUVEAU = re.compile(r"\bnouveau ((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): ")


def _address(text: str) -> str:
    """A PCI address with its 4-digit domain, lower case, as /sys/bus/pci names it."""
    return (text if text.count(":") == 2 else f"0000:{text}").lower()


def _nodes(text: str) -> tuple[DeviceNode, ...] | None:
    found: dict[str, DeviceNode] = {}
    for m in _NODE.finditer(text):
        group, other = m[2], m[3]
        found.setdefault(m[4], DeviceNode(
            path=m[4], readable="r" in (group[0], other[0]), writable="w" in (group[1], other[1])))
    if found:
        return tuple(found.values())
    return () if _NO_NODES.search(text) else None


def _pci(text: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The NVIDIA GPUs on the PCI bus ("0000:01:00.0", with lspci -nn's "10de:2684" when
    shown) and the driver bound to each where the text says it: `lspci -k` (its "Kernel
    modules:" line shows -k was given; no "Kernel driver in use:" then means none is bound),
    nouveau's own kernel lines."""
    gpus: dict[str, str] = {}
    bound: dict[str, str] = {}
    for m in _LSPCI.finditer(text):
        address = _address(m[1])
        pci_id = _PCI_ID.search(m[0].split("\n", 1)[0])
        gpus.setdefault(address, f"{address} {pci_id[1]}" if pci_id else address)
        in_use = _IN_USE.search(m[2])
        if in_use or "Kernel modules:" in m[2]:
            bound.setdefault(address, in_use[1] if in_use else "")
    for m in _LSHW.finditer(text):
        bus = _LSHW_BUS.search(m[1])
        if bus is None or not re.search(r"vendor:[ \t]*NVIDIA Corporation", m[1]):
            continue
        gpus.setdefault(_address(bus[1]), _address(bus[1]))
        if "configuration:" in m[1]:
            driver = _LSHW_DRIVER.search(m[1])
            bound.setdefault(_address(bus[1]), driver[1] if driver else "")
    for m in _NOUVEAU.finditer(text):
        gpus.setdefault(_address(m[1]), _address(m[1]))
        bound.setdefault(_address(m[1]), "nouveau")
    return tuple(gpus.values()), tuple(bound.items())


# nvidia-smi run inside the container: on the command that enters or starts it, at a
# container's prompt ("root@2558da61a312:/usr/local/nvidia/bin# nvidia-smi"), its banner in a
# Compose service's log ("frigate    | | NVIDIA-SMI 515.65.01 …"), or the words that say so
# just before it
_SMI_INSIDE = re.compile(
    r"(?:\b(?:docker|podman)(?:[ \t]+container)?[ \t]+(?:run|exec)|\bdocker[ -]compose[ \t]+"
    r"(?:run|exec)|\bkubectl[ \t]+exec)\b[^\n]{0,300}?[ \t]nvidia-smi\b"
    r"|(?m:^[^\n@]{0,40}\broot@[0-9a-f]{12}:[^\n]{0,200}?[$#][ \t]*nvidia-smi\b)"
    r"|(?m:^[ \t]{0,8}[A-Za-z][\w.-]{0,60}[ \t]{1,20}\|[ \t]?\|[ \t]*NVIDIA-SMI[ \t])"
    # or in words just before its table: "When I run nvidia-smi from inside the container I
    # get:" (not words about it beside another table: the host's)
    r"|(?i:\bnvidia-smi`?[ \t]{1,4}(?:from[ \t]{1,4})?(?:inside|in|within)[ \t]{1,4}"
    r"(?:the|this|my|our)[ \t]{1,4}(?:docker[ \t]{1,4}|podman[ \t]{1,4})?container\b"
    r"[^\n:]{0,60}:[ \t]*\n(?:[^\n]{0,200}\n){0,3}?[^\n]{0,40}\|[ \t]*NVIDIA-SMI[ \t])")


def _container(text: str) -> str | None:
    """The kind of container the text shows it ran in ("docker", "podman", "kubernetes",
    "container"), None when it shows none."""
    text = _URL.sub(" ", text)
    return next((kind for pattern, kind in _CONTAINER if pattern.search(text)), None)


def parse(text: str) -> Partial | None:
    """The host facts the system's tools state in `text`, None when it states none; a text
    that names a container and nothing else: kind CONTAINER_ONLY (read beside a report, never
    one alone)."""
    text = text[:LONGEST].replace("\r\n", "\n")
    nodes = _nodes(text)
    gpus, bound = _pci(text)
    container = _container(text)
    wsl = _WSL.search(_URL.sub(" ", text)) is not None
    vendor = _other_vendor(text)
    if nodes is None and not gpus and container is None and not wsl and vendor is None:
        return None
    shows = " and ".join(what for what, shown in (("ls -l /dev/nvidia*", nodes is not None),
                                                  ("the PCI bus", bool(gpus)),
                                                  ("that it ran in a container", bool(container)))
                         if shown)

    def absent(what: str) -> Unavailable:
        return not_reported(f"{what}: not in the report (it shows only {shows})")

    kind = "system tools' output" if nodes is not None or gpus else (
        CONTAINER_ONLY if container else WSL_ONLY if wsl else VENDOR_ONLY)
    host = unreported_host(absent)
    return Partial(kind=kind, rank=1, host=replace(
        host,
        container=container or host.container,
        dev_nodes=nodes if nodes is not None else host.dev_nodes,
        pci_gpus=gpus if gpus else host.pci_gpus,
        pci_gpu_drivers=bound,
        smi_in_container=bool(container) and _SMI_INSIDE.search(text) is not None,
        wsl=True if wsl else host.wsl,
        other_gpu_vendor=vendor,
    ))


def _other_vendor(text: str) -> str | None:
    """"AMD" (or "Intel", "Apple") where Ollama's template's GPU field names another vendor's
    GPU and not NVIDIA's."""
    m = _OLLAMA_GPU.search(text)
    if m is None or re.search(r"(?i:nvidia|geforce|cuda)", m["v"]):
        return None
    vendor = _VENDOR.search(m["v"])
    return _VENDOR_NAME[vendor[1].lower()] if vendor else None
