"""The dynamic loader's failures, read as a grammar: which library was not found, or which
symbol a library that was found lacks, and what that means.

- *Not found* (`libX.so.N: cannot open shared object file`, TensorFlow's `Could not load
  dynamic library`, CTranslate2's `Library X is not found or cannot be loaded`, Windows'
  `Could not locate X.dll`, `WinError 126`, `LoadLibrary failed with error 126`): the library
  is not on the loader path (macOS's dyld: `dlopen(X, 6): image not found`, `Library not
  loaded`). Its family says what that means: the driver's own libcuda /
  libnvidia-ml missing is no driver; any other is a library not found, named with the release
  its file name carries and the package that ships it.
- *Found but lacking a symbol* (`undefined symbol: S, version V`, `symbol S version V not
  defined in file F with link time reference`, `version 'GLIBCXX_3.4.30' not found`): two
  versions are mixed. A compiled Python extension (`_C.so`, `flash_attn_2_cuda.cpython-*.so`)
  missing a PyTorch symbol was built for another torch: an extension ABI mismatch; an NVIDIA
  library missing another's symbol has found an older or newer copy of it than its own release.
  Both sides are named where the text shows them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.explain.decode import Decoded
from gpudoctor.explain.found import (
    Match,
    derived,
    found,
    hits,
    kebab,
    line_of,
    slug,
    unwrapped,
)
from gpudoctor.explain.libraries import Family, Library, decode_file, symbol_owner, version_tag

_F = r"[\w.+-]+"
_NOT_FOUND = (
    re.compile(r"(?<![\w.+-])(?P<lib>lib[\w.+-]{1,300}?\.so(?:\.[\d.]*\d)?)\s{0,8}:\s{0,8}"
               "(?:cannot|[Uu]nable to) open shared object file"),
    re.compile(rf"Could not load dynamic library '(?P<lib>{_F})'"),
    # macOS's dyld: "dlopen(libnvidia-ml.so.1, 6): image not found", "Library not loaded:
    # @rpath/libcudart.10.0.dylib"
    re.compile(rf"dlopen\((?P<lib>{_F}), \d{{1,4}}\): (?:image not found|no suitable image)"),
    re.compile(r"Library not loaded: (?:@rpath/|/[^\n]{0,200}/)?(?P<lib>lib[\w.+-]{1,200}?"
               r"\.dylib)"),
    re.compile(rf"Library (?P<lib>{_F}) is not found or cannot be loaded"),
    re.compile(r'could not load library "(?P<lib>[^"\n]{1,200})"', re.I),
    re.compile(r"Could not locate (?P<lib>[\w.-]+\.dll)", re.I),
    re.compile(r"Could not find module '(?P<lib>[^'\n]{1,300}?\.dll)'", re.I),
    # torch's, read across a terminal's hard wrap, which can take the opening quote with it
    re.compile(r'Error loading\s{1,4}"?(?P<lib>[^"\n]{1,300}?\.dll)"?\s{1,4}or\s{1,4}one\s{1,4}of'
               r'\s{1,4}its\s{1,4}dependencies', re.I),
    re.compile(r'LoadLibrary failed with error 126(?: "[^"\n]{0,200}")? when trying to load '
               r'"?(?P<lib>[^"\n]{1,300}?\.dll)', re.I),
    # also a dependency listing's "X.dll -> not found" (CuPy's "DLL dependencies:")
    re.compile(r"(?<![\w.-])(?P<lib>[\w.-]{1,300}\.dll)(?: (?:was )?| -> )not found", re.I),
    # ldd's "libcudart.so.11.0 => not found"
    re.compile(r"(?<![\w.+-])(?P<lib>lib[\w.+-]{1,200}?\.so(?:\.[\d.]*\d)?)[ \t]{1,4}=>[ \t]{1,4}"
               r"not found"),
    # dlopen's callers: "Failed to dlopen libcuda.so", NVRTC's "failed to open
    # libnvrtc-builtins.so.11.1", Python's ctypes on Windows ("Could not find module 'X' (or one
    # of its dependencies)")
    re.compile(rf"(?:failed to|unable to|cannot|could not|couldn't) (?:dl)?(?:open|load) "
               rf"(?:library )?"
               rf"['\"]?(?P<lib>lib{_F}?\.so(?:\.[\d.]*\d)?)", re.I),
    re.compile(r"Could not find module '(?P<lib>[^'\n]{1,300}?)' \(or one of its dependencies\)",
               re.I),
    re.compile(r"(?<![\w.+-])(?P<lib>lib[\w.+-]{1,300}?\.so(?:\.[\d.]*\d)?) cannot (?:be )?"
               "found"),  # Triton's
    # Node.js's process.dlopen on Windows (an app's native module: LM Studio's engines, an
    # Electron app's addon): "The specified module could not be found.\n\\?\C:\…\x.node"
    re.compile(r"The specified module could not be found\.?[ \t]{0,4}\n?[ \t]{0,8}"
               r"(?:\\\\\?\\)?[A-Za-z]:\\[^\n]{0,300}?\\(?P<lib>[^\\\n]{1,200}?\.(?:node|dll|pyd))\b"),
    # cuDNN 8's own loader of its sub-libraries: "Could not load library cudnn_cnn_infer64_8.dll.
    # Error code 126", "Could not load library libcudnn_ops_infer.so.8. Error: ..."
    re.compile(r"Could not load library (?P<lib>[\w+-]{1,200}\.(?:dll|so(?:\.\d{1,4}){0,3}))"
               r"(?![\w-])"),
)
# what only macOS's loader (dyld) says
_DYLD = re.compile(r"\): image not found|\bLibrary not loaded: |\(no suitable image found\)")
# NVRTC's builtins are a library of their own: "nvrtc: error: failed to load builtins"
_NVRTC_BUILTINS = re.compile(r"nvrtc: error: failed to load builtins", re.I)
# what only Windows' loader says (ERROR_MOD_NOT_FOUND; ctypes' advice on Windows)
_WINDOWS_LOADER = re.compile(r"The specified module could not be found|\bWinError\b|"
                             r"Try using the full path with constructor syntax", re.I)
_DLL_LOAD = re.compile(r"DLL load failed(?: while importing (?P<module>\w+))?")
# Windows' ERROR_PROC_NOT_FOUND (127) after it, in the languages it is printed in (English,
# Chinese, Japanese, Korean, German, French, Spanish, Russian): a DLL found that lacks an entry
# point the module needs (ERROR_MOD_NOT_FOUND, 126, is a DLL not found)
_PROC_NOT_FOUND = re.compile(r"The specified procedure could not be found|找不到指定的程序|"
                             r"指定されたプロシージャが見つかりません|"
                             r"지정된 프로시저를 찾을 수 없습니다|"
                             r"Die angegebene Prozedur wurde nicht gefunden|"
                             r"La procédure spécifiée est introuvable|"
                             r"No se encontró el proceso especificado|"
                             r"Не найдена указанная процедура", re.I)
_UNDEFINED = re.compile(
    r"(?:(?<![^\s:'\"`])(?P<file>[^\s:'\"`]{1,300}\.(?:so|pyd)[\w.-]{0,100})\s{0,8}:\s{0,8})?"
    r"undefined symbol:\s{0,8}"
    r"(?P<sym>[\w@.$]{2,400})(?:\s{0,8},\s{0,8}version\s{1,8}(?P<ver>[\w.+-]{1,100}))?")
_NOT_DEFINED = re.compile(  # markdown's ** around names is read through
    r"(?:relocation error:\s{0,8}(?P<file>[^\s:]{1,300}):\s{0,8})?symbol\s{1,8}"
    r"(?P<sym>[\w@.$]{2,400}),?"
    r"\s{1,8}version\s{1,8}\**(?P<ver>[\w.+-]{1,100})\**\s{1,8}not defined in file\s{1,8}\**"
    r"(?P<lib>[\w.+-]{1,100})")
_VERSION_NOT_FOUND = re.compile(
    r"version [`'](?P<ver>[\w.+-]{1,100})' not found \(required by (?P<file>[^)\n]{1,300})\)")
_UNDEFINED_REF = re.compile(r"undefined reference to [`'](?P<sym>[\w@.$]{2,200})'")
# a library named by its short name, without a file: PaddlePaddle's "Cannot load cudnn shared
# library", "could not load the cublas library", "cuDNN library not found"
_NAMED_NOT_FOUND = re.compile(
    r"(?:(?:cannot|can't|could not|couldn't|failed to|unable to) (?:dynamically )?"
    r"(?:load|find|open) (?:the )?\"?(?P<name>cu[a-z]{2,10}|nccl|nvrtc|nvjitlink)\"?"
    r"(?: shared| dynamic)? library\b"
    r"(?![ \t]{0,4}[/\\'\"=])"
    r"|\b(?P<name2>cu[a-z]{2,10}|nccl|nvrtc) (?:shared |dynamic )?library (?:was )?not found)",
    re.I)
# what NCCL loads if it is there and goes on without (its "Failed to open libibverbs.so[.1]"
# is a WARN in older releases): the InfiniBand verbs and RDMA libraries (the socket transport
# instead), GDRCopy, its network and tuner plugins
_NCCL_OPTIONAL = re.compile(r"lib(?:ibverbs|rdmacm|mlx5|gdrapi|nccl-net|nccl-tuner)\b")
_PLUGIN_SKIPPED = "GStreamer-WARNING"  # "…: Failed to load plugin '…': libX.so: cannot open…"
_TORCH_C = re.compile(r"torch[/\\]_C|from torch\._C|import torch\b")


def loader_matches(text: str, lowered: str) -> list[Match]:
    """Every loader failure in the text, one diagnosis per library or symbol."""
    if not any(t in lowered for t in (".so", ".dll", "symbol", "library", "required by",
                                      "builtins", "module '", "module could not be found",
                                      "dll load failed")):
        return []
    out: dict[str, Match] = {}

    def add(d: Match) -> None:  # one diagnosis per id: "libcuda" and "libcuda.dylib" are one
        out.setdefault(d.signature.id, d)

    for pattern in _NOT_FOUND:
        for m in hits(pattern, text):
            line = line_of(text, m.start())
            if "NCCL INFO" in line or ("NCCL" in line and _NCCL_OPTIONAL.match(m["lib"])):
                continue  # NCCL's optional plugins and transports, looked for and not needed
            missing = _missing(decode_file(m["lib"]), m)
            if _PLUGIN_SKIPPED in line:
                # GStreamer's plugin scanner warns of every plugin it cannot load; a pipeline
                # fails only for the ones it uses: a follow-on where the text says more
                missing = replace(missing, signature=replace(missing.signature, priority=-2))
            add(missing)
    for m in hits(_NAMED_NOT_FOUND, text):
        lib = decode_file(f"lib{(m['name'] or m['name2']).lower()}")
        if lib.family is not None:  # a library gpudoctor knows, named without its file
            add(_missing(lib, m))
    for m in hits(_NVRTC_BUILTINS, text):
        add(_missing(decode_file("libnvrtc-builtins.so"), m))
    for m in hits(_DLL_LOAD, text):
        out.setdefault(f"dll-{m['module']}", _dll_load(m, text))
    undefined = False  # whether the loader's "undefined symbol:" was read as it stands
    for pattern in (_UNDEFINED, _NOT_DEFINED, _VERSION_NOT_FOUND, _UNDEFINED_REF):
        for m in hits(pattern, text):
            undefined = undefined or pattern is _UNDEFINED
            d = _mixed(m)
            if d is not None:
                out.setdefault(d.signature.id, d)
    if "undefin" in lowered and not undefined:
        # a terminal's hard wrap inside the loader's line ("…gnu.so: undefin\ned symbol: _ZN2at…"):
        # read again with such wraps joined, the match placed back in the text
        joined, cuts = unwrapped(text)
        for m in hits(_UNDEFINED, joined):
            d = _mixed(m)
            if d is not None:
                start = m.start() + sum(1 for c in cuts if c <= m.start())
                end = m.end() + sum(1 for c in cuts if c < m.end())
                out.setdefault(d.signature.id, replace(d, start=start, end=end))
    return list(out.values())


def _lib_capture(name: str, lib: Library) -> Decoded:
    fam = lib.family.name if lib.family else "a library gpudoctor does not know"
    return Decoded(name, "lib", lib.file, f"{fam}{', ' + lib.version if lib.version else ''}")


def _missing(lib: Library, m: re.Match[str]) -> Match:
    fam = lib.family
    cls = fam.missing if fam else "library-not-found"
    what = f"{fam.name}{' (' + lib.version + ')' if lib.version else ''}" if fam else lib.file
    windows = lib.file.lower().endswith((".dll", ".node", ".pyd"))
    around = m.string[max(0, m.start() - 400):m.end() + 400]
    if fam is not None and not windows and fam.windows and _WINDOWS_LOADER.search(around):
        return _linux_name_on_windows(lib, fam, m)
    macos = _DYLD.search(around) is not None  # dyld's own words, not a .dylib name alone
    if cls == "no-driver" and macos:
        cause = (f"The loader cannot find {lib.file}, which the NVIDIA driver installs, and this "
                 "runs on macOS: NVIDIA's CUDA driver is not available for macOS since 10.14 "
                 "(and never for Apple silicon), so no CUDA program runs there.")
        fix = ("run on Linux or Windows with an NVIDIA GPU and its driver; on a Mac use the "
               "framework's CPU or Metal (mps) backend")
    elif cls == "no-driver" and not lib.major:
        return _linker_name(lib, fam, m)
    elif cls == "no-driver":
        cause = (f"The loader cannot find {lib.file}, which the NVIDIA driver installs: no "
                 "driver is installed where this runs, its kernel module is not loaded, or (in "
                 "a container) the GPU was not passed in.")
        fix = ("install the NVIDIA driver (on WSL, the Windows driver provides it in "
               "/usr/lib/wsl/lib); in a container run with --gpus all and the NVIDIA "
               "Container Toolkit")
    else:
        dep = (" (or a DLL it needs: Windows error 126 is also what a missing dependency of an "
               "existing DLL gives)" if windows and (
                   "126" in m.group(0) or "dependencies" in m.group(0)
                   or "module could not be found" in m.group(0).lower()) else "")
        cause = (f"The program needs {lib.file}{dep}: {what}. It is not on the loader path: "
                 "not installed, or installed for another CUDA/cuDNN major than the one this "
                 "build of the program was made for.")
        where = "PATH" if windows else "LD_LIBRARY_PATH"
        fix = (f"install {lib.install or 'the library'} and put its directory on {where}, or "
               "install the build of the program made for the CUDA/cuDNN you have")
    sig = derived(f"library-missing-{slug(lib.file.split('.')[0], 4)}",
                  f"{lib.file} cannot be loaded", "library", cls, cause, fix,
                  fam.sources if fam else ("https://man7.org/linux/man-pages/man8/ld.so.8.html",))
    return found(sig, m, (_lib_capture("lib", lib),))


def _linux_name_on_windows(lib: Library, fam: Family, m: re.Match[str]) -> Match:
    """A Linux file name asked of Windows' loader: no installation provides it there."""
    dll = f"{fam.windows[0]}{'64_' + lib.major if fam.version != 'major' and lib.major else ''}.dll"
    cause = (f"The program asks Windows' loader for {lib.file}, the Linux name of {fam.name}; on "
             f"Windows it is {dll}, so no installation can satisfy the request: the program (or "
             "the release of the package that loads it) does not support Windows this way.")
    sig = derived(f"linux-library-on-windows-{slug(lib.file.split('.')[0], 4)}",
                  f"{lib.file} asked for on Windows", "library", "not-environment", cause,
                  "use a release of the package that supports Windows (its changelog, or its "
                  "issue about Windows), or run it under Linux or WSL2",
                  ("https://learn.microsoft.com/en-us/windows/win32/api/libloaderapi/"
                   "nf-libloaderapi-loadlibraryw",), priority=1)
    return found(sig, m, (_lib_capture("lib", lib),))


