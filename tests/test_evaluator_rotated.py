"""Evaluator(iou_type="rotated"|"probiou") equals evaluate() on the same data written as files;
EvaluationResult's one-line error-analysis methods."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ioukit
from ioukit.boxes import box_convert
from ioukit.errors import BoxError
from ioukit.io.coco_rotated import (
    read_coco_rotated_ground_truth,
    read_coco_rotated_results,
    write_coco_rotated,
)


def _images(
    seed: int, n: int = 8
) -> tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
    rng = np.random.default_rng(seed)
    preds, targets = [], []
    for i in range(n):
        g = int(rng.integers(0, 5))
        rot = np.column_stack(
            [rng.uniform(0, 300, (g, 2)), rng.uniform(4, 60, (g, 2)), rng.uniform(-90, 90, g)]
        )
        labels = rng.integers(1, 4, g)
        pick = rng.integers(0, max(g, 1), int(rng.integers(0, 7))) if g else np.zeros(0, int)
        prot = rot[pick] + rng.normal(0, 1, (pick.size, 5)) * [3, 3, 2, 2, 6]
        prot[:, 2:4] = np.abs(prot[:, 2:4]) + 1
        plabels = labels[pick] if g else np.zeros(0, int)
        if i == 3:  # an image without predictions, and one with a false positive only
            prot, plabels = prot[:0], plabels[:0]
        preds.append({"boxes": prot, "scores": rng.uniform(0.05, 1, len(prot)), "labels": plabels})
        targets.append({"boxes": rot, "labels": labels})
    return preds, targets


def _via_files(tmp_path: Path, ev: ioukit.Evaluator) -> tuple[object, object]:
    gt, pred = ev.datasets()
    write_coco_rotated(gt, tmp_path / "gt.json")
    write_coco_rotated(pred, tmp_path / "pred.json")
    gt_file = read_coco_rotated_ground_truth(tmp_path / "gt.json")
    return gt_file, read_coco_rotated_results(tmp_path / "pred.json", gt_file)


@pytest.mark.parametrize(
    ("protocol", "iou_type", "key"),
    [
        ("coco", "rotated", "AP"),
        ("dota", "rotated", "mAP"),
        ("mmrotate", "rotated", "mAP"),
        ("yolo", "probiou", "mAP50-95"),
        ("yolo", "rotated", "mAP50-95"),
    ],
)
def test_evaluator_equals_evaluate_on_files(
    tmp_path: Path, protocol: str, iou_type: str, key: str
) -> None:
    preds, targets = _images(0)
    ev = ioukit.Evaluator(protocol=protocol, iou_type=iou_type)
    ev.update(preds[:4], targets[:4])
    other = ioukit.Evaluator(protocol=protocol, iou_type=iou_type)
    other.update(preds[4:], targets[4:])
    ev.merge(other)
    got = ev.compute()
    gt_file, pred_file = _via_files(tmp_path, ev)
    want = ioukit.evaluate(gt_file, pred_file, protocol=protocol, iou_type=iou_type)
    assert got.stats == pytest.approx(want.stats, abs=1e-12)
    assert got.stats[key] > 0


def test_corners_and_xywhr_inputs() -> None:
    preds, targets = _images(1)
    base = ioukit.Evaluator(iou_type="rotated")
    base.update(preds, targets)
    corners = ioukit.Evaluator(iou_type="rotated")
    corners.update(
        [{**p, "boxes": box_convert(p["boxes"], "cxcywhr", "xyxyxyxy")} for p in preds],
        [{**t, "boxes": box_convert(t["boxes"], "cxcywhr", "xyxyxyxy")} for t in targets],
    )
    assert corners.compute().stats == pytest.approx(base.compute().stats, abs=1e-9)
    xywhr = ioukit.Evaluator(iou_type="rotated", fmt="xywhr")
    xywhr.update(
        [{**p, "boxes": box_convert(p["boxes"], "cxcywhr", "xywhr")} for p in preds],
        [{**t, "boxes": box_convert(t["boxes"], "cxcywhr", "xywhr")} for t in targets],
    )
    assert xywhr.compute().stats == pytest.approx(base.compute().stats, abs=1e-9)


def test_bad_oriented_input() -> None:
    with pytest.raises(ValueError, match="fmt"):
        ioukit.Evaluator(iou_type="rotated", fmt="xywh")
    ev = ioukit.Evaluator(iou_type="rotated")
    with pytest.raises(BoxError, match=r"targets\[0\]\.boxes"):
        ev.update(
            [{"boxes": np.zeros((0, 5)), "scores": [], "labels": []}],
            [{"boxes": [[0, 0, 1, 1]], "labels": [1]}],
        )
    with pytest.raises(BoxError, match=r"predictions\[0\]\.boxes\[0\]"):
        ev.update(
            [{"boxes": [[0, 0, -1, 1, 0]], "scores": [0.5], "labels": [1]}],
            [{"boxes": [[0, 0, 1, 1, 0]], "labels": [1]}],
        )
    assert len(ev) == 0


def test_result_methods_delegate() -> None:
    from ioukit.analysis.errors import error_analysis
    from ioukit.analysis.lrp import lrp
    from ioukit.analysis.per_image import per_image
    from ioukit.analysis.thresholds import optimal_thresholds

    rng = np.random.default_rng(3)
    preds, targets = [], []
    for _ in range(6):
        xy = rng.uniform(0, 100, (3, 2))
        gt = np.hstack([xy, xy + 20])
        preds.append({"boxes": gt + rng.normal(0, 3, gt.shape), "scores": rng.random(3),
                      "labels": [1, 2, 1]})  # fmt: skip
        targets.append({"boxes": gt, "labels": [1, 2, 2]})
    ev = ioukit.Evaluator()
    ev.update(preds, targets)
    r = ev.compute()
    assert r.error_analysis().ap == error_analysis(r).ap
    a, b = r.per_image(iou_threshold=0.75).columns, per_image(r, iou_threshold=0.75).columns
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert r.thresholds().overall == optimal_thresholds(r).overall
    assert r.lrp().stats == lrp(r).stats
