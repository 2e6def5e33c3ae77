"""Numba kernels of the COCO detection protocol (private).

Three steps, each a loop that NumPy cannot express without Python objects per box:

* :func:`match_group_coco` - pycocotools' greedy matching inside one (image, class) group;
* :func:`evaluate_groups` - for every group: crowd-aware IoU, per-area-range ignore flags and
  matching, writing one status per (area range, threshold, prediction);
  :func:`evaluate_groups_iou` does the same from precomputed IoU matrices (segm), which
  :func:`group_mask_iou` fills in the run-length domain, and both share one matching code;
* :func:`accumulate` - per (class, area range, max_dets, threshold): cumulative TP/FP,
  precision envelope and sampling at the recall thresholds, exactly as ``COCOeval.accumulate``.

Inputs are contiguous NumPy arrays already sorted by the caller (stable sorts); outputs are
allocated by the caller. The plain-Python twins live in ``tests/test_coco_engine.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

# compiled since #9; re-exported here until the pipeline's matcher replaces this module
from ioukit._kernels.rle import group_mask_iou as group_mask_iou
from ioukit._kernels.rle import mask_boxes as mask_boxes

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}

FALSE_POSITIVE, TRUE_POSITIVE, IGNORED = 0, 1, 2

_EPS = float(np.spacing(1))


@njit(**_OPTIONS)
def _match_ordered(  # type: ignore[no-untyped-def]
    iou, order, gt_ignore, gt_crowd, thresholds, pred_matched, pred_ignored, gt_matched
):
    # iou (P, G) in the caller's gt order; sorted column j is iou[:, order[j]]; gt_ignore and
    # gt_crowd are indexed by sorted position. Outputs hold sorted positions.
    n_pred = iou.shape[0]
    n_gt = order.shape[0]
    for t in range(thresholds.shape[0]):
        for j in range(n_gt):
            gt_matched[t, j] = -1
        for d in range(n_pred):
            best = thresholds[t]
            m = -1
            for j in range(n_gt):
                if gt_matched[t, j] >= 0 and not gt_crowd[j]:
                    continue
                if m > -1 and not gt_ignore[m] and gt_ignore[j]:
                    break
                value = iou[d, order[j]]
                if value < best:
                    continue
                best = value
                m = j
            pred_matched[t, d] = m
            if m >= 0:
                pred_ignored[t, d] = gt_ignore[m]
                gt_matched[t, m] = d
            else:
                pred_ignored[t, d] = False


@njit(**_OPTIONS)
def match_group_coco(iou, gt_ignore, gt_crowd, thresholds, pred_matched, pred_ignored, gt_matched):  # type: ignore[no-untyped-def]
    """Greedy COCO matching of one (image, class) group, written in place.

    iou (P, G) float64 with predictions in descending-score (stable) order and ground truths
    stably sorted with ignored ones last; gt_ignore (G,) bool; gt_crowd (G,) bool; thresholds
    (T,) float64 used as-is (callers apply ``min(t, 1 - 1e-10)``). Outputs: pred_matched (T, P)
    int64 matched gt column or -1; pred_ignored (T, P) bool, matched an ignored gt; gt_matched
    (T, G) int64 matching prediction row or -1.

    pycocotools' rules: ``iou >= t``; each prediction takes the best still-unmatched gt (a crowd
    gt absorbs any number of predictions); the scan stops at the first ignored gt once a regular
    gt is matched; among equal IoUs the last gt wins.
    """
    order = np.arange(iou.shape[1])
    _match_ordered(
        iou, order, gt_ignore, gt_crowd, thresholds, pred_matched, pred_ignored, gt_matched
    )


@njit(inline="always", **_OPTIONS)
def _group_status(  # type: ignore[no-untyped-def]
    iou,
    g0,
    p0,
    n_gt,
    n_pred,
    gt_area,
    gt_ignore,
    gt_crowd,
    gt_never_matches,
    pred_area,
    thresholds,
    area_lo,
    area_hi,
    slot,
    status,
    order_buffer,
    ignore_buffer,
    crowd_buffer,
    pred_matched,
    pred_ignored,
    gt_matched,
):
    # one group's matching per area range, from its IoU matrix iou (n_pred, n_gt); the
    # outcome of prediction p0 + d goes to status[slot[p0 + d], a, t]
    n_thr = thresholds.shape[0]
    n_area = area_lo.shape[0]
    for a in range(n_area):
        lo = area_lo[a]
        hi = area_hi[a]
        order = order_buffer[a]
        ignore = ignore_buffer[a]
        crowd = crowd_buffer[a]
        # stable partition: regular ground truths first, ignored ones last
        k = 0
        for j in range(n_gt):
            g = g0 + j
            if not (gt_ignore[g] or gt_area[g] < lo or gt_area[g] > hi):
                order[k] = j
                ignore[k] = False
                crowd[k] = gt_crowd[g]
                k += 1
        for j in range(n_gt):
            g = g0 + j
            if gt_ignore[g] or gt_area[g] < lo or gt_area[g] > hi:
                order[k] = j
                ignore[k] = True
                crowd[k] = gt_crowd[g]
                k += 1
        # an earlier area range with the same ignore pattern has the same matches
        source = a
        for b in range(a):
            same = True
            for j in range(n_gt):
                if order_buffer[b, j] != order[j] or ignore_buffer[b, j] != ignore[j]:
                    same = False
                    break
            if same:
                source = b
                break
        if source == a:
            _match_ordered(
                iou,
                order[:n_gt],
                ignore[:n_gt],
                crowd[:n_gt],
                thresholds,
                pred_matched[a],
                pred_ignored[a],
                gt_matched,
            )
        matches = pred_matched[source]
        matched_ignored = pred_ignored[source]
        for t in range(n_thr):
            for d in range(n_pred):
                m = matches[t, d]
                matched = m >= 0 and not gt_never_matches[g0 + order[m]]
                ignored = m >= 0 and matched_ignored[t, d]
                if not matched and (pred_area[p0 + d] < lo or pred_area[p0 + d] > hi):
                    ignored = True
                if ignored:
                    status[slot[p0 + d], a, t] = IGNORED
                elif matched:
                    status[slot[p0 + d], a, t] = TRUE_POSITIVE
                else:
                    status[slot[p0 + d], a, t] = FALSE_POSITIVE


@njit(inline="always", **_OPTIONS)
def _status_without_ground_truth(p0, n_pred, pred_area, area_lo, area_hi, slot, status):  # type: ignore[no-untyped-def]
    """A group with no ground truth: each prediction is a false positive in the area ranges
    that hold its own area and ignored in the others (pycocotools L298-299)."""
    for a in range(area_lo.shape[0]):
        for d in range(n_pred):
            out = pred_area[p0 + d] < area_lo[a] or pred_area[p0 + d] > area_hi[a]
            code = IGNORED if out else FALSE_POSITIVE
            for t in range(status.shape[2]):
                status[slot[p0 + d], a, t] = code


@njit(**_OPTIONS)
def evaluate_groups(  # type: ignore[no-untyped-def]
    gt_start,
    gt_end,
    pred_start,
    pred_end,
    gt_boxes,
    gt_box_area,
    gt_area,
    gt_ignore,
    gt_crowd,
    gt_never_matches,
    pred_boxes,
    pred_area,
    thresholds,
    area_lo,
    area_hi,
    max_det,
    slot,
    status,
    iou_buffer,
    order_buffer,
    ignore_buffer,
    crowd_buffer,
    pred_matched,
    pred_ignored,
    gt_matched,
):
    """Match every (image, class) group; write ``status[., a, t]`` for its top predictions.

    Group ``i`` holds ground truths ``gt_start[i]:gt_end[i]`` (input order) and predictions
    ``pred_start[i]:pred_end[i]`` (descending score, stable); only the first ``max_det``
    predictions are evaluated, and prediction ``p``'s outcome goes to ``status[slot[p], a, t]``
    (its place in accumulation order). Status is TRUE_POSITIVE, FALSE_POSITIVE or IGNORED
    (matched an ignored gt, or unmatched with its own area outside the range).
    ``gt_never_matches`` marks ground truths whose matches are discarded after matching
    (pycocotools' id-0 bug).
    Buffers: iou_buffer (>= max P*G,), order/ignore/crowd_buffer (A, >= max G), pred_matched
    and pred_ignored (A, T, >= max P), gt_matched (T, >= max G).
    """
    for group in range(gt_start.shape[0]):
        g0 = gt_start[group]
        p0 = pred_start[group]
        n_gt = gt_end[group] - g0
        n_pred = min(pred_end[group] - p0, max_det)
        if n_pred <= 0:
            continue
        if n_gt == 0:
            _status_without_ground_truth(p0, n_pred, pred_area, area_lo, area_hi, slot, status)
            continue
        iou = iou_buffer[: n_pred * n_gt].reshape((n_pred, n_gt))
        for d in range(n_pred):
            dx1 = pred_boxes[p0 + d, 0]
            dy1 = pred_boxes[p0 + d, 1]
            dx2 = pred_boxes[p0 + d, 2]
            dy2 = pred_boxes[p0 + d, 3]
            da = pred_area[p0 + d]
            for j in range(n_gt):
                g = g0 + j
                iou[d, j] = 0.0
                w = min(dx2, gt_boxes[g, 2]) - max(dx1, gt_boxes[g, 0])
                if w <= 0:
                    continue
                h = min(dy2, gt_boxes[g, 3]) - max(dy1, gt_boxes[g, 1])
                if h <= 0:
                    continue
                inter = w * h
                union = da if gt_crowd[g] else da + gt_box_area[g] - inter
                iou[d, j] = inter / union
        _group_status(
            iou,
            g0,
            p0,
            n_gt,
            n_pred,
            gt_area,
            gt_ignore,
            gt_crowd,
            gt_never_matches,
            pred_area,
            thresholds,
            area_lo,
            area_hi,
            slot,
            status,
            order_buffer,
            ignore_buffer,
            crowd_buffer,
            pred_matched,
            pred_ignored,
            gt_matched,
        )


@njit(**_OPTIONS)
def evaluate_groups_iou(  # type: ignore[no-untyped-def]
    gt_start,
    gt_end,
    pred_start,
    pred_end,
    iou_values,
    iou_offsets,
    gt_area,
    gt_ignore,
    gt_crowd,
    gt_never_matches,
    pred_area,
    thresholds,
    area_lo,
    area_hi,
    max_det,
    slot,
    status,
    order_buffer,
    ignore_buffer,
    crowd_buffer,
    pred_matched,
    pred_ignored,
    gt_matched,
):
    """:func:`evaluate_groups` on precomputed IoU matrices (segm), same matching and outputs.

    Group ``i``'s IoU matrix [P_i, G_i] (P_i = its first ``max_det`` predictions, G_i its
    ground truths, both in the order of :func:`evaluate_groups`) is stored row-major in
    ``iou_values[iou_offsets[i]:iou_offsets[i] + P_i * G_i]``; crowd columns already hold
    intersection / prediction area.
    """
    for group in range(gt_start.shape[0]):
        g0 = gt_start[group]
        p0 = pred_start[group]
        n_gt = gt_end[group] - g0
        n_pred = min(pred_end[group] - p0, max_det)
        if n_pred <= 0:
            continue
        if n_gt == 0:
            _status_without_ground_truth(p0, n_pred, pred_area, area_lo, area_hi, slot, status)
            continue
        i0 = iou_offsets[group]
        iou = iou_values[i0 : i0 + n_pred * n_gt].reshape((n_pred, n_gt))
        _group_status(
            iou,
            g0,
            p0,
            n_gt,
            n_pred,
            gt_area,
            gt_ignore,
            gt_crowd,
            gt_never_matches,
            pred_area,
            thresholds,
            area_lo,
            area_hi,
            slot,
            status,
            order_buffer,
            ignore_buffer,
            crowd_buffer,
            pred_matched,
            pred_ignored,
            gt_matched,
        )


@njit(**_OPTIONS)
def accumulate(  # type: ignore[no-untyped-def]
    class_start,
    class_end,
    rank,
    status,
    scores,
    num_regular_gt,
    max_dets,
    recall_thresholds,
    precision,
    recall,
    score_out,
    recall_buffer,
    precision_buffer,
    score_buffer,
):
    """Fill precision [T,R,K,A,M], recall [T,K,A,M] and score_out [T,R,K,A,M] in place.

    Predictions of class ``k`` are ``class_start[k]:class_end[k]`` in accumulation order
    (descending score, ties by image then in-image order); ``rank`` is each prediction's place
    in its (image, class) group, ``status`` [N, A, T] its outcome in that order, and
    ``num_regular_gt`` [K, A] the count of non-ignored ground truths (cells with 0 are left
    untouched, i.e. -1). ``recall_thresholds`` must be increasing and >= 0; ``max_dets``
    increasing. Buffers are (M, L) with L at least the largest class's prediction count.

    Equal to pycocotools' cumulative TP/FP, precision envelope and ``searchsorted(recall,
    recall_thresholds, "left")`` sampling, but only true positives are stored: recall rises
    only at a true positive, and every other position's precision is at most that of the
    true positive before it, so the envelope over true positives is the same.
    """
    eps = _EPS
    n_thr = status.shape[2]
    n_rec = recall_thresholds.shape[0]
    n_m = max_dets.shape[0]
    count = np.zeros(n_m, dtype=np.int64)
    count_tp = np.zeros(n_m, dtype=np.int64)
    tp = np.zeros(n_m)
    fp = np.zeros(n_m)
    first_score = np.zeros(n_m)
    for k in range(class_start.shape[0]):
        s0 = class_start[k]
        s1 = class_end[k]
        for a in range(num_regular_gt.shape[1]):
            npig = num_regular_gt[k, a]
            if npig == 0:
                continue
            for t in range(n_thr):
                # one pass serves every max_dets (sorted ascending): prediction i counts for
                # every m with rank[i] < max_dets[m]
                for m in range(n_m):
                    count[m] = 0
                    count_tp[m] = 0
                    tp[m] = 0.0
                    fp[m] = 0.0
                    first_score[m] = 0.0
                for i in range(s0, s1):
                    code = status[i, a, t]
                    r = rank[i]
                    for m in range(n_m - 1, -1, -1):
                        if r >= max_dets[m]:
                            break
                        if count[m] == 0:
                            first_score[m] = scores[i]
                        count[m] += 1
                        if code == TRUE_POSITIVE:
                            tp[m] += 1.0
                            j = count_tp[m]
                            recall_buffer[m, j] = tp[m] / npig
                            precision_buffer[m, j] = tp[m] / (fp[m] + tp[m] + eps)
                            score_buffer[m, j] = scores[i]
                            count_tp[m] = j + 1
                        elif code == FALSE_POSITIVE:
                            fp[m] += 1.0
                for m in range(n_m):
                    n = count[m]
                    n_tp = count_tp[m]
                    rb = recall_buffer[m]
                    pb = precision_buffer[m]
                    sb = score_buffer[m]
                    recall[t, k, a, m] = tp[m] / npig if n > 0 else 0.0
                    for i in range(n_tp - 1, 0, -1):
                        if pb[i] > pb[i - 1]:
                            pb[i - 1] = pb[i]
                    j = 0
                    for r in range(n_rec):
                        target = recall_thresholds[r]
                        if n > 0 and target <= 0.0:
                            # the first prediction; its envelope is the best precision
                            precision[t, r, k, a, m] = pb[0] if n_tp > 0 else 0.0
                            score_out[t, r, k, a, m] = first_score[m]
                            continue
                        while j < n_tp and rb[j] < target:
                            j += 1
                        if j < n_tp:
                            precision[t, r, k, a, m] = pb[j]
                            score_out[t, r, k, a, m] = sb[j]
                        else:
                            precision[t, r, k, a, m] = 0.0
                            score_out[t, r, k, a, m] = 0.0
