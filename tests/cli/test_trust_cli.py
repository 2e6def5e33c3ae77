"""``ioukit eval``'s trust outputs: the calibration in ``--json``, the reliability diagram in
``--plots``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ioukit
from ioukit.cli import main
from ioukit.synthetic import make_detections, to_datasets


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    gt, res = make_detections(num_images=30, num_classes=4, seed=7)
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(res))
    return gt_path, pred_path


def test_json_holds_the_calibration(files: tuple[Path, Path], tmp_path: Path) -> None:
    gt, pred = files
    out = tmp_path / "r.json"
    assert main(["eval", "--gt", str(gt), "--pred", str(pred), "--quiet", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    want = ioukit.evaluate(*to_datasets(json.loads(gt.read_text()), json.loads(pred.read_text())))
    c = want.calibration()
    assert document["calibration"]["ece"] == pytest.approx(c.ece, abs=1e-12)
    assert document["calibration"]["count"] == c.count.tolist()
    assert document["calibration"]["iou_threshold"] == 0.5


def test_plots_have_a_reliability_diagram(files: tuple[Path, Path], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    gt, pred = files
    plots = tmp_path / "plots"
    args = ["eval", "--gt", str(gt), "--pred", str(pred), "--quiet", "--plots", str(plots)]
    assert main(args) == 0
    assert (plots / "reliability.png").read_bytes()[:4] == b"\x89PNG"


def test_label_errors_csv(files: tuple[Path, Path], tmp_path: Path) -> None:
    import csv

    from ioukit.analysis.label_errors import COLUMNS

    gt, pred = files
    out = tmp_path / "label_errors.csv"
    args = ["eval", "--gt", str(gt), "--pred", str(pred), "--quiet", "--label-errors", str(out)]
    assert main(args) == 0
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    want = ioukit.evaluate(*to_datasets(json.loads(gt.read_text()), json.loads(pred.read_text())))
    expected = want.label_errors(n=None).rows()
    assert tuple(rows[0]) == COLUMNS and len(rows) == len(expected) > 0
    assert [r["kind"] for r in rows] == [e["kind"] for e in expected]
    assert [float(r["score"]) for r in rows] == [e["score"] for e in expected]
    assert main([*args]) == 2  # exists: refused without --force


def test_eval_prints_trust_notes_under_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, res = make_detections(num_images=30, num_classes=4, seed=7)
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps([r for r in res if r["score"] >= 0.25]))
    args = ["eval", "--gt", str(gt_path), "--pred", str(pred_path), "--no-progress"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(" Average Precision")  # the report itself unchanged
    assert "info [provenance]: this run is the coco protocol" in captured.err
    assert "warning [confidence-floor]: predictions look cut at confidence 0.25" in captured.err
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["check", "--gt", str(gt_path), "--pred", str(pred_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "warning [confidence-floor]" in out and "provenance" not in out
