"""Numba kernels that match predictions to ground truth, one (image, class) group at a time.

Two rules (``RULE_COCO``, ``RULE_VOC``), written once in :func:`_match_one` and used by

- :func:`match_group`: one group with a precomputed ``iou[pred, gt]`` matrix;
- :func:`match_dataset`: a whole dataset, IoU computed on the fly per (pred, gt) pair.

Inputs are contiguous NumPy arrays already sorted by the caller: predictions by group, then
descending score (stable); ground truths by group, then ignored-last (stable) for the COCO
rule. Outputs are allocated by the caller: ``matched`` (T, P) int64 (gt position or -1) and
``ignored`` (T, P) bool (the prediction matched an ignored/difficult ground truth).

Rules (REFERENCE 3.4):

COCO
    For each prediction and threshold ``t`` (used as ``min(t, 1 - 1e-10)``): walk the group's
    ground truths in order; skip one already taken unless it is a crowd; stop at the first
    ignored one once a regular one is held; skip ``iou < best``; otherwise hold it and raise
    ``best`` to its IoU (so among equal IoUs the last wins, as in pycocotools).
VOC
    The prediction goes to the ground truth with the highest IoU in the group (first one on
    ties, as ``argmax``); below the threshold, or already taken, it is a false positive (no
    fallback); a difficult one makes it neither TP nor FP.

``strict`` makes the threshold test exclusive (``iou > t``, py-faster-rcnn / Ultralytics
confusion matrix) instead of inclusive (``iou >= t``).

The plain-Python twins :func:`match_group_py` and :func:`match_dataset_py` are the test oracles.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

RULE_COCO, RULE_VOC = 0, 1
RULE_CODES = {"coco": RULE_COCO, "voc": RULE_VOC}
COCO_MAX_THRESHOLD = 1.0 - 1e-10

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}


@njit(**_OPTIONS)
def _match_one(row, start, stop, gt_ignore, gt_crowd, taken_t, threshold, rule, strict):  # type: ignore[no-untyped-def]
    """Position of the gt matched by one prediction at one threshold, or -1.

    ``row[g]`` is the IoU with gt ``g`` for ``start <= g < stop``; ``taken_t`` is the
    threshold's taken-flags row (updated here for a TP-style take).
    """
    if rule == RULE_VOC:
        best = -1.0
        m = -1
        for g in range(start, stop):
            if row[g] > best:
                best = row[g]
                m = g
        if m < 0:
            return -1
        if strict:
            if best <= threshold:
                return -1
        elif best < threshold:
            return -1
        if gt_ignore[m]:
            return m
        if taken_t[m]:
            return -1
        taken_t[m] = True
        return m
    best = min(threshold, COCO_MAX_THRESHOLD)
    m = -1
    for g in range(start, stop):
        if taken_t[g] and not gt_crowd[g]:
            continue
        if m > -1 and not gt_ignore[m] and gt_ignore[g]:
            break
        if row[g] < best:
            continue
        if strict and row[g] <= threshold:
            continue
        best = row[g]
        m = g
    if m > -1:
        taken_t[m] = True
    return m


@njit(**_OPTIONS)
def match_group(iou, gt_ignore, gt_crowd, thresholds, rule, strict, matched, ignored, taken):  # type: ignore[no-untyped-def]
    """Match one group. ``iou`` (P, G) in sorted prediction order; ``taken`` (T, G) zeros."""
    num_pred = iou.shape[0]
    num_gt = iou.shape[1]
    for p in range(num_pred):
        for t in range(thresholds.shape[0]):
            m = _match_one(
                iou[p], 0, num_gt, gt_ignore, gt_crowd, taken[t], thresholds[t], rule, strict
            )
            matched[t, p] = m
            ignored[t, p] = m > -1 and gt_ignore[m]


@njit(**_OPTIONS)
def _pair_iou(a, b, crowd, plus1, eps):  # type: ignore[no-untyped-def]
    w = min(a[2], b[2]) - max(a[0], b[0]) + plus1
    h = min(a[3], b[3]) - max(a[1], b[1]) + plus1
    if w <= 0.0 or h <= 0.0:
        return 0.0
    inter = w * h
    area_a = (a[2] - a[0] + plus1) * (a[3] - a[1] + plus1)
    if crowd:
        denominator = area_a + eps
    else:
        denominator = area_a + (b[2] - b[0] + plus1) * (b[3] - b[1] + plus1) - inter + eps
    if denominator <= 0.0:
        return 0.0
    return inter / denominator


@njit(**_OPTIONS)
def match_dataset(  # type: ignore[no-untyped-def]
    pred_boxes,
    pred_gt_start,
    pred_gt_stop,
    gt_boxes,
    gt_ignore,
    gt_crowd,
    thresholds,
    rule,
    strict,
    plus1,
    eps,
    matched,
    ignored,
    taken,
    row,
):
    """Match every prediction of a dataset.

    Prediction ``p`` (sorted) belongs to the group whose ground truths are
    ``gt_*[pred_gt_start[p]:pred_gt_stop[p]]`` (sorted). ``taken`` (T, G) and ``row`` (G,)
    are caller-allocated scratch. Crowd IoU is intersection over the prediction's area.
    """
    for p in range(pred_boxes.shape[0]):
        start = pred_gt_start[p]
        stop = pred_gt_stop[p]
        for g in range(start, stop):
            row[g] = _pair_iou(pred_boxes[p], gt_boxes[g], gt_crowd[g], plus1, eps)
        for t in range(thresholds.shape[0]):
            m = _match_one(
                row, start, stop, gt_ignore, gt_crowd, taken[t], thresholds[t], rule, strict
            )
            matched[t, p] = m
            ignored[t, p] = m > -1 and gt_ignore[m]


# ----------------------------------------------------------------------------- Python twins


def _match_one_py(
    row: list[float],
    start: int,
    stop: int,
    gt_ignore: list[bool],
    gt_crowd: list[bool],
    taken_t: list[bool],
    threshold: float,
    rule: int,
    strict: bool,
) -> int:
    if rule == RULE_VOC:
        candidates = list(range(start, stop))
        if not candidates:
            return -1
        m = max(candidates, key=lambda g: (row[g], -g))
        passed = row[m] > threshold if strict else row[m] >= threshold
        if not passed:
            return -1
        if gt_ignore[m]:
            return m
        if taken_t[m]:
            return -1
        taken_t[m] = True
        return m
    best, m = min(threshold, COCO_MAX_THRESHOLD), -1
    for g in range(start, stop):
        if taken_t[g] and not gt_crowd[g]:
            continue
        if m > -1 and not gt_ignore[m] and gt_ignore[g]:
            break
        if row[g] < best or (strict and row[g] <= threshold):
            continue
        best, m = row[g], g
    if m > -1:
        taken_t[m] = True
    return m


def match_group_py(
    iou: np.ndarray,
    gt_ignore: np.ndarray,
    gt_crowd: np.ndarray,
    thresholds: np.ndarray,
    rule: int,
    strict: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python twin of :func:`match_group`; returns ``(matched, ignored)``."""
    num_pred, num_gt = iou.shape
    ign, crowd = [bool(x) for x in gt_ignore], [bool(x) for x in gt_crowd]
    matched = np.full((len(thresholds), num_pred), -1, dtype=np.int64)
    ignored = np.zeros((len(thresholds), num_pred), dtype=bool)
    taken = [[False] * num_gt for _ in thresholds]
    for p in range(num_pred):
        row = [float(v) for v in iou[p]]
        for t, threshold in enumerate(thresholds):
            m = _match_one_py(row, 0, num_gt, ign, crowd, taken[t], float(threshold), rule, strict)
            matched[t, p] = m
            ignored[t, p] = m > -1 and ign[m]
    return matched, ignored


