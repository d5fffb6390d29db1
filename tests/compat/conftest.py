"""The one `tables` fixture of the compat tests: the bundled tables, loaded once (the loader
caches them; tests that load a copy of their own say so)."""

from __future__ import annotations

import pytest

from gpudoctor.compat import Tables, load_tables


@pytest.fixture(scope="session")
def tables() -> Tables:
    return load_tables()
