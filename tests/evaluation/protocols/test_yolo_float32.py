"""#17: ``protocol="yolo"`` reproduces Ultralytics' float32 IoU and its unstable score order.

Expected numbers are those stated in issue #17 (checked there against Ultralytics 8.4.190) or
worked out by hand below; Ultralytics itself is not needed.
"""

from __future__ import annotations

import numpy as np

from ioukit.analysis.confusion import confusion_matrix
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.evaluation.protocols.yolo import match_yolo

CATS = CategoryTable.from_lists([0], ["a"])


def _pair(
    gt_boxes: list[list[float]],
    gt_image: list[int],
    pred_boxes: list[list[float]],
    pred_image: list[int],
    scores: list[float],
    n_images: int = 1,
) -> tuple[Dataset, Dataset]:
    images = ImageTable.from_lists(list(range(1, n_images + 1)), [str(i) for i in range(n_images)])
    gt = Dataset.from_arrays(
        images, CATS, boxes=gt_boxes, image_index=gt_image, category_id=[0] * len(gt_boxes)
    )
    pred = Dataset.from_arrays(
        images,
        CATS,
        boxes=pred_boxes,
        image_index=pred_image,
        category_id=[0] * len(pred_boxes),
        scores=scores,
    )
    return gt, pred


def test_tiny_boxes_iou_is_exactly_one_half_in_float32() -> None:
    # 1 / (2 + 1e-7) in float64 misses 0.5; in float32 the eps vanishes: IoU 0.5, a hit
    gt, pred = _pair([[0, 0, 1, 2]], [0], [[0, 0, 1, 1]], [0], [0.9])
    stats = evaluate(gt, pred, protocol="yolo").stats
    assert round(stats["mAP50"], 6) == 0.995  # one perfect hit: Ultralytics' 101-point AP
    assert match_yolo(gt, pred, np.array([0.5])).matched[0, 0] == 0


def test_float32_rounding_across_the_threshold() -> None:
    # exact IoU 0.4999999999999998; Ultralytics' float32 arithmetic gives 0.50000006: a hit
    gt, pred = _pair([[236.11, 241.9, 477.91, 448.0]], [0], [[236.11, 241.9, 357.01, 448.0]], [0],
                     [0.9])  # fmt: skip
    assert match_yolo(gt, pred, np.array([0.5])).matched[0, 0] == 0
    assert round(evaluate(gt, pred, protocol="yolo").stats["mAP50"], 6) == 0.995
    # the COCO protocol computes in float64 and misses
    assert evaluate(gt, pred).stats["AP50"] == 0.0


def test_ground_truths_equal_only_in_float32_go_to_the_first() -> None:
    gt, pred = _pair(
        [[196, 171, 621, 459], [262, 188, 651, 524]], [0, 0], [[214, 182, 672, 487]], [0], [0.9]
    )
    m = match_yolo(gt, pred, np.array([0.5, 0.75]))
    assert m.matched[:, 0].tolist() == [0, 0]  # both 0.7548594 in float32: first gt
    assert m.iou is not None and float(m.iou[0, 0]) == float(np.float32(0.7548594))


def test_tied_scores_follow_ultralytics_argsort() -> None:
    # three images, one gt each; scores [0.5], [0.25], [0.75 hit, 0.75 duplicate]:
    # np.argsort(-conf) puts the duplicate (a false positive) first -> Ultralytics mAP50 0.74625
    boxes = [[0, 0, 10, 10], [20, 20, 30, 30], [40, 40, 50, 50]]
    gt, pred = _pair(
        boxes,
        [0, 1, 2],
        [boxes[0], boxes[1], boxes[2], boxes[2]],
        [0, 1, 2, 2],
        [0.5, 0.25, 0.75, 0.75],
        n_images=3,
    )
    order = np.argsort(-np.float32([0.5, 0.25, 0.75, 0.75]))
    unstable = evaluate(gt, pred, protocol="yolo").stats["mAP50"]
    stable = evaluate(gt, pred, protocol="yolo", stable_ties=True).stats["mAP50"]
    assert round(stable, 5) == 0.83
    if order[0] == 3:  # this NumPy's sort leaves the duplicate first, as in the issue
        assert round(unstable, 5) == 0.74625
    else:  # pragma: no cover - another NumPy sort: Ultralytics itself would agree with stable
        assert unstable == stable


def test_confusion_matrix_float32_threshold_and_first_gt() -> None:
    # IoU exactly 0.45 in reals is not > 0.45; float32 IoU of these boxes is 0.45 too: no match
    gt, pred = _pair([[0, 0, 20, 10]], [0], [[0, 0, 9, 10]], [0], [0.9])
    assert confusion_matrix(gt, pred).matrix.tolist() == [[0, 1], [1, 0]]
    # float32 rounding across 0.5 counts for the matrix as for mAP
    gt, pred = _pair([[236.11, 241.9, 477.91, 448.0]], [0], [[236.11, 241.9, 357.01, 448.0]], [0],
                     [0.9])  # fmt: skip
    assert confusion_matrix(gt, pred, iou_threshold=0.5).matrix.tolist() == [[1, 0], [0, 0]]
    # confidence exactly 0.25 is not > 0.25
    gt, pred = _pair([[0, 0, 10, 10]], [0], [[0, 0, 10, 10]], [0], [0.25])
    assert confusion_matrix(gt, pred).matrix.tolist() == [[0, 0], [1, 0]]


def test_confusion_matrix_ties_go_to_the_first_ground_truth_in_file_order() -> None:
    # two identical ground truths, class 1 first in the file: Ultralytics' argmax takes it
    cats = CategoryTable.from_lists([0, 1], ["a", "b"])
    images = ImageTable.from_lists([1], ["0"])
    gt = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 10, 10], [0, 0, 10, 10]], image_index=[0, 0],
        category_id=[1, 0],
    )  # fmt: skip
    pred = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 10, 10]], image_index=[0], category_id=[0], scores=[0.9]
    )
    m = confusion_matrix(gt, pred).matrix
    assert m[0, 1] == 1 and m[0, 0] == 0  # predicted "a", true "b"; "a" is missed
    assert m[2, 0] == 1
