"""Compiled kernel for weighted boxes fusion (private): the clustering loop of one label.

The caller filters, clips and sorts the boxes of one label (decreasing weighted score, stable)
and allocates every array. Each box joins the existing cluster whose fused box has the highest
IoU with it (the first one on ties) when that IoU is ``> iou_threshold``, else it starts a new
cluster; the fused box of a cluster is the score-weighted mean of its members' boxes.

``emulate_float32`` reproduces ensemble-boxes bit for bit: it accumulates and stores the fused
box, score and weight of a multi-member cluster in float32 (its ``get_weighted_box`` uses a
float32 buffer), while single-member clusters keep their float64 values.

The plain-Python twin (the test oracle) is ``cluster_python`` in ``tests/twins.py``.
"""

import numpy as np

from ._boxmath cimport _iou


cdef inline double _f32(double value) noexcept nogil:
    return <double>(<float>value)


cdef void _refresh(
    Py_ssize_t c, const double[:, ::1] boxes, const Py_ssize_t[::1] member_of,
    const double[:, ::1] acc, double[:, ::1] fused, const double[::1] conf,
    const Py_ssize_t[::1] count, bint emulate_float32, Py_ssize_t members_so_far,
) noexcept nogil:
    # the fused box of cluster c after a join: score-weighted mean of its members
    cdef Py_ssize_t j, k
    if conf[c] > 0:
        for k in range(4):
            fused[c, k] = acc[c, k] / conf[c]
    else:  # every member scored 0: plain mean (ensemble-boxes divides 0 by 0)
        for k in range(4):
            fused[c, k] = 0.0
        for j in range(members_so_far):
            if member_of[j] == c:
                for k in range(4):
                    fused[c, k] += boxes[j, k]
        for k in range(4):
            fused[c, k] = fused[c, k] / count[c]
    if emulate_float32:
        for k in range(4):
            fused[c, k] = _f32(fused[c, k])


cdef Py_ssize_t _cluster(
    const double[:, ::1] boxes, const double[::1] wscores, const double[::1] weights,
    double iou_threshold, bint emulate_float32, Py_ssize_t[::1] member_of,
    double[:, ::1] acc, double[:, ::1] fused, double[::1] conf, double[::1] best_score,
    double[::1] weight_sum, Py_ssize_t[::1] count,
) noexcept nogil:
    """Cluster one label's boxes; returns the number of clusters.

    boxes : (m, 4) float64 xyxy, sorted by decreasing weighted score.
    wscores, weights : (m,) weighted score (score * model weight) and model weight of each box.
    Outputs (m rows, the first ``returned`` meaningful): member_of (m,) cluster of each box;
    acc (m, 4) running sum of score * box; fused (m, 4) the fused box used for matching;
    conf, best_score, weight_sum (m,) sum and max of member scores, sum of member weights;
    count (m,) members. Sums run in member order, as ensemble-boxes adds them.
    """
    cdef Py_ssize_t m = boxes.shape[0], clusters = 0, j, c, k, best
    cdef double bx1, by1, bx2, by2, best_iou, value, s, product, total
    for j in range(m):
        bx1 = boxes[j, 0]
        by1 = boxes[j, 1]
        bx2 = boxes[j, 2]
        by2 = boxes[j, 3]
        best = -1
        best_iou = -1.0
        for c in range(clusters):
            value = _iou(fused[c, 0], fused[c, 1], fused[c, 2], fused[c, 3], bx1, by1, bx2, by2)
            if value > best_iou:
                best_iou = value
                best = c
        s = wscores[j]
        if best < 0 or best_iou <= iou_threshold:
            c = clusters
            clusters += 1
            member_of[j] = c
            for k in range(4):
                product = s * boxes[j, k]
                acc[c, k] = _f32(product) if emulate_float32 else product
                fused[c, k] = boxes[j, k]
            conf[c] = s
            best_score[c] = s
            weight_sum[c] = weights[j]
            count[c] = 1
            continue
        c = best
        member_of[j] = c
        conf[c] += s
        best_score[c] = best_score[c] if best_score[c] > s else s
        weight_sum[c] += weights[j]
        count[c] += 1
        for k in range(4):
            total = acc[c, k] + s * boxes[j, k]
            acc[c, k] = _f32(total) if emulate_float32 else total
        _refresh(c, boxes, member_of, acc, fused, conf, count, emulate_float32, j + 1)
    return clusters


def cluster(boxes, wscores, weights, iou_threshold, emulate_float32):
    """Cluster one label's boxes (sorted by decreasing weighted score).

    Returns ``member_of`` (m,) and, per cluster (c rows): fused boxes (c, 4), sum of member
    scores, max member score, sum of member weights (float64) and member counts (int64).
    """
    boxes = np.ascontiguousarray(boxes, dtype=np.float64).reshape(-1, 4)
    m = boxes.shape[0]
    member_of = np.empty(m, dtype=np.intp)
    acc = np.empty((m, 4), dtype=np.float64)
    fused = np.empty((m, 4), dtype=np.float64)
    conf = np.empty(m, dtype=np.float64)
    best_score = np.empty(m, dtype=np.float64)
    weight_sum = np.empty(m, dtype=np.float64)
    count = np.empty(m, dtype=np.intp)
    c = _cluster(
        boxes,
        np.ascontiguousarray(wscores, dtype=np.float64),
        np.ascontiguousarray(weights, dtype=np.float64),
        float(iou_threshold),
        bool(emulate_float32),
        member_of, acc, fused, conf, best_score, weight_sum, count,
    )
    return (
        member_of.astype(np.int64, copy=False),
        fused[:c],
        conf[:c],
        best_score[:c],
        weight_sum[:c],
        count[:c].astype(np.int64, copy=False),
    )
