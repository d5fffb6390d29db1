#!/usr/bin/env python3
"""Enumerate every error code of the NVIDIA libraries from their own headers (maintainers).

    python tools/extract_error_codes.py --headers DIR... [--strings LIB...] [--tables DIR...]
                                        [--out DIR]
    python tools/extract_error_codes.py --check [--headers DIR...]

Reads each enum named in `ENUMS` from the headers NVIDIA ships (the CUDA toolkit's
`driver_types.h` and `cuda.h`; the headers inside NVIDIA's wheels on PyPI: cuDNN, cuBLAS,
cuSOLVER, cuSPARSE, cuFFT, cuRAND, NCCL, NVRTC; the Video Codec SDK's `nvEncodeAPI.h` as
FFmpeg/nv-codec-headers carries it; the OptiX SDK's `optix_types.h` of NVIDIA/optix-dev): every
enumerator's name, number (an implicit one counted on from the one before) and doc comment.
Where a library is given with `--strings`, its own message function supplies the text the
library prints for each code (`cudaGetErrorString`, `cuGetErrorString`, `ncclGetErrorString`,
`nvrtcGetErrorString`); these need no GPU. Where a source file is given with `--tables`, the
table it maps each code to its printed text with supplies it instead (FFmpeg's
`libavcodec/nvenc.c` for NVENC, `optix_stubs.h`'s `optixGetErrorString` for OptiX).

Several `--headers` folders may hold the same enum from different releases (newest first): the
union is kept, each code with the releases whose header defines it (`in`), so a code printed by
an old CUDA is still known; a number an older release names otherwise keeps the newest name and
the older one as `formerly` (OptiX 7.0's OPTIX_ERROR_INVALID_PTX is OPTIX_ERROR_INVALID_INPUT).
Writes one TOML file per enum under `gpudoctor/explain/codes/` with its sources and its count;
`--check` re-reads the headers found and exits 1 when a shipped file misses a code they define.
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "gpudoctor" / "explain" / "codes"


@dataclass(frozen=True)
class EnumSpec:
    """An error enum: its file stem, the header and C enum that define it, the prefix of its
    enumerators, and the library function that turns a code into its message."""

    stem: str
    title: str
    header: str
    enum: str  # the name after `typedef enum` or before `;` (regex)
    prefix: str
    string_fn: str = ""
    name_fn: str = ""
    lib: str = ""  # the file name (regex) of the library whose string_fn is called
    implicit: bool = False  # enumerators may go without `= value` (C numbering: previous + 1)
    table: str = ""  # the source file whose table gives each code's printed text (--tables)
    row: str = ""  # one row of that table (regex with groups `name` and `msg`)
    origin: str = ""  # where the headers and the table come from (written as a comment)


ENUMS = (
    EnumSpec("cuda_runtime", "CUDA runtime API (cudaError_t)", "driver_types.h",
             r"enum\s+(?:__device_builtin__\s+)?cudaError\b", "cudaError",
             "cudaGetErrorString", "cudaGetErrorName", r"libcudart\.so"),
    EnumSpec("cuda_driver", "CUDA driver API (CUresult)", "cuda.h", r"enum\s+cudaError_enum\b",
             "CUDA_", "cuGetErrorString", "cuGetErrorName", r"libcuda\.so"),
    EnumSpec("cudnn9", "cuDNN 9 (cudnnStatus_t)", "cudnn_graph.h",
             r"enum\s*\{[^}]*CUDNN_STATUS_SUCCESS", "CUDNN_STATUS_", "cudnnGetErrorString", "",
             r"libcudnn_graph\.so\.9"),
    EnumSpec("cudnn8", "cuDNN 7 and 8 (cudnnStatus_t)", "cudnn_ops_infer.h",
             r"enum\s*\{[^}]*CUDNN_STATUS_SUCCESS", "CUDNN_STATUS_", "cudnnGetErrorString", "",
             r"libcudnn_ops_infer\.so\.8"),
    EnumSpec("cublas", "cuBLAS (cublasStatus_t)", "cublas_api.h", r"enum\s*\{[^}]*CUBLAS_STATUS_",
             "CUBLAS_STATUS_"),
    EnumSpec("cusolver", "cuSOLVER (cusolverStatus_t)", "cusolver_common.h",
             r"enum\s*\{[^}]*CUSOLVER_STATUS_SUCCESS", "CUSOLVER_STATUS_"),
    EnumSpec("cusparse", "cuSPARSE (cusparseStatus_t)", "cusparse.h",
             r"enum\s*\{[^}]*CUSPARSE_STATUS_SUCCESS", "CUSPARSE_STATUS_"),
    EnumSpec("cufft", "cuFFT (cufftResult)", "cufft.h", r"enum\s+cufftResult_t\b", "CUFFT_"),
    EnumSpec("curand", "cuRAND (curandStatus_t)", "curand.h", r"enum\s+curandStatus\b",
             "CURAND_STATUS_"),
    EnumSpec("nccl", "NCCL (ncclResult_t)", "nccl.h", r"enum\s*\{\s*ncclSuccess", "nccl",
             "ncclGetErrorString", "", r"libnccl\.so"),
    EnumSpec("nvrtc", "NVRTC (nvrtcResult)", "nvrtc.h", r"enum\s*\{\s*NVRTC_SUCCESS", "NVRTC_",
             "nvrtcGetErrorString", "", r"libnvrtc\.so"),
    EnumSpec("nvenc", "NVENC (NVENCSTATUS)", "nvEncodeAPI.h", r"enum\s+_NVENCSTATUS\b", "NV_ENC_",
             implicit=True, table="nvenc.c",
             row=r'\{\s*(?P<name>NV_ENC_\w+)\s*,[^,\n]*,\s*"(?P<msg>[^"\n]*)"\s*\}',
             origin="From the Video Codec SDK's include/ffnvcodec/nvEncodeAPI.h as "
                    "https://github.com/FFmpeg/nv-codec-headers carries it (the release tags "
                    "read, with their commits, are `releases`); `message` is the description "
                    "FFmpeg's libavcodec/nvenc.c (nvenc_errors, https://github.com/FFmpeg/FFmpeg) "
                    "prints for the code, none for a code newer than its table"),
    EnumSpec("optix", "OptiX (OptixResult)", "optix_types.h|optix_7_types.h",
             r"enum\s+OptixResult\b", "OPTIX_", table="optix_stubs.h",
             row=r'case\s+(?P<name>OPTIX_\w+)\s*:\s*return\s+"(?P<msg>[^"\n]*)"',
             origin="From include/optix_types.h (optix_7_types.h before 7.7) of every release "
                    "tag of https://github.com/NVIDIA/optix-dev (with their commits: `releases`); "
                    "`message` is the text optix_stubs.h's optixGetErrorString gives where the "
                    "driver's library is not loaded (the driver's own texts are not public); the "
                    "header has no doc comments: codes/meanings.toml gives the meanings"),
)

_TOKEN = re.compile(
    r"(?P<comment>/\*(?:(?!\*/).)*\*/|//[^\n]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>-?(?:0x[0-9a-fA-F]+|\d+))",
    re.S)
# the same, where an enumerator may go without a value (it is the one before plus one)
_IMPLICIT = re.compile(
    r"(?P<comment>/\*(?:(?!\*/).)*\*/|//[^\n]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*(?P<value>-?(?:0x[0-9a-fA-F]+|\d+))\s*)?"
    r"(?=,|$)",
    re.S)

_SENTINEL = re.compile(r"NumResults$|_MAX$|FORCE_|_ENUM_END$")


@dataclass
class Code:
    """One enumerator as read from one or more headers."""

    name: str
    number: int
    doc: str
    found_in: list[str] = field(default_factory=list)
    message: str = ""
    formerly: list[str] = field(default_factory=list)  # older releases' names of this number


def _clean_doc(raw: str) -> str:
    text = re.sub(r"\*/", " ", raw)
    text = re.sub(r"^/\*[*!]?<?|^//[/!]?<?|^\s*\*", " ", text, flags=re.M)
    text = re.sub(r"[@\\](?:deprecated|note|since [\w. ]+)\b", "", text)
    text = re.sub(r"::(\w+)", r"\1", text)
    return " ".join(text.split())


def enum_body(source: str, spec: EnumSpec) -> str | None:
    """The text between the braces of the enum `spec` names, or None."""
    m = re.search(spec.enum, source)
    if not m:
        return None
    start = source.index("{", m.start())
    end = source.index("}", start)
    return source[start + 1:end]


def parse(source: str, spec: EnumSpec) -> list[Code]:
    """Every enumerator of `spec`'s enum in a header's text, with its doc comment: a comment
    before an enumerator documents it, a trailing `/**< … */` or `//!< …` the one before."""
    body = enum_body(source, spec)
    if body is None:
        return []
    codes: list[Code] = []
    pending: list[str] = []
    number = -1
    for m in (_IMPLICIT if spec.implicit else _TOKEN).finditer(body.strip()):
        if m["comment"]:
            trailing = re.match(r"/\*[*!]<|//[/!]<", m["comment"])
            if trailing and codes:
                codes[-1].doc = " ".join(filter(None, (codes[-1].doc,
                                                       _clean_doc(m["comment"]))))
            else:
                pending.append(m["comment"])
            continue
        doc = _clean_doc("\n".join(pending))
        pending = []
        number = int(m["value"], 0) if m["value"] else number + 1
        if m["name"].startswith(spec.prefix) and not _SENTINEL.search(m["name"]):
            codes.append(Code(m["name"], number, doc))
    return codes


def find_headers(folders: list[Path], spec: EnumSpec) -> list[Path]:
    """Every header file under `folders` that may define `spec`'s enum, best name first."""
    found: list[Path] = []
    for name in spec.header.split("|"):
        for folder in folders:
            found += sorted(p for p in folder.rglob(name) if p.is_file())
    return found


