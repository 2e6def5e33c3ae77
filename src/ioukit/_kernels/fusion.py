"""Numba kernel for weighted boxes fusion (private): the clustering loop of one label.

The caller filters, clips and sorts the boxes of one label (decreasing weighted score, stable)
and allocates every array. Each box joins the existing cluster whose fused box has the highest
IoU with it (the first one on ties) when that IoU is ``> iou_threshold``, else it starts a new
cluster; the fused box of a cluster is the score-weighted mean of its members' boxes.

``emulate_float32`` reproduces ensemble-boxes bit for bit: it accumulates and stores the fused
box, score and weight of a multi-member cluster in float32 (its ``get_weighted_box`` uses a
float32 buffer), while single-member clusters keep their float64 values.

The plain-Python twin :func:`cluster_python` is the test oracle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ioukit._kernels._numba_iou import _iou

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}


@njit(**_OPTIONS)
def _f32(value):  # type: ignore[no-untyped-def]
    return np.float64(np.float32(value))


@njit(**_OPTIONS)
def _cluster(  # type: ignore[no-untyped-def]
    boxes,
    wscores,
    weights,
    iou_threshold,
    emulate_float32,
    consts,
    member_of,
    acc,
    fused,
    conf,
    best_score,
    weight_sum,
    count,
):
    """Cluster one label's boxes; returns the number of clusters.

    boxes : (m, 4) float64 xyxy, sorted by decreasing weighted score.
    wscores, weights : (m,) weighted score (score * model weight) and model weight of each box.
    Outputs (m rows, the first ``returned`` meaningful): member_of (m,) cluster of each box;
    acc (m, 4) running sum of score * box; fused (m, 4) the fused box used for matching;
    conf, best_score, weight_sum (m,) sum and max of member scores, sum of member weights;
    count (m,) members. Sums run in member order, as ensemble-boxes adds them.
    """
    m = boxes.shape[0]
    clusters = 0
    for j in range(m):
        bx1, by1, bx2, by2 = boxes[j, 0], boxes[j, 1], boxes[j, 2], boxes[j, 3]
        best = -1
        best_iou = -1.0
        for c in range(clusters):
            value = _iou(
                fused[c, 0], fused[c, 1], fused[c, 2], fused[c, 3], bx1, by1, bx2, by2, consts
            )
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
        best_score[c] = max(best_score[c], s)
        weight_sum[c] += weights[j]
        count[c] += 1
        for k in range(4):
            total = acc[c, k] + s * boxes[j, k]
            acc[c, k] = _f32(total) if emulate_float32 else total
        _refresh(c, boxes, member_of, acc, fused, conf, count, emulate_float32)
    return clusters


@njit(**_OPTIONS)
def _refresh(c, boxes, member_of, acc, fused, conf, count, emulate_float32):  # type: ignore[no-untyped-def]
    # the fused box of cluster c after a join: score-weighted mean of its members
    if conf[c] > 0:
        for k in range(4):
            fused[c, k] = acc[c, k] / conf[c]
    else:  # every member scored 0: plain mean (ensemble-boxes divides 0 by 0)
        for k in range(4):
            fused[c, k] = 0.0
        for j in range(boxes.shape[0]):
            if member_of[j] == c:
                for k in range(4):
                    fused[c, k] += boxes[j, k]
        for k in range(4):
            fused[c, k] = fused[c, k] / count[c]
    if emulate_float32:
        for k in range(4):
            fused[c, k] = _f32(fused[c, k])


def cluster(
    boxes: np.ndarray,
    wscores: np.ndarray,
    weights: np.ndarray,
    iou_threshold: float,
    emulate_float32: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cluster one label's boxes (sorted by decreasing weighted score).

    Returns ``member_of`` (m,) and, per cluster (c rows): fused boxes (c, 4), sum of member
    scores, max member score, sum of member weights (float64) and member counts (int64).
    """
    m = boxes.shape[0]
    member_of = np.empty(m, dtype=np.int64)
    acc = np.empty((m, 4), dtype=np.float64)
    fused = np.empty((m, 4), dtype=np.float64)
    conf = np.empty(m, dtype=np.float64)
    best_score = np.empty(m, dtype=np.float64)
    weight_sum = np.empty(m, dtype=np.float64)
    count = np.empty(m, dtype=np.int64)
    consts = np.array([0.0, 1.0, 2.0, 0.0, 4 / np.pi**2], dtype=np.float64)
    clusters = _cluster(
        np.ascontiguousarray(boxes, dtype=np.float64),
        np.ascontiguousarray(wscores, dtype=np.float64),
        np.ascontiguousarray(weights, dtype=np.float64),
        float(iou_threshold),
        emulate_float32,
        consts,
        member_of,
        acc,
        fused,
        conf,
        best_score,
        weight_sum,
        count,
    )
    c = clusters
    return member_of, fused[:c], conf[:c], best_score[:c], weight_sum[:c], count[:c]


# ---------------------------------------------------------------- plain-Python twin (oracle)


def cluster_python(
    boxes: list[list[float]], wscores: list[float], iou_threshold: float
) -> tuple[list[int], list[list[float]]]:
    """Float64 WBF clustering of one sorted label in plain Python: (member_of, fused boxes)."""
    members: list[list[int]] = []
    fused: list[list[float]] = []
    member_of = []
    for j, box in enumerate(boxes):
        best, best_iou = -1, -1.0
        for c, f in enumerate(fused):
            width = min(f[2], box[2]) - max(f[0], box[0])
            height = min(f[3], box[3]) - max(f[1], box[1])
            inter = max(width, 0.0) * max(height, 0.0)
            union = (f[2] - f[0]) * (f[3] - f[1]) + (box[2] - box[0]) * (box[3] - box[1]) - inter
            value = inter / union if union > 0 else 0.0
            if value > best_iou:
                best, best_iou = c, value
        if best < 0 or best_iou <= iou_threshold:
            members.append([j])
            fused.append(list(box))
            member_of.append(len(fused) - 1)
            continue
        members[best].append(j)
        member_of.append(best)
        total = sum(wscores[i] for i in members[best])
        fused[best] = [
            sum(wscores[i] * boxes[i][k] for i in members[best]) / total for k in range(4)
        ]
    return member_of, fused
