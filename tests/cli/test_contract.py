"""One shape for every command: formats, help with examples, `--debug` anywhere, check docs,
and a README whose Usage block and environment-variable table cannot drift from the code."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from runner import invoke

from gpudoctor.checks import REGISTRY
from gpudoctor.cli import COMMANDS, app
from gpudoctor.cli.checks import check_docs
from gpudoctor.cli.options import FORMAT_ENV
from gpudoctor.renderers.catalog import catalog_markdown

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs" / "checks.md"
HEALTHY = str(ROOT / "tests" / "fixtures" / "envs" / "h100-healthy.json")


def leaves() -> dict[str, Any]:
    """Every runnable command, by its full name: 'check', 'compat cuda', …"""
    out: dict[str, Any] = {}

    def walk(cmd: Any, name: str) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for sub_name, sub in subs.items():
                walk(sub, f"{name} {sub_name}".strip())
        else:
            out[name] = cmd

    walk(typer.main.get_command(app), "")
    return out


def options_of(cmd: Any) -> dict[str, Any]:
    """Long option name → click parameter (every long name of it, aliases too)."""
    return {o: p for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}


def usage_entries() -> dict[str, str]:
    """The README's Usage block: command name → its text (continuation lines included)."""
    block = re.search(r"## Usage\n\n```text\n(.*?)```", README, re.S)
    assert block, "README has no Usage block"
    entries: dict[str, str] = {}
    current = None
    for line in block.group(1).splitlines():
        m = re.match(r"gpudoctor ([a-z-]+)", line)
        if m and not line.startswith("gpudoctor --"):
            current = m.group(1)
            entries[current] = line
        elif current and line.startswith(" "):
            entries[current] += " " + line.strip()
    return {k: re.sub(r"`[^`]*`", "", v) for k, v in entries.items()}  # quoted: other commands


def test_readme_usage_matches_every_commands_options() -> None:
    entries = usage_entries()
    real = leaves()
    compat = {k: v for k, v in real.items() if k.startswith("compat ")}
    for name in COMMANDS:
        assert name in entries, f"README's Usage lacks `gpudoctor {name}`"
    for name, text in entries.items():
        cmds = list(compat.values()) if name == "compat" else [real[name]]
        documented = set(re.findall(r"(?<![\w-])--?[a-z][a-z0-9-]*", text))
        for cmd in cmds:
            opts = options_of(cmd)
            names = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
            missing = [p.opts[0] for p in cmd.params if p.param_type_name == "option"
                       and p.name != "debug" and not documented & {*p.opts, *p.secondary_opts}]
            assert not missing, f"README's `gpudoctor {name}` lacks {missing}"
            unknown = documented - names - {"-h", "--help"}
            assert not unknown, f"README's `gpudoctor {name}` names no such option: {unknown}"
            formats = re.search(r"--format ([a-z|]+)", text)
            if "--format" in opts:
                assert formats, f"README's `gpudoctor {name}` lists no formats"
                choices = set(opts["--format"].type.choices)
                assert set(formats.group(1).split("|")) == choices, name


def test_readme_environment_table_matches_the_variables() -> None:
    section = README[README.index("## Environment variables"):]
    section = section[:section.index("Read as facts")]
    documented = set(re.findall(r"^\| `(GPUDOCTOR_[A-Z_]+)` \|", section, re.M))
    declared = {FORMAT_ENV}  # resolved by the commands themselves (options.resolve_format)
    for cmd in leaves().values():
        for p in cmd.params:
            envvar = getattr(p, "envvar", None)
            declared |= {envvar} if isinstance(envvar, str) else set(envvar or ())
    read = set()
    for path in (ROOT / "gpudoctor").rglob("*.py"):
        read |= set(re.findall(r"GPUDOCTOR_[A-Z_]+[A-Z]", path.read_text()))
    assert documented == declared, (documented ^ declared)
    assert read <= documented, f"read in the code, missing from the README: {read - documented}"


@pytest.mark.parametrize("name", sorted(leaves()))
def test_every_command_help_shows_examples_and_formats(name: str) -> None:
    r = invoke(*name.split(), "--help")
    assert r.exit_code == 0, r.output
    assert "examples:" in r.output
    assert f"gpudoctor {name.split()[0]}" in r.output[r.output.index("examples:"):]
    cmd = leaves()[name]
    if "--format" in options_of(cmd):
        choices = "|".join(options_of(cmd)["--format"].type.choices)
        assert f"<{choices}>" in r.output  # the help says which formats
    assert "--debug" in r.output