def release_of(path: Path) -> str:
    """A short name of the release a header belongs to: the wheel or toolkit folder."""
    for part in reversed(path.parts):
        if re.match(r"(nvidia_[a-z0-9_]+-[\d.]+|cuda-[\d.]+|[\w.-]+@[0-9a-f]{7,40})$", part):
            return part
    return str(path.parent)


def collect(folders: list[Path], spec: EnumSpec) -> tuple[list[Code], list[str]]:
    """The union of `spec`'s codes over every header found, and the releases read (the first
    release to name a number names its code: give the newest first)."""
    by_name: dict[str, Code] = {}
    by_number: dict[int, Code] = {}
    releases: list[str] = []
    for path in find_headers(folders, spec):
        codes = parse(path.read_text(encoding="utf-8", errors="replace"), spec)
        if not codes:
            continue
        rel = release_of(path)
        if rel in releases:
            continue
        releases.append(rel)
        for c in codes:
            held = by_number.get(c.number)
            if held is not None and held.name != c.name and c.name not in by_name:
                held.formerly += [] if c.name in held.formerly else [c.name]
                held.found_in += [] if rel in held.found_in else [rel]
                continue
            known = by_name.setdefault(c.name, c)
            by_number.setdefault(c.number, known)
            if known.number != c.number:
                raise SystemExit(f"{spec.stem}: {c.name} is {known.number} in one header and "
                                 f"{c.number} in {path}")
            if not known.doc and c.doc:
                known.doc = c.doc
            known.found_in.append(rel)
    return sorted(by_name.values(), key=lambda c: (c.number, c.name)), releases


