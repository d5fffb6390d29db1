"""What the package registry says: PEP 691 JSON indexes, PEP 658 wheel metadata, the JSON API.

`tools/refresh_compat.py` reads these and diffs them against `compat_tables/`. Every network
read goes through one `Fetch` callable, `(url, accept) -> body`, that raises `NotFound` for a
404 and `FetchError` for anything else the outside world did; tests inject one that serves the
responses recorded under `tests/fixtures/registry/`.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

DEFAULT_INDEX = "https://pypi.org/simple/"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
USER_AGENT = "gpudoctor-refresh-compat (tools/refresh_compat.py)"
TIMEOUT_S = 60.0

Fetch = Callable[[str, str], bytes]


class FetchError(Exception):
    """The registry could not be read at `url`; `reason` says what happened, in one line."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot read {url}: {reason}")
        self.url = url
        self.reason = reason


class NotFound(FetchError):
    """The registry answered 404 for `url`."""


def urllib_fetch(url: str, accept: str = "*/*") -> bytes:
    """GET `url` with the standard library (honours the usual *_proxy variables)."""
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise NotFound(url, "HTTP 404 Not Found") from exc
        raise FetchError(url, f"HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise FetchError(url, str(exc.reason)) from exc
    except (OSError, http.client.HTTPException, ValueError) as exc:  # timeout, reset, bad URL
        raise FetchError(url, f"{type(exc).__name__}: {exc}") from exc


# --- The index: projects and their files ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class DistFile:
    """One file of a project as the JSON index lists it."""

    filename: str
    url: str
    sha256: str | None
    version: Version
    tags: tuple[tuple[str, str, str], ...]  # (interpreter, abi, platform); () for an sdist
    core_metadata: bool | None  # PEP 714 key; None: the index does not say
    yanked: bool = False

    @property
    def metadata_url(self) -> str:
        """Where PEP 658 serves this wheel's METADATA file."""
        return self.url.split("#", 1)[0] + ".metadata"

    def python(self) -> int:
        """310 for a cp310 wheel; 0 when it names no CPython minor."""
        numbers = [int(m[1]) for i, _, _ in self.tags if (m := re.fullmatch(r"cp(\d+)", i))]
        return max(numbers, default=0)

    def free_threaded(self) -> bool:
        """Whether this is a free-threaded (cp313t) build."""
        return any(abi.endswith("t") for _, abi, _ in self.tags)


_LINUX_X86 = re.compile(r"(manylinux\w*|linux)_x86_64")


@dataclass(frozen=True, slots=True)
class Project:
    """A project's files on the index; `url` is the index page they were read from."""

    name: str
    url: str
    files: tuple[DistFile, ...]

    def releases(self, *, rc: bool = False) -> tuple[Version, ...]:
        """Versions with a file that is not yanked: final ones, plus release candidates if `rc`.

        Development, alpha and beta versions and NVIDIA's 0.0.x placeholders are left out.
        """
        keep = {f.version for f in self.files
                if not f.yanked and not f.version.is_devrelease and f.version.release[0] > 0
                and (f.version.pre is None or (rc and f.version.pre[0] == "rc"))}
        return tuple(sorted(keep))

    def yanked(self) -> tuple[Version, ...]:
        """Final versions whose every file is yanked (PEP 592): withdrawn by their publisher."""
        final = {f.version for f in self.files if not f.version.is_prerelease}
        live = {f.version for f in self.files if not f.yanked}
        return tuple(sorted(final - live))

    def linux_wheels(self, version: Version) -> tuple[DistFile, ...]:
        """Linux x86_64 wheels of `version`, newest CPython first, free-threaded ones last."""
        wheels = [f for f in self.files if f.version == version and not f.yanked
                  and any(_LINUX_X86.fullmatch(p) for _, _, p in f.tags)]
        return tuple(sorted(wheels, key=lambda f: (f.free_threaded(), -f.python(), f.filename)))


def _dist_file(page: str, raw: dict[str, Any]) -> DistFile | None:
    name, url = raw.get("filename"), raw.get("url")
    if not isinstance(name, str) or not isinstance(url, str):
        return None
    try:
        if name.endswith(".whl"):
            _, version, _, tags = parse_wheel_filename(name)
            triples = tuple(sorted((t.interpreter, t.abi, t.platform) for t in tags))
        else:
            _, version = parse_sdist_filename(name)
            triples = ()
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    meta = raw.get("core-metadata", raw.get("data-dist-info-metadata"))
    hashes = raw.get("hashes")
    sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
    return DistFile(name, urllib.parse.urljoin(page, url), sha256, version, triples,
                    None if meta is None else bool(meta), bool(raw.get("yanked")))


# --- What a torch wheel's metadata pins -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pin:
    """An exact `Requires-Dist` pin, `name==version` (extras and markers dropped)."""

    name: str
    version: str

    @property
    def text(self) -> str:
        """As a requirement: "nvidia-cudnn-cu13==9.19.0.56"."""
        return f"{self.name}=={self.version}"

    @property
    def cuda_tag(self) -> str:
        """The PyTorch variant tag of a CUDA pin: cuda-toolkit==13.0.2 -> "cu130"."""
        major, minor = (*Version(self.version).release, 0)[:2]
        return f"cu{major}{minor}"


@dataclass(frozen=True, slots=True)
class CudaPins:
    """The CUDA toolkit or runtime pin (None: the wheel bundles CUDA) and the cuDNN pin."""

    cuda: Pin | None
    cudnn: Pin | None


_LINUX_ENV = {"platform_system": "Linux", "platform_machine": "x86_64", "sys_platform": "linux",
              "os_name": "posix", "extra": ""}


def pins_from_requirements(requirements: Iterable[str]) -> CudaPins:
    """Pick the CUDA and cuDNN pins that apply on Linux x86_64 out of `Requires-Dist` values."""
    found: dict[str, Pin] = {}
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        exact = [s.version for s in req.specifier if s.operator in ("==", "===")]
        if (req.marker and not req.marker.evaluate(_LINUX_ENV)) or len(exact) != 1 \
                or "*" in exact[0]:
            continue
        name = canonicalize_name(req.name)
        pin = Pin(name, exact[0])
        if re.fullmatch(r"nvidia-cudnn-cu\d+", name):
            found["cudnn"] = pin
        elif name == "cuda-toolkit":
            found["toolkit"] = pin
        elif re.fullmatch(r"nvidia-cuda-runtime(-cu\d+)?", name):
            found["runtime"] = pin
    return CudaPins(found.get("toolkit") or found.get("runtime"), found.get("cudnn"))


def read_pins(metadata: str) -> CudaPins:
    """`pins_from_requirements` of a METADATA file's header (the part before the body)."""
    header = re.split(r"\r?\n\r?\n", metadata, maxsplit=1)[0]
    values = [line.split(":", 1)[1].strip() for line in header.splitlines()
              if line.lower().startswith("requires-dist:")]
    return pins_from_requirements(values)


@dataclass(frozen=True, slots=True)
class TorchFacts:
    """What one torch release's PyPI wheel says about itself, and where that was read."""

    version: str
    source: str  # the URL read
    evidence: str  # "wheel metadata" | "PyPI JSON API"
    pins: CudaPins
    version_py_cuda: str | None = None  # --wheels: `cuda` in the wheel's torch/version.py
    arch_list: tuple[str, ...] | None = None  # --arch-lists: torch.cuda.get_arch_list()
    arch_evidence: str | None = None  # --arch-lists: how the arch list was read, one phrase

    @property
    def tag(self) -> str | None:
        """The variant tag ("cu130"): torch/version.py when read, else the CUDA pin."""
        if self.version_py_cuda:
            return Pin("cuda", self.version_py_cuda).cuda_tag
        return self.pins.cuda.cuda_tag if self.pins.cuda else None


@dataclass(frozen=True, slots=True)
class Unread:
    """A release whose facts could not be read; `reason` says why, in one phrase."""

    version: str
    reason: str


class Registry:
    """One index (PEP 691 JSON) and its JSON API, read through `fetch`."""

    def __init__(self, fetch: Fetch = urllib_fetch, index: str = DEFAULT_INDEX) -> None:
        self.fetch = fetch
        self.index = index if index.endswith("/") else index + "/"
        base = self.index[: -len("simple/")] if self.index.endswith("/simple/") else self.index
        self.json_api = base + "pypi/"
        self._latest: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _json(self, url: str, accept: str) -> Any:
        body = self.fetch(url, accept)
        try:
            return json.loads(body)
        except ValueError as exc:
            raise FetchError(url, "the answer is not JSON") from exc

    def project(self, name: str) -> Project:
        """The project's files; a project the index does not have is a `FetchError`."""
        url = f"{self.index}{canonicalize_name(name)}/"
        data = self._json(url, SIMPLE_JSON)
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, list):
            raise FetchError(url, "not a PEP 691 JSON index page (no 'files')")
        parsed = (_dist_file(url, raw) for raw in files if isinstance(raw, dict))
        return Project(canonicalize_name(name), url, tuple(f for f in parsed if f))

    def torch_facts(self, project: Project, version: Version) -> TorchFacts | Unread:
        """CUDA and cuDNN pins of `version`'s Linux x86_64 wheel.

        Tries each wheel's PEP 658 `.metadata` (they are identical across Python minors), then
        the JSON API's `requires_dist` for that release.
        """
        wheels = project.linux_wheels(version)
        if not wheels:
            return Unread(str(version), "no Linux x86_64 wheel on the registry")
        for wheel in wheels:
            if wheel.core_metadata is False:
                continue
            try:
                text = self.fetch(wheel.metadata_url, "*/*").decode("utf-8", "replace")
            except NotFound:
                continue
            return TorchFacts(str(version), wheel.metadata_url, "wheel metadata", read_pins(text))
        for url in (f"{self.json_api}{project.name}/{version}/json",
                    f"{self.json_api}{project.name}/json"):
            info = self._json_api_info(url)
            if info is not None and info.get("version") == str(version):
                requires = info.get("requires_dist") or []
                return TorchFacts(str(version), url, "PyPI JSON API",
                                  pins_from_requirements(r for r in requires
                                                         if isinstance(r, str)))
        return Unread(str(version), f"no metadata on the registry for its {len(wheels)} Linux "
                                    "x86_64 wheels, nor in the JSON API")

    def _json_api_info(self, url: str) -> dict[str, Any] | None:
        with self._lock:
            if url in self._latest:
                cached: dict[str, Any] | None = self._latest[url]
                return cached
        try:
            data = self._json(url, "application/json")
        except NotFound:
            data = None
        info = data.get("info") if isinstance(data, dict) else None
        result = info if isinstance(info, dict) else None
        with self._lock:
            self._latest[url] = result
        return result


@dataclass(frozen=True, slots=True)
class CudnnBuild:
    """One `nvidia-cudnn-cuNN` release: the 4-part build and the CUDA major it is built for."""

    build: str
    package: str
    major: int

    @property
    def release(self) -> str:
        """The X.Y.Z the tables key cuDNN releases by."""
        return ".".join(self.build.split(".")[:3])

    @property
    def pin(self) -> str:
        """As a requirement: "nvidia-cudnn-cu13==9.19.0.56"."""
        return f"{self.package}=={self.build}"


def cudnn_builds(project: Project) -> tuple[CudnnBuild, ...]:
    """The final 4-part releases of an `nvidia-cudnn-cuNN` project."""
    major = int(re.sub(r"\D", "", project.name.rsplit("-cu", 1)[-1]) or 0)
    return tuple(CudnnBuild(str(v), project.name, major)
                 for v in project.releases() if len(v.release) == 4)
