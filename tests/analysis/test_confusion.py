"""Confusion matrix against per-image NumPy transcriptions of Ultralytics' process_batch.

``_oracle_legacy``: Ultralytics 8.0 - 8.3 (``matching="iou"``); ``_oracle_84``: 8.4
(``matching="confidence"``, the default). tests/evaluation/protocols/test_ultralytics_parity.py
runs the real
Ultralytics where it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from ioukit.analysis.confusion import ConfusionMatrix, confusion_matrix
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import ParameterError
from ioukit.synthetic import make_detections, to_datasets


def _random(seed: int) -> tuple[Dataset, Dataset]:
    return to_datasets(
        *make_detections(
            30,
            3,
            gt_per_image=2.7,
            fp_per_image=2.0,
            crowd_fraction=0.0,
            category_ids=[4, 2, 6],
            class_names=["a", "b", "c"],
            score_decimals=12,
            seed=seed,
        )
    )


def _oracle_legacy(gt: Dataset, pred: Dataset, iou_thres: float, conf: float) -> np.ndarray:
    ids = np.sort(gt.categories.ids)
    nc = ids.size
    matrix = np.zeros((nc + 1, nc + 1), dtype=np.int64)
    for i in range(len(gt.images)):
        g = np.flatnonzero(gt.image_index == i)
        p = np.flatnonzero((pred.image_index == i) & (pred.scores > conf))  # type: ignore[operator]
        gc = np.searchsorted(ids, gt.category_id[g])
        dc = np.searchsorted(ids, pred.category_id[p])
        if not g.size:
            for c in dc:
                matrix[c, nc] += 1
            continue
        if not p.size:
            for c in gc:
                matrix[nc, c] += 1
            continue
        a, b = gt.boxes[g], pred.boxes[p]
        lt = np.maximum(a[:, None, :2], b[None, :, :2])
        rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
        inter = np.clip(rb - lt, 0, None).prod(2)
        iou = inter / (
            (a[:, 2:] - a[:, :2]).prod(1)[:, None] + (b[:, 2:] - b[:, :2]).prod(1) - inter + 1e-7
        )
        x = np.nonzero(iou > iou_thres)
        matches = np.stack((x[0], x[1], iou[x]), 1) if x[0].size else np.zeros((0, 3))
        if matches.shape[0] > 1:
            matches = matches[matches[:, 2].argsort()[::-1]]
            matches = matches[np.unique(matches[:, 1], return_index=True)[1]]
            matches = matches[matches[:, 2].argsort()[::-1]]
            matches = matches[np.unique(matches[:, 0], return_index=True)[1]]
        m0, m1 = matches[:, 0].astype(int), matches[:, 1].astype(int)
        for gi, c in enumerate(gc):
            hit = np.flatnonzero(m0 == gi)
            if hit.size:
                matrix[dc[m1[hit[0]]], c] += 1
            else:
                matrix[nc, c] += 1
        for di, c in enumerate(dc):
            if di not in set(m1.tolist()):
                matrix[c, nc] += 1
    return matrix


def _oracle_84(gt: Dataset, pred: Dataset, iou_thres: float, conf: float) -> np.ndarray:
    """Ultralytics 8.4: detections in descending confidence claim their best unclaimed gt."""
    ids = np.sort(gt.categories.ids)
    nc = ids.size
    matrix = np.zeros((nc + 1, nc + 1), dtype=np.int64)
    scores = np.asarray(pred.scores)
    for i in range(len(gt.images)):
        g = np.flatnonzero(gt.image_index == i)
        p = np.flatnonzero((pred.image_index == i) & (scores > conf))
        gc = np.searchsorted(ids, gt.category_id[g])
        dc = np.searchsorted(ids, pred.category_id[p])
        a, b = gt.boxes[g], pred.boxes[p]
        lt = np.maximum(a[:, None, :2], b[None, :, :2])
        rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
        inter = np.clip(rb - lt, 0, None).prod(2)
        area_a, area_b = (a[:, 2:] - a[:, :2]).prod(1), (b[:, 2:] - b[:, :2]).prod(1)
        iou = (inter / (area_a[:, None] + area_b - inter + 1e-7)).astype(np.float32)
        gt_match = np.full(g.size, -1)
        for d in np.argsort(-scores[p], kind="stable").tolist():
            if not g.size:
                break
            best = int(iou[:, d].argmax())
            if iou[best, d] > np.float32(iou_thres):
                gt_match[best] = d
                iou[best] = 0
        for gi, c in enumerate(gc.tolist()):
            matrix[dc[gt_match[gi]] if gt_match[gi] >= 0 else nc, c] += 1
        matched = set(gt_match[gt_match >= 0].tolist())
        for di, c in enumerate(dc.tolist()):
            if di not in matched:
                matrix[c, nc] += 1
    return matrix


@pytest.mark.parametrize("matching", ["confidence", "iou"])
@pytest.mark.parametrize(("seed", "iou", "conf"), [(0, 0.45, 0.25), (1, 0.3, 0.0), (2, 0.6, 0.5)])
def test_against_ultralytics_transcription(
    seed: int, iou: float, conf: float, matching: str
) -> None:
    gt, pred = _random(seed)
    cm = confusion_matrix(gt, pred, iou_threshold=iou, score_threshold=conf, matching=matching)
    oracle = _oracle_84 if matching == "confidence" else _oracle_legacy
    np.testing.assert_array_equal(cm.matrix, oracle(gt, pred, iou, conf))
    assert cm.labels == ("b", "a", "c", "background")
    assert cm.matrix[-1, -1] == 0
    # every kept prediction is counted once (row sums), every gt once (column sums)
    kept = int((pred.scores > conf).sum())  # type: ignore[operator]
    assert cm.matrix[:, :].sum() - cm.matrix[-1, :].sum() == kept
    assert cm.matrix.sum() - cm.matrix[:, -1].sum() == len(gt)
    assert (
        cm.tp + cm.fn == np.bincount(np.searchsorted([2, 4, 6], gt.category_id), minlength=3)
    ).all()


def test_confidence_matching_and_thresholds() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([0], ["x"])
    gt = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 10, 10], [0, 0, 10, 9]], image_index=[0, 0], category_id=[0, 0]
    )
    # prediction A (low score) fits gt 0 best; prediction B (high score) fits gt 1 best, gt 0 too
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=[[0, 0, 10, 10], [0, 0, 10, 9.2]],
        image_index=[0, 0],
        category_id=[0, 0],
        scores=[0.5, 0.9],
    )
    assert confusion_matrix(gt, pred).matrix.tolist() == [[2, 0], [0, 0]]
    assert confusion_matrix(gt, pred, matching="confidence").matrix.tolist() == [[2, 0], [0, 0]]
    # strict score threshold: a score equal to the threshold does not count
    assert confusion_matrix(gt, pred, score_threshold=0.9).matrix.tolist() == [[0, 0], [2, 0]]
    # strict IoU threshold: IoU exactly 0.9 does not match at 0.9
    assert confusion_matrix(gt, pred, iou_threshold=0.99).matrix[-1, 0] >= 1


def test_to_text_and_errors() -> None:
    gt, pred = _random(3)
    cm = confusion_matrix(gt, pred)
    assert isinstance(cm, ConfusionMatrix)
    text = cm.to_text()
    assert text.splitlines()[0].startswith("pred \\ true") and "background" in text
    assert len(text.splitlines()) == 5
    with pytest.raises(ParameterError, match="matching"):
        confusion_matrix(gt, pred, matching="hungarian")
    with pytest.raises(ParameterError, match="score_threshold"):
        confusion_matrix(gt, pred, score_threshold=-0.1)
