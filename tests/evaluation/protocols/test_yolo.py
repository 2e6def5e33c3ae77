"""Ultralytics protocol against an independent plain-NumPy transcription of its algorithm."""

from __future__ import annotations

import numpy as np
import pytest

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import ParameterError
from ioukit.evaluation.protocols.yolo import evaluate_yolo
from ioukit.synthetic import make_detections, to_datasets
from tests.twins import trapezoid

IOUV = np.linspace(0.5, 0.95, 10)


def _random(seed: int, images: int = 30, classes: int = 4) -> tuple[Dataset, Dataset]:
    # the last class has no labels
    gt, res = make_detections(
        images,
        classes,
        gt_per_image=3.0,
        fp_per_image=2.0,
        crowd_fraction=0.0,
        category_ids=[5, 2, 9, 7][:classes],
        classes_without_gt=1,
        score_decimals=12,
        seed=seed,
    )
    return to_datasets(gt, res)


def _ul_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.clip(rb - lt, 0, None).prod(2)
    area_a = (a[:, 2:] - a[:, :2]).prod(1)
    area_b = (b[:, 2:] - b[:, :2]).prod(1)
    return inter / (area_a[:, None] + area_b[None, :] - inter + 1e-7)


def _oracle(gt: Dataset, pred: Dataset) -> dict[str, float]:
    """Per image: class-aware greedy matching in confidence order, then ap_per_class."""
    tps, confs, pcls = [], [], []
    for i in range(len(gt.images)):
        g = np.flatnonzero(gt.image_index == i)
        p = np.flatnonzero(pred.image_index == i)
        p = p[np.argsort(-pred.scores[p], kind="stable")]  # type: ignore[index]
        correct = np.zeros((p.size, IOUV.size), dtype=bool)
        if g.size and p.size:
            iou = _ul_iou(pred.boxes[p], gt.boxes[g])
            iou = iou * (pred.category_id[p][:, None] == gt.category_id[g][None, :])
            for t, thr in enumerate(IOUV):
                taken = np.zeros(g.size, dtype=bool)
                for d in range(p.size):
                    cand = np.where(~taken & (iou[d] >= thr), iou[d], -1.0)
                    if cand.max() >= 0:
                        j = int(np.argmax(cand))
                        taken[j] = True
                        correct[d, t] = True
        tps.append(correct)
        confs.append(pred.scores[p].astype(np.float32))  # type: ignore[index]  # a model's conf
        pcls.append(pred.category_id[p])
    tp = np.concatenate(tps).astype(float)
    conf = np.concatenate(confs)
    pred_cls = np.concatenate(pcls)
    order = np.argsort(-conf)  # ap_per_class's own call
    tp, conf, pred_cls = tp[order], conf[order], pred_cls[order]
    classes, counts = np.unique(gt.category_id, return_counts=True)
    x = np.linspace(0, 1, 1000)
    ap = np.zeros((classes.size, IOUV.size))
    p_curve = np.zeros((classes.size, 1000))
    r_curve = np.zeros((classes.size, 1000))
    for ci, c in enumerate(classes):
        sel = pred_cls == c
        if not sel.any():
            continue
        tpc = tp[sel].cumsum(0)
        fpc = (1 - tp[sel]).cumsum(0)
        recall = tpc / (counts[ci] + 1e-16)
        precision = tpc / (tpc + fpc)
        r_curve[ci] = np.interp(-x, -conf[sel], recall[:, 0], left=0)
        p_curve[ci] = np.interp(-x, -conf[sel], precision[:, 0], left=1)
        for j in range(IOUV.size):
            mrec = np.concatenate(([0.0], recall[:, j], [recall[-1, j], 1.0]))
            mpre = np.concatenate(([1.0], precision[:, j], [0.0, 0.0]))
            mpre = np.flip(np.maximum.accumulate(np.flip(mpre)))
            grid = np.linspace(0, 1, 101)
            ap[ci, j] = trapezoid(np.interp(grid, mrec, mpre), grid)
    f1 = 2 * p_curve * r_curve / (p_curve + r_curve + 1e-16)
    mean = f1.mean(0)
    nf = round(len(mean) * 0.1 * 2) // 2 + 1
    padded = np.concatenate((np.ones(nf // 2) * mean[0], mean, np.ones(nf // 2) * mean[-1]))
    best = int(np.convolve(padded, np.ones(nf) / nf, mode="valid").argmax())
    return {
        "precision": float(p_curve[:, best].mean()),
        "recall": float(r_curve[:, best].mean()),
        "mAP50": float(ap[:, 0].mean()),
        "mAP50-95": float(ap.mean()),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_oracle(seed: int) -> None:
    gt, pred = _random(seed)
    got = evaluate_yolo(gt, pred).stats
    want = _oracle(gt, pred)
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-12), (key, got, want)
    assert got["fitness"] == got["mAP50-95"]


def test_golden_vector_ultralytics_ap() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([0], ["x"])
    gt_boxes = [[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]]
    far = [100, 100, 110, 110]
    pred_boxes = [gt_boxes[0], far, gt_boxes[1], far, gt_boxes[2]]  # TP, FP, TP, FP, TP
    gt = Dataset.from_arrays(images, cats, boxes=gt_boxes, image_index=[0] * 3, category_id=[0] * 3)
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=pred_boxes,
        image_index=[0] * 5,
        category_id=[0] * 5,
        scores=[0.9, 0.8, 0.7, 0.6, 0.5],
    )
    r = evaluate_yolo(gt, pred)
    assert r.stats["mAP50"] == pytest.approx(0.753, abs=1e-9)
    assert r.stats["mAP50-95"] == pytest.approx(0.753, abs=1e-9)
    assert r.per_class[0]["AP50"] == pytest.approx(0.753, abs=1e-9)


def test_classes_without_labels_and_crowds() -> None:
    gt, pred = _random(4)
    r = evaluate_yolo(gt, pred)
    last = r.per_class[-1]
    assert [row["category_id"] for row in r.per_class] == sorted(
        row["category_id"] for row in r.per_class
    )
    no_label = [row for row in r.per_class if row["num_gt"] == 0]
    assert no_label and all(row["AP50-95"] == -1.0 for row in no_label)
    assert last["num_pred"] >= 0
    # crowds are dropped: marking every gt crowd gives no labels at all
    crowd = Dataset.from_arrays(
        gt.images,
        gt.categories,
        boxes=gt.boxes,
        image_index=gt.image_index,
        category_id=gt.category_id,
        crowd=np.ones(len(gt), dtype=bool),
    )
    assert evaluate_yolo(crowd, pred).stats["mAP50"] == 0.0


def test_custom_thresholds_and_errors() -> None:
    gt, pred = _random(5)
    r = evaluate_yolo(gt, pred, iou_thresholds=[0.3, 0.6])
    assert r.stats["mAP50"] == -1.0 and r.arrays["AP"].shape[1] == 2
    with pytest.raises(ParameterError, match="iou_thresholds"):
        evaluate_yolo(gt, pred, iou_thresholds=[1.5])


def _one_image(
    gt_boxes: list[list[float]], pred_boxes: list[list[float]]
) -> tuple[Dataset, Dataset]:
    img = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([0], ["x"])
    gt = Dataset.from_arrays(
        img, cats, boxes=gt_boxes, image_index=[0] * len(gt_boxes), category_id=[0] * len(gt_boxes)
    )
    scores = np.linspace(0.9, 0.5, len(pred_boxes))
    pred = Dataset.from_arrays(
        img,
        cats,
        boxes=pred_boxes,
        image_index=[0] * len(pred_boxes),
        category_id=[0] * len(pred_boxes),
        scores=scores,
    )
    return gt, pred


def test_float32_thresholds_like_ultralytics() -> None:
    from ioukit.evaluation.protocols.yolo import float32_threshold, match_yolo

    # IoU exactly 11/20 = 0.55: float32(0.55) > 0.55, but Ultralytics' float32 IoU rounds to it
    gt, pred = _one_image([[0, 0, 20, 10]], [[0, 0, 11, 10]])
    assert match_yolo(gt, pred, IOUV).tp[:, 0].tolist() == [True, True] + [False] * 8
    # and IoU exactly 0.5 passes 0.5 although union + 1e-7 is used in float64
    gt, pred = _one_image([[0, 0, 20, 10]], [[0, 0, 10, 10]])
    assert match_yolo(gt, pred, IOUV).tp[:, 0].tolist() == [True] + [False] * 9
    low = float32_threshold(np.array([0.45]), strict=False)[0]
    high = float32_threshold(np.array([0.45]), strict=True)[0]
    assert low < 0.45 < high and np.float32(low + 1e-12) == np.float32(0.45)


def test_iou_ties_go_to_the_first_ground_truth() -> None:
    from ioukit.evaluation.protocols.yolo import match_yolo

    # A (higher score) has IoU 1/3 with both ground truths and takes the first one (argmax);
    # B equals the first ground truth, finds it taken, and is a false positive.
    gt, pred = _one_image([[0, 0, 10, 10], [10, 0, 20, 10]], [[5, 0, 15, 10], [0, 0, 10, 10]])
    matches = match_yolo(gt, pred, np.array([0.3]))
    assert matches.matched.tolist() == [[0, -1]]
    assert matches.tp.tolist() == [[True, False]]
