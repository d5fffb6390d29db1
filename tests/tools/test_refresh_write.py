"""tools/refresh_write.py on small table texts: placement, conflicts and refusals."""

from __future__ import annotations

import pytest

from tests.tools.refresh_kit import REPO_ROOT  # noqa: F401 (puts the repository on sys.path)
from tools.refresh_diff import Edit
from tools.refresh_write import EditError, apply_edits

TORCH = """# a comment that stays
[[release]]
versions = ["2.9.0", "2.9.1"]
install = "index-url"
variants = [
  { tag = "cu126", cudnn = "9.10.2.21" },
  { tag = "cu130", cudnn = "9.13.0.50", experimental = true },
]
source = "https://github.com/pytorch/pytorch/blob/main/RELEASE.md"
status = "copy"
"""


def edit(kind: str, field: str, value: str | tuple[str, ...], row: str = "2.9.0",
         tag: str = "") -> Edit:
    return Edit("torch.toml", row, kind, field, value, "https://example.org/m",
                f"Read for {row}.", tag)


def test_a_new_variant_goes_in_cuda_order_and_the_note_is_added() -> None:
    new, skipped = apply_edits({"torch.toml": TORCH},
                               [edit("add-variant", "cudnn", "9.10.2.21", tag="cu128")])

    assert skipped == []
    assert new["torch.toml"].split("\n") == [
        "# a comment that stays", "[[release]]", 'versions = ["2.9.0", "2.9.1"]',
        'install = "index-url"', "variants = [", '  { tag = "cu126", cudnn = "9.10.2.21" },',
        '  { tag = "cu128", cudnn = "9.10.2.21" },',
        '  { tag = "cu130", cudnn = "9.13.0.50", experimental = true },', "]",
        'source = "https://github.com/pytorch/pytorch/blob/main/RELEASE.md"', 'status = "copy"',
        'note = "Read for 2.9.0."', ""]


def test_an_arch_list_is_placed_after_the_cudnn() -> None:
    new, _ = apply_edits({"torch.toml": TORCH},
                         [edit("set-variant", "arch_list", ("7.5", "12.0+PTX"), tag="cu130")])

    assert ('  { tag = "cu130", cudnn = "9.13.0.50", arch_list = ["7.5", "12.0+PTX"], '
            "experimental = true },") in new["torch.toml"].split("\n")


def test_the_aarch64_wheels_table_on_the_line_is_kept() -> None:
    """A variant's `aarch64 = { … }` (its own source and status) stays as it was: an edit of
    the variant's fields changes the x86_64 wheel's, before it."""
    arm = ('aarch64 = { arch_lists = [["8.0", "9.0"]], source = "https://example.org/a", '
           'status = "secondary" }')
    text = TORCH.replace('{ tag = "cu126", cudnn = "9.10.2.21" }',
                         f'{{ tag = "cu126", cudnn = "9.10.2.21", {arm} }}')
    new, _ = apply_edits({"torch.toml": text}, [
        edit("set-variant", "source", "https://example.org/x86", tag="cu126"),
        edit("set-variant", "arch_list", ("5.0", "9.0"), tag="cu126")])

    assert (f'  {{ tag = "cu126", cudnn = "9.10.2.21", arch_list = ["5.0", "9.0"], '
            f'source = "https://example.org/x86", {arm} }},') in new["torch.toml"].split("\n")


def test_patch_releases_that_disagree_are_left_for_a_person() -> None:
    new, skipped = apply_edits({"torch.toml": TORCH}, [
        edit("set", "pypi_default", "cu128", row="2.9.0"),
        edit("set", "pypi_default", "cu126", row="2.9.1"),
    ])

    assert new == {}
    assert skipped == ["torch.toml 2.9.0 pypi_default: the releases of this row disagree; left "
                       "for a person", "torch.toml 2.9.1 pypi_default: the releases of this row "
                       "disagree; left for a person"]


def test_a_variant_over_several_lines_is_refused() -> None:
    text = TORCH.replace('  { tag = "cu126", cudnn = "9.10.2.21" },',
                         '  { tag = "cu126",\n    cudnn = "9.10.2.21" },')
    with pytest.raises(EditError, match=r"torch.toml 2\.9\.0: no one-line variant"):
        apply_edits({"torch.toml": text}, [edit("set-variant", "cudnn", "9.1", tag="cu126")])


def test_a_row_that_is_not_there_is_refused() -> None:
    with pytest.raises(EditError, match=r"no \[\[release\]\] row for 2\.99\.0"):
        apply_edits({"torch.toml": TORCH}, [edit("set", "pypi_default", "cu126", row="2.99.0")])
