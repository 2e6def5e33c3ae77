"""``protocol="yolo"`` and the confusion matrix against the real Ultralytics code.

Skipped where ultralytics is not installed (the normal test venv); run it with
``.venv-bench/bin/python -m pytest -q tests/evaluation/protocols/test_ultralytics_parity.py``. The
full check on
larger sets is ``benchmarks/check_ultralytics.py``. Same boxes on both sides: Ultralytics gets
each image's predictions in descending confidence (NMS order), classes as indices of the
sorted category ids, through ``DetectionValidator._process_batch`` (``box_iou`` +
``match_predictions``), ``DetMetrics`` and ``ConfusionMatrix.process_batch``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from ioukit.analysis.confusion import confusion_matrix
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.evaluation.protocols.yolo import evaluate_yolo

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    pytest.importorskip("ultralytics")
    torch = pytest.importorskip("torch")
    from ultralytics.models.yolo.detect.val import DetectionValidator
    from ultralytics.utils.metrics import ConfusionMatrix, DetMetrics


def _case(seed: int, *, grid: float) -> tuple[Dataset, Dataset]:
    """Images without gt / predictions, a class without gt, one without predictions; with
    ``grid`` > 0 boxes are snapped to a grid and some gts duplicated (exact IoUs and ties)."""
    rng = np.random.default_rng(seed)
    n_img, cat_ids = 40, np.array([7, 3, 11, 5])
    images = ImageTable.from_lists(list(range(1, n_img + 1)), [f"i{i}" for i in range(n_img)])
    cats = CategoryTable.from_lists(cat_ids.tolist(), ["a", "b", "c", "d"])
    gt_img = rng.integers(0, n_img - 4, 140)
    xy = rng.uniform(0, 300, (gt_img.size, 2))
    gt_boxes = np.hstack((xy, xy + rng.uniform(10, 90, (gt_img.size, 2))))
    gt_cls = rng.choice(cat_ids[1:], gt_img.size)  # class 7 has no ground truth
    picks = rng.integers(0, gt_img.size, 220)
    scale = (gt_boxes[picks, 2:] - gt_boxes[picks, :2]).repeat(2, axis=1)
    pred_boxes = gt_boxes[picks] + rng.normal(0, 0.12, (picks.size, 4)) * scale
    pred_cls = np.where(rng.random(picks.size) < 0.8, gt_cls[picks], rng.choice(cat_ids, 220))
    pred_img = np.where(rng.random(picks.size) < 0.05, n_img - 1, gt_img[picks])
    keep = (pred_cls != 5) & (pred_img != 2)  # class 5 and image 2 have no predictions
    pred_boxes, pred_cls, pred_img = pred_boxes[keep], pred_cls[keep], pred_img[keep]
    if grid:
        gt_boxes, pred_boxes = np.round(gt_boxes / grid) * grid, np.round(pred_boxes / grid) * grid
        gt_boxes[:, 2:] = np.maximum(gt_boxes[:, 2:], gt_boxes[:, :2] + grid)
        dup = rng.random(gt_img.size) < 0.2
        gt_boxes = np.vstack((gt_boxes, gt_boxes[dup]))
        gt_img = np.concatenate((gt_img, gt_img[dup]))
        gt_cls = np.concatenate((gt_cls, rng.choice(cat_ids[1:], int(dup.sum()))))
    pred_boxes[:, 2:] = np.maximum(pred_boxes[:, 2:], pred_boxes[:, :2] + max(grid, 1.0))
    scores = 0.001 + 0.998 * rng.permutation(pred_cls.size) / pred_cls.size  # no ties
    gt = Dataset.from_arrays(images, cats, boxes=gt_boxes, image_index=gt_img, category_id=gt_cls)
    pred = Dataset.from_arrays(
        images, cats, boxes=pred_boxes, image_index=pred_img, category_id=pred_cls, scores=scores
    )
    return gt, pred


def _images(gt: Dataset, pred: Dataset) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    ids = np.sort(gt.categories.ids)
    scores = np.asarray(pred.scores)
    out = []
    for i in range(len(gt.images)):
        g = np.flatnonzero(gt.image_index == i)
        p = np.flatnonzero(pred.image_index == i)
        p = p[np.argsort(-scores[p], kind="stable")]
        batch = {
            "bboxes": torch.tensor(gt.boxes[g], dtype=torch.float32).reshape(-1, 4),
            "cls": torch.tensor(np.searchsorted(ids, gt.category_id[g]), dtype=torch.float32),
            "im_file": f"{i}.jpg",
        }
        preds = {
            "bboxes": torch.tensor(pred.boxes[p], dtype=torch.float32).reshape(-1, 4),
            "conf": torch.tensor(scores[p], dtype=torch.float32),  # as a model outputs
            "cls": torch.tensor(np.searchsorted(ids, pred.category_id[p]), dtype=torch.float32),
        }
        out.append((batch, preds))
    return out


def _ultralytics_metrics(gt: Dataset, pred: Dataset) -> Any:
    """Ultralytics' own yolo val path: validator matching, then DetMetrics."""
    validator = DetectionValidator.__new__(DetectionValidator)  # only iouv/niou are used
    validator.iouv = torch.linspace(0.5, 0.95, 10)
    validator.niou = 10
    metrics = DetMetrics(names={k: str(k) for k in range(len(gt.categories))})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for batch, preds in _images(gt, pred):
            cls = batch["cls"].numpy()
            metrics.update_stats(
                {
                    **validator._process_batch(preds, batch),
                    "target_cls": cls,
                    "target_img": np.unique(cls),
                    "conf": preds["conf"].numpy(),
                    "pred_cls": preds["cls"].numpy(),
                    "im_name": batch["im_file"],
                }
            )
        metrics.process()
    return metrics


