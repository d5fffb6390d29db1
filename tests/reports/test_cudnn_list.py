"""collect_env's "cuDNN version" section: the libcudnn files it lists, and the copies of cuDNN
they make (one per directory and major version), stating nothing the list does not."""

from __future__ import annotations

import pytest

from gpudoctor.model import CudnnFacts, Reason, Unavailable
from gpudoctor.reports.cudnn_list import LONGEST, copies, files

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
