"""Library files and symbols, decoded: `libcudnn_ops_infer.so.8` is cuDNN 8, `cudart64_110.dll`
is the CUDA 11.0 runtime, `_ZN3c104cuda9SetDeviceEi` belongs to PyTorch, a
`*.cpython-310-x86_64-linux-gnu.so` is a compiled Python extension. The families are data
(`libraries.toml`); this module reads a name the way the loader prints it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.kb import KnowledgeBaseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

_LINUX = re.compile(r"(?P<stem>[\w+-]+?)\.so(?:\.(?P<ver>\d+(?:\.\d+)*))?")
# macOS's: libcudart.10.0.dylib, libcuda.dylib (the version before the extension)
_MACOS = re.compile(r"(?P<stem>lib[\w+-]+?)(?:\.(?P<ver>\d+(?:\.\d+)*))?\.dylib")
_WINDOWS = re.compile(r"(?P<stem>[\w+-]+?)(?:64)?(?:_(?P<ver>\d+(?:_\d+)*))?\.dll", re.I)
# a compiled Python module: name.cpython-310-x86_64-linux-gnu.so, name.abi3.so, name.pyd
_EXTENSION = re.compile(r"(?P<module>[A-Za-z_]\w*)(?:\.(?:cpython|cp|pypy)[\w.-]*|\.abi3)?"
                        r"\.(?:so|pyd)", re.I)
_BARE = re.compile(r"lib[\w+-]+")
_SITE = re.compile(r"(?:site|dist)-packages[/\\](?P<pkg>[A-Za-z_][\w.-]*)")


@dataclass(frozen=True, slots=True)
class Family:
    """One library family of libraries.toml."""

    name: str
    linux: tuple[str, ...]
    windows: tuple[str, ...]
    symbols: tuple[str, ...]
    version: str  # "cuda" | "cudnn" | "major"
    package: str
    missing: str  # cause class
    conflict: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Library:
    """A library file as the text names it, decoded."""

    file: str  # the base name, as written
    family: Family | None  # None: not a library gpudoctor knows
    version: str  # "CUDA 11.0", "cuDNN 8", "9" ("" when the name carries none)
    major: str  # the number the file carries ("11", "8"; "" when none)
    extension: str  # a compiled Python module's name ("_C", "flash_attn_2_cuda"), else ""
    package: str  # the site-packages folder it lies in ("torchvision"), else ""

    @property
    def install(self) -> str:
        """What installs it: the family's package line with the major filled in ("<major>" where
        the text names none)."""
        if self.family is None:
            return ""
        return self.family.package.replace("{major}", self.major or "<major>")


@cache
def families() -> tuple[Family, ...]:
    """The shipped families (validated once)."""
    text = files("gpudoctor.explain").joinpath("libraries.toml").read_text(encoding="utf-8")
    out = []
    for i, raw in enumerate(tomllib.loads(text).get("library", [])):
        fam = Family(raw["name"], tuple(raw["linux"]), tuple(raw["windows"]),
                     tuple(raw["symbols"]), raw["version"], raw["package"], raw["missing"],
                     raw["conflict"], tuple(raw["sources"]))
        if fam.missing not in CAUSE_CLASSES or fam.conflict not in CAUSE_CLASSES:
            raise KnowledgeBaseError(f"libraries.toml #{i + 1} ({fam.name}): class not in the "
                                     "vocabulary")
        if fam.version not in ("cuda", "cudnn", "major") or not fam.sources:
            raise KnowledgeBaseError(f"libraries.toml #{i + 1} ({fam.name}): bad version kind "
                                     "or no source")
        out.append(fam)
    return tuple(out)


def _family(stem: str, windows: bool) -> Family | None:
    key = stem.lower()
    for fam in families():
        names = fam.windows if windows else fam.linux
        if key in (n.lower() for n in names):
            return fam
    return None


def _version(fam: Family | None, ver: str, windows: bool) -> tuple[str, str]:
    """(the version as a person says it, the major) of a file name's number."""
    if not ver:
        return "", ""
    first = re.split(r"[._]", ver)[0]
    if fam is None:
        return ver, first
    if fam.version == "cuda":
        if windows and len(first) == 3:  # cudart64_110.dll: CUDA 11.0
            return f"CUDA {first[:2]}.{first[2]}", first[:2]
        return f"CUDA {ver.replace('_', '.')}", first
    if fam.version == "cudnn":
        return f"cuDNN {ver.replace('_', '.')}", first
    return ver.replace("_", "."), first


def decode_file(token: str) -> Library:
    """A file name or path the loader printed, decoded."""
    token = token.strip().strip("'\"`*").rstrip(".,;:")[-4096:]  # PATH_MAX: the regexes
    base = re.split(r"[/\\]", token)[-1][-255:]  # below are quadratic in a longer token
    site = _SITE.search(token)
    package = site["pkg"] if site else ""
    ext = _EXTENSION.fullmatch(base)
    windows = base.lower().endswith(".dll")
    m = (_WINDOWS if windows else _LINUX).fullmatch(base) or _MACOS.fullmatch(base)
    if m is None and _BARE.fullmatch(base):  # "libcuda": Julia's and ctypes' bare names
        return Library(base, _family(base, False), "", "", "", package)
    if m is None:
        return Library(base, None, "", "", ext["module"] if ext else "", package)
    fam = _family(m["stem"], windows)
    version, major = _version(fam, m["ver"] or "", windows)
    is_extension = fam is None and ext is not None and ("cpython" in base or base.endswith(
        (".pyd", ".abi3.so")) or ext["module"].startswith("_") or bool(package))
    return Library(base, fam, version, major, ext["module"] if is_extension and ext else "",
                   package)


def symbol_owner(symbol: str) -> Family | None:
    """The family whose library exports `symbol` (by its prefix; the longest prefix wins)."""
    sym = symbol.strip().split("@")[0]
    best: tuple[int, Family] | None = None
    for fam in families():
        for prefix in fam.symbols:
            if sym.startswith(prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), fam)
    return best[1] if best else None


def version_tag(tag: str) -> Library | None:
    """An ELF symbol version (`libcudnn_ops_infer.so.8`, `GLIBCXX_3.4.30`) as a library."""
    tag = tag.strip().strip("*").rstrip(".,;:")
    if ".so" in tag:
        return decode_file(tag)
    if tag.startswith(("GLIBCXX_", "CXXABI_")):
        return Library(tag, _family("libstdc++", False), tag, "", "", "")
    if tag.startswith("GLIBC_"):
        return Library(tag, _family("libc", False), tag, "", "", "")
    return None
