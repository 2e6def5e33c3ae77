"""Stage 4 of the pipeline: the ONE matcher, with its rules as explicit parameters.

Every protocol, the curves, the confusion matrix, the diagnostics and the plots match through
:func:`match_groups` (compiled kernel ``ioukit._kernels.match.match_groups``), and keep its
:class:`~ioukit.evaluation.outcome.MatchOutcome` instead of matching again.

:class:`MatchRule` names the rules that differ between references:

========================  =================  ================  ======================
rule                      COCO (pycocotools)  VOC devkit        Ultralytics
========================  =================  ================  ======================
``strict`` (``>``)        False (``>=``)      False (devkit)    False
``tie``                   ``"last"``          ``"argmax"``      ``"first"``
``crowd``                 True                False             False
``clamp``                 ``1 - 1e-10``       None              None
========================  =================  ================  ======================

``"last"``/``"first"``: greedy in descending score, each prediction takes the best still-free
ground truth (a crowd one stays free), regular ground truths before ignored ones, the last
(pycocotools) or first (NumPy ``argmax``) of equal IoUs. ``"argmax"``: the ground truth of
highest IoU whether free or not; taken or below the threshold is a false positive (no fallback).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit._kernels import match as kernels
from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation.groups import GroupMatrices, Groups, stable_key_order
from ioukit.evaluation.outcome import MatchOutcome

__all__ = ["TIE_RULES", "MatchRule", "match_groups"]

TIE_RULES = ("last", "first", "argmax")
"""Tie rules of :class:`MatchRule`, in the kernel's code order."""


@dataclass(frozen=True, slots=True)
class MatchRule:
    """How predictions take ground truths (see the module table).

    Parameters
    ----------
    strict : bool
        ``iou > t`` instead of ``iou >= t``.
    tie : {"last", "first", "argmax"}
    crowd : bool
        Crowd ground truths absorb any number of predictions (and are ignored).
    clamp : float or None
        Thresholds are used as ``min(t, clamp)`` (pycocotools: ``1 - 1e-10``).

    Examples
    --------
    >>> MatchRule(tie="first").tie
    'first'
    >>> MatchRule(tie="best")
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: tie: expected one of 'last', 'first', 'argmax', got 'best'
    """

    strict: bool = False
    tie: str = "last"
    crowd: bool = True
    clamp: float | None = 1.0 - 1e-10

    def __post_init__(self) -> None:
        if self.tie not in TIE_RULES:
            choices = ", ".join(repr(t) for t in TIE_RULES)
            raise ParameterError(f"tie: expected one of {choices}, got {self.tie!r}")


def _u8(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.bool_).view(np.uint8)