def _linker_name(lib: Library, fam: Family | None, m: re.Match[str]) -> Match:
    """The driver's library asked for by its unversioned (linker) name: the driver's runtime
    name is libcuda.so.1; the bare libcuda.so is a development link that WSL's
    /usr/lib/wsl/lib, containers and some packagings do not put on the loader's path."""
    name = fam.name if fam else lib.file
    cause = (f"The program loads {lib.file}, the unversioned (linker) name of {name}, and the "
             f"loader does not find it. The driver's runtime name carries its major "
             f"({lib.file.split('.so')[0]}.so.1): the bare name is a development link that "
             "WSL (/usr/lib/wsl/lib), containers and some driver packagings leave off the "
             "loader's path. Where nvidia-smi fails too, no driver is installed here at all.")
    fix = (f"check the driver (nvidia-smi); if it works, find the library (ldconfig -p | grep "
           f"{lib.file.split('.so')[0]}) and put its directory on LD_LIBRARY_PATH (on WSL "
           "/usr/lib/wsl/lib), or create the missing link to the .so.1 file; otherwise install "
           "the NVIDIA driver")
    sig = derived(f"library-link-missing-{slug(lib.file.split('.')[0], 4)}",
                  f"{lib.file} (the linker name) cannot be loaded", "library",
                  "library-not-found", cause, fix,
                  ("https://man7.org/linux/man-pages/man8/ldconfig.8.html",))
    return found(sig, m, (_lib_capture("lib", lib),))


