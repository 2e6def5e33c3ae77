"""Greedy matching of predictions to ground truth in one (image, class) group.

The pipeline's one matcher (:func:`ioukit.evaluation.match.match_groups`, compiled) on a single
group whose IoU matrix the caller provides.

:func:`match_predictions` takes the IoU matrix ``iou[pred, gt]`` of one group and returns,
per IoU threshold and per prediction, whether it is a true positive, a false positive or
ignored, and the *index* of the ground truth it matched (never an annotation id, so a ground
truth with id 0 matches like any other).

Rules
-----
``"coco"`` (pycocotools ``evaluateImg``)
    Predictions in descending score (stable: equal scores keep their input order); each takes
    the best still-unmatched ground truth with ``IoU >= t`` (``t`` capped at ``1 - 1e-10``);
    ignored and crowd ground truths are tried last (stable); a crowd absorbs any number of
    predictions, which, like those matched to any ignored ground truth, count as neither TP
    nor FP. Among equal IoUs the last ground truth in that order wins, as in pycocotools.
    (Crowd IoU is intersection / prediction area: the caller builds ``iou`` that way.)
``"voc"`` (VOC devkit ``VOCevaldet.m``)
    Each prediction goes to the ground truth with the highest IoU in the group (first on
    ties); if that one is below the threshold or already taken, the prediction is a false
    positive (no fallback to the second best); a difficult one makes it neither TP nor FP.
    ``IoU >= t`` as in the devkit; ``strict_threshold=True`` gives py-faster-rcnn's ``>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ioukit._kernels import match as kernels
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.match import TIE_RULES, MatchRule

__all__ = ["Matches", "match_predictions"]

_RULES = {
    "coco": MatchRule(tie="last", crowd=True, clamp=1.0 - 1e-10),
    "voc": MatchRule(tie="argmax", crowd=False, clamp=None),
}
"""The rules of the module docstring, as the pipeline's :class:`MatchRule` (``strict`` is
``match_predictions``' own option)."""


@dataclass(frozen=True, slots=True)
class Matches:
    """Result of :func:`match_predictions`, in the caller's prediction order.

    Attributes
    ----------
    tp, fp, ignored : ndarray of bool, shape (T, P)
        Exactly one of the three is True for every threshold and prediction.
    matched_gt : ndarray of int64, shape (T, P)
        Index (column of ``iou``) of the matched ground truth, -1 if none. Set for true
        positives and ignored matches; -1 for false positives.
    iou_thresholds : ndarray of float64, shape (T,)
    order : ndarray of int64, shape (P,)
        Predictions in descending score (stable): ``tp[:, order]`` is the cumulative-sum order.
    """

    tp: np.ndarray
    fp: np.ndarray
    ignored: np.ndarray
    matched_gt: np.ndarray
    iou_thresholds: np.ndarray
    order: np.ndarray


def _flags(value: object, length: int, name: str) -> np.ndarray:
    if value is None:
        return np.zeros(length, dtype=bool)
    flags = np.asarray(value)
    if flags.shape != (length,):
        raise DataFormatError(f"{name}: expected shape ({length},), got {flags.shape}")
    return np.ascontiguousarray(flags, dtype=bool)


def _thresholds(value: object) -> np.ndarray:
    thresholds = np.ascontiguousarray(value, dtype=np.float64).reshape(-1)
    if thresholds.size == 0 or not np.all(np.isfinite(thresholds)):
        raise ParameterError(
            f"iou_thresholds: expected one or more finite numbers, got {thresholds.tolist()}"
        )
    return thresholds


