"""``yolo val save_json=True`` output against its own labels (#23 item 19): ``image_id`` is
the file stem (an int for a numeric stem), ``category_id`` the class index + 1; read so, with
a note, and scored as pycocotools scores the same boxes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ioukit.cli import main
from tests.coco_reference import run_pycocotools

_W, _H = 640, 480
_LABELS = {
    "000000000042": [(0, 0.3, 0.3, 0.2, 0.2), (1, 0.7, 0.7, 0.2, 0.3)],
    "cat_7": [(0, 0.5, 0.5, 0.4, 0.4)],
    "9": [(1, 0.4, 0.6, 0.3, 0.2), (1, 0.1, 0.1, 0.1, 0.1)],
}
# (stem, class, x, y, w, h, score): xywh top-left pixels, as pred_to_json writes them
_PREDS = [
    ("000000000042", 0, 130.0, 100.0, 128.0, 96.0, 0.91),
    ("000000000042", 1, 380.0, 270.0, 128.0, 144.0, 0.80),
    ("000000000042", 0, 20.0, 20.0, 50.0, 50.0, 0.35),
    ("cat_7", 0, 200.0, 150.0, 256.0, 192.0, 0.77),
    ("cat_7", 1, 10.0, 10.0, 40.0, 40.0, 0.66),
    ("9", 1, 170.0, 240.0, 192.0, 96.0, 0.88),
]


def _dataset(tmp_path: Path) -> tuple[Path, Path]:
    labels = tmp_path / "labels"
    labels.mkdir()
    for stem, rows in _LABELS.items():
        (labels / f"{stem}.txt").write_text(
            "".join(f"{c} {x} {y} {w} {h}\n" for c, x, y, w, h in rows)
        )
    records = [
        {
            "image_id": int(stem) if stem.isnumeric() else stem,
            "category_id": cls + 1,
            "bbox": [x, y, w, h],
            "score": score,
        }
        for stem, cls, x, y, w, h, score in _PREDS
    ]
    pred = tmp_path / "predictions.json"
    pred.write_text(json.dumps(records))
    return labels, pred


def _reference(stats_order: list[str]) -> np.ndarray:
    """pycocotools on the same boxes with ids of our own (image = position, class + 1)."""
    ids = {stem: k + 1 for k, stem in enumerate(_LABELS)}
    annotations = []
    for stem, rows in _LABELS.items():
        for c, cx, cy, w, h in rows:
            x1, y1 = (cx - w / 2) * _W, (cy - h / 2) * _H
            x2, y2 = (cx + w / 2) * _W, (cy + h / 2) * _H
            box = [x1, y1, x2 - x1, y2 - y1]
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": ids[stem],
                    "category_id": c + 1,
                    "bbox": box,
                    "area": box[2] * box[3],
                    "iscrowd": 0,
                }
            )
    gt = {
        "images": [{"id": i, "width": _W, "height": _H} for i in ids.values()],
        "annotations": annotations,
        "categories": [{"id": 1, "name": "0"}, {"id": 2, "name": "1"}],
    }
    results = [
        {"image_id": ids[s], "category_id": c + 1, "bbox": [x, y, w, h], "score": p}
        for s, c, x, y, w, h, p in _PREDS
    ]
    assert len(stats_order) == 12
    return run_pycocotools(gt, results, {}).stats


def test_yolo_val_json_scores_as_pycocotools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels, pred = _dataset(tmp_path)
    out = tmp_path / "r.json"
    argv = ["eval", "--gt", str(labels), "--pred", str(pred), "--image-size", f"{_W}x{_H}"]
    assert main([*argv, "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert "read as `yolo val save_json=True` output" in err
    stats = json.loads(out.read_text())["stats"]
    reference = _reference(list(stats))
    assert np.allclose(list(stats.values()), reference, atol=1e-12, rtol=0)
    assert stats["AP50"] > 0.3
    assert main(["check", *argv[1:]]) == 0
    assert "yolo val" in capsys.readouterr().err


def test_ids_that_are_ground_truth_ids_stay_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Integer ids of the ground truth's images with a category 0: a COCO results file of
    ioukit's own ids (``convert --to coco --gt labels``), read as before, without the note."""
    labels, _ = _dataset(tmp_path)
    pred = tmp_path / "ids.json"
    pred.write_text(
        json.dumps([{"image_id": 1, "category_id": 0, "bbox": [1, 2, 3, 4], "score": 0.5}])
    )
    argv = ["eval", "--gt", str(labels), "--pred", str(pred), "--image-size", f"{_W}x{_H}"]
    assert main(argv) == 0
    assert "yolo val" not in capsys.readouterr().err


def test_a_broken_record_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels, pred = _dataset(tmp_path)
    records = json.loads(pred.read_text())
    records[2]["bbox"] = [1, 2, 3]
    pred.write_text(json.dumps(records))
    argv = ["eval", "--gt", str(labels), "--pred", str(pred), "--image-size", f"{_W}x{_H}"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "predictions.json (as yolo val's save_json)" in line and "[2]" in line
