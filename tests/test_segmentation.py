"""ioukit.segmentation: confusion-matrix metrics against a per-class boolean-mask reference."""

from __future__ import annotations

import numpy as np
import pytest

from ioukit import segmentation
from ioukit.errors import MaskError
from ioukit.segmentation import SegmentationMetric, SegmentationResult, segmentation_iou


def reference(pred: np.ndarray, gt: np.ndarray, k: int, ignore: int | None) -> dict[str, object]:
    """Per-class IoU/Dice from boolean masks, pixel by pixel, no confusion matrix."""
    valid = np.ones(gt.shape, bool) if ignore is None else gt != ignore
    iou, dice = [], []
    for c in range(k):
        p = (pred == c) & valid
        g = (gt == c) & valid
        tp, fp, fn = int((p & g).sum()), int((p & ~g).sum()), int((~p & g).sum())
        iou.append(tp / (tp + fp + fn) if tp + fp + fn else np.nan)
        dice.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else np.nan)
    accuracy = float(((pred == gt) & valid).sum() / valid.sum()) if valid.any() else np.nan
    return {"iou": np.array(iou), "dice": np.array(dice), "accuracy": accuracy}


def random_labels(
    rng: np.random.Generator, shape: tuple[int, ...], k: int
) -> tuple[np.ndarray, np.ndarray]:
    gt = rng.integers(0, k, shape)
    gt[rng.random(shape) < 0.1] = 255
    pred = np.where(rng.random(shape) < 0.7, np.where(gt == 255, 0, gt), rng.integers(0, k, shape))
    return pred, gt


@pytest.mark.parametrize("k", [1, 2, 5, 21])
def test_matches_boolean_mask_reference(k: int) -> None:
    rng = np.random.default_rng(k)
    pred, gt = random_labels(rng, (3, 17, 23), k)
    result = segmentation_iou(pred, gt, num_classes=k)
    ref = reference(pred, gt, k, 255)
    np.testing.assert_allclose(result.iou, ref["iou"], rtol=1e-15)
    np.testing.assert_allclose(result.dice, ref["dice"], rtol=1e-15)
    assert result.pixel_accuracy == pytest.approx(ref["accuracy"], rel=1e-15)
    present = ~np.isnan(ref["iou"])  # type: ignore[call-overload]
    np.testing.assert_array_equal(result.present, present)
    assert result.miou == pytest.approx(float(np.mean(ref["iou"][present])), rel=1e-15)  # type: ignore[index]
    assert result.confusion_matrix.sum() == (gt != 255).sum()


def test_absent_classes_are_nan_and_excluded_from_the_mean() -> None:
    gt = np.array([[0, 0], [2, 2]])
    pred = np.array([[0, 2], [2, 2]])
    result = segmentation_iou(pred, gt, num_classes=4)
    assert result.present.tolist() == [True, False, True, False]
    assert np.isnan(result.iou[[1, 3]]).all() and np.isnan(result.dice[[1, 3]]).all()
    assert result.miou == pytest.approx((0.5 + 2 / 3) / 2)
    assert not np.isnan(result.miou) and not np.isnan(result.mean_dice)
    assert "absent" in result.summary()


def test_a_class_only_predicted_counts_as_zero() -> None:
    result = segmentation_iou(np.array([1, 1]), np.array([0, 0]), num_classes=2)
    assert result.iou.tolist() == [0.0, 0.0] and result.present.all() and result.miou == 0.0


def test_everything_ignored_gives_nan_means() -> None:
    result = segmentation_iou(np.array([0, 1]), np.array([255, 255]), num_classes=2)
    assert not result.present.any()
    assert np.isnan(result.miou) and np.isnan(result.pixel_accuracy)


def test_ignore_index_none_and_custom() -> None:
    pred = np.array([0, 1, 1, 0])
    gt = np.array([0, 1, 0, 1])
    assert segmentation_iou(pred, gt, num_classes=2, ignore_index=None).pixel_accuracy == 0.5
    assert segmentation_iou(pred, gt, num_classes=2, ignore_index=1).pixel_accuracy == 0.5
    assert segmentation_iou(pred, gt, num_classes=2, ignore_index=1).confusion_matrix.tolist() == [
        [1, 1],
        [0, 0],
    ]


