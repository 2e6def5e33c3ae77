"""Plain-Python twins of the compiled kernels: the test oracles.

Each is written independently of its kernel's tricks (layouts, windows, sort orders) and in
plain Python floats (float64), so a kernel that agrees with its twin on random and edge-case
inputs is computing the textbook algorithm.
"""

from __future__ import annotations

import math

# ---------------------------------------------------------------- plain-Python twins (oracles)


def _iou_python(a: list[float], b: list[float]) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(width, 0.0) * max(height, 0.0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def greedy_nms_python(
    boxes: list[list[float]],
    scores: list[float],
    threshold: float,
    classes: list[int] | None = None,
) -> list[int]:
    """Textbook quadratic greedy NMS in plain Python (float64): the oracle of :func:`greedy_nms`."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    removed = [False] * len(scores)
    kept = []
    for rank, i in enumerate(order):
        if removed[i]:
            continue
        kept.append(i)
        for j in order[rank + 1 :]:
            same = classes is None or classes[i] == classes[j]
            if same and not removed[j] and _iou_python(boxes[i], boxes[j]) > threshold:
                removed[j] = True
    return kept


def soft_nms_python(
    boxes: list[list[float]],
    scores: list[float],
    method: str,
    sigma: float,
    iou_threshold: float,
    score_threshold: float,
) -> tuple[list[int], list[float]]:
    """Quadratic soft-NMS in plain Python (float64): the oracle of :func:`soft_nms`."""
    current = list(scores)
    remaining = list(range(len(scores)))
    order, decayed = [], []
    while remaining:
        best = max(remaining, key=lambda i: (current[i], -i))
        remaining.remove(best)
        order.append(best)
        decayed.append(current[best])
        for j in remaining:
            overlap = _iou_python(boxes[best], boxes[j])
            if method == "linear":
                if overlap > iou_threshold:
                    current[j] = (1.0 - overlap) * current[j]
            else:
                current[j] = math.exp(-(overlap * overlap) / sigma) * current[j]
    kept = [k for k, s in enumerate(decayed) if s > score_threshold]
    return [order[k] for k in kept], [decayed[k] for k in kept]


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
