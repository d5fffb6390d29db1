"""The one entry every command reads a saved snapshot or a pasted report through: every block
of every input, read by its reader, merged into one Environment (see the package's docstring).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, TypeVar

from gpudoctor import __version__
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    Environment,
    HostFacts,
    NvmlFacts,
    Reason,
    TorchFacts,
    TorchRuntime,
    Unavailable,
)
from gpudoctor.reports import (
    build_log,
    collect_env,
    comfyui,
    coqui_tts,
    env_list,
    env_tools,
    espnet,
    gpu_libs,
    gpustat,
    jetson,
    kernel_log,
    nvidia_smi,
    nvidia_smi_csv,
    nvidia_smi_list,
    nvidia_smi_q,
    pip_show,
    prose,
    snapshot,
    system,
    torch_import,
    torch_messages,
    torch_prints,
    ultralytics,
    unsloth,
    webui_setup,
)
from gpudoctor.reports.credible import credible_driver_cuda
from gpudoctor.reports.interface import (
    NO_DRIVER_INSIDE,
    NVML_INIT_FAILED,
    Partial,
    ReportError,
    not_reported,
    tag_cuda,
    unreported_host,
)
from gpudoctor.reports.issue_body import Block, find_blocks
from gpudoctor.snapshot import SnapshotError, from_data, to_data

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

__all__ = ["ReportError", "read_inputs", "read_reports"]

EXPECTED = ("a gpudoctor snapshot or JSON report, the output of `python -m "
            "torch.utils.collect_env` (or detectron2's, OpenMMLab's, SGLang's, Lightning's, "
            "xFormers' info, DeepSpeed's ds_report, fastai's show_install, MONAI's "
            "print_config, MinkowskiEngine's print_diagnostics, faceswap's system "
            "information), `nvidia-smi` (-L, -q, -q -x, "
            "mig -lgi, topo -m), gpustat, ComfyUI's system information, Unsloth's and "
            "Ultralytics' banners, kohya_ss's and SD.Next's torch check, torch's own messages, "
            "prints of its version and import errors, `pip show torch`, the kernel module's "
            "messages, `ls -l /dev/nvidia*`, `lspci -k`, `lshw -C display`, a build log's nvcc "
            "run from its release folder (/usr/local/cuda-11.0/bin/nvcc), CuPy's show_config, "
            "`numba -s`, NVIDIA Warp's start-up banner, jetson-stats' jetson_release and "
            "jtop, ESPnet's check_install, Coqui TTS's collect_env_info, or an issue body or log "
            "that contains them")


def _parse(block: Block) -> Partial | None:
    if block.kind == "collect_env":
        return collect_env.parse(block.text)
    if block.kind in ("nvidia-smi", "nvidia-smi (rows)"):
        return nvidia_smi.parse_table(block.text)
    if block.kind in ("nvidia-smi -q", "nvidia-smi -q -x"):
        partial = nvidia_smi_q.parse(block.text, xml=block.kind.endswith("-x"))
        return partial if partial.nvml is not None else None
    if block.kind == "nvidia-smi (error)":
        return nvidia_smi.parse_error(block.text)
    if block.kind == "nvidia-smi -L":
        return nvidia_smi_list.parse(block.text)
    if block.kind == "nvidia-smi mig":
        return nvidia_smi_list.parse_mig(block.text)
    if block.kind == "nvidia-smi topo -m":
        return nvidia_smi_list.parse_topo(block.text)
    if block.kind == "nvidia-smi --query-gpu":
        return nvidia_smi_csv.parse(block.text)
    if block.kind == "gpustat":
        return gpustat.parse(block.text)
    if block.kind == "tool env":
        return env_tools.parse(block.text)
    if block.kind == "nvcc":
        return env_tools.parse_nvcc(block.text)
    if block.kind == "nvidia-smi -q (fragment)":
        return nvidia_smi_q.parse_fragment(block.text)
    if block.kind == "nvidia-smi -q -x (fragment)":
        return nvidia_smi_q.parse_xml_fragment(block.text)
    return None


X = TypeVar("X")


def _best(candidates: list[tuple[int, Partial, X]], used: list[int]) -> X | None:
    """The fact of the block that states it best: stated beats NOT_REPORTED, then the block's
    rank, a complete block beats a cut-off one, and an earlier block a later one."""
    stated = [(i, p, f) for i, p, f in candidates if f is not None]
    if not stated:
        return None
    i, _, fact = max(stated, key=lambda c: (
        not (isinstance(c[2], Unavailable) and c[2].reason is Reason.NOT_REPORTED),
        c[1].rank, c[1].complete, -c[0]))
    used.append(i)
    return fact


def _gpus_from_elsewhere(nvml: NvmlFacts | Unavailable | None,
                         parts: list[tuple[int, Partial]], chosen: int | None
                         ) -> NvmlFacts | Unavailable | None:
    """The driver's view from the block that states it best, with the GPUs of another block
    where that one was cut off before its GPUs: `nvidia-smi -q` cut after its header (the
    driver's version) beside a complete `nvidia-smi -L` (every GPU)."""
    if not isinstance(nvml, NvmlFacts) or nvml.gpus or chosen is None \
            or dict(parts)[chosen].complete:
        return nvml
    other = next((p.nvml for i, p in parts if i != chosen and isinstance(p.nvml, NvmlFacts)
                  and p.nvml.gpus and p.complete), None)
    if other is None:
        return nvml
    return replace(nvml, gpus=other.gpus, binding=other.binding)


def _driver_from_elsewhere(nvml: NvmlFacts | Unavailable | None,
                           parts: list[tuple[int, Partial]]) -> NvmlFacts | Unavailable | None:
    """The driver's view with its version, and the highest CUDA it runs, from other blocks
    where the chosen one does not state them (`nvidia-smi topo -m` or `-L` lists the GPUs, an
    environment list beside it names the driver; the words quote nvidia-smi's "CUDA Version"):
    the one value the other blocks state, none where they differ."""
    if not isinstance(nvml, NvmlFacts):
        return nvml
    others = [p.nvml for _, p in parts if isinstance(p.nvml, NvmlFacts)]
    if not isinstance(nvml.driver_version, str):
        said = {o.driver_version for o in others if isinstance(o.driver_version, str)}
        nvml = replace(nvml, driver_version=said.pop()) if len(said) == 1 else nvml
    if isinstance(nvml.cuda_driver_version, Unavailable) \
            and nvml.cuda_driver_version.reason is Reason.NOT_REPORTED:
        cudas = {o.cuda_driver_version for o in others if isinstance(o.cuda_driver_version, int)}
        nvml = replace(nvml, cuda_driver_version=cudas.pop()) if len(cudas) == 1 else nvml
    return nvml


def _with_container_error(host: HostFacts | Unavailable | None,
                          nvml: NvmlFacts | Unavailable | None,
                          parts: list[tuple[int, Partial]]) -> HostFacts | Unavailable | None:
    """The host of a report from a container whose NVML failed there ("Failed to initialize
    NVML: Unknown Error", "Driver/library version mismatch") or that has no nvidia-smi (the
    runtime's 'exec: "nvidia-smi": executable file not found in $PATH') while another block
    shows the driver working (the host's nvidia-smi, or the container's before it lost its
    devices): the driver's facts stay those that work, the container's error is kept beside
    them (GD505 reads the first and the last, GD101 the second: the image's own driver
    libraries). The mismatch is kept outside a known container too: another environment of the
    same machine (a container the report does not name as one, a Nix flake) whose NVML
    library is another release than the kernel module (GD101 reads it)."""
    if not isinstance(nvml, NvmlFacts):
        return host
    inside = isinstance(host, HostFacts) and isinstance(host.container, str)
    error = next((p.nvml for _, p in parts if isinstance(p.nvml, Unavailable) and (
        p.nvml.reason is Reason.VERSION_MISMATCH or (inside and (
            (p.nvml.reason is Reason.ERROR and p.nvml.message.startswith(NVML_INIT_FAILED))
            or (p.nvml.reason is Reason.NOT_INSTALLED
                 and p.nvml.message in NO_DRIVER_INSIDE))))),
        None)
    if error is None:
        return host
    # outside a known container, only the mismatch is kept: another environment of the same
    # machine (a container not named as one, a Nix flake's) whose NVML library is another
    # release than the kernel module the working view reaches
    if not isinstance(host, HostFacts):
        host = unreported_host(lambda what: not_reported(f"{what} is not in the report"))
    return replace(host, container_nvml_error=f"{error.message} {error.detail or ''}".strip())


def _merge(found: list[tuple[str, Partial]]) -> Environment:
    used: list[int] = []
    parts = [(i, p) for i, (_, p) in enumerate(found)]
    host = _best([(i, p, p.host) for i, p in parts], used)
    nvml = _best([(i, p, p.nvml) for i, p in parts], used)
    nvml = _gpus_from_elsewhere(nvml, parts, used[-1] if nvml is not None else None)
    nvml = _driver_from_elsewhere(nvml, parts)
    toolkits = _best([(i, p, p.toolkits) for i, p in parts], used)
    torch = _best([(i, p, p.torch) for i, p in parts], used)
    cudnn = _best([(i, p, p.cudnn) for i, p in parts], used)
    libcuda = _best([(i, p, p.libcuda) for i, p in parts], used)
    host = _with_container_error(host, nvml, parts)
    sources = [f"{p.kind}{'' if p.complete else ' (cut off)'} in {found[i][0]}"
               for i, p in parts]  # every block read, whether or not its facts won
    return Environment(
        gpudoctor_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        host=host if host is not None else not_reported(
            "the host (environment variables, device nodes, /dev/shm) is not in the report"),
        nvml=nvml if nvml is not None else not_reported(
            "the NVIDIA driver is not in the report (no nvidia-smi output, no collect_env "
            "driver line)"),
        libcuda=libcuda if libcuda is not None else not_reported(
            "libcuda's view of the driver is not in the report"),
        toolkits=toolkits if toolkits is not None else not_reported(
            "the CUDA toolkit is not in the report"),
        torch=torch if torch is not None else not_reported(
            "PyTorch is not in the report (no collect_env output)"),
        cudnn=cudnn if cudnn is not None else not_reported("cuDNN is not in the report"),
        sources=tuple(dict.fromkeys(sources)),
    )


def _with_messages(part: Partial, messages: Partial) -> Partial:
    """A collect_env block whose torch finds no CUDA and gives no reason, with the reason
    torch printed elsewhere in the paste (its warning above the block, where the
    "Collecting environment information..." line that starts the block is missing); a block
    that leaves open whether torch is a CUDA build, closed by torch's "Torch not compiled
    with CUDA enabled", or opened by a message only a CUDA build prints; torch's prints or a
    list of versions, with the GPUs and the arch list torch's warnings name."""
    rt = part.torch.runtime if isinstance(part.torch, TorchFacts) else None
    said = messages.torch.runtime if isinstance(messages.torch, TorchFacts) else None
    if isinstance(said, TorchRuntime) and said.cuda is None and isinstance(part.torch,
                                                                          TorchFacts):
        # "Torch not compiled with CUDA enabled": a build without CUDA, which the block
        # (an environment list naming the version only) left open
        if isinstance(rt, Unavailable) and rt.reason is Reason.NOT_REPORTED:
            return replace(part, torch=replace(part.torch, runtime=said))
        if isinstance(rt, TorchRuntime) and isinstance(rt.cuda, Unavailable) \
                and rt.cuda_available is not True:
            return replace(part, torch=replace(part.torch, runtime=replace(
                rt, cuda=None, cuda_available=False, cuda_init_error=said.cuda_init_error)))
    if isinstance(said, TorchRuntime) and isinstance(said.cuda, Unavailable) and isinstance(
            part.torch, TorchFacts) and isinstance(rt, Unavailable) \
            and part.torch.stated_version is not None:
        # a block naming a release but not its build, beside torch's messages that only a
        # CUDA build prints ("The NVIDIA driver on your system is too old"): that release's
        # CUDA build, its version from the block
        return replace(part, torch=replace(part.torch, runtime=replace(
            said, version=part.torch.stated_version)))
    if isinstance(rt, TorchRuntime) and isinstance(said, TorchRuntime) and part.kind in (
            "torch's prints", "environment list") and not rt.warned_gpus:
        # torch's prints and a list of versions do not read torch's warnings: add them
        assert isinstance(part.torch, TorchFacts)
        rt = replace(rt, warned_gpus=said.warned_gpus, too_old_gpus=said.too_old_gpus,
                     incompatible_gpus=said.incompatible_gpus,
                     launch_error=rt.launch_error or said.launch_error,
                     arch_list=rt.arch_list if isinstance(rt.arch_list, tuple)
                     else said.arch_list)
        part = replace(part, torch=replace(part.torch, runtime=rt))
    if (not isinstance(rt, TorchRuntime) or rt.cuda_available is not False
            or not isinstance(said, TorchRuntime) or not isinstance(said.cuda_init_error, str)
            or not (isinstance(rt.cuda_init_error, Unavailable)
                    and rt.cuda_init_error.reason is Reason.NOT_REPORTED)):
        return part
    assert isinstance(part.torch, TorchFacts)
    return replace(part, torch=replace(part.torch, runtime=replace(
        rt, cuda_init_error=said.cuda_init_error)))


# HTML's line break as GitHub renders it, which reporters type into Markdown (a collect_env
# pasted into a table cell: "PyTorch version: 1.2.0<br>"): at a line's end nothing, inside a
# line a line break
_BR = re.compile(r"(?i:<br[ \t]*/?>)")
_BR_AT_END = re.compile(_BR.pattern + r"[ \t]*(?=\r?\n|$)")


# HTML's escapes, as a reply by e-mail stores a paste on GitHub ("<driver_version&gt;591.74",
# "&nbsp; &nbsp; <gpu"): taken back to their characters where the text has escaped markup or
# spaces, one pass (a doubly escaped "&amp;gt;" stays "&gt;")
_ESCAPED = re.compile(r"&(?:gt|lt|nbsp);")
_ENTITY = re.compile(r"&(gt|lt|nbsp|quot|amp|#39|#x27);")
_CHARACTER = {"gt": ">", "lt": "<", "nbsp": " ", "quot": '"', "amp": "&", "#39": "'",
              "#x27": "'"}


def _unbroken(text: str) -> str:
    """`text` with HTML's <br> taken out of its lines (see `_BR`) and its escapes undone
    (`_ESCAPED`)."""
    if _ESCAPED.search(text) is not None:
        text = _ENTITY.sub(lambda m: _CHARACTER[m[1]], text)
    if _BR.search(text) is None:
        return text
    return _BR.sub("\n", _BR_AT_END.sub("", text))


def read_reports(items: Sequence[tuple[str, str]]) -> Environment:
    """One Environment from every (name, text) given; see the module.

    Raises `ReportError` (one line, naming the input) for an input in which nothing is
    recognised, and for a JSON object that is not a usable snapshot. A snapshot is complete in
    itself: it is returned as it is, and wins over the other inputs.
    """
    found: list[tuple[str, Partial]] = []
    snapshots: list[Environment] = []
    for name, text in items:
        if snapshot.looks_like(text):
            snapshots.append(snapshot.read(text, name))
            continue
        recognised = False
        text = _unbroken(text)
        for block in find_blocks(text):
            if block.kind == "snapshot":
                snapshots.append(snapshot.read(block.text, f"{name} (line {block.line})"))
                recognised = True
            elif (partial := _parse(block)) is not None:
                found.append((name, partial))
                recognised = True
        if not any(n == name and p.torch is not None for n, p in found):
            # where no block says what torch is: ESPnet's check, Coqui TTS's report, a Markdown
            # list of versions, else (for torch) torch's own prints
            for reader in (espnet, coqui_tts, env_list, torch_prints):
                stated = reader.parse(text)
                if stated is not None:
                    found.append((name, stated))
                    recognised = True
                    if stated.torch is not None:
                        break
            else:  # nor its prints: `pip show torch`
                if (stated := pip_show.parse(text, load_tables())) is not None:
                    found.append((name, stated))
                    recognised = True
        partial = torch_messages.parse(text)  # anywhere in the text
        if partial is not None and any(p.torch is not None for n, p in found if n == name):
            found = [(n, _with_messages(p, partial)) if n == name else (n, p)
                     for n, p in found]
            partial = replace(partial, torch=None)  # collect_env read the warning in its block
        if partial is not None and (partial.torch or partial.libcuda or partial.nvml):
            found.append((name, partial))
            recognised = True
        if (failed := torch_import.parse(text)) is not None and not any(
                n == name and isinstance(p.torch, TorchFacts) for n, p in found):
            # torch's own import failed: it is installed (collect_env's "PyTorch version: N/A"
            # says only that the import failed), and no other torch is to be read
            found = [(n, replace(p, torch=None)) if n == name else (n, p) for n, p in found]
            found.append((name, failed))
            recognised = True
        for reader in (kernel_log, system, comfyui, unsloth, ultralytics, webui_setup,
                       build_log, gpu_libs, jetson):
            # the kernel's, the system tools', ComfyUI's, Unsloth's, Ultralytics', kohya_ss's
            # and SD.Next's outputs, a build's nvcc, CuPy's, Numba's and Warp's reports,
            stated = reader.parse(text)  # anywhere in the text
            if stated is not None:
                found.append((name, stated))
                recognised = recognised or stated.kind not in system.SIGNS_ONLY
        if not recognised and (stated := prose.parse(text, load_tables())) is not None:
            found.append((name, stated))  # no tool's output: what the words state
            recognised = True
        elif recognised:
            ours = [p for n, p in found if n == name]
            if _toolkit_alone(ours) and (stated := prose.parse(text, load_tables())) is not None:
                found.append((name, stated))  # a build's toolkit: the words may state the rest
            elif (_torch_alone(ours, text) or _toolkit_alone(ours)) and (
                    stated := prose.named_gpus(text, load_tables())) is not None:
                found.append((name, stated))  # the tools name no GPU: the words may
            if not any(n == name and isinstance(p.nvml, NvmlFacts) and isinstance(
                    p.nvml.cuda_driver_version, int) for n, p in found) and (
                    stated := prose.driver_cuda_said(text)) is not None:
                found.append((name, stated))  # the words quote nvidia-smi's CUDA Version
            named = prose.torch_named(text)
            if named is not None and not any(n == name and p.torch is not None
                                             for n, p in found):
                found.append((name, named))  # the tools state no torch: the words' version
            elif named is not None:
                # torch's messages show a CUDA build of unknown version: the words name it
                found = [(n, _versioned(p, named)) if n == name else (n, p) for n, p in found]
        if not recognised:
            raise ReportError(f"{name}: no report recognised; gpudoctor reads {EXPECTED}")
    if snapshots:
        return snapshots[0]
    return _merge(found)


def _versioned(part: Partial, named: Partial) -> Partial:
    """torch's messages (a CUDA build whose version they do not state) with the version the
    words name beside them ("torch  2.3.1+cu121" in a pip list, "pip install
    torch==1.13.1+cu117"), and its tag's CUDA; `part` unchanged where it is no such build or
    the named version is not one ("+cpu", ROCm)."""
    rt = part.torch.runtime if isinstance(part.torch, TorchFacts) else None
    said = named.torch.runtime if isinstance(named.torch, TorchFacts) else None
    version = said.version if isinstance(said, TorchRuntime) else (
        named.torch.stated_version if isinstance(named.torch, TorchFacts) else None)
    if part.kind != "torch's messages" or not isinstance(rt, TorchRuntime) or not isinstance(
            rt.version, Unavailable) or not isinstance(rt.cuda, Unavailable) \
            or not isinstance(version, str):
        return part
    tag = version.partition("+")[2]
    if tag and not tag.startswith("cu"):
        return part
    assert isinstance(part.torch, TorchFacts)
    return replace(part, torch=replace(part.torch, runtime=replace(
        rt, version=version, cuda=tag_cuda(version) or rt.cuda)))


# torch asked for its devices in the prints: what it answered is read by their rules only
_DEVICE_ASKED = re.compile(r"get_device_(?:name|properties|capability)\(")


def _toolkit_alone(partials: Sequence[Partial]) -> bool:
    """The text's tools state a toolkit (`nvcc --version`, a build's nvcc) and nothing of
    torch, the driver or a GPU: the GPU it was built for, the driver and torch can only be in
    the words."""
    return any(p.toolkits is not None for p in partials) and all(
        p.nvml is None and p.libcuda is None and p.torch is None for p in partials)


def _torch_alone(partials: Sequence[Partial], text: str) -> bool:
    """The text's tools state torch (a CPU-only build, "Torch not compiled with CUDA enabled",
    prints no GPU at all; a list of versions, an app's dump, torch's prints of its version and
    availability without get_device_name(), names none) and no GPU or driver:
    the GPU its reporter has can only be in the words (`prose.named_gpus`), which GD404 then
    judges and GD101 does not; so too torch's messages that name no GPU (its warning cut
    before the GPU's line, leaving the arch list). A ROCm build is not read so (its GPU is
    AMD's)."""
    if any(p.nvml is not None or p.libcuda is not None for p in partials):
        return False
    runtimes = [p.torch.runtime for p in partials if isinstance(p.torch, TorchFacts)
                and isinstance(p.torch.runtime, TorchRuntime)]
    if any(rt.cuda is None and rt.hip is None for rt in runtimes):
        return True  # a CPU-only build
    named = any(rt.warned_gpus or rt.too_old_gpus or rt.incompatible_gpus for rt in runtimes)
    if (any(p.kind == "torch's messages" for p in partials) and named) or (
            any(p.kind == "torch's prints" for p in partials) and _DEVICE_ASKED.search(text)):
        return False  # torch's own messages and device prints name the GPUs, by their rules
    # a CUDA build (or one of unknown kind) from a list of versions or an app's dump
    return any(isinstance(p.torch, TorchFacts) and p.torch.stated_version is not None
               for p in partials) or any(
        rt.hip is None and not (rt.warned_gpus or rt.too_old_gpus or rt.incompatible_gpus)
        for rt in runtimes)


def read_inputs(items: Sequence[tuple[str, str]], tables: Tables) -> Environment:
    """The one entry for what a user saved or pasted, whichever command reads it (`check`,
    `recommend`, `explain --from-report`, `diff`): `read_reports`, the result held to the rules
    a snapshot is (`possible`), and a driver's CUDA version no driver can report set aside
    (`credible_driver_cuda`). Raises ReportError, one line naming the input."""
    return credible_driver_cuda(possible(read_reports(items), items), tables)


def possible(env: Environment, items: Sequence[tuple[str, str]]) -> Environment:
    """`env` read from pasted reports, held to the rules a snapshot is (`gpudoctor.snapshot`:
    a version of 5000 digits, a negative memory size): what a report states that no machine
    has is a ReportError naming the field, as for a snapshot, never a crash in a check."""
    try:
        from_data(Environment, to_data(env))
    except SnapshotError as e:
        names = ", ".join(name for name, _ in items)
        raise ReportError(f"{names} states what no machine has: {e}") from None
    return env