@pytest.mark.parametrize(("args", "fmt"), [
    (["checks"], "junit"), (["compat", "cuda", "12.4"], "markdown"),
    (["recommend", "--from-snapshot", HEALTHY], "junit"),
])
def test_format_option_refuses_formats_the_command_does_not_write(args: list[str],
                                                                   fmt: str) -> None:
    r = invoke(*args, "--format", fmt)
    assert r.exit_code == 2
    assert len(r.stderr.splitlines()) == 1  # one line, not click's usage block
    assert r.stderr.startswith(f"gpudoctor: error: invalid value for --format: '{fmt}' is not "
                               "a format this command writes (")


@pytest.mark.slow
def test_format_variable_is_used_where_it_exists() -> None:
    r = invoke("checks", env={FORMAT_ENV: "json"})
    assert r.exit_code == 0 and json.loads(r.stdout)[0]["id"] == REGISTRY[0].id
    r = invoke("checks", env={FORMAT_ENV: "junit"})  # not one of checks': text
    assert r.exit_code == 0 and r.stdout.startswith("id ")
    r = invoke("checks", "--format", "text", env={FORMAT_ENV: "nonsense"})
    assert r.exit_code == 0  # the option wins; the variable is not even read


@pytest.mark.slow
def test_debug_is_accepted_after_every_subcommand() -> None:
    for args in (["checks", "--debug"], ["compat", "gpu", "sm86", "--debug"],
                 ["check", "GD101", "--from-snapshot", HEALTHY, "--debug"]):
        r = invoke(*args)
        assert r.exit_code == 0, (args, r.output)


# --------------------------------------------------------------------------- check docs


def test_docs_checks_md_is_current() -> None:
    """docs/checks.md is generated from the registry; regenerate it with
    `gpudoctor checks --format markdown -o docs/checks.md`."""
    assert DOCS.read_text() == catalog_markdown(check_docs()), (
        "docs/checks.md is stale: run `gpudoctor checks --format markdown -o docs/checks.md`")


def test_every_docs_url_points_at_an_anchor_that_exists() -> None:
    r = invoke("check", "--from-snapshot", HEALTHY, "--format", "json")
    text = DOCS.read_text()
    for f in json.loads(r.stdout)["findings"]:
        path, anchor = f["docs_url"].split("#")
        assert (ROOT / path).is_file()
        assert f'<a id="{anchor}"></a>' in text, anchor
    assert len(json.loads(r.stdout)["findings"]) == len(REGISTRY)


@pytest.mark.parametrize("selector", ["GD404", "gd404", "gpu-arch-in-torch-build"])
def test_checks_prints_one_checks_documentation(selector: str) -> None:
    r = invoke("checks", selector)
    assert r.exit_code == 0, r.output
    gd404 = next(c for c in REGISTRY if c.id == "GD404")
    lines = r.stdout.splitlines()
    assert lines[0] == f"GD404 gpu-arch-in-torch-build: {gd404.title}"
    assert lines[1].startswith("layer: PyTorch; severity: ")
    first_words = " ".join(gd404.doc.split()[:6])
    assert first_words in r.stdout
    assert lines[-1] == "docs: docs/checks.md#gd404"


def test_checks_of_a_layer_and_unknown() -> None:
    r = invoke("checks", "Environment")
    assert r.exit_code == 0
    host = [c.id for c in REGISTRY if c.layer.value == "host"]
    assert [line.split()[0] for line in r.stdout.splitlines() if line.startswith("GD")] == host
    r = invoke("checks", "GD999")
    assert r.exit_code == 2
    assert r.stderr.splitlines()[0] == ("gpudoctor: error: 'GD999': no such check "
                                        "(see `gpudoctor checks`)")
    assert "GD404" in r.stderr.splitlines()[1]


def test_checks_json_carries_every_doc() -> None:
    r = invoke("checks", "--format", "json")
    rows = json.loads(r.stdout)
    assert [row["id"] for row in rows] == [c.id for c in REGISTRY]
    for row, c in zip(rows, REGISTRY, strict=True):
        assert row["doc"] and row["docs_url"] == f"docs/checks.md#{c.id.lower()}"
