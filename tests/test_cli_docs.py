"""Every command is documented: its --help ends with an example, and the README's CLI
reference names it."""

from __future__ import annotations

import click
import pytest

from tokreg.cli import cli

from .conftest import ROOT


def commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, cmd in sorted(group.commands.items()):
        full = f"{prefix}{name}"
        out.append((full, cmd))
        if isinstance(cmd, click.Group):
            out.extend(commands(cmd, full + " "))
    return out


ALL = commands(cli.load_all())  # the group imports its commands on use


@pytest.mark.parametrize("name,cmd", ALL, ids=[n for n, _ in ALL])
def test_help_ends_with_an_example(name: str, cmd: click.Command) -> None:
    doc = (cmd.help or "").strip()
    last = doc.split("\n\n")[-1]
    assert "Example" in last, f"`tokreg {name} --help` should end with an Example: block"
    example = last.split("\n")[-1].strip()
    assert example.startswith("tokreg "), example


@pytest.mark.parametrize("name", [n for n, _ in ALL])
def test_readme_documents_every_command(name: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"tokreg {name}" in readme, f"README.md does not document `tokreg {name}`"


def readme_commands() -> list[str]:
    """The one-line commands of the README's ```sh blocks, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = text.split("```sh\n")[1:]
    return [b.split("```")[0].strip() for b in blocks]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    install_and_run, test = readme_commands()[:2]
    assert "pip install ." in install_and_run and "tokreg train" in install_and_run and "tokreg diff" in install_and_run
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.strip().splitlines()[-1] == test


def test_the_cli_reference_page_is_made_from_the_commands() -> None:
    from tokreg.cli.reference import page

    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == page(cli), "docs/cli.md differs from the commands' help: run `just docs`"
    for name, _ in ALL:
        assert f"\n## tokreg {name}\n" in written
