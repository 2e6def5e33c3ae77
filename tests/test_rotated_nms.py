"""rotated_nms / batched_rotated_nms against the quadratic greedy loop over the exact IoU."""

from __future__ import annotations

import numpy as np
import pytest

from ioukit import BoxError, batched_rotated_nms, box_convert, rotated_nms
from tests.rotated_oracle import greedy_rotated_nms


def clustered(seed: int, n: int, clusters: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Boxes jittered around a few cluster centres (as a detector's raw output), with ties."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 400, size=(clusters, 2))
    which = rng.integers(0, clusters, size=n)
    boxes = np.concatenate(
        [
            centres[which] + rng.normal(0, 4, size=(n, 2)),
            rng.uniform(10, 40, size=(n, 2)),
            rng.normal(0, 20, size=(n, 1)),
        ],
        axis=1,
    )
    scores = np.round(rng.uniform(0, 1, size=n), 2)  # many ties
    return boxes, scores


def oracle(boxes: np.ndarray, scores: np.ndarray, threshold: float, classes=None) -> list[int]:  # type: ignore[no-untyped-def]
    corners = box_convert(boxes, "cxcywhr", "xyxyxyxy")
    degenerate = (boxes[:, 2] == 0) | (boxes[:, 3] == 0)
    return greedy_rotated_nms(corners, degenerate, scores, threshold, classes)


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.7])
def test_same_indices_as_greedy_reference(threshold: float) -> None:
    boxes, scores = clustered(1, 400)
    kept = rotated_nms(boxes, scores, iou_threshold=threshold)
    assert kept.dtype == np.int64
    assert kept.tolist() == oracle(boxes, scores, threshold)


def test_batched_same_as_reference_per_class() -> None:
    boxes, scores = clustered(2, 300)
    classes = np.random.default_rng(3).integers(0, 3, size=300)
    kept = batched_rotated_nms(boxes, scores, classes, iou_threshold=0.4)
    assert kept.tolist() == oracle(boxes, scores, 0.4, classes)
    agnostic = batched_rotated_nms(boxes, scores, classes, iou_threshold=0.4, class_agnostic=True)
    assert agnostic.tolist() == rotated_nms(boxes, scores, iou_threshold=0.4).tolist()


def test_batched_score_threshold_and_max_detections() -> None:
    boxes, scores = clustered(4, 200)
    classes = np.zeros(200, dtype=np.int64)
    keep = scores > 0.5
    full = np.flatnonzero(keep)[oracle(boxes[keep], scores[keep], 0.5)]
    got = batched_rotated_nms(boxes, scores, classes, iou_threshold=0.5, score_threshold=0.5)
    assert got.tolist() == full.tolist()
    top = batched_rotated_nms(
        boxes, scores, classes, iou_threshold=0.5, score_threshold=0.5, max_detections=3
    )
    assert top.tolist() == full[:3].tolist()
    none = batched_rotated_nms(boxes, scores, classes, iou_threshold=0.5, max_detections=0)
    assert none.tolist() == []


def test_sparse_scene_and_edge_sizes() -> None:
    rng = np.random.default_rng(5)
    n = 500
    boxes = np.concatenate(
        [
            rng.uniform(0, 20000, size=(n, 2)),
            rng.uniform(5, 30, size=(n, 2)),
            rng.normal(0, 30, (n, 1)),
        ],
        axis=1,
    )
    scores = rng.uniform(size=n)
    assert rotated_nms(boxes, scores, iou_threshold=0.5).tolist() == oracle(boxes, scores, 0.5)
    assert rotated_nms(boxes[:1], scores[:1], iou_threshold=0.5).tolist() == [0]
    assert rotated_nms(np.zeros((0, 5)), np.zeros(0), iou_threshold=0.5).tolist() == []


def test_ties_keep_the_earlier_box_and_identical_boxes() -> None:
    box = [10, 10, 8, 4, 30]
    boxes = np.array([box, box, box])
    assert rotated_nms(boxes, [0.5, 0.5, 0.5], iou_threshold=0.99).tolist() == [0]
    assert rotated_nms(boxes, [0.4, 0.5, 0.5], iou_threshold=0.99).tolist() == [1]
    # IoU exactly 1 is not > 1: nothing suppressed
    assert rotated_nms(boxes, [0.5, 0.5, 0.5], iou_threshold=1.0).tolist() == [0, 1, 2]
    zero = np.array([[0, 0, 0, 4, 0], [0, 0, 0, 4, 0]])
    assert rotated_nms(zero, [0.9, 0.8], iou_threshold=0.0).tolist() == [0, 1]


def test_other_formats_and_conventions() -> None:
    boxes, scores = clustered(6, 150)
    want = rotated_nms(boxes, scores, iou_threshold=0.5).tolist()
    corners = box_convert(boxes, "cxcywhr", "xyxyxyxy")
    assert rotated_nms(corners, scores, iou_threshold=0.5, fmt="xyxyxyxy").tolist() == want
    mm = boxes.copy()
    mm[:, 4] = -np.radians(boxes[:, 4])
    got = rotated_nms(mm, scores, iou_threshold=0.5, angle_unit="radians", clockwise=True)
    assert got.tolist() == want


def test_torch_in_torch_out() -> None:
    torch = pytest.importorskip("torch")
    boxes, scores = clustered(7, 50)
    kept = rotated_nms(torch.asarray(boxes), torch.asarray(scores), iou_threshold=0.5)
    assert torch.is_tensor(kept)
    assert kept.dtype == torch.int64
    assert kept.tolist() == rotated_nms(boxes, scores, iou_threshold=0.5).tolist()


def test_bad_input() -> None:
    with pytest.raises(BoxError, match=r"scores\[1\]"):
        rotated_nms([[0, 0, 1, 1, 0]] * 2, [0.5, float("nan")], iou_threshold=0.5)
    with pytest.raises(BoxError, match=r"scores: expected shape \(2,\)"):
        rotated_nms([[0, 0, 1, 1, 0]] * 2, [0.5], iou_threshold=0.5)
    with pytest.raises(BoxError, match="NaN or infinite"):
        rotated_nms([[0, 0, 1, 1, float("inf")]], [0.5], iou_threshold=0.5)
    with pytest.raises(ValueError, match="iou_threshold"):
        rotated_nms([[0, 0, 1, 1, 0]], [0.5], iou_threshold=float("nan"))
