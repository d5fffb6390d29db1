"""gpudoctor.compat.machine: what the tables say of this machine's own facts (its driver's
CUDA, the cuDNN torch was built with, each GPU's compute capability, torch's arch list)."""

from __future__ import annotations

from dataclasses import replace

import tests.checks.envbuilder as B
from gpudoctor.compat import Tables
from gpudoctor.compat.machine import (
    SeenGpu,
    cubins_for_every_gpu,
    driver_cuda,
    every_build_covers,
    gpu_cc,
    min_driver,
    neighbouring_builds_cover,
    pypi_build_only,
    resolved_gpus,
    seen_gpus,
    torch_arch_list,
    torch_built_cudnn,
)
from gpudoctor.model import (
    Environment,
    GpuFacts,
    Reason,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)


def reported_gpu(name: str) -> GpuFacts:
    """A GPU as a pasted report (collect_env, nvidia-smi's table) gives it: a name only."""
    def lacks(what: str) -> Unavailable:
        return Unavailable(Reason.NOT_REPORTED, f"{what} is not in the report")

    return GpuFacts(index=0, name=name, uuid=lacks("the UUID"),
                    compute_capability=lacks("the compute capability"),
                    memory_total=lacks("the memory"), memory_free=lacks("free memory"),
                    pci_bus_id=lacks("the bus id"), persistence_mode=lacks("persistence"),
                    mig_mode=lacks("MIG mode"))


def test_a_live_machine_falls_back_to_nvmls_compute_capability(tables: Tables) -> None:
    """A name no rule places, on a live machine: NVML's own compute capability is used."""
    unknown = replace(reported_gpu("NVIDIA GeForce GTX 860M"), compute_capability="7.5")
    assert gpu_cc(unknown, tables) == ("7.5", "NVML")


def test_a_pasted_report_says_which_fact_is_missing(tables: Tables) -> None:
    found = gpu_cc(reported_gpu("NVIDIA GeForce GTX 860M"), tables)
    assert isinstance(found, Unavailable)
    assert found.message.startswith("the compute capability of NVIDIA GeForce GTX 860M is not in "
                                    "the report")
    placed = gpu_cc(reported_gpu("NVIDIA GeForce GTX 1660 SUPER"), tables)
    assert not isinstance(placed, Unavailable)
    assert placed[0] == "7.5" and "derived" in placed[1], placed
    exact = gpu_cc(reported_gpu("NVIDIA GeForce RTX 3050 Laptop GPU"), tables)
    assert not isinstance(exact, Unavailable) and exact[0] == "8.6", exact


# ------------------------------------------------------------------------ the machine's own facts

H100 = B.env()  # driver 580.65.06 (CUDA 13.0 by NVML), torch 2.13.0+cu130 that sees the H100


def not_reported(what: str) -> Unavailable:
    return Unavailable(Reason.NOT_REPORTED, f"{what} is not in the report")


def with_runtime(env: Environment, **kw: object) -> Environment:
    t = env.torch
    assert isinstance(t, TorchFacts) and isinstance(t.runtime, TorchRuntime)
    return replace(env, torch=replace(t, runtime=replace(t.runtime, **kw)))  # type: ignore[arg-type]


def reported_torch(version: str | Unavailable, cuda: str | None) -> Environment:
    """torch as a pasted report states it: a version, its CUDA, no devices, no arch list."""
    return with_runtime(H100, version=version, cuda=cuda, devices=not_reported("devices"),
                        arch_list=not_reported("the arch list"))


def test_driver_cuda_is_the_drivers_reading_else_derived_from_its_version(tables: Tables) -> None:
    assert driver_cuda(H100, tables) == ("13.0", "NVML")
    quiet = replace(B.nvml("535.104.05", 12020, B.gpu("RTX3090")),
                    cuda_driver_version=not_reported("the CUDA version"))
    derived = driver_cuda(B.env(nvml=quiet, libcuda=B.NO_LIBCUDA), tables)
    assert derived == (tables.cuda_for_driver("535.104.05"),
                       "compat table (derived from the driver version)")
    assert derived[0] == "12.2"
    assert driver_cuda(B.env(nvml=B.NO_NVML, libcuda=B.NO_LIBCUDA), tables) is None


