"""Open Images matching with group-of boxes (private compiled kernel).

The TensorFlow Object Detection API's per-image rule (``per_image_evaluation.py``), for many
(image, class) groups at once. The caller sorts and slices; this kernel only loops.

Per group, predictions arrive in ranking order (descending score; the caller decides ties)
and the ground truth is split in two lists: ordinary boxes (``gt_*``) and group-of boxes
(``group_*``), each in the image's order.

Stage 1: every prediction looks at the ordinary box of highest IoU (the first one on ties;
no fallback to the next best). IoU >= threshold: a difficult box makes the prediction
IGNORED_DIFFICULT; a free box makes it a TP and takes the box; a taken box leaves it an FP.

Stage 2: every prediction still FP looks at the group-of box of highest IoA (intersection
over the prediction's own area; first on ties). IoA >= threshold makes it IGNORED_GROUP_OF and
raises that box's ``group_score`` to the prediction's score (starting from 0).

Boxes are xyxy float64. IoU = inter / ((area_pred + area_gt) - inter) and IoA = inter /
area_pred, with inter = clamp(dy) * clamp(dx): the reference's operation order, so every
value is bit-identical to it. Built with ``-ffp-contract=off``.

The plain-Python oracle is ``tests/kernels/test_openimages_kernel.py::match_groups_py``.
"""

import numpy as np

cimport cython
from libc.stdint cimport int8_t, int64_t, uint8_t

cdef enum:
    S_FP = 0
    S_TP = 1
    S_DIFFICULT = 2
    S_GROUP_OF = 3

FP, TP, IGNORED_DIFFICULT, IGNORED_GROUP_OF = S_FP, S_TP, S_DIFFICULT, S_GROUP_OF


cdef inline double _inter(
    double ax1, double ay1, double ax2, double ay2,
    double bx1, double by1, double bx2, double by2,
) noexcept nogil:
    cdef double height = (ay2 if ay2 < by2 else by2) - (ay1 if ay1 > by1 else by1)
    cdef double width = (ax2 if ax2 < bx2 else bx2) - (ax1 if ax1 > bx1 else bx1)
    if height < 0.0:
        height = 0.0
    if width < 0.0:
        width = 0.0
    return height * width


cdef void _match(
    const double[:, ::1] pred_boxes,
    const double[::1] pred_scores,
    int64_t p0, int64_t p1,
    const double[:, ::1] gt_boxes,
    const uint8_t[::1] gt_difficult,
    int64_t g0, int64_t g1,
    const double[:, ::1] group_boxes,
    int64_t q0, int64_t q1,
    double threshold,
    int8_t[::1] status,
    int64_t[::1] matched,
    double[::1] overlap,
    double[::1] group_score,
    uint8_t[::1] taken,
) noexcept nogil:
    cdef int64_t i, j, best
    cdef double area, value, best_value, inter, ax1, ay1, ax2, ay2
    for i in range(p0, p1):
        ax1 = pred_boxes[i, 0]
        ay1 = pred_boxes[i, 1]
        ax2 = pred_boxes[i, 2]
        ay2 = pred_boxes[i, 3]
        area = (ay2 - ay1) * (ax2 - ax1)
        status[i] = S_FP
        matched[i] = -1
        overlap[i] = 0.0
        if g1 > g0:
            best = -1
            best_value = 0.0
            for j in range(g0, g1):
                inter = _inter(ax1, ay1, ax2, ay2, gt_boxes[j, 0], gt_boxes[j, 1],
                               gt_boxes[j, 2], gt_boxes[j, 3])
                value = inter / (
                    (area + (gt_boxes[j, 3] - gt_boxes[j, 1]) * (gt_boxes[j, 2] - gt_boxes[j, 0]))
                    - inter
                )
                if best < 0 or value > best_value:
                    best = j
                    best_value = value
            overlap[i] = best_value
            if best_value >= threshold:
                matched[i] = best
                if gt_difficult[best]:
                    status[i] = S_DIFFICULT
                elif not taken[best]:
                    status[i] = S_TP
                    taken[best] = 1
    if q1 > q0:
        for i in range(p0, p1):
            if status[i] != S_FP:
                continue
            ax1 = pred_boxes[i, 0]
            ay1 = pred_boxes[i, 1]
            ax2 = pred_boxes[i, 2]
            ay2 = pred_boxes[i, 3]
            area = (ay2 - ay1) * (ax2 - ax1)
            best = -1
            best_value = 0.0
            for j in range(q0, q1):
                inter = _inter(ax1, ay1, ax2, ay2, group_boxes[j, 0], group_boxes[j, 1],
                               group_boxes[j, 2], group_boxes[j, 3])
                value = inter / area
                if best < 0 or value > best_value:
                    best = j
                    best_value = value
            if best_value >= threshold:
                status[i] = S_GROUP_OF
                matched[i] = best
                overlap[i] = best_value
                if pred_scores[i] > group_score[best]:
                    group_score[best] = pred_scores[i]