def match_predictions(
    iou: object,
    scores: object,
    /,
    *,
    iou_thresholds: Sequence[float] | np.ndarray = (0.5,),
    gt_crowd: object = None,
    gt_ignore: object = None,
    gt_difficult: object = None,
    rule: str = "coco",
    strict_threshold: bool = False,
) -> Matches:
    """Match the predictions of one (image, class) group to its ground truths.

    Parameters
    ----------
    iou : array_like, shape (P, G)
        ``iou[pred, gt]``; for a crowd ground truth, intersection over prediction area.
    scores : array_like, shape (P,)
        Prediction confidences; sorted internally, descending and stable.
    iou_thresholds : sequence of float, shape (T,), default (0.5,)
    gt_crowd, gt_ignore, gt_difficult : array_like of bool, shape (G,), optional
        Crowd regions, user-ignored and VOC-difficult ground truths. Under the ``"coco"``
        rule all three are ignored ground truths (a crowd also absorbs many predictions);
        under ``"voc"`` all three act as difficult.
    rule : {"coco", "voc"}
    strict_threshold : bool, default False
        ``IoU > t`` instead of ``IoU >= t``.

    Returns
    -------
    Matches
        ``tp``, ``fp``, ``ignored``, ``matched_gt`` of shape (T, P) in the caller's order.

    Raises
    ------
    ParameterError
        An unknown rule, no or non-finite thresholds.
    DataFormatError
        Shapes that do not agree.

    Examples
    --------
    >>> iou = np.array([[0.9, 0.0], [0.8, 0.1], [0.0, 0.6]])
    >>> m = match_predictions(iou, [0.9, 0.8, 0.7], iou_thresholds=[0.5, 0.75])
    >>> m.tp.astype(int)
    array([[1, 0, 1],
           [1, 0, 0]])
    >>> m.matched_gt
    array([[ 0, -1,  1],
           [ 0, -1, -1]])
    >>> match_predictions(np.zeros((0, 2)), []).tp.shape
    (1, 0)
    """
    matrix = np.ascontiguousarray(iou, dtype=np.float64)
    if matrix.ndim != 2:
        raise DataFormatError(f"iou: expected a (P, G) matrix, got shape {matrix.shape}")
    num_pred, num_gt = matrix.shape
    score = np.asarray(scores, dtype=np.float64).reshape(-1)
    if score.shape != (num_pred,):
        raise DataFormatError(
            f"scores: expected shape ({num_pred},) to match iou {matrix.shape}, got {score.shape}"
        )
    preset = _RULES.get(rule) if isinstance(rule, str) else None
    if preset is None:
        choices = " or ".join(repr(name) for name in _RULES)
        raise ParameterError(f"rule: expected {choices}, got {rule!r}")
    thresholds = _thresholds(iou_thresholds)
    ignore = (
        _flags(gt_crowd, num_gt, "gt_crowd")
        | _flags(gt_ignore, num_gt, "gt_ignore")
        | _flags(gt_difficult, num_gt, "gt_difficult")
    )
    crowd = _flags(gt_crowd, num_gt, "gt_crowd") if preset.crowd else np.zeros(num_gt, bool)

    # one group through the pipeline's matcher (ioukit.evaluation.match)
    order = np.argsort(-score, kind="stable")
    num_t = thresholds.size
    width = (num_t + 7) // 8
    ignored_bits = np.zeros((num_pred, width), dtype=np.uint8)
    matched = np.empty((num_pred, num_t), dtype=np.int64)  # every row dense (dense_row)
    zero = np.zeros(1, dtype=np.int64)
    kernels.match_groups(
        zero,
        np.array([num_gt], dtype=np.int64),
        zero,
        np.array([num_pred], dtype=np.int64),
        np.ascontiguousarray(matrix[order]).reshape(-1),
        zero,
        np.zeros(num_gt),
        ignore.view(np.uint8),
        crowd.view(np.uint8),
        np.zeros(num_gt, dtype=np.uint8),
        np.zeros(num_pred),
        thresholds if preset.clamp is None else np.minimum(thresholds, preset.clamp),
        np.array([-np.inf]),
        np.array([np.inf]),
        np.arange(num_pred, dtype=np.int64),
        np.arange(num_gt, dtype=np.int64),
        int(strict_threshold),
        TIE_RULES.index(preset.tie),
        zero,
        np.zeros((num_pred, width), dtype=np.uint8),
        ignored_bits,
        np.empty(num_pred, dtype=np.int32),
        np.empty(num_pred),
        np.zeros((num_pred, width), dtype=np.uint8),
        np.zeros(num_pred, dtype=np.uint8),
        np.arange(num_pred, dtype=np.int64),
        matched,
        np.empty((num_pred, num_t)),
    )
    matched_gt = np.empty((num_t, num_pred), dtype=np.int64)
    matched_gt[:, order] = matched.T
    is_ignored = np.empty((num_t, num_pred), dtype=bool)
    is_ignored[:, order] = np.unpackbits(ignored_bits, axis=1, count=num_t).astype(bool).T
    tp = (matched_gt >= 0) & ~is_ignored
    return Matches(
        tp=tp,
        fp=~tp & ~is_ignored,
        ignored=is_ignored,
        matched_gt=matched_gt,
        iou_thresholds=thresholds,
        order=order,
    )