def test_torch_built_cudnn_the_installed_wheel_first_then_the_table(tables: Tables) -> None:
    t = H100.torch
    assert isinstance(t, TorchFacts) and isinstance(t.static, TorchStatic)
    wheel = replace(H100, torch=replace(t, static=replace(
        t.static, nvidia_wheels=(("nvidia-cudnn-cu12", "1.0"), ("nvidia-cudnn-cu13", "9.21.0.1")))))
    assert torch_built_cudnn(wheel, tables) == (
        "9.21.0.1", "the installed nvidia-cudnn-cu13 9.21.0.1 wheel")  # torch's CUDA major's
    variant = tables.torch_variant("2.13.0+cu130")
    assert variant is not None and variant.cudnn
    assert torch_built_cudnn(H100, tables) == (
        variant.cudnn, "compat_tables/torch.toml, torch 2.13.0 cu130")
    assert torch_built_cudnn(B.env(torch=B.torch("2.13.0+cpu", None)), tables) is None
    assert torch_built_cudnn(B.env(torch=B.torch("9.9.9+cu130", "13.0")), tables) is None


def test_min_driver_is_the_full_feature_one(tables: Tables) -> None:
    need = tables.cuda_min_driver("12.4")
    assert need is not None and need.full
    assert min_driver(tables, "12.4") == need.full
    newest = tables.cuda_min_driver("13.5")  # no Linux driver bundled: the family's floor
    assert newest is not None and newest.full is None
    assert min_driver(tables, "13.5") == newest.family
    assert min_driver(tables, "7.0") is None


def test_seen_gpus_torchs_devices_else_the_drivers_completed(tables: Tables) -> None:
    assert seen_gpus(H100, tables) == (SeenGpu(0, "NVIDIA H100 80GB HBM3", "9.0", "torch"),)
    nameonly = replace(B.gpu("RTX3090"), compute_capability=not_reported("the compute "
                                                                         "capability"))
    report = with_runtime(B.env(nvml=B.nvml("580.65.06", 13000, nameonly)),
                          devices=not_reported("devices"),
                          warned_gpus=(("NVIDIA GeForce RTX 5090", "12.0"),))
    (ampere, warned) = seen_gpus(report, tables)
    assert (ampere.name, ampere.cc) == ("NVIDIA GeForce RTX 3090", "8.6")
    assert ampere.source.startswith("from the product name: compat_tables/gpu.toml")
    assert warned == SeenGpu(1, "NVIDIA GeForce RTX 5090", "12.0", "torch's warning in the report")


def test_resolved_gpus_fill_in_what_the_table_tells(tables: Tables) -> None:
    nameonly = replace(B.gpu("RTX3090"), compute_capability=not_reported("the compute "
                                                                         "capability"))
    unknown = replace(nameonly, index=1, name="NVIDIA GeForce GTX 860M")
    (placed, why), (left, reason) = resolved_gpus(
        B.env(nvml=B.nvml("580.65.06", 13000, nameonly, unknown)), tables)
    assert placed.compute_capability == "8.6" and "gpu.toml lists it as Ampere" in why
    assert isinstance(left.compute_capability, Unavailable)
    assert reason == left.compute_capability.message
    assert reason.startswith(
        "the compute capability of NVIDIA GeForce GTX 860M is not in the report")


def test_torch_arch_list_torchs_own_else_the_wheels_row(tables: Tables) -> None:
    assert torch_arch_list(H100, tables) == (B.ARCH_CU130, "torch.cuda.get_arch_list()")
    variant = tables.torch_variant("2.13.0+cu130")
    assert variant is not None and variant.arch_list
    assert torch_arch_list(reported_torch("2.13.0+cu130", "13.0"), tables) == (
        variant.arch_list, "not in the report: the arch list of the torch 2.13.0 cu130 wheel, "
        "from compat_tables/torch.toml")
    gone = torch_arch_list(B.env(torch=Unavailable(Reason.NOT_INSTALLED, "no torch")), tables)
    assert isinstance(gone, Unavailable) and gone.message == "torch did not import"
    for version, cuda, says in [
            (not_reported("the version"), "13.0", "nor its version"),
            ("2.13.0+cu130", "12.6", "is not a wheel in the tables"),  # its CUDA disagrees
            ("9.9.9+cu130", "13.0", "is not a wheel in the tables")]:
        found = torch_arch_list(reported_torch(version, cuda), tables)
        assert isinstance(found, Unavailable) and says in found.message, (version, found)


def _report(path: str, *swap: tuple[str, str]) -> Environment:
    from pathlib import Path

    from gpudoctor.reports.read import read_reports

    text = (Path(__file__).parents[1] / "fixtures" / "heldout" / path).read_text(
        encoding="utf-8")
    for old, new in swap:
        assert old in text
        text = text.replace(old, new)
    return read_reports([(Path(path).name, text)])