def _dll_load(m: re.Match[str], text: str) -> Match:
    module = m["module"] or ""
    context = text[max(0, m.start() - 600):m.end()]
    if module in ("_C", "_ext") and not _TORCH_C.search(context):
        # a package's own compiled "_C": the package is the last one the traceback entered
        pkgs = re.findall(r"site-packages[\\/]([A-Za-z_]\w{0,60})[\\/]", context)
        module = f"{pkgs[-1]}.{module}" if pkgs else module
    if module and not (module == "_C" and _TORCH_C.search(context)):
        cause = (f"Windows could not load the compiled module {module}: it was built for another "
                 "version of the framework (or its CUDA) than the one installed, or a DLL it "
                 "links is missing.")
        sig = derived(f"extension-dll-load-{kebab(module.replace('.', '_'))}",
                      f"{module} does not load",
                      "library", "extension-abi-mismatch", cause,
                      "reinstall the package that ships it, built for the installed torch and "
                      "CUDA (a matching wheel, or a build from source in this environment)",
                      ("https://docs.python.org/3/library/ctypes.html#loading-shared-libraries",))
    elif _PROC_NOT_FOUND.match(text, m.end() + 2, m.end() + 120) or _PROC_NOT_FOUND.match(
            text, m.end() + 1, m.end() + 120):
        sig = derived("dll-procedure-not-found", "a DLL lacks a function torch needs", "library",
                      "library-version-conflict",
                      "Windows loaded torch's module, but a DLL it links lacks a function it "
                      "needs (ERROR_PROC_NOT_FOUND): another version of that DLL (a CUDA, cuDNN "
                      "or MKL DLL, or the Visual C++ runtime) is found first on PATH.",
                      "find the other copy (where cudnn64_*.dll, cublas64_*.dll, msvcp140.dll) "
                      "and take its folder off PATH, or reinstall torch's CUDA build",
                      ("https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499-",))
    else:
        sig = derived("dll-load-failed", "a DLL does not load", "library", "library-not-found",
                      "Windows could not load a DLL the module needs (a CUDA or cuDNN DLL, or "
                      "the Visual C++ runtime): it is missing or not on PATH.",
                      "install the CUDA/cuDNN the build needs and the Visual C++ "
                      "Redistributable, or reinstall the framework's CUDA build",
                      ("https://learn.microsoft.com/en-us/cpp/windows/latest-supported-vc-redist",))
    return found(sig, m)


