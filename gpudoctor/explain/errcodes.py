"""Error codes, read wherever a text names one: by name (`cudaErrorNoDevice`,
`CUDNN_STATUS_ARCH_MISMATCH`, a Python wrapper's `cudnnStatusArchMismatch`, NVML's bindings'
spellings), by number in a CUDA context ("CUDA error 209", "cuda runtime error (59)",
"cudaGetDeviceCount returned 30", "Error code: 209" under a "CUDA Error:" header, "(error-code
2)" on a line naming a .cu file), NVML's by number after "NVML" ("NVML: can't get GPU #0,
error code 15"), by the message the library prints ("CUDA error: out of memory"), and
NVENC's and OptiX's codes by number where the programs calling them print one
with its context (FFmpeg's "OpenEncodeSessionEx failed: out of memory (10)", NVEncC's "Error on
nvEncOpenEncodeSessionEx: 10 (", "Optix call (optixInit()) failed with code 7801"). Each becomes
a diagnosis of the code's enumeration entry (`catalog`): what NVIDIA's document says it means,
the cause class it points to, and the checks that would confirm it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from gpudoctor.explain.bindings import binding_codes
from gpudoctor.explain.catalog import Catalog, Code, load_catalog
from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.decode import Decoded
from gpudoctor.explain.found import Match, anchored, derived, found, hits, kebab, line_of
from gpudoctor.explain.kb import Signature

_NAME = re.compile(
    r"\b(cudaError[A-Z]\w*|CUDA_ERROR_[A-Z_]+|CUDNN_STATUS_[A-Z_]+|CUBLAS_STATUS_[A-Z_]+"
    r"|CUSOLVER_STATUS_[A-Z_]+|CUSPARSE_STATUS_[A-Z_]+|CUFFT_[A-Z_]+|CURAND_STATUS_[A-Z_]+"
    r"|NVRTC_ERROR_[A-Z_]+|NVML_ERROR_[A-Z_]+|nccl(?:UnhandledCuda|System|Internal|Remote)Error"
    r"|nccl(?:InvalidArgument|InvalidUsage|Timeout)|NV_ENC_ERR_[A-Z_]+|OPTIX_ERROR_[A-Z_]+)\b")
# NCCL's messages as torch and others print them: "NCCL error in: ..., unhandled cuda error"
_NCCL_MESSAGE = re.compile(r"nccl[^\n]{0,240}?(?P<msg>unhandled cuda error|unhandled system error|"
                           r"remote process exited or there was a network error|invalid usage|"
                           r"invalid argument)")
# a CUDA error number printed with its context: "CUDA error 209", "cuda runtime error (59)",
# "error=101 : invalid device ordinal", "Error 804: forward compatibility ...", "CUresult(-1)",
# TensorRT's "CUDA initialization failure with error: 35" and "Cuda Error in allocate: 2 (out of
# memory)" (the function may be qualified: "nvinfer1::internal::DefaultAllocator::allocate"),
# nvdiffrast's "Cuda error: 2[cudaMalloc(&m_gpuPtr, bytes);]"
_NUMBER = re.compile(
    # ("cudaError 13 (invalid device symbol)": the type's name before the number, run together)
    r"(?:cuda(?:\s{1,8}runtime|\s{1,8}driver)?\s{0,8}error\s{0,8}:?\s{0,8}\(?\s{0,8}|\berror\s{0,8}=\s{0,8}|"
    r"\berror\s{1,8}|"
    r"cuda\s{1,8}error\s{1,8}in\s{1,8}[\w:]{1,120}\s{0,8}:\s{0,8}|"
    r"code\s{0,8}=\s{0,8}|cuda initiali[sz]ation failure with error:?\s{0,8})"
    r"(?P<n>\d{1,5})\b\s{0,8}\)?\s{0,8}[:(]?\s{0,8}(?P<rest>[^\n]{0,160})", re.I)
# a CUDA runtime error number where the text says it is one without "CUDA" on its line: in
# a block a CUDA error check prints under its "CUDA Error:" header (GPUMD's "CUDA Error:\n
# File: x.cu\n Line: 266\n Error code: 209\n Error text: …"), or on a line naming a CUDA
# source file (RELION's "out of memory in …/custom_allocator.cuh at line 435 (error-code 2)")
_BLOCK_NUMBER = re.compile(
    r"(?:\bcuda[ \t]{1,4}error[ \t]{0,4}:?[ \t]*\n(?:[^\n]{0,200}\n){0,8}?[^\n]{0,40}?"
    r"|\.cuh?\b[^\n]{0,200}?)\berror[- ]code[ \t]{0,4}[:=]?[ \t]{0,4}(?P<n>\d{1,4})\b", re.I)
# a call and the number it returned, the message after it on the line or, as the CUDA
# samples print it, on the next after "-> " ("cudaGetDeviceCount returned 30\n-> unknown error");
# the call may show its arguments ("cuInit(0) returned 803", NGC containers' banner)
_CALL_NUMBER = re.compile(r"\b(?P<fn>cu(?:da)?[A-Z]\w{2,40})\s{0,8}(?:\([^()\n]{0,40}\))?\s{0,8}"
                          r"(?:returned|"
                          r"failed with(?: error)?|failed:?|error:?|err:?)\s{0,8}(?:code\s{0,8})?"
                          r"[:(]?\s{0,8}(?P<n>\d{1,4})\b\)?[ \t:]{0,8}(?:\n->[ \t]{0,8})?"
                          r"(?P<rest>[^\n]{0,160})")
# a call named on the line, its code later on it: PaddlePaddle's "cudaGetDeviceCount failed in
# paddle::platform::GetCUDADeviceCountImpl, error code : 30", CuPy-era 'CUDA error calling
# "cudaGetDeviceCount(&devCount)", code is 35'
_CALL_CODE = re.compile(r"\b(?P<fn>cu(?:da)?[A-Z]\w{2,40})\b[^\n]{0,160}?\b(?:error code|code is)"
                        r"[ \t]{0,4}[:=]?[ \t]{0,4}(?P<n>\d{1,4})\b(?P<rest>[^\n]{0,300})")
# cuFFT's result by number where a program prints it after an FFT failure: OpenMM's "Error
# initializing FFT: 2", TensorFlow's "failed to make cuFFT batched plan:5"
_FFT_NUMBER = re.compile(r"(?:\b(?:cu)?FFT\b[^\n]{0,60}?(?:error|fail|initiali[sz]|plan)"
                         r"[^\n:]{0,40}|(?:error|fail\w{0,4}|initiali[sz]\w{0,4})[^\n:]{0,40}?"
                         r"\b(?:cu)?FFT\b[^\n:]{0,20}):[ \t]{0,4}(?P<n>\d{1,2})\b(?![.\d])", re.I)
# glog's CHECK as Caffe, MXNet and others use it on a library's status: "Check failed: error ==
# cudaSuccess (2 vs. 0)  out of memory", "status == CUDNN_STATUS_SUCCESS (4 vs. 0)"
_CHECK = re.compile(r"==\s{0,8}(?P<ok>cudaSuccess|CUDA_SUCCESS|CUDNN_STATUS_SUCCESS|"
                    r"CUBLAS_STATUS_SUCCESS|CUSOLVER_STATUS_SUCCESS|CUSPARSE_STATUS_SUCCESS|"
                    r"CURAND_STATUS_SUCCESS|CUFFT_SUCCESS|ncclSuccess|NVRTC_SUCCESS)\s{0,8}"
                    r"\((?P<n>\d{1,5}) vs\. 0\)[ \t]{0,8}(?P<rest>[^\n]{0,160})")
_CHECK_STEM = {"cudaSuccess": "cuda_runtime", "CUDA_SUCCESS": "cuda_driver",
               "CUBLAS_STATUS_SUCCESS": "cublas", "CUSOLVER_STATUS_SUCCESS": "cusolver",
               "CUSPARSE_STATUS_SUCCESS": "cusparse", "CURAND_STATUS_SUCCESS": "curand",
               "CUFFT_SUCCESS": "cufft", "ncclSuccess": "nccl", "NVRTC_SUCCESS": "nvrtc"}
_DRIVER_NUMBER = re.compile(r"(?:CUresult\s{0,8}\(\s{0,8}|UNKNOWN ERROR\s{0,8}\()"
                            r"(?P<n>-?\d{1,4})\s{0,8}\)", re.I)
# a printed message after a CUDA context: "CUDA error: out of memory", "Status: the provided
# PTX was compiled with an unsupported toolchain.", "CUDA kernel failed : an illegal ..."
_MESSAGE = re.compile(
    # the place named between the context and the message: TensorRT-LLM's "CUDA runtime error
    # in ::cudaMallocAsync(ptr, n, …): out of memory", the samples' "Cuda error in file
    # 'x.cu' at line 648: out of memory" (tried first: the bare context would read "in …")
    r"(?P<ctx>cuda(?:\s{1,8}runtime)?\s{1,8}error\s{1,8}in\s{1,8}(?:file\s{1,8}\S{1,200}\s{1,8}at"
    r"\s{1,8}line\s{1,8}\d{1,6}|[^\n]{1,200}?\))"
    r"|cuda(?:\s{1,8}runtime)?\s{1,8}error|cuda\s{1,8}kernel\s{1,8}failed|cudacheckerror\(\)\s{1,8}failed"
    r"|cuda\s{1,8}failure|cuda\s{1,8}failed\s{1,8}with\s{1,8}error|cuda\s{1,8}call\s{1,8}failed|status"
    r"|failed\s{1,8}to\s{1,8}initiali[sz]e\s{1,8}cuda|cuda\s{1,8}initiali[sz]ation\s{1,8}error"
    r"|cudamalloc\s{1,8}failed|\[cuda\]"
    r"|cuda\s{1,8}error\s{1,8}at\s{1,8}\S+"
    # a driver or runtime call named before the message: "cuLinkAddData(): the provided PTX …",
    # PyCUDA's "cuMemAlloc failed: out of memory"
    r"|\bcu(?:da)?[a-z][a-z0-9_]{2,40}\s{0,4}\(\s{0,4}\)|\bcu[a-z][a-z0-9_]{2,40}\s{1,4}failed)"
    r"\s{0,8}[:=]?\s{0,8}(?:\(?\d{1,5}\)?)?\s{0,8}[:=]?\s{0,8}['\"]?(?P<msg>[a-z][^\n'\"]{2,160})")
# any error context a program prints before a library's message: "Error (gpu_burn-drv.cpp:298):
# system not yet initialized", "Error text: invalid device function"; the message must then be
# the whole rest of the line, and one no other layer prints (see _GENERIC_LEAST, _OS_WORDING)
# ("Error in load module (gpu_burn-drv.cpp:238): a PTX JIT compilation failed": a place in
# parentheses before the colon may hold colons of its own)
_ERROR_LINE = re.compile(r"\berror\b(?:[^\n:=()]|\([^\n()]{0,80}\)){0,60}[:=][ \t]{0,20}['\"]?"
                         r"(?P<msg>[a-z][^\n'\"]{2,160})")
_LINE_END = re.compile(r"['\" \t.]{0,20}(?:\n|$)")
_GENERIC_LEAST = 20
# messages of the CUDA runtime that are also the C library's strerror() texts (EPERM,
# EOPNOTSUPP, ...): after a bare "error:" they may be any program's
_OS_WORDING = frozenset({"operation not permitted", "operation not supported",
                         "invalid argument", "out of memory", "file not found", "unknown error"})
# NVENC's and OptiX's codes by number: only where the number and what the program prints around
# it agree (a bare "(10)" or "code 7801" names nothing). FFmpeg's nvenc.c prints "<what>:
# <description> (<number>): <details>" (`_ffmpeg_nvenc`); NVEncC "Error on nvEnc<Call>: <number>
# (<the header's doc comment>)"; the Video Codec SDK's NvEncoder "m_nvenc.nvEnc<Call>(...)
# returned error <number>"; OWL, NVISII and pbrt "Optix call (<fn>) failed with code <number>";
# others "optix<Fn>(...) failed ... code <number>"
_NVENCC = re.compile(r"error on (?:nv|Nv|NV)Enc\w{2,60}(?:\([^\n()]{0,120}\))?:[ \t]{0,4}"
                     r"(?P<n>\d{1,2})[ \t]{0,4}\(", re.I)
_NVENC_SDK = re.compile(r"nvEnc[A-Z]\w{2,60}[ \t]{0,4}\([^\n]{0,200}?\)[ \t]{0,4}returned error"
                        r"[ \t]{1,4}(?P<n>\d{1,2})\b")
_OPTIX_CALL = re.compile(r"optix call\b[\s\S]{0,600}?\bfailed with (?:error )?code[ \t:=]{0,4}"
                         r"(?P<n>\d{4})\b", re.I)
_OPTIX_FN = re.compile(r"optix[A-Z]\w{2,60}[ \t]{0,4}\([^\n]{0,300}?\)[^\n]{0,40}?\bfailed\b"
                       r"[^\n]{0,60}?\bcode[ \t:=]{0,4}(?P<n>\d{4})\b")
# OptiX's own message for a code (optixGetErrorString) after an "OptiX error" on its line, as
# wrappers print it: "optix_wrapper.cpp:175 Optix Error: 'Unsupported ABI version'"
_OPTIX_MESSAGE = re.compile(r"\boptix\b[^\n]{0,60}?\berror\b[ \t]{0,4}[:=][ \t]{0,4}['\"`]?"
                            r"(?P<msg>[A-Za-z][^\n'\"`]{2,80}?)['\"`]?[ \t.]{0,4}(?:\n|$)", re.I)
# NVML's return code by number, after "NVML" on the same line: T-Rex's "NVML: can't get GPU
# #0, error code 15", "nvmlDeviceGetHandleByIndex() failed with error code 999"
_NVML_NUMBER = re.compile(r"nvml\w{0,40}(?:\(\))?[^\n]{0,80}?\b(?:error code|returned|failed with"
                          r"(?: error)?(?: code)?|error)[ \t:=]{1,4}(?P<n>\d{1,3})\b(?![.\d])",
                          re.I)
_FAILED_BEFORE = re.compile(r"\bfailed!?: $")



def code_signature(code: Code) -> Signature:
    """The signature of an enumerated code: what it means, its class, what confirms it."""
    cls = CAUSE_CLASSES[code.cause_class]
    shown = f" (\"{code.message}\")" if code.message and code.message != code.name else ""
    cause = (f"{code.name} is {code.library} error {code.number}{shown}: "
             f"{code.meaning.rstrip('.')}. The cause it points to: {cls.meaning}.")
    return derived(f"code-{kebab(code.name)}", f"{code.name} ({code.library} error)", "code",
                   code.cause_class, cause, cls.fix, (code.source,),
                   priority=-2 if code.weak else 1 if code.strong else -1)


def _capture(code: Code) -> tuple[Decoded, ...]:
    return (Decoded("code", "code", code.name,
                    f"{code.library} error {code.number}: {code.meaning.rstrip('.')}"),)


def code_matches(text: str, lowered: str) -> list[Match]:
    """Each code the text names: by name, by number in a CUDA context, by printed message."""
    cat = load_catalog()
    seen: dict[str, Match] = {}

    def add(code: Code | None, span: tuple[int, int, str]) -> None:
        if code is not None and code.number != 0 and code.name not in seen:
            seen[code.name] = found(code_signature(code), span, _capture(code))

    for code, span in binding_codes(cat, text, lowered):
        add(code, span)
    for code, span in _sdk_codes(cat, text, lowered):
        add(code, span)
    if "nvml" in lowered:  # NVML's codes by number where a program prints one after "NVML"
        nvml = cat.numbered.get("nvml", {})
        for m in anchored(_NVML_NUMBER, text, lowered, "nvml"):
            add(nvml.get(int(m["n"])), (m.start(), m.end(), line_of(text, m.start())))
    if any(t in lowered for t in ("error", "err:", "status", "nccl", "cufft_", "code=",
                                  "returned", "fail", "():")):
        for m in hits(_NAME, text):
            add(cat.codes.get(m[1]), (m.start(), m.end(), line_of(text, m.start())))
        for m in hits(_NUMBER, text):
            add(_by_number(cat, cat.runtime_by_number.get(int(m["n"])), m["rest"], m.group(0)),
                (m.start(), m.end(), m.group(0)))
        for m in hits(_CALL_NUMBER, text):
            add(_returned(cat, m), (m.start(), m.end(), m.group(0)))
        for m in hits(_BLOCK_NUMBER, text):
            code = cat.runtime_by_number.get(int(m["n"]))
            if code is not None and code.number >= 2:
                add(code, (m.start(), m.end(), line_of(text, m.end() - 1)))
        for m in hits(_CALL_CODE, text):
            add(_returned(cat, m), (m.start(), m.end(), line_of(text, m.start())))
        if "fft" in lowered:
            cufft = cat.numbered.get("cufft", {})
            for m in hits(_FFT_NUMBER, text):
                add(cufft.get(int(m["n"])), (m.start(), m.end(), line_of(text, m.start())))
        if "vs. 0)" in lowered:
            for m in hits(_CHECK, text):
                add(_checked(cat, m), (m.start(), m.end(), line_of(text, m.start())))
        for m in hits(_DRIVER_NUMBER, text):
            add(cat.driver_by_number.get(int(m["n"])), (m.start(), m.end(), m.group(0)))
        if "nccl" in lowered:
            nccl = {c.message.lower().split(" (")[0]: c for c in cat.codes.values()
                    if c.stem == "nccl" and c.message}
            for m in hits(_NCCL_MESSAGE, lowered):
                add(nccl.get(m["msg"]), (m.start(), m.end(), text[m.start():m.end()]))
        for m in hits(_MESSAGE, lowered):
            # after a bare "status:" only a message no other program prints is taken
            least = 25 if m["ctx"] == "status" else 8
            add(_by_message(cat.by_message, m["msg"], least),
                (m.start(), m.end(), text[m.start():m.end()]))
        for m in anchored(_ERROR_LINE, lowered, lowered, "error"):
            msg = m["msg"].rstrip(" \t.")
            code = cat.by_message.get(msg)
            if code is not None and len(msg) >= _GENERIC_LEAST and msg not in _OS_WORDING \
                    and _LINE_END.match(lowered, m.end()):
                add(code, (m.start(), m.end(), text[m.start():m.end()]))
    pattern, by_message = _quoted_messages()  # with or without a word of error before it
    for m in hits(pattern, lowered):
        add(by_message[m[0]], (m.start(), m.end(), line_of(text, m.start())))
    return list(seen.values())


# a message short enough to be any program's words ("initialization error") is not taken alone
_ALONE_LEAST = 22
_NOT_ALONE = frozenset({"initialization error", "wait operation timed out",
                        "feature not yet implemented", "integrity checks failed"})
# shorter messages that still only CUDA prints: its device symbols ("SetKernelsGpuData copy to
# cData failed invalid device symbol", AutoDock-GPU)
_ALONE_SHORT = frozenset({"invalid device symbol"})


@cache
def _quoted_messages() -> tuple[re.Pattern[str], dict[str, Code]]:
    """The CUDA runtime's and driver's printed messages that only CUDA prints, as one pattern
    matching any of them as whole words, wherever a program quotes one ("Failed to allocate
    device vector A (error code system not yet initialized)!", "Cuda error …:307 'peer access is
    not supported between these two devices'"): the text names the code by its message."""
    messages = {m: c for m, c in load_catalog().by_message.items()
                if (len(m) >= _ALONE_LEAST or m in _ALONE_SHORT) and m not in _OS_WORDING
                and m not in _NOT_ALONE}
    words = "|".join(re.escape(m) for m in sorted(messages, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9_-])(?:{words})(?![a-z0-9_-])"), messages


def _sdk_codes(cat: Catalog, text: str, lowered: str) -> Iterator[
        tuple[Code | None, tuple[int, int, str]]]:
    """NVENC's and OptiX's codes by number in their printed contexts (see `_NVENCC`)."""
    nvenc, optix = cat.numbered.get("nvenc", {}), cat.numbered.get("optix", {})
    if "nvenc" in lowered or "failed: " in lowered:
        yield from _ffmpeg_nvenc_codes(text)
    for m in anchored(_NVENCC, text, lowered, "error on nv"):
        yield nvenc.get(int(m["n"])), (m.start(), m.end(), line_of(text, m.start()))
    for m in anchored(_NVENC_SDK, text, lowered, "nvenc"):
        yield nvenc.get(int(m["n"])), (m.start(), m.end(), line_of(text, m.start()))
    if "optix" in lowered:
        for m in anchored(_OPTIX_CALL, text, lowered, "optix call"):
            yield optix.get(int(m["n"])), (m.start(), m.end(), m.group(0))
        for m in anchored(_OPTIX_FN, text, lowered, "optix"):
            yield optix.get(int(m["n"])), (m.start(), m.end(), line_of(text, m.start()))
        said = {c.message.lower(): c for c in optix.values() if c.message}
        for m in anchored(_OPTIX_MESSAGE, text, lowered, "optix"):
            if (code := said.get(m["msg"].strip().lower())) is not None:
                yield code, (m.start(), m.end(), line_of(text, m.start()))


@cache
def _ffmpeg_descriptions() -> tuple[re.Pattern[str], dict[str, Code]]:
    """FFmpeg's description of each NVENC status (its `message`), as one pattern of them after
    ": " with a number in parentheses after them."""
    codes = {c.message: c for c in load_catalog().numbered.get("nvenc", {}).values()
             if c.message and c.number}
    words = "|".join(re.escape(m) for m in sorted(codes, key=len, reverse=True))
    return re.compile(rf"(?<=: )(?P<desc>{words}) \((?P<n>\d{{1,2}})\)"), codes


def _ffmpeg_nvenc_codes(text: str) -> Iterator[tuple[Code | None, tuple[int, int, str]]]:
    """FFmpeg's "<what>: <description> (<number>)": the description and the number must be one
    code's, and the line FFmpeg's NVENC encoder's ("[h264_nvenc @ 0x…]") or the text before
    the description "<Call> failed: " ("OpenEncodeSessionEx failed: out of memory (10)")."""
    pattern, codes = _ffmpeg_descriptions()
    for m in hits(pattern, text):
        code = codes[m["desc"]]
        line = line_of(text, m.start())
        before = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        if code.number == int(m["n"]) and ("nvenc" in line.lower()
                                           or _FAILED_BEFORE.search(before)):
            yield code, (m.start(), m.end(), line)


def _returned(cat: Catalog, m: re.Match[str]) -> Code | None:
    """A call's returned number: the code of that number in the call's API (cuda* the
    runtime's, cu* the driver's), unless the message after it is another code's of that API
    (the runtime's old numbering: cudaErrorUnknown was 30 before CUDA 10.1)."""
    runtime = m["fn"].startswith("cuda")
    code = (cat.runtime_by_number if runtime else cat.driver_by_number).get(int(m["n"]))
    # the message right after the number, or after a later colon on its line (PaddlePaddle's
    # "error code : 30, Please see detail in <url>: unknown error at [<file>]")
    for rest in (m["rest"], *(part for part in m["rest"].split(": ")[1:] if code is None)):
        said = _by_message(cat.by_message, rest, 8)
        if said is not None and (said.stem == "cuda_runtime") == runtime:
            return said
    return code


def _checked(cat: Catalog, m: re.Match[str]) -> Code | None:
    """glog's `x == <LIB>_SUCCESS (N vs. 0)`: code N of the library whose success constant it
    is (cuDNN 9 numbers its codes from 1000, cuDNN 8 below), the message after it winning for
    the runtime as in `_returned`."""
    stem = _CHECK_STEM.get(m["ok"]) or ("cudnn9" if int(m["n"]) >= 1000 else "cudnn8")
    code = cat.numbered.get(stem, {}).get(int(m["n"]))
    if stem == "cuda_runtime":
        said = _by_message(cat.by_message, m["rest"], 8)
        if said is not None and said.stem == "cuda_runtime":
            return said
    return code


def _by_number(cat: Catalog, code: Code | None, rest: str, matched: str) -> Code | None:
    """A numbered runtime code, when the text around agrees: its message follows, or the
    number was printed as a CUDA error ("CUDA error 209", "cuda runtime error (59)"). Where the
    message that follows is another code's, the message wins: CUDA 10.1 renumbered the runtime's
    errors, and "error=8 : invalid device function" is the old numbering's 8."""
    if code is not None and code.message and code.message.lower() in rest.lower():
        return code if code.number >= 2 else None
    other = _by_message(cat.by_message, rest, 8)
    if other is not None and other is not code:
        return other
    if code is None or code.number < 2:
        return None
    return code if matched.lower().lstrip().startswith("cuda") else None


_CUT_LEAST = 20  # a message cut short (a wrapped line, a paste cut off) is read from this long


def _by_message(by_message: dict[str, Code], msg: str, least: int) -> Code | None:
    """The code whose message `msg` starts with (the longest such), or, for a message cut
    short ("the launch timed out and was"), the one code whose message starts with it: at
    least `_CUT_LEAST` characters, and every code it could be points to one cause (the
    runtime's and the driver's wording of one error)."""
    msg = msg.strip().rstrip(".").lower()
    best = None
    for known, code in by_message.items():
        if msg.startswith(known) and (best is None or len(known) > len(best[0])):
            best = (known, code)
    if best and len(best[0]) >= least:
        return best[1]
    if len(msg) < max(least, _CUT_LEAST):
        return None
    cut = sorted((c for known, c in by_message.items() if known.startswith(msg)),
                 key=lambda c: (c.stem != "cuda_runtime", c.name))
    return cut[0] if cut and len({c.cause_class for c in cut}) == 1 else None