def test_an_aarch64_wheels_list_is_its_own(tables: Tables) -> None:
    """An aarch64 machine (stated, or told by an Arm-only GPU) takes the aarch64 wheel's list
    (`TorchVariant.aarch64_lists`), never the x86_64 wheel's: one list where the sources settle
    it; of several left open, the first where all give each GPU seen the same code."""
    # round 20's r44-001: collect_env on a GB200 (aarch64), 2.9.1+cu130: three lists open, all
    # with an sm_100 cubin
    found = torch_arch_list(_report("round20/reports-S/r44-001.txt"), tables)
    assert not isinstance(found, Unavailable) and "10.0" in found[0]
    assert "one of the 3 lists its sources leave open" in found[1]
    # round 3's r1-073 (GB10, sm_121, named by sglang's check_env): the lists give it sm_120's
    # cubin; the same report on a Jetson Thor (sm_110): one list has no 11.0, the others a
    # cubin, so which build it is decides and none is taken
    gb10 = torch_arch_list(_report("round3/reports-A/r1-073.md"), tables)
    assert not isinstance(gb10, Unavailable)
    thor = torch_arch_list(_report("round3/reports-A/r1-073.md",
                                   ("NVIDIA GB10", "NVIDIA Thor"), ("12.1", "11.0")), tables)
    assert isinstance(thor, Unavailable) and "differ on the GPUs seen" in thor.message
    # round 18's r40-003 (2.11.0+cu130 on a GB10): the list read in the PyPI aarch64 wheel
    spark = torch_arch_list(_report("round18/reports-Q/r40-003.txt"), tables)
    assert not isinstance(spark, Unavailable)
    assert spark[0] == ("8.0", "9.0", "10.0", "11.0", "12.0") and "verified" in spark[1]
    # round 18's r40-002 (2.10.0+cu130 on a Thor): no aarch64 list for 2.10 in the tables
    none = torch_arch_list(_report("round18/reports-Q/r40-002.md"), tables)
    assert isinstance(none, Unavailable) and "aarch64 wheel" in none.message


def test_pypi_build_only_for_the_default_variant_of_the_old_eras(tables: Tables) -> None:
    """torch 1.8.1 (find-links) from PyPI is not the same build as download.pytorch.org's of
    the same name: where the table's arch list is used, its other index is named."""
    old = tables.torch_release("1.8.1")
    assert old is not None and old.install == "find-links" and old.pypi_default == "cu102"
    default = old.variant("cu102")
    assert default is not None
    assert pypi_build_only(reported_torch("1.8.1", "10.2"), tables) == default.index_url
    assert pypi_build_only(reported_torch("1.8.1+cu111", "11.1"), tables) is None  # labelled
    assert pypi_build_only(reported_torch("2.13.0+cu130", "13.0"), tables) is None  # index-url
    assert pypi_build_only(H100, tables) is None  # torch's own arch list


# ------------------------------------------- rules where the build itself is not known


def test_cubins_for_every_gpu_or_none(tables: Tables) -> None:
    """GD103's minor-version-compatibility question: a cubin in torch's arch list for each
    GPU (H100: sm_90 in the cu130 list); None where a GPU would need PTX, or is unknown."""
    assert cubins_for_every_gpu(H100, tables) == "cubins (sm_90) run on every GPU seen"
    ptx_only = with_runtime(H100, arch_list=("sm_80", "compute_80"))
    assert cubins_for_every_gpu(ptx_only, tables) is None
    unnamed = B.env(nvml=B.nvml("580.65.06", 13000, reported_gpu("NVIDIA Mystery 9000")),
                    torch=B.torch("2.13.0+cu130", "13.0", (), B.ARCH_CU130))
    assert cubins_for_every_gpu(unnamed, tables) is None


