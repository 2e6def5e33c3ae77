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
