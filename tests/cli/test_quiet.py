"""``--quiet`` hides printing, not the exit status; ``--no-progress`` hides only the bar
(#23 item 24)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ioukit.cli import main
from ioukit.cli._reading import progress_enabled


def _error_level_pair(tmp_path: Path) -> list[str]:
    """xywh ground truth against xyxy predictions: the error-level "box format" finding."""
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    boxes = [(10 + 40 * k, 20 + 30 * k, 30, 25) for k in range(6)]
    (gt / "a.txt").write_text("".join(f"cat {x} {y} {w} {h}\n" for x, y, w, h in boxes))
    (pred / "a.txt").write_text(
        "".join(f"cat 0.9 {x} {y} {x + w} {y + h}\n" for x, y, w, h in boxes)
    )
    return ["--gt", str(gt), "--pred", str(pred), "--txt-box-format", "xywh"]


def test_quiet_keeps_exit_1_of_an_error_level_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _error_level_pair(tmp_path)
    assert main(["eval", *args]) == 1
    loud = capsys.readouterr().err
    assert main(["eval", *args, "--quiet"]) == 1
    captured = capsys.readouterr()
    assert "Average Precision" in captured.out
    # the findings are not printed; the closing line says why the status is 1
    assert len(captured.err.strip().splitlines()) == 1 < len(loud.strip().splitlines())
    assert "error-level finding" in captured.err
    assert main(["eval", *args, "--quiet", "--no-fail"]) == 0
    assert capsys.readouterr().err == ""


def test_no_progress_keeps_the_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _error_level_pair(tmp_path)
    assert main(["eval", *args, "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "box" in err and "error-level finding" in err
    assert main(["check", *args, "--no-progress"]) == 1
    capsys.readouterr()


@pytest.mark.parametrize(
    ("quiet", "no_progress", "shown"),
    [(False, False, True), (True, False, False), (False, True, False)],
)
def test_progress_bar_switches(
    quiet: bool, no_progress: bool, shown: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    args = argparse.Namespace(quiet=quiet, no_progress=no_progress)
    assert progress_enabled(args) is shown
