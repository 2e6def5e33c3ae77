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


@pytest.mark.parametrize("option", ["--csv", "--per-image"])
def test_dash_prints_the_csv_on_stdout(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json"), "--quiet"]
    assert main([*args, option, str(tmp_path / "t.csv")]) == 0
    capsys.readouterr()
    assert main([*args, option, "-"]) == 0
    out = capsys.readouterr().out
    assert out == (tmp_path / "t.csv").read_text(encoding="utf-8")  # the CSV alone, no report
    assert not (Path.cwd() / "-").exists()


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (["--csv", "-", "--json", "-"], "--json -, --csv -"),
        (["--per-image", "-", "--format", "json"], "--format json, --per-image -"),
        (["--csv", "-", "--per-image", "-"], "--csv -, --per-image -"),
    ],
)
def test_one_output_at_most_on_stdout(
    given: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    args = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    assert main([*args, *given, "--json" if "--json" not in given else "--plots", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        f"ioukit eval: error: {named}: expected at most one output on stdout, got 2 (write "
        "the others to files)"
    )
    assert not out.exists()


def test_flags_of_one_protocol_or_format_are_refused_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    assert main([*args, "--fixed-ap"]) == 2
    assert capsys.readouterr().err.strip() == (
        "ioukit eval: error: --fixed-ap: expected --protocol lvis, got coco"
    )
    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "a.txt").write_text("0 0.5 0.5 0.2 0.2 0.9\n")
    argv = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(folder), "--iou-type", "segm"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "ioukit eval: error: --iou-type segm: expected COCO JSON for --pred (masks in "
        f"'segmentation'), got yolo ({folder})"
    )