def _pair_iou_py(a: list[float], b: list[float], crowd: bool, plus1: float, eps: float) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0]) + plus1
    h = min(a[3], b[3]) - max(a[1], b[1]) + plus1
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    area_a = (a[2] - a[0] + plus1) * (a[3] - a[1] + plus1)
    area_b = (b[2] - b[0] + plus1) * (b[3] - b[1] + plus1)
    denominator = area_a + eps if crowd else area_a + area_b - inter + eps
    return 0.0 if denominator <= 0 else inter / denominator


def match_dataset_py(
    pred_boxes: np.ndarray,
    pred_gt_start: np.ndarray,
    pred_gt_stop: np.ndarray,
    gt_boxes: np.ndarray,
    gt_ignore: np.ndarray,
    gt_crowd: np.ndarray,
    thresholds: np.ndarray,
    rule: int,
    strict: bool,
    plus1: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python twin of :func:`match_dataset`; returns ``(matched, ignored)``."""
    num_gt = gt_boxes.shape[0]
    ign, crowd = [bool(x) for x in gt_ignore], [bool(x) for x in gt_crowd]
    gts = gt_boxes.tolist()
    matched = np.full((len(thresholds), pred_boxes.shape[0]), -1, dtype=np.int64)
    ignored = np.zeros(matched.shape, dtype=bool)
    taken = [[False] * num_gt for _ in thresholds]
    row = [0.0] * num_gt
    for p, box in enumerate(pred_boxes.tolist()):
        start, stop = int(pred_gt_start[p]), int(pred_gt_stop[p])
        for g in range(start, stop):
            row[g] = _pair_iou_py(box, gts[g], crowd[g], plus1, eps)
        for t, threshold in enumerate(thresholds):
            m = _match_one_py(
                row, start, stop, ign, crowd, taken[t], float(threshold), rule, strict
            )
            matched[t, p] = m
            ignored[t, p] = m > -1 and ign[m]
    return matched, ignored


# ------------------------------------------------------------------ confusion-matrix matching


@njit(**_OPTIONS)
def confusion_match(  # type: ignore[no-untyped-def]
    pred_boxes, pred_gt_start, pred_gt_stop, gt_boxes, threshold, eps, pred_match, pred_iou, gt_pred
):
    """Ultralytics ``ConfusionMatrix.process_batch`` matching, class-agnostic, per image.

    Candidates are pairs with ``IoU > threshold``. Each prediction keeps its highest-IoU
    candidate; then each ground truth keeps, among the predictions that kept it, the one of
    highest IoU (ties: first index at both steps). ``pred_match`` (P,) receives the gt position
    or -1; ``pred_iou`` (P,) and ``gt_pred`` (G,) are scratch (``gt_pred`` filled with -1).
    """
    for p in range(pred_boxes.shape[0]):
        best = -1.0
        m = -1
        for g in range(pred_gt_start[p], pred_gt_stop[p]):
            value = _pair_iou(pred_boxes[p], gt_boxes[g], False, 0.0, eps)
            if value > threshold and value > best:
                best = value
                m = g
        pred_match[p] = m
        pred_iou[p] = best
    for p in range(pred_boxes.shape[0]):
        m = pred_match[p]
        if m >= 0 and (gt_pred[m] < 0 or pred_iou[p] > pred_iou[gt_pred[m]]):
            gt_pred[m] = p
    for p in range(pred_boxes.shape[0]):
        m = pred_match[p]
        if m >= 0 and gt_pred[m] != p:
            pred_match[p] = -1


def confusion_match_py(
    pred_boxes: np.ndarray,
    pred_gt_start: np.ndarray,
    pred_gt_stop: np.ndarray,
    gt_boxes: np.ndarray,
    threshold: float,
    eps: float,
) -> np.ndarray:
    """Plain-Python twin of :func:`confusion_match`; returns ``pred_match``."""
    gts = gt_boxes.tolist()
    choice: list[tuple[int, float]] = []
    for p, box in enumerate(pred_boxes.tolist()):
        best, m = -1.0, -1
        for g in range(int(pred_gt_start[p]), int(pred_gt_stop[p])):
            value = _pair_iou_py(box, gts[g], False, 0.0, eps)
            if value > threshold and value > best:
                best, m = value, g
        choice.append((m, best))
    winner: dict[int, int] = {}
    for p, (m, value) in enumerate(choice):
        if m >= 0 and (m not in winner or value > choice[winner[m]][1]):
            winner[m] = p
    return np.array(
        [m if m >= 0 and winner[m] == p else -1 for p, (m, _) in enumerate(choice)], dtype=np.int64
    )