def test_streaming_equals_one_shot_and_merge() -> None:
    rng = np.random.default_rng(0)
    pred, gt = random_labels(rng, (6, 11, 13), 4)
    whole = segmentation_iou(pred, gt, num_classes=4)
    a = SegmentationMetric(num_classes=4)
    b = SegmentationMetric(num_classes=4)
    for i in range(3):
        a.update(pred[i], gt[i])
    for i in range(3, 6):
        b.update(pred[i], gt[i])
    a.merge(b)
    streamed = a.compute()
    np.testing.assert_array_equal(streamed.confusion_matrix, whole.confusion_matrix)
    np.testing.assert_array_equal(streamed.iou, whole.iou)
    assert streamed.miou == whole.miou
    a.reset()
    assert a.confusion_matrix.sum() == 0
    with pytest.raises(ValueError, match="other: expected num_classes=4"):
        a.merge(SegmentationMetric(num_classes=3))
    with pytest.raises(TypeError, match="SegmentationMetric"):
        a.merge("x")  # type: ignore[arg-type]


def test_torch_inputs_match_numpy() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    pred, gt = random_labels(rng, (2, 9, 7), 3)
    expected = segmentation_iou(pred, gt, num_classes=3)
    got = segmentation_iou(
        torch.from_numpy(pred), torch.from_numpy(gt).to(torch.uint8), num_classes=3
    )
    np.testing.assert_array_equal(got.confusion_matrix, expected.confusion_matrix)
    mixed = segmentation_iou(torch.from_numpy(pred), gt, num_classes=3)
    np.testing.assert_array_equal(mixed.confusion_matrix, expected.confusion_matrix)
    with pytest.raises(MaskError, match="integer class labels"):
        segmentation_iou(torch.zeros(3), torch.zeros(3, dtype=torch.int64), num_classes=2)
    with pytest.raises(MaskError, match=r"pred_labels: expected class indices in \[0, 2\), got 5"):
        segmentation_iou(torch.tensor([5]), torch.tensor([0]), num_classes=2)


def test_bad_input() -> None:
    with pytest.raises(MaskError, match=r"expected the same shape, got \(2,\) and \(3,\)"):
        segmentation_iou(np.zeros(2, int), np.zeros(3, int), num_classes=2)
    with pytest.raises(MaskError, match=r"gt_labels: expected class indices in \[0, 2\), got 7"):
        segmentation_iou(np.zeros(2, int), np.array([0, 7]), num_classes=2)
    with pytest.raises(MaskError, match=r"pred_labels: expected class indices in \[0, 2\), got -1"):
        segmentation_iou(np.array([0, -1]), np.zeros(2, int), num_classes=2)
    with pytest.raises(MaskError, match="integer class labels, got dtype float64"):
        segmentation_iou(np.zeros(2), np.zeros(2, int), num_classes=2)
    with pytest.raises(ValueError, match="num_classes: expected an integer >= 1, got 0"):
        segmentation_iou(np.zeros(2, int), np.zeros(2, int), num_classes=0)
    with pytest.raises(MaskError, match="scalar"):
        segmentation_iou(np.int64(0), np.int64(0), num_classes=2)


def test_inputs_not_modified_and_from_confusion() -> None:
    pred = np.array([[0, 1], [1, 255]])
    gt = np.array([[0, 1], [255, 255]])
    copies = pred.copy(), gt.copy()
    r = segmentation_iou(pred, gt, num_classes=2)
    np.testing.assert_array_equal(pred, copies[0])
    np.testing.assert_array_equal(gt, copies[1])
    again = SegmentationResult.from_confusion(r.confusion_matrix)
    np.testing.assert_array_equal(again.iou, r.iou)


def test_module_all() -> None:
    public = {
        n
        for n in dir(segmentation)
        if not n.startswith("_")
        and getattr(getattr(segmentation, n), "__module__", "") == "ioukit.segmentation"
    }
    assert public == set(segmentation.__all__)


def test_pixel_confusion_matrix_and_the_deprecated_name() -> None:
    from ioukit.segmentation import confusion_matrix, pixel_confusion_matrix

    want = pixel_confusion_matrix([0, 1, 1], [0, 0, 1], num_classes=2)
    assert want.tolist() == [[1, 1], [0, 1]]  # [gt, pred]
    with pytest.warns(DeprecationWarning, match="pixel_confusion_matrix"):
        old = confusion_matrix([0, 1, 1], [0, 0, 1], num_classes=2)
    np.testing.assert_array_equal(old, want)