def library_strings(libs: list[Path], spec: EnumSpec, codes: list[Code]) -> str:
    """Fill each code's message from the libraries' own string function, the first library
    (newest first) that knows the code; returns the libraries used."""
    if not spec.string_fn:
        return ""
    used = []
    for lib in libs:
        try:
            fn = getattr(ctypes.CDLL(str(lib)), spec.string_fn)
        except (OSError, AttributeError):
            continue
        took = False
        for c in codes:
            if c.message:
                continue
            text = _call_string(fn, c.number, by_pointer=spec.stem == "cuda_driver")
            if text and "unrecognized" not in text.lower() and "unknown error code" not in text:
                c.message = text
                took = True
        if took:
            used.append(lib.name)
    return ", ".join(used)


def kept_messages(shipped: Path, codes: list[Code], strings_from: str) -> str:
    """Fill each code still without a message from the shipped file's code of the same name
    and number; returns `strings_from` with the shipped file's source added, where it gave
    any ("libcuda.so.1 (kept from the shipped file)")."""
    import tomllib

    data = tomllib.loads(shipped.read_text(encoding="utf-8"))
    old = {(c["name"], c["number"]): c.get("message", "") for c in data["code"]}
    took = False
    for c in codes:
        if not c.message and old.get((c.name, c.number)):
            c.message = old[(c.name, c.number)]
            took = True
    if not took:
        return strings_from
    kept = f"{data.get('messages_from') or 'the shipped file'} (kept from the shipped file)"
    return ", ".join(filter(None, (strings_from, kept)))


