"""`gpudoctor.versions`: the one arch rule (cubins run on the same major, PTX on any newer GPU,
`a` targets on exactly one compute capability, `f` targets on their family) and the decoders of
CUDA / cuDNN version integers and compute capabilities.

Arch lists are real wheels' (`torch.cuda.get_arch_list()` of the PyPI / download.pytorch.org
builds, as recorded in compat_tables/torch.toml) and this venv's torch's own.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpudoctor.versions import (
    arch_list_supports,
    cc_text,
    coverage,
    covers,
    decode_cudnn_version,
    encode_cudnn_version,
    format_cudnn_version,
    minor_key,
    minor_of,
    normalize_cc,
    parse_arch,
    parse_arch_list,
    parse_cc,
    parse_version,
    release3,
    sm_name,
)
from tests.checks.envbuilder import ARCH_CU126, ARCH_CU128, ARCH_CU130

# (arch list, GPU compute capability, how it is covered: None when nothing runs there)
CASES = [
    (ARCH_CU126, (8, 9), "same-major"),  # RTX 4090 on a cu126 wheel: the sm_86 cubins
    (ARCH_CU126, (9, 0), "native"),
    (ARCH_CU126, (6, 1), "same-major"),  # GTX 1080: the sm_60 cubins
    (ARCH_CU126, (12, 0), None),  # RTX 5090 on a cu126 wheel: no sm_12x, no PTX
    (ARCH_CU128, (6, 1), None),  # the list starts at sm_75
    (ARCH_CU128, (12, 1), "same-major"),  # DGX Spark (sm_121) runs sm_120 cubins
    (ARCH_CU130, (12, 1), "same-major"),
    (ARCH_CU130, (13, 0), "ptx"),  # a future major: compute_120 JIT-compiles
    (("sm_70", "sm_75", "sm_80"), (6, 1), None),
    (("sm_90a",), (9, 0), "native"),
    (("sm_90a",), (10, 0), None),  # arch-specific: exactly sm_90
    (("compute_90a",), (10, 0), None),  # arch-specific PTX does not JIT forward either
    (("sm_100a",), (10, 3), None),
    (("sm_100f",), (10, 3), "family"),  # family-specific: 10.0 and 10.3
    (("sm_100f",), (12, 0), None),  # not across majors
    (("sm_120f",), (12, 1), "family"),
    (("sm_103f",), (10, 0), None),  # not to a lower minor
    (("compute_120f",), (12, 1), "family"),
    (("compute_120f",), (13, 0), None),
    (("compute_90",), (12, 0), "ptx"),  # PTX JIT-compiles for any newer GPU
    (("compute_90",), (8, 9), None),  # but never for an older one
    (("sm_86",), (8, 0), None),  # a cubin never runs on a lower minor
    (("7.5", "8.0", "12.0+PTX"), (12, 1), "same-major"),  # TORCH_CUDA_ARCH_LIST spelling
    (("7.5", "8.0", "12.0+PTX"), (13, 0), "ptx"),
    (("5.0", "6.0", "7.0"), (7, 5), "same-major"),
    (("garbage", ""), (8, 6), None),
]


@pytest.mark.parametrize(("arch_list", "cc", "how"), CASES,
                         ids=lambda x: " ".join(x) if isinstance(x, tuple) and x and
                         isinstance(x[0], str) else str(x))
def test_arch_rule(arch_list: tuple[str, ...], cc: tuple[int, int], how: str | None) -> None:
    cov = coverage(arch_list, cc)
    assert (cov.how if cov else None) == how
    # every consumer asks the same rule: compat's arch_list_supports is it, by name
    assert arch_list_supports(arch_list, f"{cc[0]}.{cc[1]}") is (how is not None)
    assert covers(arch_list, f"sm_{cc[0]}{cc[1]}") is (how is not None)


def test_explanations_name_the_entry_and_why() -> None:
    cov = coverage(ARCH_CU126, (8, 9))
    assert cov is not None and cov.explain() == "sm_86 cubins run on sm_89 (same major)"
    ptx = coverage(("compute_90",), (12, 0))
    assert ptx is not None and ptx.explain() == "compute_90 PTX JIT-compiles for sm_120"
    fam = coverage(("sm_100f",), (10, 3))
    assert fam is not None and "family 10.x" in fam.explain()


def test_parse_forms() -> None:
    assert parse_cc("8.6") == parse_cc("sm_86") == parse_cc("86") == (8, 6)
    assert parse_cc("compute_120f") == parse_cc("12.0+PTX") == (12, 0)
    assert parse_cc("not a cc") is None
    assert [a.name for a in parse_arch("12.0+PTX")] == ["sm_120", "compute_120"]
    assert [a.name for a in parse_arch("sm_90a")] == ["sm_90a"]
    assert parse_arch("bogus") == ()


def _venv_torch_arch_flags() -> tuple[str, ...]:
    """This venv's torch's arch list, read without a GPU or driver (get_arch_list() is empty
    when CUDA is not available; the build's flags are not)."""
    code = ("import torch, sys; f = getattr(torch._C, '_cuda_getArchFlags', None); "
            "sys.stdout.write(f() if f and torch.version.cuda else '')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=False)
    return tuple(out.stdout.split())


@pytest.mark.slow
def test_this_venvs_torch_covers_its_own_archs() -> None:
    flags = _venv_torch_arch_flags()
    if not flags:
        pytest.skip("this venv's torch is not a CUDA build: no arch list to read")
    for flag in flags:
        arch = parse_arch(flag)[0]
        cov = coverage(flags, (arch.major, arch.minor))
        assert cov is not None and (cov.how == "native" or arch.ptx), flag
    lowest = min(parse_cc(f) or (99, 9) for f in flags)
    older = (lowest[0] - 1, 0)  # one major below the oldest entry: nothing runs there
    assert coverage(flags, older) is None


@pytest.mark.parametrize(
    ("value", "decoded"),
    [(7605, (7, 6, 5)), (8907, (8, 9, 7)), (90100, (9, 1, 0)), (90300, (9, 3, 0)),
     (91000, (9, 10, 0)), (8000, (8, 0, 0)), (7102, (7, 1, 2))],
)
def test_decode_cudnn_version(value: int, decoded: tuple[int, int, int]) -> None:
    assert decode_cudnn_version(value) == decoded
    assert encode_cudnn_version(*decoded) == value  # its inverse


def test_decode_cudnn_version_rejects_negative() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        decode_cudnn_version(-1)


@pytest.mark.parametrize(
    ("cc", "norm"),
    [("8.6", "8.6"), ("sm_86", "8.6"), ("compute_90a", "9.0"), ("86", "8.6"), ("120", "12.0"),
     ("12.0+PTX", "12.0"), ("sm_100f", "10.0"), ("sm_90a+PTX", "9.0"), (" SM_86 ", "8.6"),
     ("8.6.1", None), ("sm_8", None), ("eight", None), ("", None)],
)
def test_normalize_cc(cc: str, norm: str | None) -> None:
    assert normalize_cc(cc) == norm


@pytest.mark.parametrize(("text", "encoded"), [("12.4", 12040), ("13.0", 13000), ("9.2", 9020),
                                               (" 11.8 ", 11080), ("12", 12000), ("N/A", None),
                                               ("", None), ("12.x", None)])
def test_encode_cuda_version(text: str, encoded: int | None) -> None:
    from gpudoctor.versions import decode_cuda_version, encode_cuda_version

    assert encode_cuda_version(text) == encoded
    if encoded is not None:  # decode reverses it
        assert decode_cuda_version(encoded) == text.strip() + ("" if "." in text else ".0")


def test_arch_list_supports() -> None:
    cu130 = ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0+PTX")
    assert arch_list_supports(cu130, "8.9")  # SASS 8.6 runs on 8.9
    assert arch_list_supports(cu130, "12.1")  # PTX 12.0 JITs to 12.1
    assert not arch_list_supports(cu130, "6.1")  # Pascal needs the cu126 wheel
    assert arch_list_supports(("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), "10.3")
    assert not arch_list_supports(("8.0", "9.0"), "10.0")
    assert not arch_list_supports(cu130, "garbage")


def test_versions_is_a_leaf() -> None:
    """Version decoding lives in one leaf module that imports nothing of gpudoctor, and the
    modules that used to carry copies import it."""
    import ast
    from pathlib import Path

    import gpudoctor.versions as versions

    tree = ast.parse(Path(versions.__file__).read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if m.startswith("gpudoctor")]
    for name in ("decode_cuda_version", "decode_cudnn_version", "format_cudnn_version",
                 "normalize_cc", "arch_list_supports", "minor_of", "sm_of",
                 "encode_cuda_version"):
        assert getattr(versions, name).__module__ == "gpudoctor.versions"


@pytest.mark.parametrize(("cc", "sm"), [("8.6", "sm_86"), ("12.0", "sm_120"), ("sm_90a", "sm_90"),
                                        ("10.3", "sm_103"), ("garbage", "sm_?")])
def test_sm_of(cc: str, sm: str) -> None:
    from gpudoctor.versions import sm_of

    assert sm_of(cc) == sm


# --------------------------------------------------------------------------- the rest (new)


def test_names_of_a_compute_capability() -> None:
    assert (sm_name((8, 9)), sm_name((12, 0)), cc_text((8, 9)), cc_text((12, 0))) == (
        "sm_89", "sm_120", "8.9", "12.0")


def test_an_arch_list_names_its_code_in_order_without_the_unknown() -> None:
    archs = parse_arch_list(["8.6", "garbage", "compute_90", "12.0+PTX"])
    assert [a.name for a in archs] == ["sm_86", "compute_90", "sm_120", "compute_120"]


@pytest.mark.parametrize(("value", "text"), [(90100, "9.1.0"), (92000, "9.20.0"),
                                             (8907, "8.9.7"), (7605, "7.6.5")])
def test_format_cudnn_version(value: int, text: str) -> None:
    assert format_cudnn_version(value) == text


@pytest.mark.parametrize(("text", "version"), [
    ("535.104.05", (535, 104, 5)), (" 2.4.1+cu121 ", (2, 4, 1)), ("garbage", None), ("", None),
    ("1" * 5000, None),  # past int()'s digit limit: None, not ValueError
])
def test_parse_version(text: str, version: tuple[int, ...] | None) -> None:
    parsed = parse_version(text)
    assert (parsed.release if parsed else None) == version


@pytest.mark.parametrize(("text", "key", "three"), [
    ("12.4.1", (12, 4), (12, 4, 1)), ("9.1", (9, 1), (9, 1, 0)), ("7.6.5.32", (7, 6), (7, 6, 5)),
    ("13", None, (13, 0, 0)), ("N/A", None, None),
])
def test_minor_key_and_release3(text: str, key: tuple[int, int] | None,
                                three: tuple[int, ...] | None) -> None:
    assert minor_key(text) == key
    assert release3(text) == three


def test_minor_of_a_validated_version() -> None:
    assert minor_of("13") == (13, 0)
    assert minor_of("12.4.1") == (12, 4)
