"""Every JSON document gpudoctor writes: its name, the version it writes, the versions a reader
of it accepts, and where its JSON Schema is published (`docs/schemas/<name>.schema.json`,
written by tools/write_schemas.py and checked against real output in tests/test_schemas.py).

Each document has a version of its own, written as its `schema_version` key: it goes up when
that document's shape changes in a way a reader must know about (a key removed, renamed or
given another meaning), and only that document's. `checks --format json` is a bare list, so
it carries no key: its version is its schema's.

A stdlib leaf, below the model: the producers (renderers, `gpudoctor.snapshot`,
`compat.query`) and the readers (`gpudoctor.snapshot.loads`, `gpudoctor.fleet`) all read
this one table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

SNAPSHOT = "snapshot"  # `gpudoctor snapshot`: schema_version and the Environment
CHECK = "check"  # `check --format json`: findings, summary and the Environment
SMOKE_TEST = "smoke-test"  # `smoke-test --format json`
SMOKE_TEST_DISTRIBUTED = "smoke-test-distributed"  # `smoke-test --distributed --format json`
DIFF = "diff"  # `diff --format json`
EXPLAIN = "explain"  # `explain --format json`
FLEET = "fleet"  # `fleet --format json`
INSTALL_CUDNN = "install-cudnn"  # `install-cudnn --format json`
UNINSTALL_CUDNN = "uninstall-cudnn"  # `uninstall-cudnn --format json`
COMPAT = "compat"  # `compat <kind> <query> --format json`
RECOMMEND = "recommend"  # `recommend --format json`
CHECKS = "checks"  # `checks --format json`: a bare list, no schema_version key

# the documents that embed the Environment: 2 when its `cuda` key became `toolkits`; 3 when
# the host facts a pasted report does not state (the OS, the environment variables, the device
# nodes, the container …) became Unavailable objects where a probe writes a value
VERSIONS: Mapping[str, int] = MappingProxyType({
    SNAPSHOT: 3, CHECK: 3, SMOKE_TEST: 3, SMOKE_TEST_DISTRIBUTED: 3, DIFF: 1, EXPLAIN: 1,
    FLEET: 1, INSTALL_CUDNN: 1, UNINSTALL_CUDNN: 1, COMPAT: 1, RECOMMEND: 1, CHECKS: 1,
})

# the older versions a reader still accepts: version 1 wrote `environment.cuda` for what is now
# `environment.toolkits` (gpudoctor.snapshot.FORMER_KEYS reads it; gpudoctor.fleet too); a
# version 2 document is a version 3 one whose host facts all have values
_OLDER: Mapping[str, frozenset[int]] = MappingProxyType({
    SNAPSHOT: frozenset({1, 2}), CHECK: frozenset({1, 2}), SMOKE_TEST: frozenset({1, 2}),
    SMOKE_TEST_DISTRIBUTED: frozenset({1, 2}),
})

# the versions a reader of each document accepts: the one written, and any older one it can
# still read
_READABLE: Mapping[str, frozenset[int]] = MappingProxyType(
    {name: frozenset({v}) | _OLDER.get(name, frozenset()) for name, v in VERSIONS.items()})

# the documents that carry a whole Environment (`check --from-snapshot`, `fleet` and `diff`
# read them), and the `command` key that names the smoke-test ones
ENVIRONMENT_CARRIERS = (SNAPSHOT, CHECK, SMOKE_TEST, SMOKE_TEST_DISTRIBUTED)
_BY_COMMAND = {"smoke-test": SMOKE_TEST, "smoke-test --distributed": SMOKE_TEST_DISTRIBUTED}

SCHEMA_DIR = "docs/schemas"


def version(document: str) -> int:
    """The `schema_version` this gpudoctor writes in `document` (KeyError: no such one)."""
    return VERSIONS[document]


def readable(document: str) -> frozenset[int]:
    """The `schema_version`s a reader of `document` accepts."""
    return _READABLE[document]


def schema_id(document: str) -> str:
    """The `$id` of the document's JSON Schema: its name and version."""
    return f"urn:gpudoctor:schema:{document}:{VERSIONS[document]}"


def schema_path(document: str) -> str:
    """Where the document's JSON Schema is, relative to the repository root."""
    return f"{SCHEMA_DIR}/{document}.schema.json"


def carrier(data: Mapping[str, object]) -> str:
    """Which of the ENVIRONMENT_CARRIERS a parsed JSON object that has an `environment` is,
    told by its own keys: a smoke-test report names its `command`, a check report has
    `findings`, a snapshot has neither."""
    command = data.get("command")
    if isinstance(command, str) and command in _BY_COMMAND:
        return _BY_COMMAND[command]
    return CHECK if "findings" in data else SNAPSHOT


def accepts(data: Mapping[str, object]) -> str | None:
    """None when a reader of Environments accepts the object's `schema_version`; else why not,
    in one line (\"schema_version 2; this gpudoctor reads 1 in a check report\")."""
    document = carrier(data)
    found = data.get("schema_version")
    if any(found == v for v in readable(document)):  # == as before: 1.0 reads as 1
        return None
    reads = ", ".join(str(v) for v in sorted(readable(document)))
    return f"schema_version {found!r:.40}; this gpudoctor reads {reads} in a {document} document"
