"""An environment read against the compat tables: the facts a machine states, completed and
judged by published rows (the driver's CUDA from its version, a GPU's compute capability from
its product name, a wheel's arch list and bundled cuDNN).

`gpudoctor.views` holds what the Environment alone tells; these need `Tables` as well, so they
live in compat, which checks and the advice both read (imported as `machine`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from packaging.version import Version

from gpudoctor import views as V
from gpudoctor.compat.wheels import cudnn_wheel_name
from gpudoctor.model import Environment, GpuFacts, HostFacts, Reason, Unavailable
from gpudoctor.versions import coverage, parse_arch_list, parse_cc, sm_name, sm_of

if TYPE_CHECKING:
    from gpudoctor.compat import Tables
    from gpudoctor.compat.rows import TorchRelease, TorchVariant


def driver_cuda(env: Environment, tables: Tables) -> tuple[str, str] | None:
    """The highest CUDA the driver runs, and where that came from; with no reading from the
    driver itself, derived from its version through the compat table."""
    reported = V.reported_driver_cuda(env)
    if reported:
        return reported
    drv = V.driver_version(env)
    if drv:
        derived = tables.cuda_for_driver(drv)
        if derived:
            return derived, "compat table (derived from the driver version)"
    return None


def torch_built_cudnn(env: Environment, tables: Tables) -> tuple[str, str] | None:
    """The cuDNN the installed torch was built for, and where that was read. What torch itself
    said (its "compiled against" error, in a report) first; then this machine's own artifact:
    the `nvidia-cudnn-cuNN` wheel installed beside torch (N = torch's CUDA
    major; pip installs the version torch's metadata pins), else the PyTorch table's row for
    the wheel variant (release and local tag, or the release's PyPI default); None when
    neither tells."""
    rt = V.torch_runtime(env)
    if rt is not None and isinstance(rt.cudnn_built, str):
        return rt.cudnn_built, "torch's own error: 'PyTorch was compiled against' it"
    cuda = V.torch_cuda(env)
    st = V.torch_static(env)
    if cuda and st is not None:
        name = cudnn_wheel_name(cuda.split('.')[0])
        wheel = next((v for n, v in st.nvidia_wheels if n == name), None)
        if wheel:
            return wheel, f"the installed {name} {wheel} wheel"
    tv = V.torch_version(env)
    if not tv or not cuda:
        return None
    base = tv.partition("+")[0]
    variant = tables.torch_variant(tv)
    if variant is None or not variant.cudnn:
        return None
    return variant.cudnn, f"compat_tables/torch.toml, torch {base} {variant.tag}"


def min_driver(tables: Tables, cuda: str) -> str | None:
    """The driver a CUDA version needs in full (what GD103 passes), from the compat table."""
    minimum = tables.cuda_min_driver(cuda)
    return (minimum.full or minimum.family) if minimum else None


@dataclass(frozen=True, slots=True)
class SeenGpu:
    """A GPU a check judges, with its compute capability and where that came from."""

    index: int
    name: str
    cc: str | Unavailable  # "8.9"
    source: str  # "torch", "NVML", "from the product name (...)", or why it is unknown


def gpu_cc(g: GpuFacts, tables: Tables) -> tuple[str, str] | Unavailable:
    """A GPU's compute capability and its source: NVML's reading, else (a report gives only
    the name) the product name looked up in compat_tables/gpu.toml, a published fact."""
    if isinstance(g.compute_capability, str):
        return g.compute_capability, "NVML"
    arch = tables.gpu_of_product(g.name)
    if arch is None:
        return Unavailable(Reason.NOT_REPORTED, f"the compute capability of {g.name} is not in "
                           "the report, and the GPU table has no product by that name")
    return arch.cc, (f"from the product name: compat_tables/gpu.toml lists it as "
                     f"{arch.family} ({sm_of(arch.cc)}, {arch.status})")


def seen_gpus(env: Environment, tables: Tables) -> tuple[SeenGpu, ...]:
    """The GPUs to judge an arch against: torch's devices when torch listed them, else the
    driver's (NVML, nvidia-smi, collect_env), with `gpu_cc`'s compute capability."""
    rt = V.torch_runtime(env)
    if rt is not None and isinstance(rt.devices, tuple) and rt.devices:
        return tuple(SeenGpu(d.index, d.name, d.capability, "torch") for d in rt.devices)
    warned = dict(rt.warned_gpus) if rt is not None else {}
    seen = [SeenGpu(g.index, g.name, warned[g.name], "torch's warning in the report")
            if g.name in warned and isinstance(g.compute_capability, Unavailable)
            else SeenGpu(g.index, g.name, g.compute_capability, source)
            for g, source in resolved_gpus(env, tables)]
    known = {g.name for g in seen}
    seen += [SeenGpu(len(seen) + i, name, cc, "torch's warning in the report")
             for i, (name, cc) in enumerate(n for n in warned.items() if n[0] not in known)]
    return tuple(seen)


# NVIDIA's products built into Arm (aarch64) machines only: the Jetson modules (Tegra: TX,
# Xavier, Orin, Thor), Grace's superchips (GH200, GB200, GB300) and DGX Spark's GB10
ARM_ONLY = re.compile(r"\b(?:Jetson|Tegra|Xavier|Orin|Thor|GH200|GB[23]00|GB10)\b", re.I)


def other_platform(env: Environment) -> str | None:
    """The machine's architecture where a report states one other than x86_64 ("aarch64"):
    the tables' wheel arch lists are the Linux x86_64 wheels', and PyTorch builds the others
    apart (other lists), so no table row speaks for them; None otherwise."""
    machine = env.host.machine if isinstance(env.host, HostFacts) else None
    return machine if isinstance(machine, str) and machine.lower() not in ("x86_64",
                                                                           "amd64") else None


def arm_only_gpu(env: Environment) -> str | None:
    """The name of a GPU NVIDIA builds into Arm (aarch64) machines only (a Jetson, a Grace
    superchip, DGX Spark's GB10), where the machine's architecture is not stated; None
    otherwise. The PyPI wheels advice names are x86_64's (the tables' rows); such a machine
    takes PyTorch's aarch64 builds, or NVIDIA's for Jetson."""
    if isinstance(env.host, HostFacts) and isinstance(env.host.machine, str):
        return None
    rt = V.torch_runtime(env)
    names = [g.name for g in V.gpus(env)] + (
        [d.name for d in rt.devices] if rt is not None and isinstance(rt.devices, tuple) else [])
    return next((n for n in names if ARM_ONLY.search(n)), None)


def non_x86(env: Environment) -> str | None:
    """The machine's architecture, where stated or told by an Arm-only GPU, when it is not
    x86_64 ("aarch64 (the NVIDIA GB10 is built into Arm machines only)"): the tables' wheels
    and tarballs named by advice are x86_64's. None otherwise."""
    if (stated := other_platform(env)) is not None:
        return stated
    arm = arm_only_gpu(env)
    return f"aarch64 (the {arm} is built into Arm machines only)" if arm else None


def torch_arch_list(env: Environment, tables: Tables
                    ) -> tuple[tuple[str, ...], str] | Unavailable:
    """torch's arch list and its source: `torch.cuda.get_arch_list()` from the probe; for a
    report that does not show it, the arch list the compat table records for that wheel (the
    release and CUDA variant named by the version, e.g. 2.5.1+cu124; a version without a local
    tag only when the release's PyPI default variant has the reported CUDA); on an aarch64
    machine (stated, or told by an Arm-only GPU) the aarch64 wheel's (`_aarch64_list`), never
    the x86_64 wheel's)."""
    rt = V.torch_runtime(env)
    if rt is None:
        return Unavailable(Reason.NOT_INSTALLED, "torch did not import")
    if isinstance(rt.arch_list, tuple):
        return rt.arch_list, ("torch.cuda.get_arch_list()" if V.is_reported(rt.devices)
                              else "the report: torch's warning or its build flags")
    if isinstance(rt.version, Unavailable):
        return Unavailable(Reason.NOT_REPORTED, "torch's arch list is not in the report, nor "
                           "its version")
    base = rt.version.partition("+")[0]
    variant = tables.torch_variant(rt.version)
    cuda = rt.cuda if isinstance(rt.cuda, str) else ""
    if (host := non_x86(env)) is not None:
        return _aarch64_list(env, tables, rt.version, variant, cuda, host) if host.startswith(
            ("aarch64", "arm64")) else Unavailable(
            Reason.NOT_REPORTED, f"torch's arch list is not in the report, and the tables "
            f"record the Linux x86_64 and aarch64 wheels' lists: this machine is {host}")
    if variant is None or variant.cuda != ".".join(cuda.split(".")[:2]):
        return Unavailable(Reason.NOT_REPORTED, f"torch's arch list is not in the report, and "
                           f"torch {rt.version} (CUDA {cuda or 'not stated'}) is not a wheel in "
                           "the tables")
    if variant.arch_list is None:
        return Unavailable(Reason.NOT_REPORTED, f"torch's arch list is not in the report, and "
                           f"the tables lack the arch list of torch {base} {variant.tag}")
    how = (" (derived from PyTorch's build script at the release's commit, not read in the "
           "wheel)" if variant.status == "derived" else "")
    return variant.arch_list, (f"not in the report: the arch list of the torch {base} "
                               f"{variant.tag} wheel, from compat_tables/torch.toml{how}")


def _aarch64_list(env: Environment, tables: Tables, version: str, variant: TorchVariant | None,
                  cuda: str, host: str) -> tuple[tuple[str, ...], str] | Unavailable:
    """The arch list of torch's Linux aarch64 wheel (`TorchVariant.aarch64_lists`), which
    PyTorch builds with lists of its own; where the sources leave several open, the first
    when every one gives each GPU seen the same code (a cubin, PTX, or none), which then
    decides as any of them would."""
    lists = variant.aarch64_lists if variant is not None and variant.cuda == ".".join(
        cuda.split(".")[:2]) else ()
    if not lists:
        return Unavailable(Reason.NOT_REPORTED, f"torch's arch list is not in the report, and "
                           f"the tables lack the arch list of torch {version}'s aarch64 "
                           f"wheel: this machine is {host}, whose wheels PyTorch builds apart")
    assert variant is not None
    where = (f"not in the report: the arch list of the torch {version.partition('+')[0]} "
             f"{variant.tag} aarch64 wheel, from compat_tables/torch.toml "
             f"({variant.aarch64_status}: {variant.aarch64_source})")
    if len(lists) == 1:
        return lists[0], where
    ccs = _seen_ccs(env, tables)

    def code(arch_list: tuple[str, ...], cc: tuple[int, int]) -> str:
        found = coverage(arch_list, cc)
        return "none" if found is None else "ptx" if found.arch.ptx else "cubin"

    if ccs is None or any(len({code(one, cc) for one in lists}) > 1 for cc in ccs):
        return Unavailable(Reason.NOT_REPORTED, f"torch's arch list is not in the report, and "
                           f"the sources leave {len(lists)} lists open for torch {version}'s "
                           f"aarch64 wheel, which differ on the GPUs seen (or the GPUs are not "
                           "known)")
    return lists[0], (f"{where}; one of the {len(lists)} lists its sources leave open, which "
                      "all give each GPU seen the same code")


def pypi_build_only(env: Environment, tables: Tables) -> str | None:
    """Where torch's arch list is the table's (the report does not show it) and was read in the
    PyPI wheel of a 1.x release installed with find-links or extra-index-url, the index of the
    other build of the same name; else None.

    The rule: until 2.0, PyPI's wheel of the default CUDA variant and download.pytorch.org's
    were separate builds, and PyPI's was cut to fit its size limit (RELEASE.md, "Special
    support cases"): torch 1.8.1+cu102 from PyPI carries sm_37 sm_50 sm_60 sm_70, the
    same-named wheel from download.pytorch.org also sm_61 sm_75 and compute_37 PTX
    (pytorch/pytorch#57922). A report naming only the version cannot tell which was installed,
    so the PyPI list may not judge a GPU it lacks."""
    rt = V.torch_runtime(env)
    if rt is None or isinstance(rt.arch_list, tuple) or isinstance(rt.version, Unavailable):
        return None
    release = tables.torch_release(rt.version.partition("+")[0])
    variant = tables.torch_variant(rt.version)
    if release is None or release.install not in ("find-links", "extra-index-url") \
            or variant is None or variant.tag != release.pypi_default:
        return None
    return variant.index_url


def resolved_gpus(env: Environment, tables: Tables) -> tuple[tuple[GpuFacts, str], ...]:
    """The driver's GPUs with the compute capability filled in where `gpu_cc` can tell it,
    each with where it came from (or, when it stays Unavailable, why)."""
    out = []
    for g in V.gpus(env):
        cc = gpu_cc(g, tables)
        if isinstance(cc, Unavailable):
            out.append((replace(g, compute_capability=cc), cc.message))
        else:
            out.append((replace(g, compute_capability=cc[0]), cc[1]))
    return tuple(out)


def cubins_for_every_gpu(env: Environment, tables: Tables) -> str | None:
    """"cubins for sm_86 run on every GPU" when torch's arch list (probed, reported or the
    wheel's in the tables) has a cubin for each GPU seen, or, where its own list is not known,
    the neighbouring builds' lists do (`neighbouring_builds_cover`); None when a GPU needs PTX,
    or the GPUs or the arch lists are unknown."""
    archs = torch_arch_list(env, tables)
    ccs = _seen_ccs(env, tables)
    if isinstance(archs, Unavailable) and ccs is not None:  # a nightly between two releases
        said = neighbouring_builds_cover(env, tables, cubins=True) or every_build_covers(
            env, tables, cubins=True)  # or a build of its release the tables do not list
        return None if said is None else f"cubins run on every GPU seen ({said})"
    if isinstance(archs, Unavailable) or ccs is None:
        return None
    used = []
    for cc in ccs:
        found = coverage(archs[0], cc)
        if found is None or found.arch.ptx:
            return None
        used.append(found.arch.name)
    return f"cubins ({', '.join(dict.fromkeys(used))}) run on every GPU seen"


def _seen_ccs(env: Environment, tables: Tables) -> list[tuple[int, int]] | None:
    """The compute capability of every GPU seen (`seen_gpus`); None when no GPU is seen or
    one's is unknown."""
    ccs = [parse_cc(g.cc) if isinstance(g.cc, str) else None
           for g in seen_gpus(env, tables)]
    known = [cc for cc in ccs if cc is not None]
    return known if known and len(known) == len(ccs) else None


NEIGHBOURS = 2  # release series looked at on each side of a build whose arch list is not known
# a build PyTorch made: a release or a nightly with its CUDA tag, or a nightly without one
# ("2.4.0.dev20240507": only PyTorch's nightly channels date a version; its conda nightlies,
# untagged, were built with the pip script's list plus sm_61 (pytorch/builder
# conda/pytorch-nightly/build.sh), and before CUDA tags were added the pip nightly of the
# default CUDA had none). Not a source build ("2.1.0a0+git1234", NVIDIA's containers'
# "2.1.0a0+32f93b1"), nor a release without a tag (a conda-forge or a distribution's build
# sets its own arch list)
OFFICIAL_BUILD = re.compile(r"\d{1,2}\.\d{1,3}\.\d{1,3}(?:(?:\.dev\d{8})?\+cu\d{2,3}|\.dev\d{8})")


def neighbouring_builds_cover(env: Environment, tables: Tables, *,
                              cubins: bool = False) -> str | None:
    """"torch 2.8.0's and 2.11.0's builds for CUDA 12.9 (the nearest on each side with an
    arch list) have code for sm_120" for a CUDA build whose own arch list neither the report
    nor the tables give (a variant the tables lack, a nightly between two releases: a wheel
    PyTorch built, `OFFICIAL_BUILD`), when the nearest releases before and after it (up to
    NEIGHBOURS release series away, its own series' other patch releases besides; one side
    where the other has none) have a build for the same CUDA version with a known arch list
    (else, on that side, the same release's build for the nearest CUDA below, or above, with
    one), and every such list has code for every GPU seen; None otherwise.

    The neighbouring-builds rule: PyTorch sets a build's arch list per CUDA version in its
    build script, and changes it between releases for few CUDA versions, and then at the
    edges: the oldest archs are dropped (the script's comment on CUDA 12.8/12.9: sm_50-sm_60
    removed, sm_70 kept after pytorch/pytorch#157517; in the tables 2.8.0's cu128 list has
    sm_70, its cu129 list not), the newest added. Lists that agree on both sides are taken to
    hold between them; with a list on one side only, a GPU counts only where an entry inside
    it has its code, not the oldest (dropped later, or not yet restored) and, for a list from
    a later release, not the newest (added later). It only passes: a GPU that a neighbour
    lacks leaves the build unknown (the arch rule, `compat.rules.arch_in_build`, is what fails
    one), and the finding names the lists used. With `cubins`, only a cubin counts (not PTX
    the driver would JIT-compile)."""
    rt = V.torch_runtime(env)
    if rt is None or not isinstance(rt.version, str) or not isinstance(rt.cuda, str) \
            or not OFFICIAL_BUILD.fullmatch(rt.version) or other_platform(env):
        return None
    built = V.version(rt.version.partition("+")[0])
    ccs = _seen_ccs(env, tables)
    if built is None or ccs is None:
        return None
    cuda = ".".join(rt.cuda.split(".")[:2])
    dated = sorted(((version, r) for r in tables.torch_releases
                    if (version := V.version(r.version)) is not None), key=lambda d: d[0])
    before = _series(built, [d for d in dated if d[0] < built][::-1])
    after = _series(built, [d for d in dated if d[0] > built])

    def nearest(side: list[TorchRelease]) -> tuple[str, tuple[str, ...]] | None:
        for release in side:
            archs = next((v.arch_list for v in release.variants
                          if v.cuda == cuda and v.arch_list), None)
            if archs:
                return f"{release.version}'s for CUDA {cuda}", archs
        return None

    # the same release's builds for the nearest CUDA below and above with an arch list are
    # neighbours too: a newer CUDA adds the newest archs and drops the oldest, as a newer
    # release does (2.6.0's cu124 list bounds its cu126 build from below); not for a nightly,
    # which precedes its release
    own = None if ".dev" in rt.version else tables.torch_release(rt.version.partition("+")[0])
    others = sorted(((key, v) for v in (own.variants if own else ()) if v.arch_list and v.cuda
                     and (key := V.version(v.cuda)) is not None), key=lambda kv: kv[0])
    mine = V.version(cuda)
    lower = [v for key, v in others if mine is not None and key < mine]
    higher = [v for key, v in others if mine is not None and key > mine]
    early, late = nearest(before), nearest(after)
    if early is None and late is None:
        return None  # no release has a build for this CUDA: nothing stands in for both sides
    stand_in = False
    if early is None and own and lower and lower[-1].arch_list:
        early, stand_in = (f"{own.version}'s for CUDA {lower[-1].cuda}", lower[-1].arch_list), True
    if late is None and own and higher and higher[0].arch_list:
        late, stand_in = (f"{own.version}'s for CUDA {higher[0].cuda}", higher[0].arch_list), True
    found = [n for n in (early, late) if n is not None]
    both = len(found) == 2
    # a stand-in of another CUDA vouches for the newest archs, not the oldest: a newer CUDA
    # may drop several old ones at once (2.7.0's cu126 list has sm_70, its cu128 list not)
    if not found or not all(_inside(archs, cc, oldest=both and not stand_in,
                                    newest=both or late is None, cubin=cubins)
                            for _, archs in found for cc in ccs):
        return None
    names = ", ".join(dict.fromkeys(sm_name(cc) for cc in ccs))
    side = "" if len(found) > 1 else ", on one side only"
    if not stand_in:
        which = " and ".join(label.partition(" for ")[0] for label, _ in found)
        return (f"by the neighbouring-builds rule: torch {which} builds for CUDA {cuda} (the "
                f"nearest release{'s' if len(found) > 1 else ''} with an arch list{side}) have "
                f"code for {names}; this build's own list is not known")
    which = " and ".join(label for label, _ in found)
    return (f"by the neighbouring-builds rule: torch {which} (the nearest builds with an arch "
            f"list, the same release's for another CUDA standing in where no release for CUDA "
            f"{cuda} has one{side}) have code for {names}; this build's own list is not known")


def _series(built: Version, side: list[tuple[Version, TorchRelease]]) -> list[TorchRelease]:
    """The releases of `side` (with their versions, nearest first) up to NEIGHBOURS release
    series (2.8, 2.9) away from `built`'s own; its own series' other patch releases count as
    none."""
    out, seen = [], set()
    for version, release in side:
        key = (version.major, version.minor)
        if key != (built.major, built.minor):
            seen.add(key)
            if len(seen) > NEIGHBOURS:
                break
        out.append(release)
    return out


def _inside(archs: tuple[str, ...], cc: tuple[int, int], *, oldest: bool, newest: bool,
            cubin: bool = False) -> bool:
    """Whether an entry of `archs` has code for `cc` (a cubin, where `cubin`), the list's
    oldest arch counting only where `oldest`, its newest only where `newest`."""
    found = coverage(archs, cc)
    if found is None or (cubin and found.arch.ptx):
        return False
    keys = sorted({(a.major, a.minor) for a in parse_arch_list(archs)})
    at = (found.arch.major, found.arch.minor)
    return (oldest or at != keys[0]) and (newest or at != keys[-1])


def _release_builds(env: Environment, tables: Tables, *, other_cuda: bool = False) -> tuple[
        str, str | None, list[TorchVariant], list[tuple[int, int]]] | None:
    """(release, CUDA stated or None, its CUDA builds the tables know with that CUDA, the
    compute capabilities of the GPUs seen) where each build's arch list is known; else None.
    A release a report names without its build (`views.stated_release`) takes every one.
    With `other_cuda`, a CUDA the release has no listed build for (conda's cudatoolkit builds,
    e.g. 1.4.0 with CUDA 10.0) takes every listed build of the release instead."""
    rt = V.torch_runtime(env)
    if rt is not None and (not isinstance(rt.version, str) or rt.cuda is None):  # no CUDA
        return None
    if other_platform(env):  # the tables' builds are x86_64's
        return None
    # a report naming the release alone (`views.stated_release`): which build, if any
    version = rt.version if rt is not None else V.stated_release(env)
    release = tables.torch_release(version) if isinstance(version, str) else None
    ccs = _seen_ccs(env, tables)
    if release is None or ccs is None:
        return None
    cuda = ".".join(rt.cuda.split(".")[:2]) if rt is not None and isinstance(rt.cuda, str) \
        else None
    builds = [v for v in release.variants if cuda is None or v.cuda == cuda]
    if not builds and other_cuda:
        builds = list(release.variants)
    if not builds or any(v.arch_list is None for v in builds):
        return None
    return release.version, cuda, builds, ccs


def every_build_covers(env: Environment, tables: Tables, *, cubins: bool = False) -> str | None:
    """"every CUDA build of torch 1.5.0 in the tables (cu92, cu101, cu102) has code for
    sm_75" when torch's own build is not known (no arch list in the report, a version without
    a tag whose CUDA the report does not state, or states as one of the release's, or as one
    no listed build has: conda's), yet each CUDA build of its release the tables know (with
    that CUDA, where one is listed) has code for every GPU seen; None otherwise (a build with
    an unknown arch list counts against). With `cubins`, only a cubin counts (not PTX the
    driver would JIT-compile)."""
    known = _release_builds(env, tables, other_cuda=True)
    if known is None:
        return None
    version, cuda, builds, ccs = known
    found = [coverage(v.arch_list or (), cc) for cc in ccs for v in builds]
    if any(f is None or (cubins and f.arch.ptx) for f in found):
        return None
    names = ", ".join(dict.fromkeys(sm_name(cc) for cc in ccs))
    listed = cuda is None or any(v.cuda == cuda for v in builds)
    return (f"every CUDA build of torch {version}"
            + (f" for CUDA {cuda}" if cuda and listed else "") + " in the tables ("
            + ", ".join(v.tag for v in builds) + f") has {'a cubin' if cubins else 'code'} "
            f"for {names}"
            + ("" if listed else f" (none is for CUDA {cuda}: a build made elsewhere, such as "
               "conda's, from the same release's script)"))


def at_oldest_arch(env: Environment, tables: Tables) -> bool:
    """Whether a GPU seen is at (or below) the oldest architecture of a list of its release's
    builds (as `every_build_covers` takes them): builds made elsewhere part at that edge, so
    the tables' lists do not vouch for it there (conda's 1.3 builds dropped sm_35, which the
    pip wheels kept; pytorch/pytorch#30532)."""
    known = _release_builds(env, tables, other_cuda=True)
    if known is None:
        return False
    _, _, builds, ccs = known
    return any(cc <= min(((a.major, a.minor) for a in parse_arch_list(v.arch_list or ())),
                         default=(0, 0)) for cc in ccs for v in builds)


def no_build_covers(env: Environment, tables: Tables) -> tuple[str, tuple[str, ...]] | None:
    """The rule that fails a GPU when torch's own build is not known (as `every_build_covers`)
    yet no CUDA build of its release the tables know has code for it: ("no CUDA build of torch
    1.3.1 in the tables (cu92, cu101) has code for sm_35", the archs), else None. Builds made
    elsewhere (conda's, a source build) are not in the tables; the finding says which ones
    decided."""
    known = _release_builds(env, tables)
    if known is None:
        return None
    version, cuda, builds, ccs = known
    lacking = [cc for cc in ccs if all(coverage(v.arch_list or (), cc) is None for v in builds)]
    if not lacking:
        return None
    names = tuple(dict.fromkeys(sm_name(cc) for cc in lacking))
    return (f"no CUDA build of torch {version}" + (f" for CUDA {cuda}" if cuda else "")
            + " in the tables (" + ", ".join(v.tag for v in builds) + ") has code for "
            + ", ".join(names), names)