def table_strings(sources: list[Path], spec: EnumSpec, codes: list[Code]) -> str:
    """Fill each code's message from the first `spec.table` file under `sources` whose rows
    name it (a row whose text is the code's own name is its name function's, not a message);
    returns the file used."""
    if not spec.table:
        return ""
    for folder in sources:
        for path in sorted(p for p in folder.rglob(spec.table) if p.is_file()):
            text = path.read_text(encoding="utf-8", errors="replace")
            rows = {m["name"]: m["msg"] for m in re.finditer(spec.row, text)
                    if m["msg"] != m["name"]}
            if not rows:
                continue
            for c in codes:
                c.message = c.message or rows.get(c.name, "")
            rel = release_of(path)
            parts = path.parts
            return "/".join(parts[parts.index(rel):]) if rel in parts else str(path)
    return ""


def _call_string(fn: ctypes._CFuncPtr, number: int, *, by_pointer: bool) -> str:
    if by_pointer:  # CUresult cuGetErrorString(CUresult, const char **)
        out = ctypes.c_char_p()
        fn.restype = ctypes.c_int
        if fn(number, ctypes.byref(out)) != 0 or out.value is None:
            return ""
        return out.value.decode("utf-8", "replace")
    fn.restype = ctypes.c_char_p
    raw = fn(number)
    return raw.decode("utf-8", "replace") if raw else ""


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _wrap(text: str, width: int = 96) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def render(spec: EnumSpec, codes: list[Code], releases: list[str], strings_from: str) -> str:
    """The TOML file for one enum."""
    lines = [f"# {spec.title}: every code, read from NVIDIA's headers by",
             "# tools/extract_error_codes.py. Do not edit by hand; re-run the tool.",
             *(f"# {line}" for line in _wrap(spec.origin)),
             f"title = {_toml_str(spec.title)}",
             f"header = {_toml_str(spec.header.split('|')[0])}",
             "releases = [" + ", ".join(_toml_str(r) for r in releases) + "]",
             f"messages_from = {_toml_str(strings_from)}",
             f"count = {len(codes)}", ""]
    for c in codes:
        lines += ["[[code]]", f"name = {_toml_str(c.name)}", f"number = {c.number}"]
        if c.message:
            lines.append(f"message = {_toml_str(c.message)}")
        lines.append(f"doc = {_toml_str(c.doc)}")
        if c.formerly:
            lines.append("formerly = [" + ", ".join(_toml_str(n) for n in c.formerly) + "]")
        if len(c.found_in) != len(releases):
            lines.append("in = [" + ", ".join(_toml_str(r) for r in c.found_in) + "]")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write (or, with --check, verify) the code tables."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--headers", type=Path, nargs="+", default=[Path("/usr/local/cuda/include")])
    ap.add_argument("--strings", type=Path, nargs="*", default=[],
                    help="libraries whose error-string functions give the printed messages")
    ap.add_argument("--tables", type=Path, nargs="*", default=[],
                    help="source folders holding a table of the printed messages (FFmpeg's "
                         "libavcodec/nvenc.c, OptiX's optix_stubs.h)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep-messages", action="store_true",
                    help="a code no library or table here gives a message for keeps the one "
                         "the shipped file has for the same name and number (the driver's "
                         "cuGetErrorString needs libcuda.so.1, which a machine without the "
                         "driver lacks)")
    args = ap.parse_args(argv)
    missing = 0
    for spec in ENUMS:
        if args.only and spec.stem not in args.only:
            continue
        codes, releases = collect(args.headers, spec)
        if not codes:
            print(f"{spec.stem}: no header found", file=sys.stderr)
            continue
        target = args.out / f"{spec.stem}.toml"
        if args.check:
            import tomllib

            shipped = {c["name"] for c in tomllib.loads(target.read_text())["code"]}
            lost = [c.name for c in codes if c.name not in shipped]
            missing += len(lost)
            print(f"{spec.stem}: {len(codes)} in the headers, {len(lost)} missing {lost[:5]}")
            continue
        libs = [p for p in args.strings if spec.lib and re.match(spec.lib, p.name)]
        strings_from = library_strings(libs, spec, codes) or table_strings(args.tables, spec,
                                                                           codes)
        if args.keep_messages and target.exists():
            strings_from = kept_messages(target, codes, strings_from)
        args.out.mkdir(parents=True, exist_ok=True)
        target.write_text(render(spec, codes, releases, strings_from), encoding="utf-8")
        print(f"{spec.stem}: {len(codes)} codes from {len(releases)} headers"
              f"{', messages from ' + strings_from if strings_from else ''}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
