"""The one pip-line builder: every pip install line gpudoctor prints is written here.

`pip_line` writes torch's (with torchvision and torchaudio beside it); `cudnn_wheel_line` and
`cuda_library_line` the NVIDIA library wheels' (`nvidia-cudnn-cu12`, `nvidia-cublas-cu12`);
`package_line` any other package's (gpudoctor's own nvidia-ml-py). Each runs pip through the
diagnosed interpreter when it is known (`<python> -m pip`), else a bare `pip`.

The checks and `recommend` reach it through `gpudoctor.compat.advice` (which picks the wheel);
`gpudoctor compat torch|cuda|gpu` call it for each variant they list. It knows how each
release's wheels are named and served, as PyTorch's previous-versions page prints them
(https://pytorch.org/get-started/previous-versions/), and which Pythons each release has wheels
for (`python_fits`).

**Naming.** A release row's `install` is its era:
- `find-links` (to 1.10) and `extra-index-url` (1.8.2 LTS, 1.11 to 1.13): the PyPI default
  variant (`pypi_default`) is a plain `torch==1.7.1` from PyPI, without a local label (no file
  `torch-1.7.1+cu102-...` exists); every other variant carries its label and names its index:
  `torch==1.7.1+cu101 -f https://download.pytorch.org/whl/torch_stable.html`,
  `torch==1.12.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113`. torchaudio is
  pinned without a label in that era's lines;
- `index-url` (2.0 on): `torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124`, the
  index's files carrying the label.

**Never a no-op.** pip keeps an installed distribution that satisfies the requirement, and a pin
without a local label is satisfied by every local build of that version
(https://packaging.python.org/en/latest/specifications/version-specifiers/#version-matching).
So, with torch installed, an index-url line pins exact labels (`torch==2.5.1+cu124
torchvision==0.20.1+cu124`), which another build does not satisfy; and the line adds
`--force-reinstall` when the installed torch satisfies the pin anyway (the same build, or that
unlabelled PyPI default) or is broken (reinstalling also replaces its nvidia-* wheels).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from gpudoctor.compat.rows import TorchRelease, TorchVariant
from gpudoctor.versions import minor_key


@dataclass(frozen=True, slots=True)
class Target:
    """What a line depends on besides the wheel: the interpreter and what it has installed."""

    python: str | None = None  # the interpreter to run pip with; None: bare `pip`
    installed: str | None = None  # pip's view of the installed torch (metadata version)
    broken: bool = False  # the installed torch is broken: reinstalling mends it
    companions: tuple[tuple[str, str], ...] = ()  # torchvision / torchaudio installed beside


def companion_version(release: TorchRelease, name: str) -> str | None:
    """The torchvision / torchaudio release paired with `release`, None where none is."""
    return release.torchvision if name == "torchvision" else \
        release.torchaudio if name == "torchaudio" else None


def labelled(release: TorchRelease, variant: TorchVariant) -> bool:
    """Whether the variant's files carry its local label (`+cu124`): always from an index,
    and in the older eras every variant but the PyPI default."""
    return release.install == "index-url" or variant.tag != release.pypi_default


def pip(python: str | None) -> str:
    """How pip is run: through the interpreter (`/venv/bin/python -m pip`), else `pip`."""
    return f"{shlex.quote(python)} -m pip" if python else "pip"


def package_line(*requirements: str, python: str | None = None, force: bool = False,
                 upgrade: bool = False, editable: bool = False) -> str:
    """`pip install [--force-reinstall] [-U] [-e] REQ...`, each requirement quoted for a shell
    (`'nvidia-ml-py>=12.535.108'`)."""
    flags = (" --force-reinstall" if force else "") + (" -U" if upgrade else "") + (
        " -e" if editable else "")
    return f"{pip(python)} install{flags} {' '.join(shlex.quote(r) for r in requirements)}"


def cudnn_wheel_name(cuda_major: str | int) -> str:
    """The pip wheel of cuDNN built for a CUDA major: `nvidia-cudnn-cu12`."""
    return f"nvidia-cudnn-cu{cuda_major}"


def cudnn_wheel_line(cuda_major: str | int, version: str | None = None,
                     python: str | None = None) -> str:
    """The line that (re)installs the cuDNN wheel for a CUDA major, pinned to `version` when
    given: `pip install --force-reinstall nvidia-cudnn-cu12==9.1.0.70`."""
    spec = f"=={version}" if version else ""
    return package_line(f"{cudnn_wheel_name(cuda_major)}{spec}", python=python, force=True)


def cuda_library_line(library: str, cuda_major: str | int, python: str | None = None) -> str:
    """The line that installs one CUDA library's wheel (`cublas`): `pip install
    nvidia-cublas-cu12`."""
    return package_line(f"nvidia-{library}-cu{cuda_major}", python=python)


def pip_line(release: TorchRelease, variant: TorchVariant | None,
             target: Target | None = None) -> str:
    """The exact pip line that installs `variant` of `release` for `target`; see the module.
    `variant` None: the release's PyPI default from PyPI (`pip install torch==2.5.1`)."""
    t = target or Target()
    pip_ = pip(t.python)
    if variant is None:
        plain = [f"torch=={release.version}"] + [
            f"{name}=={paired}" for name, _ in t.companions
            if (paired := companion_version(release, name))]
        force = t.installed is not None and (t.broken or satisfies(t.installed, release.version,
                                                                   None))
        return f"{pip_} install{' --force-reinstall' if force else ''} {' '.join(plain)}"
    tagged = labelled(release, variant)
    exact = t.installed is not None and tagged
    pins = [("torch", release.version)] + [
        (name, paired) for name, _ in t.companions
        if (paired := companion_version(release, name))]

    def pin(name: str, version: str) -> str:
        label = exact if release.install == "index-url" else tagged and name != "torchaudio"
        return f"{name}=={version}+{variant.tag}" if label else f"{name}=={version}"

    option = ("" if not tagged else f" --index-url {variant.index_url}"
              if release.install == "index-url"
              else f" -f {variant.index_url}" if release.install == "find-links"
              else f" --extra-index-url {variant.index_url}")
    force = t.installed is not None and (t.broken or satisfies(
        t.installed, release.version, variant.tag if exact else None))
    return (f"{pip_} install{' --force-reinstall' if force else ''} "
            f"{' '.join(pin(n, v) for n, v in pins)}{option}")


def satisfies(installed: str, version: str, tag: str | None) -> bool:
    """Whether pip would keep `installed` for the pin `version` (+`tag`): PEP 440 matching.
    An installed version that does not parse never satisfies a pin (pip replaces it)."""
    # here, not at the top: packaging's specifiers compile their grammar on import, and the
    # check path asks this only when an install line is given
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(f"=={version}" + (f"+{tag}" if tag else "")).contains(
            installed, prereleases=True)
    except InvalidSpecifier:
        return False


def python_fits(release: TorchRelease, python: str | None) -> bool | None:
    """Whether `release` has wheels for CPython `python` ("3.10.12", "3.10"): True, False,
    or None when the tables do not list its Pythons or the version is not known."""
    key = minor_key(python) if python else None
    if key is None or release.python is None:
        return None
    return f"{key[0]}.{key[1]}" in release.python


def pythons_text(release: TorchRelease) -> str:
    """"Python 3.10-3.14" (the release's wheels), or that the tables do not list them."""
    if not release.python:
        return "its Pythons are not in the tables"
    first, last = release.python[0], release.python[-1]
    return f"Python {first}" if first == last else f"Python {first}-{last}"