def _mixed(m: re.Match[str]) -> Match | None:
    """A library found but lacking a symbol: whose symbol, which file needs it, the verdict."""
    groups = m.groupdict()
    sym, ver = groups.get("sym") or "", groups.get("ver") or ""
    needer = decode_file(groups["file"]) if groups.get("file") else None
    owner = symbol_owner(sym) if sym else None
    tag = version_tag(ver) if ver else None
    provider = decode_file(groups["lib"]) if groups.get("lib") else tag
    owner_fam = owner or (provider.family if provider else None)
    caps = [Decoded("symbol", "text", sym or ver, owner_fam.name if owner_fam else "")]
    if needer is not None:
        caps.append(_lib_capture("needs", needer))
    torch_owned = owner_fam is not None and owner_fam.name.startswith("PyTorch")
    if needer is not None and needer.extension and (torch_owned or owner_fam is None):
        pkg = needer.package or needer.extension
        cause = (f"The compiled extension {needer.file} ({pkg}) needs {sym}, which the "
                 "installed PyTorch does not export: the extension was built for another torch "
                 "release (or CUDA variant) than the one installed.")
        sig = derived(f"extension-abi-{slug(pkg, 4)}", f"{pkg}'s compiled module "
                      "does not fit the installed torch", "library", "extension-abi-mismatch",
                      cause, f"reinstall {pkg} built for the installed torch: a wheel made for "
                      "this exact torch and CUDA, or pip install --no-build-isolation from "
                      "source in this environment", ("https://pytorch.org/docs/stable/cpp_extension.html",))
        return found(sig, m, tuple(caps))
    if owner_fam is not None and owner_fam.name.startswith("TensorFlow") and needer is not None \
            and needer.family is not owner_fam:
        # a custom op or library built against another TensorFlow (release, or C++ ABI: the
        # ops built with g++ of the old ABI against a C++11-ABI TensorFlow, or the reverse)
        cause = (f"{needer.file} needs {sym}, which the installed TensorFlow does not export: "
                 "it was built against another TensorFlow release, or with the other C++ ABI "
                 "(_GLIBCXX_USE_CXX11_ABI) than the installed TensorFlow's.")
        sig = derived(f"extension-abi-{slug(needer.file, 4)}", f"{needer.file} does not fit the "
                      "installed TensorFlow", "library", "extension-abi-mismatch", cause,
                      f"rebuild {needer.file} against the installed tensorflow with the flags it "
                      "gives (tf.sysconfig.get_compile_flags() and get_link_flags(), which carry "
                      "its -D_GLIBCXX_USE_CXX11_ABI), or install the TensorFlow it was built for",
                      owner_fam.sources, confirm=())  # no check reads TensorFlow
        return found(sig, m, tuple(caps))
    if owner_fam is None and needer is None:
        return None
    if owner_fam is not None and owner_fam.conflict == "driver-too-old" and \
            sym.split("@")[0] in _EVERY_DRIVERS:
        return _no_libcuda(m, sym, needer, owner_fam, tuple(caps))
    if owner_fam is not None and owner_fam.conflict == "driver-too-old":
        return _older_driver(m, sym or ver, needer, owner_fam, tuple(caps))
    if tag is not None and tag.file.startswith("GLIBC_") and owner_fam is not None:
        return _older_glibc(m, tag.file, needer, owner_fam, tuple(caps))
    cls = owner_fam.conflict if owner_fam else "library-version-conflict"
    if torch_owned and needer is None:
        cls = "extension-abi-mismatch"
    who = owner_fam.name if owner_fam else "the library that should export it"
    rel = f" ({tag.version or tag.file})" if tag else ""
    needs = f"{needer.file} needs" if needer else "the program needs"
    cause = (f"{needs} {sym or ver}{rel} from {who}, and the copy the loader found lacks it: "
             "two versions are mixed (one on LD_LIBRARY_PATH or in another environment shadows "
             "the one the program was built with).")
    fix = (f"load one consistent {who}: remove the other copy's directory from LD_LIBRARY_PATH "
           "(a toolkit's lib64, a conda env's lib, a system copy), or install the version "
           f"{needer.file if needer else 'the program'} was built against")
    sig = derived(f"library-mixed-{slug(owner_fam.name if owner_fam else sym, 3)}",
                  f"{who}: two versions mixed", "library", cls, cause, fix,
                  owner_fam.sources if owner_fam else
                  ("https://man7.org/linux/man-pages/man8/ld.so.8.html",), priority=1)
    return found(sig, m, tuple(caps))


