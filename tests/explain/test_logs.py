"""Log lines: the kernel module's Xids and messages, NCCL's warnings and the container
stack's stages, decoded through NVIDIA's own catalogs."""

from __future__ import annotations

from gpudoctor.explain import explain
from tests.explain.explain_kit import TABLES, best


def test_xids_are_decoded_through_nvidias_catalog() -> None:
    d = best("NVRM: Xid (PCI:0000:44:00): 79, pid='<unknown>', GPU has fallen off the bus.")
    assert d.match.signature.cause_class == "hardware-fault" and "reboot" in d.fix
    d = best("kernel: NVRM: Xid (PCI:0000:3b:00): 31, pid=1234, name=python, MMU Fault")
    assert d.match.signature.cause_class == "not-environment"  # the catalog: the application
    d = best("NVRM: Xid (PCI:0000:3b:00): 250, something newer")
    assert "newer" in d.cause


def test_nvrm_api_mismatch_in_every_wrapping() -> None:
    for text in (
        "NVRM: API mismatch: the client has the version 535.54.03, but\nNVRM: this kernel "
        "module has the version 530.30.02.  Please\nNVRM: make sure that this kernel module "
        "and all NVIDIA driver\nNVRM: components have the same version.",
        "kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this "
        "kernel module has the version 530.30.02.  Please#012NVRM: make sure that this kernel "
        "module and all NVIDIA driver#012NVRM: components have the same version.",
    ):
        assert best(text).match.signature.cause_class == "driver-mismatch"


def test_nccl_warnings_by_their_source_messages() -> None:
    d = best("ncclInternalError: Internal check failed.\nLast error:\nBootstrap : no socket "
             "interface found")
    assert d.match.signature.cause_class == "nccl-setup"
    d = best("include/socket.h:344 WARN Socket creation failed : Address family not supported")
    assert d.match.signature.cause_class == "nccl-setup"


def test_the_container_cli_stage_and_its_requirement() -> None:
    d = best("stderr: nvidia-container-cli: requirement error: unsatisfied condition: "
             "cuda>=12.8, please update your driver to a newer version, or use an earlier cuda "
             "container")
    assert d.match.signature.cause_class == "driver-too-old" and "CUDA 12.8" in d.fix
    d = best("nvidia-container-cli: initialization error: nvml error: driver not loaded")
    assert d.match.signature.cause_class == "no-driver"


def test_a_kernel_message_is_read_from_the_line_it_starts_on() -> None:
    """The kernel module wraps a message over lines that each start with NVRM:, after any
    number of other NVRM lines: the message is read from its own first line."""
    text = ("[    4.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14\n"
            "[    4.3] NVRM: GPU at 0000:01:00.0 has software scheduler DISABLED\n"
            "[  812.7] NVRM: API mismatch: the client 'Xorg' (pid 1201) has the\n"
            "[  812.7] NVRM: version 550.67, but this kernel module has the version\n"
            "[  812.7] NVRM: 550.54.14.  Please make sure that\n"
            "[  812.7] NVRM: this kernel module and all NVIDIA\n"
            "[  812.7] NVRM: driver components have the same version.\n")
    ids = [d.match.signature.id for d in explain(text, TABLES, probe=None).diagnoses]
    assert any(i.startswith("nvrm-") for i in ids), ids


def test_an_xid_whose_address_the_user_redacted_is_still_read() -> None:
    # round 5's g6-020 (https://github.com/NVIDIA/nccl/issues/2241: the address replaced by
    # "..."); worded here as other pastes redact it
    for address in ("PCI:...", "PCI:xxxx:xx:00", "****"):
        d = best(f"kernel: NVRM: Xid ({address}): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11")
        assert d.match.signature.id == "xid-145", address
        assert d.match.signature.cause_class == "hardware-fault"
    d = best("nvidia-nvswitch2: SXid (PCI:...): 12028, Non-fatal, Link 40 egress non-posted PRIV "
             "error")
    assert d.match.signature.id.startswith("sxid-")