def test_every_build_of_the_release_covers_the_gpu(tables: Tables) -> None:
    """torch 2.8.0 without a tag and without its CUDA: its wheels (cu126, cu128, cu129) each
    have code for an H100, so which one is installed does not matter for GD404; an unknown
    arch list among them (2.9.0's cu126 and cu130) answers nothing."""
    untagged = with_runtime(reported_torch("2.8.0", None), cuda=not_reported("its CUDA"))
    said = every_build_covers(untagged, tables)
    rel = tables.torch_release("2.8.0")
    assert rel is not None and all(v.arch_list for v in rel.variants)
    assert said is not None and "sm_90" in said and all(v.tag in said for v in rel.variants)
    one = every_build_covers(reported_torch("2.8.0", "12.8"), tables)
    assert one is not None and "cu128" in one and "cu126" not in one
    assert every_build_covers(with_runtime(untagged, version="2.7.0"), tables) is None  # cu118
    assert every_build_covers(reported_torch("2.8.0", None), tables) is None  # a CPU build
    old_gpu = B.env(nvml=B.nvml("580.65.06", 13000, B.gpu("GTX1080")), torch=untagged.torch)
    assert every_build_covers(old_gpu, tables) is None  # cu128/cu129 have no sm_61 code


def test_a_derived_arch_list_says_so(tables: Tables) -> None:
    """A variant's arch list derived from PyTorch's build script (2.4.0 cu124) is named as
    such in the evidence; one read in the wheel (2.4.0 cu121, the PyPI default) is not."""
    derived = torch_arch_list(reported_torch("2.4.0+cu124", "12.4"), tables)
    read = torch_arch_list(reported_torch("2.4.0+cu121", "12.1"), tables)
    assert not isinstance(derived, Unavailable) and not isinstance(read, Unavailable)
    assert "derived from PyTorch's build script" in derived[1]
    assert "derived" not in read[1]


def _on(kind_or_cc: str, version: str, cuda: str | None) -> Environment:
    """torch `version` (its arch list not known) on one GPU: an envbuilder kind, or a compute
    capability given to an H100's record."""
    gpu = (B.gpu(kind_or_cc) if kind_or_cc in B.GPU_SPECS else
           replace(B.gpu("H100"), name=f"a GPU of CC {kind_or_cc}",
                   compute_capability=kind_or_cc))
    return replace(reported_torch(version, cuda), nvml=B.nvml("580.65.06", 13000, gpu))


def test_the_neighbouring_builds_rule(tables: Tables) -> None:
    """A build whose arch list is not known: the nearest releases' lists for its CUDA decide a
    pass, never a failure; one side alone counts only inside its list (its oldest entry may
    be dropped: 2.8.0's cu128 list has sm_70, its cu129 list not)."""
    # both sides: 2.9.1 and 2.10.0 cu128 around a 2.10 nightly; even the newest entry counts
    both = neighbouring_builds_cover(_on("RTX5090", "2.10.0.dev20251124+cu128", "12.8"), tables)
    assert both is not None and "2.9.1's and 2.10.0's" in both and "sm_120" in both
    # no earlier release has a cu126 build: the same release's build for the nearest CUDA
    # below (2.6.0's cu124) stands in on that side, with 2.7.0's cu126 after: the newest entry
    # counts (sm_90, round 3's r1-081: a GH200 on 2.6.0+cu126, whose wheel has sm_90), the
    # oldest never (a newer CUDA may drop several old archs at once)
    inner = neighbouring_builds_cover(_on("9.0", "2.6.0+cu126", "12.6"), tables)
    assert inner is not None and "2.6.0's for CUDA 12.4 and 2.7.0's for CUDA 12.6" in inner
    assert neighbouring_builds_cover(_on("5.0", "2.6.0+cu126", "12.6"), tables) is None
    # 2.7.0's cu126 list (sm_70 inside it) and 2.8.0's cu128 list (sm_70 its oldest) around a
    # 2.7.0+cu128 whose real list lacks sm_70: not a pass
    assert neighbouring_builds_cover(_on("7.0", "2.7.0+cu128", "12.8"), tables) is None
    # a nightly precedes its release: no stand-in of the release's other CUDA builds
    assert neighbouring_builds_cover(_on("9.0", "2.6.0.dev20241112+cu126", "12.6"),
                                     tables) is None
    # before only (2.8.0's cu129 for a 2.9.0+cu129 the tables lack): its newest entry counts
    late = neighbouring_builds_cover(_on("12.1", "2.9.0+cu129", "12.9"), tables)
    assert late is not None and "2.8.0's" in late
    # release series, not patch releases: 1.8.1 and 1.8.2 (no cu111 list) are 1.8.0's own
    # series, 1.9's cu111 list the nearest after it
    series = neighbouring_builds_cover(_on("GTX1080", "1.8.0+cu111", "11.1"), tables)
    assert series is not None and "1.9.0's" in series
    # a GPU no neighbour has code for: unknown, not a pass
    assert neighbouring_builds_cover(_on("GTX1080", "2.9.1+cu130", "13.0"), tables) is None
    # a CPU build, or a build whose CUDA no release in the tables has: nothing to go by
    assert neighbouring_builds_cover(_on("H100", "2.9.1", None), tables) is None
    assert neighbouring_builds_cover(_on("H100", "2.9.1+cu127", "12.7"), tables) is None
    # not a build PyTorch made: a source or container build, a release without a CUDA tag
    # (conda-forge's, a distribution's)
    for version in ("2.1.0a0+git1234", "2.1.0a0+32f93b1", "2.9.1", "2.9.1rc1+cu128"):
        assert neighbouring_builds_cover(_on("H100", version, "12.8"), tables) is None, version
    # a nightly without a tag is PyTorch's (its conda channel's, or an old pip nightly of the
    # default CUDA): round 6's r10-030, 2.4.0.dev20240507 with CUDA 12.1 on an A-series sm_86
    untagged = neighbouring_builds_cover(_on("8.6", "2.4.0.dev20240507", "12.1"), tables)
    assert untagged is not None and "2.3.1's and 2.4.0's" in untagged
    # round 10's r21-003: 1.2.0.dev20190605 with CUDA 9.0 on a P100 (sm_60): 1.1.0's list
    assert neighbouring_builds_cover(_on("6.0", "1.2.0.dev20190605", "9.0.176"), tables)


