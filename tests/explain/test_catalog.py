"""The enumerations are complete against their sources, and every entry has a cause class.

Each data file states its source and how many entries that source holds (`count`); the file
must hold exactly that many. Where the sources themselves are on this machine
(GPUDOCTOR_NVIDIA_SOURCES=kernel_dir:nccl_dir:toolkit_dir, each a checkout of
NVIDIA/open-gpu-kernel-modules, NVIDIA/nccl, NVIDIA/nvidia-container-toolkit), the files are
re-extracted and must be identical.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gpudoctor.explain.catalog import fragment, load_catalog
from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.kb import KnowledgeBaseError
from tools import extract_nvidia_messages as ext

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

CAT = load_catalog()
DATA = Path(__file__).resolve().parents[2] / "gpudoctor" / "explain"


@pytest.mark.parametrize("name", sorted(CAT.counts))
def test_each_enumeration_holds_the_count_its_source_states(name: str) -> None:
    stated, read = CAT.counts[name]
    assert stated == read > 0, name


def test_the_xid_catalog_has_every_xid_and_agrees_with_the_driver_header() -> None:
    assert sorted(CAT.xids) == list(range(1, CAT.counts["xids.toml"][0] + 1))
    # nverror.h of open-gpu-kernel-modules 595.45.04 defines these numbers and names
    header = {13: "ROBUST_CHANNEL_GR_EXCEPTION", 31: "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
              48: "ROBUST_CHANNEL_GPU_ECC_DBE", 79: "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
              94: "ROBUST_CHANNEL_CONTAINED_ERROR", 95: "ROBUST_CHANNEL_UNCONTAINED_ERROR",
              119: "GSP_RPC_TIMEOUT", 154: "GPU_RECOVERY_ACTION_CHANGED"}
    assert {n: CAT.xids[n].mnemonic for n in header} == header
    assert all(x.immediate and x.investigate is not None for x in CAT.xids.values())


def test_xid_classes_follow_the_catalog() -> None:
    # "typically ... application-level bugs" (13, 31, 43); the rest are the GPU's
    assert {n for n in (13, 31, 43) if CAT.xids[n].cause_class == "not-environment"} == {
        13, 31, 43}
    assert {CAT.xids[n].cause_class for n in (48, 63, 64, 74, 79, 94, 95, 119, 140)} == {
        "hardware-fault"}


def test_sxids_are_the_nvswitch_error_numbers() -> None:
    assert len(CAT.sxids) == CAT.counts["sxids.toml"][0]
    assert all(10000 <= n < 100000 for n in CAT.sxids)


def test_every_code_carries_a_meaning_and_a_class() -> None:
    for code in CAT.codes.values():
        assert code.meaning and code.cause_class in CAUSE_CLASSES, code.name
        assert code.source.startswith("https://")
    # the headers without doc comments get NVIDIA's API reference meaning
    assert "cublasCreate" in CAT.codes["CUBLAS_STATUS_NOT_INITIALIZED"].meaning
    assert CAT.codes["CUDNN_STATUS_ARCH_MISMATCH"].cause_class == "arch-not-in-build"
    assert CAT.runtime_by_number[35].cause_class == "driver-too-old"
    assert CAT.driver_by_number[803].cause_class == "driver-mismatch"
    assert CAT.by_message["no cuda-capable device is detected"].cause_class == "no-gpu-visible"


def test_every_message_enumeration_entry_has_a_class() -> None:
    for kind, entries in CAT.messages.items():
        assert entries, kind
        assert all(e.cause_class in CAUSE_CLASSES for e in entries), kind
    api = next(e for e in CAT.messages["nvrm"] if e.template.startswith("API mismatch"))
    assert api.cause_class == "driver-mismatch"
    assert set(CAT.container_stages) >= {"initialization", "requirement", "mount", "device"}


def test_classes_toml_lists_only_entries_that_exist() -> None:
    from gpudoctor.explain.catalog import _sorter

    table = {"default": "not-environment", "no-driver": ["cudaErrorNoSuchThing"]}
    with pytest.raises(KnowledgeBaseError, match="not in the enumeration"):
        _sorter(table, "codes.cuda_runtime", {"cudaErrorNoDevice"})
    with pytest.raises(KnowledgeBaseError, match="no cause class"):
        _sorter({"default": "not-environment", "broken-gpu": []}, "x", set())
    with pytest.raises(KnowledgeBaseError, match="default"):
        _sorter({"default": "maybe"}, "x", set())


def test_the_shipped_classes_file_sorts_every_enumeration() -> None:
    sorting = tomllib.loads((DATA / "classes.toml").read_text(encoding="utf-8"))
    assert set(sorting["codes"]) == {p.stem for p in (DATA / "codes").glob("*.toml")} - {
        "meanings"}
    assert {"xids", "sxids", "nvrm", "nccl_warnings", "container_toolkit",
            "libnvidia_container"} <= set(sorting)


def test_a_template_is_found_by_its_longest_fixed_text() -> None:
    assert fragment("API mismatch: the client '%s' (pid %u) has the version %s, but this kernel "
                    "module has the version %s. Please make sure that this kernel module and "
                    "all NVIDIA driver components have the same version.") == (
        "please make sure that this kernel module and all nvidia driver components have the "
        "same version")
    assert fragment("failed to inject CDI devices: %v") == "failed to inject cdi devices"


def test_the_extractor_reads_messages_as_nvidia_writes_them(tmp_path: Path) -> None:
    kernel = tmp_path / "k"
    (kernel / "kernel-open/nvidia").mkdir(parents=True)
    (kernel / "src/nvidia/arch/nvalloc/unix/src").mkdir(parents=True)
    (kernel / "src/common/nvswitch/interface").mkdir(parents=True)
    (kernel / "kernel-open/nvidia/nv.c").write_text(
        'nv_printf(NV_DBG_ERRORS,\n    "NVRM: The NVIDIA probe routine was not called for %d '
        'device(s).\\n", n);\nnv_printf(NV_DBG_INFO, "NVRM: loading the module now\\n");\n')
    for rel in ext.NVRM_FILES[1:]:
        (kernel / rel).write_text('NV_DEV_PRINTF(NV_DBG_ERRORS, nv, "RmInitAdapter failed! '
                                  '(0x%x:0x%x:%d)\\n", a, b, c);\n')
    (kernel / ext.SXID_HEADER).write_text("    NVSWITCH_ERR_HW_HOST_PRIV_ERROR   = 10001,\n")
    assert ext.nvrm(kernel) == [
        ("The NVIDIA probe routine was not called for %d device(s).", "kernel-open/nvidia/nv.c"),
        ("RmInitAdapter failed! (0x%x:0x%x:%d)", ext.NVRM_FILES[1])]
    assert ext.sxids(kernel) == [("NVSWITCH_ERR_HW_HOST_PRIV_ERROR", 10001)]
    go = tmp_path / "t" / "internal"
    go.mkdir(parents=True)
    (go / "a.go").write_text('return fmt.Errorf("unresolvable CDI devices %v", d)\n')
    (go / "a_test.go").write_text('errors.New("a message of a test only")\n')
    assert ext.toolkit_errors(tmp_path / "t") == [("unresolvable CDI devices %v",
                                                   "internal/a.go")]


@pytest.mark.skipif(not os.environ.get("GPUDOCTOR_NVIDIA_SOURCES"),
                    reason="NVIDIA's sources are not on this machine")
def test_the_shipped_files_are_what_the_sources_give() -> None:
    kernel, nccl, toolkit = (Path(p) for p in
                             os.environ["GPUDOCTOR_NVIDIA_SOURCES"].split(":"))
    rc = ext.main(["--check", "--kernel", str(kernel), "--nccl", str(nccl), "--toolkit",
                   str(toolkit)])
    assert rc == 0


def test_nvenc_and_optix_codes_carry_their_classes() -> None:
    codes = CAT.codes
    # the driver's: too old for the program's NVENC API or OptiX ABI (strong: stated outright)
    for name in ("NV_ENC_ERR_INVALID_VERSION", "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION",
                 "OPTIX_ERROR_FUNCTION_TABLE_SIZE_MISMATCH"):
        assert (codes[name].cause_class, codes[name].strong) == ("driver-too-old", True), name
    assert codes["OPTIX_ERROR_LIBRARY_NOT_FOUND"].cause_class == "library-not-found"
    assert "libnvoptix.so.1" in codes["OPTIX_ERROR_LIBRARY_NOT_FOUND"].meaning
    assert codes["NV_ENC_ERR_NO_ENCODE_DEVICE"].cause_class == "no-gpu-visible"
    assert codes["NV_ENC_ERR_OUT_OF_MEMORY"].cause_class == "out-of-memory"
    assert codes["OPTIX_ERROR_DEVICE_OUT_OF_MEMORY"].cause_class == "out-of-memory"
    assert codes["NV_ENC_ERR_INVALID_PARAM"].cause_class == "not-environment"
    assert codes["NV_ENC_ERR_GENERIC"].weak and codes["OPTIX_ERROR_UNKNOWN"].weak
    assert CAT.numbered["optix"][7801].name == "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION"
    assert CAT.numbered["nvenc"][10].library == "NVENC"


def test_an_older_optix_name_finds_the_code() -> None:
    assert CAT.codes["OPTIX_ERROR_INVALID_PTX"] is CAT.codes["OPTIX_ERROR_INVALID_INPUT"]
    assert CAT.codes["OPTIX_ERROR_ACCEL_NOT_COMPATIBLE"].number == 7400


def test_nvidias_note_on_the_nvenc_session_limit_joins_the_doc_comment() -> None:
    meaning = CAT.codes["NV_ENC_ERR_OUT_OF_MEMORY"].meaning
    assert meaning.startswith("This indicates that the API call failed because it was unable")
    assert "concurrent encode sessions" in meaning and "GeForce" in meaning


def test_a_note_on_no_such_code_is_refused() -> None:
    from gpudoctor.explain.catalog import _codes, _read

    meanings = {**_read("codes/meanings.toml"),
                "nvenc": {"notes": {"NV_ENC_ERR_NO_SUCH_THING": "x"}}}
    with pytest.raises(KnowledgeBaseError, match="NV_ENC_ERR_NO_SUCH_THING"):
        _codes(_read("classes.toml")["codes"], meanings)
