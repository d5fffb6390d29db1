"""tools/refresh_registry.py: the real urllib fetch on loopback, and parsing recorded answers."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from tests.tools.refresh_kit import REGISTRY, Recorded, recorded
from tools.refresh_registry import (
    FetchError,
    NotFound,
    Pin,
    Registry,
    TorchFacts,
    cudnn_builds,
    pins_from_requirements,
    read_pins,
    urllib_fetch,
)

__all__ = ["recorded"]  # fixture


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        code = {"/ok": 200, "/missing": 404}.get(self.path, 503)
        body = self.headers.get("Accept", "").encode() if code == 200 else b""
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_urllib_fetch_sends_accept_and_maps_404_and_errors(loopback: str) -> None:
    assert urllib_fetch(f"{loopback}/ok", "application/vnd.pypi.simple.v1+json") == \
        b"application/vnd.pypi.simple.v1+json"
    with pytest.raises(NotFound):
        urllib_fetch(f"{loopback}/missing")
    with pytest.raises(FetchError) as exc:
        urllib_fetch(f"{loopback}/broken")
    assert not isinstance(exc.value, NotFound)
    assert str(exc.value) == f"cannot read {loopback}/broken: HTTP 503 Service Unavailable"


def test_pins_of_the_recorded_torch_2_11_metadata() -> None:
    text = (REGISTRY / "metadata" / "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl.metadata"
            ).read_text(encoding="utf-8")
    pins = read_pins(text)
    assert pins.cuda == Pin("cuda-toolkit", "13.0.2") and pins.cuda.cuda_tag == "cu130"
    assert pins.cudnn == Pin("nvidia-cudnn-cu13", "9.19.0.56")


def test_pins_skip_other_platforms_and_ranges() -> None:
    pins = pins_from_requirements([
        'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Windows"',
        "nvidia-cudnn-cu12>=9",
        'nvidia-cuda-runtime-cu12 (==12.8.90) ; platform_system == "Linux" and '
        'platform_machine == "x86_64"',
        "not a requirement ==",
    ])
    assert pins.cudnn is None
    assert pins.cuda == Pin("nvidia-cuda-runtime-cu12", "12.8.90") and pins.cuda.cuda_tag == "cu128"


def test_project_listing_drops_yanked_dev_and_placeholders(recorded: Recorded) -> None:
    registry = Registry(recorded.fetch)
    cu13 = registry.project("nvidia-cudnn-cu13")
    assert {b.build for b in cudnn_builds(cu13)} == {
        "9.17.1.4", "9.19.0.56", "9.19.1.2", "9.26.0.51", "9.28.1.4"}
    assert [str(v) for v in cu13.yanked()] == ["9.25.0.15"]
    toolkit = registry.project("cuda-toolkit")
    assert "13.4.0rc1" not in {str(v) for v in toolkit.releases()}
    assert "13.4.0rc1" in {str(v) for v in toolkit.releases(rc=True)}


def test_wheel_order_and_the_json_api_fallback(recorded: Recorded) -> None:
    registry = Registry(recorded.fetch)
    torch = registry.project("torch")
    versions = {str(v): v for v in torch.releases()}
    wheels = torch.linux_wheels(versions["2.11.0"])
    assert [w.python() for w in wheels if not w.free_threaded()] == sorted(
        (w.python() for w in wheels if not w.free_threaded()), reverse=True)
    assert wheels[-1].free_threaded() and not wheels[0].free_threaded()

    facts = registry.torch_facts(torch, versions["2.15.0"])
    assert isinstance(facts, TorchFacts)
    assert (facts.evidence, facts.source, facts.tag) == (
        "PyPI JSON API", "https://pypi.org/pypi/torch/json", "cu132")
    assert "https://pypi.org/pypi/torch/2.15.0/json" in recorded.asked


def test_a_registry_that_is_not_pep_691_is_a_fetch_error(recorded: Recorded) -> None:
    recorded.override["https://pypi.org/simple/torch/"] = b"<html>simple</html>"
    with pytest.raises(FetchError, match="the answer is not JSON"):
        Registry(recorded.fetch).project("torch")
