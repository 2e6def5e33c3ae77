"""YOLO labels in pixels beside normalized YOLO predictions (#23 item 11): the mixed formats
are reported, not read silently as plain txt; given formats are taken as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioukit.cli import main


def _pair(tmp_path: Path, gt_line: str, pred_line: str) -> list[str]:
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    (gt / "a.txt").write_text(gt_line + "\n")
    (pred / "a.txt").write_text(pred_line + "\n")
    return ["--gt", str(gt), "--pred", str(pred), "--image-size", "100x100"]


@pytest.mark.parametrize("command", ["eval", "check"])
def test_pixel_labels_beside_normalized_predictions_are_reported(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _pair(tmp_path, "0 50 50 20 20", "0 0.5 0.5 0.2 0.2 0.9")
    assert main([command, *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    for needle in ("--gt", "mixed formats", "a.txt: line 1", "50 > 1", "--gt-format"):
        assert needle in line, line


def test_pixel_predictions_beside_normalized_labels_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _pair(tmp_path, "0 0.5 0.5 0.2 0.2", "0 50 50 20 20 0.9")
    assert main(["eval", *args]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--pred" in line and "mixed formats" in line and "50 > 1" in line


def test_formats_given_explicitly_are_read_as_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Plain txt in pixels (x y w h) against relative txt (class conf cx cy w h): the same box
    (50, 50, 70, 70), AP 1."""
    args = _pair(tmp_path, "0 50 50 20 20", "0 0.9 0.6 0.6 0.2 0.2")
    assert main(["eval", *args, "--gt-format", "txt", "--pred-format", "txt"]) == 0
    out = capsys.readouterr().out
    assert "(AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 1.000" in out


def test_plain_txt_with_class_names_is_not_mixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _pair(tmp_path, "cat 50 50 20 20", "cat 0.9 50 50 20 20")
    assert main(["eval", *args]) == 0
    capsys.readouterr()
