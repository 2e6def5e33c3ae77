"""``ioukit eval --errors --per-image FILE.csv``: the TIDE table, the per-image CSV, bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ioukit.analysis.per_image import COLUMNS
from ioukit.cli import main
from tests.errors_data import random_coco


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    gt, res = random_coco(11)
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(res))
    return gt_path, pred_path


def test_errors_and_per_image(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = files
    out = tmp_path / "per_image.csv"
    plots = tmp_path / "plots"
    args = ["eval", "--gt", str(gt), "--pred", str(pred), "--quiet", "--errors"]
    report = tmp_path / "report.json"
    extra = ["--per-image", str(out), "--plots", str(plots), "--json", str(report)]
    assert main([*args, *extra]) == 0
    text = capsys.readouterr().out
    assert "Main errors" in text and "Special errors" in text and "worst images" in text
    with out.open() as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == COLUMNS and len(rows) == 21
    assert (plots / "tide.png").stat().st_size > 1000
    document = json.loads(report.read_text())
    assert set(document["errors"]["main"]) == {"Cls", "Loc", "Both", "Dupe", "Bkg", "Miss"}
    assert len(document["worst_images"]) == 10


def test_errors_needs_coco_bbox(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = files
    out = tmp_path / "per_image.csv"
    args = ["eval", "--gt", str(gt), "--pred", str(pred), "--errors", "--per-image", str(out)]
    assert main([*args, "--protocol", "voc10"]) == 2
    assert "--errors" in capsys.readouterr().err
    assert not out.exists()


def test_per_image_missing_folder(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = files
    out = tmp_path / "nope" / "per_image.csv"
    assert main(["eval", "--gt", str(gt), "--pred", str(pred), "--per-image", str(out)]) == 2
    assert "--per-image" in capsys.readouterr().err
    assert not out.parent.exists()
