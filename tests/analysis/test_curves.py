"""PR curves and P/R/F1 at a confidence: pycocotools parity and brute-force recounts."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from ioukit.analysis.curves import pr_curves, precision_recall_f1
from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation.protocols.yolo import evaluate_yolo
from ioukit.matching import match_predictions
from ioukit.synthetic import make_detections, to_datasets


def _random(seed: int, crowds: bool = True) -> tuple[Dataset, Dataset]:
    # class 8 has no ground truth
    return to_datasets(
        *make_detections(
            25,
            3,
            gt_per_image=2.8,
            fp_per_image=1.5,
            crowd_fraction=0.08 if crowds else 0.0,
            category_ids=[3, 1, 8],
            classes_without_gt=1,
            score_decimals=12,
            seed=seed,
        )
    )


def _pycocotools_precision(gt: Dataset, pred: Dataset, threshold: float) -> np.ndarray:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    def xywh(b: np.ndarray) -> list[float]:
        return [float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])]

    dataset = {
        "images": [{"id": int(i)} for i in gt.images.ids],
        "categories": [
            {"id": int(c), "name": n}
            for c, n in zip(gt.categories.ids, gt.categories.names, strict=True)
        ],
        "annotations": [
            {
                "id": k + 1,
                "image_id": int(gt.images.ids[gt.image_index[k]]),
                "category_id": int(gt.category_id[k]),
                "bbox": xywh(gt.boxes[k]),
                "area": float(gt.area[k]),
                "iscrowd": int(gt.crowd[k]),
            }
            for k in range(len(gt))
        ],
    }
    results = [
        {
            "image_id": int(gt.images.ids[pred.image_index[k]]),
            "category_id": int(pred.category_id[k]),
            "bbox": xywh(pred.boxes[k]),
            "score": float(pred.scores[k]),
        }  # type: ignore[index]
        for k in range(len(pred))
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = dataset
        coco.createIndex()
        ev = COCOeval(coco, coco.loadRes(results), "bbox")
        ev.params.iouThrs = np.array([threshold])
        ev.params.maxDets = [1000]
        ev.params.areaRng = [[0, 1e10]]
        ev.params.areaRngLbl = ["all"]
        ev.evaluate()
        ev.accumulate()
    return np.asarray(ev.eval["precision"][0, :, :, 0, 0]).T  # (K, R), categories sorted by id


@pytest.mark.parametrize(("seed", "threshold"), [(0, 0.5), (1, 0.75), (2, 0.5)])
def test_pr_curve_equals_pycocotools(seed: int, threshold: float) -> None:
    pytest.importorskip("pycocotools")
    gt, pred = _random(seed)
    curves = pr_curves(gt, pred, iou_threshold=threshold)
    want = _pycocotools_precision(gt, pred, threshold)
    np.testing.assert_allclose(curves.precision, want, atol=1e-12)
    assert curves.category_ids.tolist() == [1, 3, 8]


def _brute_counts(
    gt: Dataset, pred: Dataset, threshold: float, score: float
) -> dict[int, list[int]]:
    counts: dict[int, list[int]] = {}
    for c in gt.categories.ids.tolist():
        tp = fp = 0
        for i in range(len(gt.images)):
            g = np.flatnonzero((gt.image_index == i) & (gt.category_id == c))
            p = np.flatnonzero((pred.image_index == i) & (pred.category_id == c))
            if not p.size:
                continue
            iou = np.zeros((p.size, g.size))
            for a, pb in enumerate(pred.boxes[p]):
                for b, gb in enumerate(gt.boxes[g]):
                    w = max(0.0, min(pb[2], gb[2]) - max(pb[0], gb[0]))
                    h = max(0.0, min(pb[3], gb[3]) - max(pb[1], gb[1]))
                    area_p = (pb[2] - pb[0]) * (pb[3] - pb[1])
                    area_g = (gb[2] - gb[0]) * (gb[3] - gb[1])
                    # crowd IoU: intersection over prediction area
                    union = area_p if gt.crowd[g][b] else area_p + area_g - w * h
                    iou[a, b] = w * h / union
            m = match_predictions(
                iou, pred.scores[p], iou_thresholds=[threshold], gt_crowd=gt.crowd[g]
            )  # type: ignore[index]
            keep = pred.scores[p] >= score  # type: ignore[index]
            tp += int((m.tp[0] & keep).sum())
            fp += int((m.fp[0] & keep).sum())
        num_gt = int(((gt.category_id == c) & ~gt.crowd).sum())
        counts[c] = [tp, fp, num_gt - tp]
    return counts


@pytest.mark.parametrize("score", [0.0, 0.5, 0.9])
def test_precision_recall_f1_brute_force(score: float) -> None:
    gt, pred = _random(3)
    r = precision_recall_f1(gt, pred, iou_threshold=0.5, score_threshold=score)
    want = _brute_counts(gt, pred, 0.5, score)
    for k, c in enumerate(r.category_ids.tolist()):
        assert [int(r.tp[k]), int(r.fp[k]), int(r.fn[k])] == want[c]
    has = np.array([want[c][0] + want[c][2] > 0 for c in r.category_ids.tolist()])
    assert r.recall[~has].tolist() == [-1.0] * int((~has).sum())
    tp, fp = int(r.tp.sum()), int(r.fp.sum())
    assert r.micro["precision"] == pytest.approx(tp / (tp + fp))
    p, rc = r.precision[has], r.recall[has]
    assert r.f1[has] == pytest.approx(
        np.where(p + rc > 0, 2 * p * rc / np.maximum(p + rc, 1e-300), 0)
    )
    assert r.macro["recall"] == pytest.approx(rc.mean())


def test_yolo_protocol_curves_agree_with_evaluate_yolo() -> None:
    gt, pred = _random(4, crowds=False)
    curves = pr_curves(gt, pred, protocol="yolo")
    result = evaluate_yolo(gt, pred)
    assert curves.best_confidence == result.stats["confidence"]
    np.testing.assert_array_equal(curves.f1_at_confidence, result.arrays["f1_curve"])
    best = int(np.argmin(np.abs(curves.confidence - curves.best_confidence)))
    has = np.array([row["num_gt"] > 0 for row in result.per_class])
    assert curves.precision_at_confidence[has, best].mean() == pytest.approx(
        result.stats["precision"]
    )


def test_voc_protocol_and_errors() -> None:
    gt, pred = _random(5)
    c = pr_curves(gt, pred, protocol="voc10")
    assert c.precision.shape == (3, 101) and (c.precision[2] == -1).all()
    with pytest.raises(ParameterError, match="protocol"):
        pr_curves(gt, pred, protocol="pascal")
    with pytest.raises(ParameterError, match="iou_threshold"):
        precision_recall_f1(gt, pred, iou_threshold=2.0)
