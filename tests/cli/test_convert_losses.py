"""What a conversion target cannot hold (#23 items 13, 14): DOTA's ``difficult`` survives
``--to coco_rotated``; ``--to yolo`` leaves crowd regions out and clips to the image the boxes
whose normalized centre or size would fall outside [0, 1], each with a note, so that what is
written reads back and scores as pycocotools scores it; a YOLO prediction file in pixels names
``--pred-format``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.cli import main
from tests.coco_reference import run_pycocotools

_DOTA_GT = {
    "P1": "10 10 50 10 50 30 10 30 plane 0\n100 100 140 120 130 140 90 120 plane 1\n",
    "P2": "0 0 20 0 20 20 0 20 ship 0\n30 30 60 30 60 60 30 60 ship 1\n",
}
_DOTA_DET = {
    "plane": "P1 0.9 11 10 50 11 49 30 10 29\nP1 0.4 300 300 320 300 320 320 300 320\n",
    "ship": "P2 0.8 0 0 20 0 20 20 0 20\nP2 0.7 31 30 60 31 59 60 30 59\n",
}


def _stats(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["eval", *argv, "--json", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return dict(json.loads(out.read_text())["stats"])


def test_dota_difficult_survives_coco_rotated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels, det = tmp_path / "labelTxt", tmp_path / "det"
    labels.mkdir()
    det.mkdir()
    for stem, text in _DOTA_GT.items():
        (labels / f"{stem}.txt").write_text(text)
    for name, text in _DOTA_DET.items():
        (det / f"Task1_{name}.txt").write_text(text)
    gt_json, pred_json = tmp_path / "gt.json", tmp_path / "pred.json"
    assert main(["convert", str(labels), str(gt_json), "--to", "coco_rotated"]) == 0
    argv = ["convert", str(det), str(pred_json), "--to", "coco_rotated", "--gt", str(labels)]
    assert main(argv) == 0
    capsys.readouterr()
    flags = [a.get("difficult", 0) for a in json.loads(gt_json.read_text())["annotations"]]
    assert flags == [0, 1, 0, 1]
    common = ["--protocol", "dota", "--iou-type", "rotated"]
    before = _stats(["--gt", str(labels), "--pred", str(det), *common], tmp_path / "a", capsys)
    formats = ["--gt-format", "coco_rotated", "--pred-format", "coco_rotated", *common]
    after = _stats(
        ["--gt", str(gt_json), "--pred", str(pred_json), *formats], tmp_path / "b", capsys
    )
    assert after == before
    # the difficult objects are not counted as missed (without the flag: 2 of 4 missed)
    assert before["mAP"] == pytest.approx(1.0, abs=1e-12)


_W, _H = 200, 100


def _coco(tmp_path: Path) -> tuple[Path, Path, dict[str, Any], list[dict[str, Any]]]:
    images = [{"id": i, "file_name": f"im{i}.jpg", "width": _W, "height": _H} for i in (1, 2)]
    boxes = [
        (1, [10, 10, 40, 30], 0),
        (1, [100, 20, 60, 50], 1),  # a crowd region
        (1, [150, 60, 40, 30], 0),
        (2, [5, 5, 50, 50], 0),
        (2, [120, 10, 70, 80], 0),
    ]
    anns = [
        {"id": k + 1, "image_id": i, "category_id": 1, "bbox": b, "area": b[2] * b[3], "iscrowd": c}
        for k, (i, b, c) in enumerate(boxes)
    ]
    gt = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "cat"}]}
    results = [
        {"image_id": 1, "category_id": 1, "bbox": [12, 10, 40, 30], "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [105, 25, 50, 40], "score": 0.85},
        {"image_id": 1, "category_id": 1, "bbox": [155, 62, 60, 30], "score": 0.6},  # crosses
        {"image_id": 1, "category_id": 1, "bbox": [185, 60, 40, 30], "score": 0.65},  # cx > 1
        {"image_id": 2, "category_id": 1, "bbox": [-8, 5, 60, 50], "score": 0.8},  # crosses
        {"image_id": 2, "category_id": 1, "bbox": [-40, 5, 60, 50], "score": 0.75},  # cx < 0
        {"image_id": 2, "category_id": 1, "bbox": [125, -10, 70, 120], "score": 0.7},  # h > 1
        {"image_id": 2, "category_id": 1, "bbox": [60, 60, 20, 20], "score": 0.3},
    ]
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(results))
    return gt_path, pred_path, gt, results


def test_yolo_leaves_crowds_out_and_clips_to_the_image(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt_path, pred_path, gt, results = _coco(tmp_path)
    labels, preds = tmp_path / "labels", tmp_path / "preds"
    assert main(["convert", str(gt_path), str(labels), "--to", "yolo"]) == 0
    err = capsys.readouterr().err
    assert "1 crowd region(s) left out" in err
    assert main(["convert", str(pred_path), str(preds), "--to", "yolo", "--gt", str(gt_path)]) == 0
    err = capsys.readouterr().err
    assert "3 box(es) whose centre or size lies outside the image clipped" in err
    values = [float(t) for f in preds.glob("im*.txt") for t in f.read_text().split()]
    assert max(values) <= 1.0 and min(values) >= 0.0
    stats = _stats(
        ["--gt", str(labels), "--pred", str(preds), "--image-size", f"{_W}x{_H}"],
        tmp_path / "r.json",
        capsys,
    )
    # pycocotools on what YOLO holds: no crowd region, predictions clipped to the image
    plain = {**gt, "annotations": [a for a in gt["annotations"] if not a["iscrowd"]]}
    clipped = []
    for r in results:
        x, y, w, h = r["bbox"]
        if 0 <= x + w / 2 <= _W and 0 <= y + h / 2 <= _H and w <= _W and h <= _H:
            clipped.append(r)  # centre and size inside: written as it is
            continue
        x1, y1 = min(max(x, 0), _W), min(max(y, 0), _H)
        x2, y2 = min(max(x + w, 0), _W), min(max(y + h, 0), _H)
        clipped.append({**r, "bbox": [x1, y1, x2 - x1, y2 - y1]})
    assert len([r for r, c in zip(results, clipped, strict=True) if r is not c]) == 3
    reference = run_pycocotools(plain, clipped, {}).stats
    assert np.allclose(list(stats.values()), reference, atol=1e-12, rtol=0)


def test_pixel_predictions_in_a_yolo_folder_name_pred_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    (gt / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    (pred / "a.txt").write_text("0 0.5 0.5 0.2 0.2 0.9\n0 50 50 20 20 0.8\n")
    argv = ["eval", "--gt", str(gt), "--pred", str(pred), "--image-size", "100x100"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "a.txt: line 2" in line and "--pred-format" in line and "--gt-format" not in line
