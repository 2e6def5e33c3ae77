"""``ioukit iou``: the report of two boxes and its errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ioukit.cli import main


def test_report_of_the_worked_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["iou", "100,80,300,280", "120,100,320,300"]) == 0
    out = capsys.readouterr().out
    assert "intersection  32400" in out
    assert "union         47600" in out
    assert "IoU           0.680672" in out
    assert "Dice          0.810000" in out
    for name in ("GIoU", "DIoU", "CIoU"):
        assert name in out


def test_disjoint_boxes_report_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["iou", "700,100,800,200", "820,210,900,300"]) == 0
    out = capsys.readouterr().out
    assert "intersection  0\n" in out and "IoU           0.000000" in out


def test_xywh_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["iou", "0,0,2,2", "1,1,2,2", "--fmt", "xywh"]) == 0
    assert "IoU           0.142857" in capsys.readouterr().out


def test_negative_coordinates_after_double_dash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["iou", "--", "-1,-1,1,1", "0,0,1,1"]) == 0
    assert "IoU           0.250000" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["1,2,3", "0,0,1,1"],
            "ioukit iou: error: box A: expected 4 comma-separated numbers, got 3 in '1,2,3'\n",
        ),
        (
            ["0,0,1,1", "a,b,c,d"],
            "ioukit iou: error: box B: expected 4 comma-separated numbers, got 'a,b,c,d'\n",
        ),
        (
            ["5,0,1,1", "0,0,1,1"],
            "ioukit iou: error: box A: invalid xyxy box [5.0, 0.0, 1.0, 1.0]: x2 < x1 or y2 < y1\n",
        ),
        (
            ["0,0,1,nan", "0,0,1,1"],
            "ioukit iou: error: box A: coordinates must be finite, got '0,0,1,nan'\n",
        ),
    ],
)
def test_bad_boxes_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["iou", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err == message and captured.out == ""


def test_bad_option_exits_2() -> None:
    with pytest.raises(SystemExit) as info:
        main(["iou", "0,0,1,1", "0,0,1,1", "--fmt", "yolo"])
    assert info.value.code == 2


def test_console_entry_point_runs_as_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ioukit", "iou", "1,1,5,5", "3,2,7,6"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "IoU           0.230769" in done.stdout
