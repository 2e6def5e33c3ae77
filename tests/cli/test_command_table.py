"""The command table: one lazy point, help lines that agree with the commands (#22 item 1)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from ioukit.cli import COMMANDS, build_parser


def _help_lines(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {c.dest: c.help for c in action._choices_actions}


def test_the_table_help_lines_are_the_commands_own() -> None:
    assert _help_lines(build_parser()) == {n: c.help for n, c in COMMANDS.items()}
    assert _help_lines(build_parser([])) == {n: c.help for n, c in COMMANDS.items()}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_one_command_registers_only_itself(command: str) -> None:
    parser = build_parser([command])
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in action.choices.items():
        registered = sub.add_help  # a stub is a name and a help line, without -h
        assert registered == (name == command), name


def test_iou_imports_neither_the_engine_nor_the_readers() -> None:
    code = (
        "import sys\nfrom ioukit.cli import main\n"
        "assert main(['iou', '0,0,10,10', '5,5,15,15']) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('ioukit')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.strip().splitlines()[-1]
    for module in ("ioukit.engine", "ioukit.cli.eval_command", "ioukit.io.coco", "ioukit.analysis"):
        assert f"'{module}'" not in loaded, module
    assert "'ioukit.cli.iou_command'" in loaded