def _older_glibc(m: re.Match[str], ver: str, needer: Library | None, fam: Family,
                 caps: tuple[Decoded, ...]) -> Match:
    """A binary that needs a newer GNU C library than the system's ("version `GLIBC_2.34' not
    found"): it was built on a newer distribution. glibc is the system's own (one copy, not
    upgraded apart from its release), so nothing shadows it."""
    needs = needer.file if needer else "the program"
    cause = (f"{needs} was built against glibc {ver.removeprefix('GLIBC_')} or newer (it needs "
             f"the symbol version {ver}), and this system's GNU C library is older: the binary "
             "was built for a newer Linux distribution than this one.")
    fix = (f"install a build of {needs} made for this system's glibc (`ldd --version` shows "
           "it: an older release of the package, or one built from source here), or run it on "
           "a newer distribution release (or in a container of one)")
    sig = derived("glibc-older-than-needed", f"{fam.name}: older than {needs} needs",
                  "library", fam.conflict, cause, fix, fam.sources, priority=1)
    return found(sig, m, caps)


# the driver API's first functions (cuda.h: CUDA 1.0's, cuDriverGetVersion CUDA 2.2's, none
# since given a _v2): every libcuda a driver ever shipped exports them, the toolkit's stub too
_EVERY_DRIVERS = frozenset(("cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount",
                            "cuDeviceGetName", "cuDeviceGetAttribute"))


