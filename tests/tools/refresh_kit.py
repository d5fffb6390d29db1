"""Shared set-up of the tools/refresh_compat.py tests: recorded registry answers, table copies.

`recorded` serves the responses under tests/fixtures/registry/ (see its README.md) through the
tool's injected fetch function; a URL that was not recorded fails the test. `tables_copy` is a
copy of this checkout's compat_tables/ in tmp_path: the tests plant or drop rows in the copy,
never in the live tables.
"""

from __future__ import annotations

import itertools
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # `tools` is not installed; it lives at the top of the repo
    sys.path.insert(0, str(REPO_ROOT))

from tools.refresh_registry import FetchError, NotFound  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

REGISTRY = REPO_ROOT / "tests" / "fixtures" / "registry"


@dataclass
class Recorded:
    """The recorded answers by URL, and the URLs asked for, in order."""

    answers: dict[str, tuple[int, Path | None]]
    asked: list[str] = field(default_factory=list)
    fail: dict[str, str] = field(default_factory=dict)  # URL -> reason: a network failure there
    override: dict[str, bytes] = field(default_factory=dict)  # URL -> body instead of the file

    def fetch(self, url: str, accept: str = "*/*") -> bytes:
        self.asked.append(url)
        if url in self.fail:
            raise FetchError(url, self.fail[url])
        if url in self.override:
            return self.override[url]
        if url not in self.answers:
            raise AssertionError(f"the tool asked for a URL that was not recorded: {url}")
        status, path = self.answers[url]
        if status == 404 or path is None:
            raise NotFound(url, "HTTP 404 Not Found")
        return path.read_bytes()

    def body(self, url: str) -> bytes:
        """The recorded answer to `url`."""
        path = self.answers[url][1]
        assert path is not None
        return path.read_bytes()


@pytest.fixture
def recorded() -> Recorded:
    data = tomllib.loads((REGISTRY / "responses.toml").read_text(encoding="utf-8"))
    answers = {r["url"]: (int(r.get("status", 200)), REGISTRY / r["file"] if "file" in r else None)
               for r in data["response"]}
    return Recorded(answers)


@pytest.fixture
def tables_copy(tmp_path: Path) -> Path:
    target = tmp_path / "compat_tables"
    shutil.copytree(REPO_ROOT / "compat_tables", target)
    return target


def row_span(lines: list[str], file: str, key: str) -> tuple[int, int] | None:
    """[start, end) of the [[release]] block keyed by `key` (a torch version or cuDNN version)."""
    pattern = (rf'^versions\s*=\s*\[[^\]]*"{re.escape(key)}"' if file == "torch.toml"
               else rf'^version\s*=\s*"{re.escape(key)}"')
    heads = [i for i, line in enumerate(lines) if line.startswith("[[")] + [len(lines)]
    for start, end in itertools.pairwise(heads):
        if any(re.match(pattern, line) for line in lines[start:end]):
            return start, end
    return None


def drop_row(tables: Path, file: str, key: str) -> None:
    """Remove the row keyed by `key` from the copy, if it is there."""
    path = tables / file
    lines = path.read_text(encoding="utf-8").split("\n")
    span = row_span(lines, file, key)
    if span is not None:
        del lines[span[0] : span[1]]
        path.write_text("\n".join(lines), encoding="utf-8")


def replace_row(tables: Path, file: str, key: str, block: str) -> None:
    """Put `block` (ending in a blank line) in place of the row keyed by `key`, or at the end."""
    path = tables / file
    lines = path.read_text(encoding="utf-8").split("\n")
    span = row_span(lines, file, key) or (len(lines), len(lines))
    lines[span[0] : span[1]] = block.split("\n")
    path.write_text("\n".join(lines), encoding="utf-8")


def plant_variant_cudnn(tables: Path, version: str, tag: str, cudnn: str) -> str:
    """Set the cuDNN of variant `tag` of torch `version` in the copy; the planted line."""
    path = tables / "torch.toml"
    lines = path.read_text(encoding="utf-8").split("\n")
    span = row_span(lines, "torch.toml", version)
    assert span is not None, f"torch {version} is not in the tables"
    at = next(i for i in range(*span) if re.search(rf'tag\s*=\s*"{tag}"', lines[i]))
    lines[at] = re.sub(r'cudnn\s*=\s*"[^"]*"', f'cudnn = "{cudnn}"', lines[at])
    assert f'cudnn = "{cudnn}"' in lines[at]
    path.write_text("\n".join(lines), encoding="utf-8")
    return lines[at]