def match_groups(
    gt: Dataset,
    pred: Dataset,
    groups: Groups,
    matrices: GroupMatrices,
    /,
    *,
    thresholds: np.ndarray,
    rule: MatchRule,
    area_ranges: tuple[tuple[str, float, float], ...] = (("all", -np.inf, np.inf),),
    gt_ignore: np.ndarray | None = None,
    gt_never_matches: np.ndarray | None = None,
    gt_area: np.ndarray | None = None,
    pred_area: np.ndarray | None = None,
    carry: np.ndarray | None = None,
) -> MatchOutcome:
    """Match every group's first ``max_det`` predictions and keep the per-prediction outcome.

    Parameters
    ----------
    gt, pred : Dataset
    groups : Groups
    matrices : GroupMatrices
        The similarity of every group (``groups``' layout).
    thresholds : ndarray of float64, shape (T,)
    rule : MatchRule
    area_ranges : tuple of (name, low, high)
        Inclusive ground-truth area ranges; the first is the one ``matched_gt`` reports.
        A ground truth outside a range is ignored there; an unmatched prediction outside it
        is ignored there.
    gt_ignore : ndarray of bool, shape (len(gt),), optional
        Ground truths that are matched but not counted (crowd, ignore, difficult). Default
        ``gt.crowd | gt.ignore | gt.difficult``.
    gt_never_matches : ndarray of bool, shape (len(gt),), optional
        Matches to these count as unmatched (pycocotools' annotation-id-0 behaviour).
    gt_area, pred_area : ndarray of float64, optional
        Areas compared with ``area_ranges``; default the datasets' ``area`` columns.
    carry : ndarray of uint8, shape (A, T, G), optional
        One group only: the ground truths (group order) that the group's earlier predictions
        took at each area range and threshold; updated in place. A group too large for one
        similarity matrix is matched block by block of its predictions (descending score)
        with the numbers of one call (``ioukit.evaluation.grouping.match_records``).

    Returns
    -------
    MatchOutcome
        In accumulation order (class row, descending score, image id, rank in group).
    """

    if len(gt) >= 2**31:
        raise ParameterError(f"gt: expected fewer than 2**31 ground truths, got {len(gt)}")
    thresholds = np.ascontiguousarray(thresholds, dtype=np.float64).reshape(-1)
    used = thresholds if rule.clamp is None else np.minimum(thresholds, rule.clamp)
    names = tuple(a[0] for a in area_ranges)
    area_lo = np.array([a[1] for a in area_ranges], dtype=np.float64)
    area_hi = np.array([a[2] for a in area_ranges], dtype=np.float64)
    n_t, n_a = len(thresholds), len(area_ranges)
    ignore_all = gt.crowd | gt.ignore | gt.difficult if gt_ignore is None else gt_ignore
    g_rows = groups.gt_rows
    g_ignore = ignore_all[g_rows]
    g_crowd = gt.crowd[g_rows] if rule.crowd else np.zeros(len(g_rows), dtype=bool)
    g_never = (
        np.zeros(len(g_rows), dtype=bool) if gt_never_matches is None else gt_never_matches[g_rows]
    )
    g_area = np.ascontiguousarray((gt.area if gt_area is None else gt_area)[g_rows])
    p_area = np.ascontiguousarray(
        (pred.area if pred_area is None else pred_area)[groups.pred_rows], dtype=np.float64
    )
    n_k = len(groups.category_ids) if groups.use_cats else 1

    # accumulation order: class, then descending score; ties keep (image rank, rank in group)
    kept = groups.kept
    seq_cls = groups.pred_class[kept] if groups.use_cats else np.zeros(len(kept), dtype=np.int64)
    perm = stable_key_order((seq_cls, n_k), (groups.pred_dense[kept], groups.n_dense))
    seq, seq_cls = kept[perm], seq_cls[perm]
    del kept, perm
    slot = np.zeros(len(groups.pred_rows), dtype=np.int64)
    slot[seq] = np.arange(len(seq))

    # the kernel writes every row (each evaluated prediction has a slot); bits are only set
    n = len(seq)
    tp_bits = np.zeros((n, (n_a * n_t + 7) // 8), dtype=np.uint8)
    ign_bits = np.zeros((n, (n_a * n_t + 7) // 8), dtype=np.uint8)
    first_gt = np.empty(n, dtype=np.int32)  # ground-truth rows (< 2**31, checked above)
    first_iou = np.empty(n)
    same_bits = np.zeros((n, (n_t + 7) // 8), dtype=np.uint8)
    has_other = np.zeros(n, dtype=np.uint8)
    args = (
        groups.gt_start,
        groups.gt_end,
        groups.pred_start,
        groups.kept_count,
        matrices.values,
        matrices.offsets,
        g_area,
        _u8(g_ignore),
        _u8(g_crowd),
        _u8(g_never),
        p_area,
        np.ascontiguousarray(used),
        area_lo,
        area_hi,
        slot,
        g_rows,
        int(rule.strict),
        TIE_RULES.index(rule.tie),
    )
    outputs = (tp_bits, ign_bits, first_gt, first_iou, same_bits, has_other)
    none = np.zeros(0, dtype=np.int64)
    # only passed when given (a kernel built before ``carry`` still serves every other call)
    first_carry: dict[str, Any] = {} if carry is None else {"carry": carry}
    again: dict[str, Any] = {} if carry is None else {"carry": carry.copy()}  # state before
    kernels.match_groups(
        *args,
        np.arange(len(groups.gt_start), dtype=np.int64),
        *outputs,
        none,
        np.zeros((0, n_t), dtype=np.int64),
        np.zeros((0, n_t)),
        **first_carry,
    )
    # the rare predictions that take another ground truth at another threshold: match their
    # groups again, keeping those rows in full
    other_row = np.flatnonzero(has_other).astype(np.int64)
    other_gt = np.zeros((len(other_row), n_t), dtype=np.int64)
    other_iou = np.zeros((len(other_row), n_t))
    if len(other_row):
        position = seq[other_row]  # rows into groups.pred_rows
        group_of = np.searchsorted(groups.pred_start, position, side="right") - 1
        dense_row = np.full(n, -1, dtype=np.int64)
        dense_row[other_row] = np.arange(len(other_row))
        # the distinct groups, sorted (np.unique would import numpy.ma: ~20 ms of a process)
        group_of = np.sort(group_of)
        kernels.match_groups(
            *args,
            group_of[np.r_[True, group_of[1:] != group_of[:-1]]],
            *outputs,
            dense_row,
            other_gt,
            other_iou,
            **again,
        )
    del args, slot, has_other, p_area, g_crowd, g_never
    # the outcome's columns one at a time, those that need a temporary first, each temporary
    # freed before the next column (at 80 000 images a column is 11 MB and the peak of an
    # evaluation is here, when every column exists). First the regular ground truths one by
    # one (resampling and slices re-count them) and their counts per (class, area range)
    regular = ~g_ignore
    del g_ignore
    reg_rows = g_rows[regular]
    gt_image_id = gt.images.ids[gt.image_index[reg_rows]]
    if groups.use_cats:
        reg_k = groups.gt_class[regular].astype(np.int32, copy=False)
    else:
        reg_k = np.zeros(len(reg_rows), dtype=np.int32)
    reg_area = g_area[regular]
    del g_area, regular
    in_range = np.empty((len(reg_rows), n_a), dtype=bool)
    gt_count = np.zeros((n_k, n_a), dtype=np.int64)
    for a in range(n_a):
        inside = in_range[:, a]
        np.greater_equal(reg_area, area_lo[a], out=inside)
        inside &= reg_area <= area_hi[a]
        gt_count[:, a] = np.bincount(reg_k[inside], minlength=n_k)[:n_k]
    del reg_area
    pred_rows = groups.pred_rows[seq]
    rank = groups.rank[seq]
    del seq
    class_row = seq_cls.astype(np.int32)
    del seq_cls
    image_id = gt.images.ids[pred.image_index[pred_rows]]
    category_id = pred.category_id[pred_rows]
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    score = scores[pred_rows]
    return MatchOutcome(
        pred_row=pred_rows,
        score=score,
        class_row=class_row,
        category_id=category_id,
        image_id=image_id,
        rank=rank,
        tp_bits=tp_bits,
        ignored_bits=ign_bits,
        first_gt=first_gt,
        first_iou=first_iou,
        same_bits=same_bits,
        other_row=other_row,
        other_gt=other_gt,
        other_iou=other_iou,
        gt_count=gt_count,
        category_ids=groups.category_ids if groups.use_cats else np.array([-1], dtype=np.int64),
        thresholds=thresholds,
        area_names=names,
        gt_row=reg_rows.astype(np.int64, copy=False),
        gt_class_row=reg_k,
        gt_image_id=gt_image_id,
        gt_in_range=in_range,
    )