def test_cubins_of_a_nightly_by_its_neighbours(tables: Tables) -> None:
    """Minor-version compatibility holds without PTX JIT where torch's cubins run on every GPU
    (GD103): for a nightly whose own list is not known, the neighbouring builds' cubins decide
    (round 7's r13-005: 2.7.0.dev20250308+cu126 on an RTX 6000 Ada, sm_89)."""
    nightly = _on("8.9", "2.7.0.dev20250308+cu126", "12.6")
    said = cubins_for_every_gpu(nightly, tables)
    assert said is not None and "2.7.0's" in said and "neighbouring-builds rule" in said
    # one side only: its newest entry (sm_90) does not count
    assert cubins_for_every_gpu(_on("9.0", "2.7.0.dev20250308+cu126", "12.6"), tables) is None
    # 2.8.0's cu129 list ends 12.0+PTX: its sm_120 cubin runs on an sm_121 (same major)
    late = cubins_for_every_gpu(_on("12.1", "2.9.0.dev20250801+cu129", "12.9"), tables)
    assert late is not None and "2.8.0's" in late


def test_a_build_of_a_cuda_no_listed_build_has(tables: Tables) -> None:
    """torch 1.4.0 with CUDA 10.0 (conda's cudatoolkit build; the tables list cu92 and cu101,
    round 5's r6-005 and round 6's r9-003): every listed build has code for sm_61, so it
    passes, saying none is for its CUDA; one they all lack is not failed by this rule."""
    said = every_build_covers(_on("6.1", "1.4.0", "10.0"), tables)
    assert said is not None and "none is for CUDA 10.0" in said and "cu92, cu101" in said
    assert every_build_covers(_on("3.5", "1.4.0", "10.0"), tables) is None


def test_the_tables_wheel_lists_do_not_speak_for_another_platform(tables: Tables) -> None:
    """Round 18's r40-002 (its thread in round18/reports-Q/index.toml): vLLM's collect_env on a
    Jetson AGX Thor (aarch64, sm_110), torch 2.10.0+cu130. The tables' arch lists are the Linux
    x86_64 wheels' (no sm_110); PyTorch builds its aarch64 wheels with other lists, and the
    tables hold none for 2.10's, so neither the wheel's row nor the release's other builds
    judge it: GD404 skips, saying why (it failed before). An x86_64 report is judged by the
    rows as before."""
    from pathlib import Path

    from gpudoctor.checks.pytorch import check_gpu_arch
    from gpudoctor.compat.machine import other_platform
    from gpudoctor.model import HostFacts, Status
    from gpudoctor.reports.read import read_reports

    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round18"
            / "reports-Q" / "r40-002.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.host, HostFacts) and env.host.machine == "aarch64"
    assert other_platform(env) == "aarch64"
    found = check_gpu_arch.run(env, tables)
    assert found.status is Status.SKIP and "aarch64 wheel" in found.message, found
    x86 = replace(env, host=replace(env.host, machine="x86_64"))
    assert other_platform(x86) is None
    assert check_gpu_arch.run(x86, tables).status is Status.FAIL  # the x86_64 row: no sm_110