def _no_libcuda(m: re.Match[str], sym: str, needer: Library | None, fam: Family,
                caps: tuple[Decoded, ...]) -> Match:
    """A function every libcuda exports, not found: no libcuda was loaded (the lookup fell
    through to the program's own symbols: CUDA.jl's "julia: undefined symbol:
    cuDriverGetVersion" on a machine without the driver)."""
    needs = f"{needer.file} looked up" if needer else "the program looked up"
    cause = (f"{needs} {sym}, which every NVIDIA driver's libcuda exports (the driver API's "
             "first functions): no libcuda was loaded, so the lookup fell through to the "
             "program's own symbols. No NVIDIA driver is installed where this runs (or, in a "
             "container, the GPU and its driver libraries were not passed in).")
    fix = ("install the NVIDIA driver (nvidia-smi must list the GPU); in a container run with "
           "--gpus all and the NVIDIA Container Toolkit; on a CI runner without a GPU, skip the "
           "GPU tests")
    sig = derived("driver-library-not-loaded", f"{fam.name}: not loaded", "library",
                  "no-driver", cause, fix, fam.sources, priority=1)
    return found(sig, m, caps)


def _older_driver(m: re.Match[str], sym: str, needer: Library | None, fam: Family,
                  caps: tuple[Decoded, ...]) -> Match:
    """A function of the CUDA driver API (cuda.h: "cu" and a capital) that the libcuda the
    loader found lacks: that driver is older than the CUDA the program was built with."""
    needs = f"{needer.file} needs" if needer else "the program needs"
    cause = (f"{needs} {sym}, a function of the CUDA driver API, and the driver's libcuda.so.1 "
             "lacks it: the NVIDIA driver is older than the CUDA the program was built with "
             "(the function arrived in a later driver), or another libcuda shadows the "
             "driver's (the toolkit's stubs directory, a cuda-compat copy, an image's own).")
    fix = ("upgrade the NVIDIA driver to one that runs the CUDA the program was built with "
           "(nvidia-smi shows the highest CUDA the driver runs), or install a build of the "
           "program made for that CUDA; keep stubs/ and cuda-compat copies of libcuda off "
           "LD_LIBRARY_PATH")
    sig = derived(f"library-mixed-{slug(fam.name, 3)}", f"{fam.name}: older than the program "
                  "needs", "library", "driver-too-old", cause, fix, fam.sources, priority=1)
    return found(sig, m, caps)