@pytest.mark.parametrize("grid", [0.0, 10.0])
def test_yolo_val_equals_ultralytics(grid: float) -> None:
    gt, pred = _case(0, grid=grid)
    metrics = _ultralytics_metrics(gt, pred)
    box = metrics.box
    result = evaluate_yolo(gt, pred)
    theirs = [box.mp, box.mr, box.map50, box.map, metrics.fitness]
    mine = [result.stats[k] for k in ("precision", "recall", "mAP50", "mAP50-95", "fitness")]
    print("ultralytics", theirs, "\nioukit     ", mine)
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)
    rows = np.flatnonzero([row["num_gt"] > 0 for row in result.per_class])
    np.testing.assert_array_equal(rows, box.ap_class_index)
    np.testing.assert_allclose(result.arrays["AP"][rows], box.all_ap, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.arrays["p_curve"][rows], box.p_curve, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.arrays["r_curve"][rows], box.r_curve, rtol=0, atol=1e-12)


@pytest.mark.parametrize("grid", [0.0, 10.0])
@pytest.mark.parametrize(("conf", "iou"), [(0.25, 0.45), (0.001, 0.5), (0.1, 0.6)])
def test_confusion_matrix_equals_ultralytics(grid: float, conf: float, iou: float) -> None:
    gt, pred = _case(1, grid=grid)
    cm = ConfusionMatrix(names={k: str(k) for k in range(len(gt.categories))})
    for batch, preds in _images(gt, pred):
        cm.process_batch(preds, batch, conf=conf, iou_thres=iou)
    mine = confusion_matrix(gt, pred, iou_threshold=iou, score_threshold=conf)
    np.testing.assert_array_equal(mine.matrix, cm.matrix.astype(np.int64))


# ------------------------------------------------------------------ #17: float32 and tied scores


def _edge_case(seed: int) -> tuple[Dataset, Dataset]:
    """Images holding the three float32 edge cases of #17 (tiny boxes where ``+ 1e-7`` vanishes,
    two ground truths equal only in float32, an IoU that float32 rounds across 0.5) next to
    ordinary boxes, with scores on a 1/32 grid (many ties)."""
    rng = np.random.default_rng(seed)
    n_img = 30
    images = ImageTable.from_lists(list(range(1, n_img + 1)), [f"i{i}" for i in range(n_img)])
    cats = CategoryTable.from_lists([0, 1], ["a", "b"])
    gt_b: list[list[float]] = []
    gt_i: list[int] = []
    pr_b: list[list[float]] = []
    pr_i: list[int] = []
    for i in range(n_img):
        kind = i % 4
        if kind == 0:  # tiny boxes at integer offsets: IoU 0.5 exactly in float32
            x, y = float(rng.integers(0, 500)), float(rng.integers(0, 500))
            gt_b.append([x, y, x + 1, y + 2])
            pr_b.append([x, y, x + 1, y + 1])
        elif kind == 1:  # equal only in float32: the first ground truth wins
            gt_b += [[196, 171, 621, 459], [262, 188, 651, 524]]
            gt_i.append(i)
            pr_b += [[214, 182, 672, 487], [262, 188, 651, 524]]
            pr_i.append(i)
        elif kind == 2:  # exact IoU 0.4999999999999998, 0.50000006 in float32
            gt_b.append([236.11, 241.9, 477.91, 448.0])
            pr_b.append([236.11, 241.9, 357.01, 448.0])
        else:  # ordinary boxes and a duplicate
            xy = rng.uniform(0, 300, 2)
            box = [*xy, *(xy + rng.uniform(20, 80, 2))]
            gt_b.append(box)
            pr_b += [box, [box[0] + 2, box[1], box[2] + 2, box[3]]]
            pr_i.append(i)
        gt_i.append(i)
        pr_i.append(i)
    gt_c = rng.integers(0, 2, len(gt_b))
    pr_c = np.where(rng.random(len(pr_b)) < 0.85, 0, 1)
    gt_c[:] = 0
    scores = np.ceil(rng.random(len(pr_b)) * 32) / 32  # ties
    gt = Dataset.from_arrays(images, cats, boxes=gt_b, image_index=gt_i, category_id=gt_c)
    pred = Dataset.from_arrays(
        images, cats, boxes=pr_b, image_index=pr_i, category_id=pr_c, scores=scores
    )
    return gt, pred


@pytest.mark.parametrize("seed", [0, 1])
def test_float32_edge_cases_and_tied_scores_equal_ultralytics(seed: int) -> None:
    gt, pred = _edge_case(seed)
    metrics = _ultralytics_metrics(gt, pred)
    box = metrics.box
    result = evaluate_yolo(gt, pred)
    theirs = [box.mp, box.mr, box.map50, box.map]
    mine = [result.stats[k] for k in ("precision", "recall", "mAP50", "mAP50-95")]
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_per_image_confusion_matrices_equal_ultralytics(seed: int) -> None:
    """Per image, so that errors of opposite sign cannot cancel in the summed matrix."""
    from ioukit.evaluation.grouping import subset_rows

    gt, pred = _edge_case(seed)
    for i, (batch, preds) in enumerate(_images(gt, pred)):
        cm = ConfusionMatrix(names={k: str(k) for k in range(len(gt.categories))})
        cm.process_batch(preds, batch, conf=0.25, iou_thres=0.45)
        g = subset_rows(gt, np.flatnonzero(gt.image_index == i))
        p = subset_rows(pred, np.flatnonzero(pred.image_index == i))
        mine = confusion_matrix(g, p, iou_threshold=0.45, score_threshold=0.25)
        np.testing.assert_array_equal(mine.matrix, cm.matrix.astype(np.int64), err_msg=str(i))
