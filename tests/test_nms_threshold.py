"""The IoU threshold of NMS is a real number, not a float32 (issue #23 item 7).

torchvision's CPU kernel (``torchvision/csrc/ops/cpu/nms_kernel.cpp``) computes each IoU in the
boxes' dtype, ``ovr = inter / (iarea + areas[j] - inter)``, and suppresses when
``ovr > iou_threshold`` with ``iou_threshold`` a C++ ``double``: a float32 IoU is compared
exactly with the double threshold. Rounding the threshold to float32 first keeps a box whose
float32 IoU equals ``float32(t)`` whenever ``float32(t) > t`` (0.3, 0.6, 0.1, ...).

The oracle below is that kernel's loop, written independently in plain Python over NumPy
float32 scalars (each operation rounded to float32 as the C++ does), compared with
Python's float64 ``>``; the boxes of the exact tests sit on the threshold by construction.
"""

from __future__ import annotations

import numpy as np
import pytest

from ioukit._kernels.nms import threshold_below
from ioukit.suppression import batched_nms, nms, soft_nms

F32 = np.float32


def _iou_f32(a: np.ndarray, b: np.ndarray) -> np.float32:
    """One float32 IoU, operation for operation as torchvision's CPU nms kernel."""
    area_a = F32(F32(a[2] - a[0]) * F32(a[3] - a[1]))
    area_b = F32(F32(b[2] - b[0]) * F32(b[3] - b[1]))
    w = max(F32(0), F32(min(a[2], b[2]) - max(a[0], b[0])))
    h = max(F32(0), F32(min(a[3], b[3]) - max(a[1], b[1])))
    inter = F32(w * h)
    union = F32(F32(area_a + area_b) - inter)
    # zero-area pairs: torchvision gets 0/0 = NaN (never > t); ioukit's box_iou gives 0
    return F32(inter / union) if union > 0 else F32(0)


def nms_oracle(boxes: np.ndarray, scores: np.ndarray, threshold: float) -> list[int]:
    """Greedy NMS: float32 IoU, ``float(iou) > threshold`` in float64 (the C++ promotion)."""
    boxes = boxes.astype(np.float32)
    order = sorted(range(len(scores)), key=lambda i: -float(scores[i]))
    removed = [False] * len(order)
    kept = []
    for rank, i in enumerate(order):
        if removed[i]:
            continue
        kept.append(i)
        for j in order[rank + 1 :]:
            if not removed[j] and float(_iou_f32(boxes[i], boxes[j])) > threshold:
                removed[j] = True
    return kept


# thresholds whose float32 rounding lies above (0.3, 0.6, 0.1) and below (0.7, 0.9) them
ABOVE = [0.3, 0.6, 0.1]
BELOW = [0.7, 0.9]


def test_the_thresholds_round_as_stated() -> None:
    for t in ABOVE:
        assert float(F32(t)) > t
    for t in BELOW:
        assert float(F32(t)) < t


def _on_threshold(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Box 0 of area 10 and box 1 inside it of area k: IoU k/10, float32(k/10) exactly."""
    boxes = np.array([[0, 0, 10, 1], [0, 0, k, 1]], dtype=np.float32)
    return boxes, np.array([0.9, 0.8], dtype=np.float32)


@pytest.mark.parametrize("threshold", ABOVE + BELOW)
def test_iou_exactly_on_the_threshold(threshold: float) -> None:
    k = round(threshold * 10)
    boxes, scores = _on_threshold(k)
    assert _iou_f32(boxes[0], boxes[1]) == F32(threshold)  # built to sit on it
    # float32(t) > t: the pair's IoU is above the real threshold -> suppressed
    expected = [0] if float(F32(threshold)) > threshold else [0, 1]
    assert nms_oracle(boxes, scores, threshold) == expected
    assert nms(boxes, scores, threshold).tolist() == expected
    assert batched_nms(boxes, scores, [0, 0], threshold).tolist() == expected
    # float64 boxes: the IoU 0.3 (or 0.6) is the double nearest the threshold: not above it
    assert nms(boxes.astype(np.float64), scores, threshold).tolist() == [0, 1]


@pytest.mark.parametrize("threshold", ABOVE + BELOW)
def test_soft_nms_linear_decays_exactly_above_the_threshold(threshold: float) -> None:
    boxes, scores = _on_threshold(round(threshold * 10))
    _, decayed = soft_nms(boxes, scores, iou_threshold=threshold, score_threshold=0.0)
    decays = float(F32(threshold)) > threshold
    want = F32(F32(1 - F32(threshold)) * F32(0.8)) if decays else F32(0.8)
    assert decayed.dtype == np.float32
    assert decayed.tolist() == [F32(0.9), want]


def _integer_sets(seed: int, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    # small integer boxes: many IoUs are ratios like 3/10 that land exactly on float32(t)
    rng = np.random.default_rng(seed)
    xy = rng.integers(0, 12, (n, 2))
    boxes = np.concatenate([xy, xy + rng.integers(1, 8, (n, 2))], axis=1).astype(np.float32)
    return boxes, rng.permutation(n).astype(np.float32) / n


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.6, 0.7, 0.25, 0.1])
@pytest.mark.parametrize("seed", range(6))
def test_random_float32_sets_match_the_double_comparison(threshold: float, seed: int) -> None:
    boxes, scores = _integer_sets(seed)
    expected = nms_oracle(boxes, scores, threshold)
    assert nms(boxes, scores, threshold).tolist() == expected
    assert batched_nms(boxes, scores, np.zeros(len(boxes), int), threshold).tolist() == expected


def test_random_continuous_float32_sets() -> None:
    rng = np.random.default_rng(7)
    for _ in range(10):
        xy = rng.uniform(0, 50, (80, 2)).astype(np.float32)
        boxes = np.concatenate([xy, xy + rng.uniform(2, 30, (80, 2)).astype(np.float32)], 1)
        scores = rng.random(80).astype(np.float32)
        for threshold in (0.3, 0.6):
            assert nms(boxes, scores, threshold).tolist() == nms_oracle(boxes, scores, threshold)


def test_the_old_rule_would_fail_here() -> None:
    """The integer sets do exercise the difference: rounding the threshold to nearest float32
    changes the kept indices on several of them (so the tests above can fail)."""
    differ = 0
    for seed in range(6):
        boxes, scores = _integer_sets(seed)
        rounded = float(F32(0.3))
        differ += nms_oracle(boxes, scores, rounded) != nms_oracle(boxes, scores, 0.3)
    assert differ >= 3


@pytest.mark.parametrize(
    "threshold", [0.3, 0.7, 0.0, -0.0, 1.0, -1e-50, 1e-50, 1e39, -1e39, 2.0**-149]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threshold_below_is_the_largest_value_not_above(threshold: float, dtype: type) -> None:
    t = threshold_below(threshold, dtype)
    assert t.dtype == np.dtype(dtype)
    assert float(t) <= threshold
    with np.errstate(over="ignore"):
        assert float(np.nextafter(t, dtype(np.inf))) > threshold


@pytest.mark.parametrize("threshold", [0.3, 0.6])
def test_torchvision_side_by_side(threshold: float) -> None:
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    for seed in range(10):
        boxes, scores = _integer_sets(seed, n=300)
        expected = torchvision.ops.nms(torch.from_numpy(boxes), torch.from_numpy(scores), threshold)
        assert nms(boxes, scores, threshold).tolist() == expected.tolist()