@cython.boundscheck(False)
@cython.wraparound(False)
def match_groups(
    const double[:, ::1] pred_boxes,
    const double[::1] pred_scores,
    const int64_t[::1] pred_start,
    const double[:, ::1] gt_boxes,
    const uint8_t[::1] gt_difficult,
    const int64_t[::1] gt_start,
    const double[:, ::1] group_boxes,
    const int64_t[::1] group_start,
    double threshold,
    int8_t[::1] status,
    int64_t[::1] matched,
    double[::1] overlap,
    double[::1] group_score,
):
    """Match every group; outputs are filled in place.

    Parameters
    ----------
    pred_boxes : (P, 4) float64, pred_scores : (P,) float64
        Predictions, grouped, each group in ranking order.
    pred_start, gt_start, group_start : (G + 1,) int64
        Group ``g`` owns rows ``start[g]:start[g + 1]`` of the matching array.
    gt_boxes : (M, 4) float64, gt_difficult : (M,) uint8
        Ordinary (not group-of) ground truth.
    group_boxes : (Q, 4) float64
        Group-of ground truth.
    threshold : float
        Inclusive IoU / IoA threshold.
    status : (P,) int8, matched : (P,) int64, overlap : (P,) float64
        Outputs: FP / TP / IGNORED_DIFFICULT / IGNORED_GROUP_OF, the matched row (of
        ``gt_boxes`` for TP and difficult, of ``group_boxes`` for group-of; -1 for FP) and
        the best IoU (IoA for group-of matches).
    group_score : (Q,) float64
        Output, zero-initialised by the caller: the highest score among the predictions
        ignored inside each group-of box (stays 0 when none).
    """
    cdef Py_ssize_t n_groups = pred_start.shape[0] - 1
    cdef Py_ssize_t g
    if gt_start.shape[0] != n_groups + 1 or group_start.shape[0] != n_groups + 1:
        raise ValueError("pred_start, gt_start, group_start: expected equal lengths")
    if pred_boxes.shape[0] != pred_scores.shape[0] or status.shape[0] != pred_scores.shape[0]:
        raise ValueError("pred_boxes, pred_scores, status: expected equal lengths")
    if matched.shape[0] != status.shape[0] or overlap.shape[0] != status.shape[0]:
        raise ValueError("status, matched, overlap: expected equal lengths")
    if group_score.shape[0] != group_boxes.shape[0]:
        raise ValueError("group_score: expected one entry per group-of box")
    if gt_difficult.shape[0] != gt_boxes.shape[0]:
        raise ValueError("gt_difficult: expected one entry per ground-truth box")
    if n_groups > 0 and (
        pred_start[0] < 0 or pred_start[n_groups] > pred_boxes.shape[0]
        or gt_start[0] < 0 or gt_start[n_groups] > gt_boxes.shape[0]
        or group_start[0] < 0 or group_start[n_groups] > group_boxes.shape[0]
    ):
        raise ValueError("*_start: group bounds outside the arrays")
    for g in range(n_groups):
        if (pred_start[g] > pred_start[g + 1] or gt_start[g] > gt_start[g + 1]
                or group_start[g] > group_start[g + 1]):
            raise ValueError("*_start: expected non-decreasing group bounds")
    cdef uint8_t[::1] taken = np.zeros(gt_boxes.shape[0], dtype=np.uint8)
    with nogil:
        for g in range(n_groups):
            _match(pred_boxes, pred_scores, pred_start[g], pred_start[g + 1],
                   gt_boxes, gt_difficult, gt_start[g], gt_start[g + 1],
                   group_boxes, group_start[g], group_start[g + 1],
                   threshold, status, matched, overlap, group_score, taken)
