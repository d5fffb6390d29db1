"""collect_env's "cuDNN version" section: the libcudnn files it lists, and the copies of cuDNN
they make (one per directory and major version), stating nothing the list does not."""

from __future__ import annotations

import pytest

from gpudoctor.model import CudnnFacts, Reason, Status, Unavailable
from gpudoctor.reports.cudnn_list import LONGEST, copies, files
from tests.reports.reading_kit import FIXTURES, heldout_a, judged, read_path, runtime_of

ONE_LINE = "cuDNN version: /usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2\n"
PROBABLY = """\
cuDNN version: Probably one of the following:
/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2
/usr/lib/x86_64-linux-gnu/libcudnn_adv_infer.so.8.9.2
/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8.9.2
/usr/local/cuda-12.4/lib64/libcudnn.so.9.1.0
/usr/local/cuda-12.4/lib64/libcudnn_graph.so.9.1.0
"""


def test_the_path_on_the_version_line_itself_is_read() -> None:
    assert files(ONE_LINE) == [("/usr/lib/x86_64-linux-gnu", "libcudnn", "8.9.2")]


def test_a_list_of_paths_is_read_in_order_with_each_sub_library() -> None:
    assert files(PROBABLY) == [
        ("/usr/lib/x86_64-linux-gnu", "libcudnn", "8.9.2"),
        ("/usr/lib/x86_64-linux-gnu", "libcudnn_adv_infer", "8.9.2"),
        ("/usr/lib/x86_64-linux-gnu", "libcudnn_ops_infer", "8.9.2"),
        ("/usr/local/cuda-12.4/lib64", "libcudnn", "9.1.0"),
        ("/usr/local/cuda-12.4/lib64", "libcudnn_graph", "9.1.0"),
    ]


@pytest.mark.parametrize("text", [
    "cuDNN version: Could not collect",
    "C:\\Program Files\\NVIDIA\\CUDNN\\v9.1\\bin\\cudnn64_9.dll",  # a Windows list is not read
    "lib/libcudnn.so.8.9.2",  # not an absolute path
    "/usr/lib/libcudnn.so",  # no version in the name
    "/usr/lib/libcudnn.so.8.9.2 (libc6,x86-64)",  # ldconfig's own format, not collect_env's
    "/" + "d" * LONGEST + "/libcudnn.so.8.9.2",  # longer than any path
])
def test_what_is_not_a_listed_libcudnn_file_is_not_read(text: str) -> None:
    assert files(text) == []


def test_no_file_listed_is_cudnn_not_reported() -> None:
    facts = copies("cuDNN version: Could not collect\n")
    assert isinstance(facts, Unavailable) and facts.reason is Reason.NOT_REPORTED
    assert "lists no libcudnn file" in facts.message


def test_one_copy_per_directory_and_major() -> None:
    facts = copies(PROBABLY)
    assert isinstance(facts, CudnnFacts)
    assert [(i.lib_dir, i.library_version) for i in facts.installs] == [
        ("/usr/lib/x86_64-linux-gnu", "8.9.2"), ("/usr/local/cuda-12.4/lib64", "9.1.0")]
    two_majors = copies("/usr/lib64/libcudnn.so.8.9.2\n/usr/lib64/libcudnn.so.9.7.1\n")
    assert isinstance(two_majors, CudnnFacts)
    assert [(i.lib_dir, i.library_version) for i in two_majors.installs] == [
        ("/usr/lib64", "8.9.2"), ("/usr/lib64", "9.7.1")]


def test_a_copy_states_only_what_the_list_shows() -> None:
    facts = copies(ONE_LINE)
    assert isinstance(facts, CudnnFacts)
    (install,) = facts.installs
    assert install.libraries == () and install.header is None and install.found_by == ("ldconfig",)
    for fact in (install.header_version, install.missing_deps, install.cuda_build):
        assert isinstance(fact, Unavailable) and fact.reason is Reason.NOT_REPORTED
    assert isinstance(install.header_version, Unavailable)
    assert install.header_version.detail == "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2"


def test_a_major_alone_is_no_library_version_and_the_fullest_name_wins() -> None:
    only_major = copies("/usr/lib64/libcudnn.so.8\n")
    assert isinstance(only_major, CudnnFacts)
    version = only_major.installs[0].library_version
    assert isinstance(version, Unavailable) and "only the major version (8)" in version.message
    fuller = copies("/usr/lib64/libcudnn.so.8\n/usr/lib64/libcudnn_ops.so.8.9.7\n")
    assert isinstance(fuller, CudnnFacts) and fuller.installs[0].library_version == "8.9.7"


def test_two_cudnn_majors_in_one_folder_are_two_copies() -> None:
    """ogx-ai/ogx#1798 (corpus): /usr/lib64 holds cuDNN 8.9.2 and 9.7.1. Not reported before.
    The files' modes, links and sub-libraries are not in the report: those checks skip."""
    env = read_path(
        FIXTURES / "reports" / "collect_env-8x-h100-pypi-cu124-driver535-minor-compat.txt")
    assert isinstance(env.cudnn, CudnnFacts)
    assert [(i.lib_dir, i.library_version) for i in env.cudnn.installs] == [
        ("/usr/lib64", "8.9.2"), ("/usr/lib64", "9.7.1")]
    found = judged(env)
    assert found["GD307"].status is Status.PASS and "2 cuDNN copies" in found["GD307"].message
    assert {found[c].status for c in ("GD303", "GD304", "GD305", "GD306")} == {Status.SKIP}


def test_one_cudnn_major_in_two_folders_and_a_report_cut_at_its_top() -> None:
    """A GH200 collect_env whose stored copy starts at "Python version" (a continuation
    chunk, refused before): the distribution's cuDNN 9.0.0 and the CUDA 12.4 toolkit's."""
    env = heldout_a("r1-083.txt")
    assert isinstance(env.cudnn, CudnnFacts) and len(env.cudnn.installs) == 2
    assert runtime_of(env).cuda_available is True
    found = judged(env)
    assert found["GD403"].status is Status.PASS and found["GD307"].status is Status.PASS
