"""Command-line conventions (#29 item 5): bare ``ioukit`` prints the help, a usage error shows
the usage before its one-line message, ``--json -`` prints the report document on stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioukit.cli import main
from tests.conftest import DATA

GOOD = DATA / "bad_inputs" / "good"


def test_bare_ioukit_prints_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ioukit") and "eval" in out and "convert" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["eval", "--gt", "x.json"], "the following arguments are required: --pred"),
        (["eval", "--gt", "a", "--pred", "b", "--protocol", "nope"], "invalid choice: 'nope'"),
        (["nope"], "invalid choice: 'nope'"),
    ],
)
def test_a_usage_error_shows_the_usage(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ioukit")
    last = err.strip().splitlines()[-1]
    assert needle in last and "--help" in last


def test_json_dash_prints_the_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    assert main([*args, "--json", str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    assert main([*args, "--json", "-"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == json.loads((tmp_path / "r.json").read_text())
    assert not (Path.cwd() / "-").exists()
