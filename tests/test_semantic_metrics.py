"""The semantic-segmentation suite against mmsegmentation's formulas and torchmetrics
(issue #26 item 3).

mmsegmentation's ``IoUMetric`` (``intersect_and_union`` + ``total_area_to_metrics``) is
transcribed below from its description: per image, histograms of the intersection, the
prediction and the label over the non-ignored pixels; summed over images; per class
``IoU = I / U``, ``Acc = I / label``, ``Dice = 2 I / (pred + label)``, ``Precision = I / pred``
(NaN for 0 / 0); ``aAcc = sum(I) / sum(label)``; ``mIoU``, ``mAcc``, ``mDice`` by
``np.nanmean``. Frequency-weighted IoU is torchmetrics' ``average="weighted"`` Jaccard index.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ioukit.segmentation import SegmentationMetric, segmentation_iou

K = 6
IGNORE = 255


def _images(seed: int, n: int = 5, *, skip: tuple[int, ...] = ()) -> list[tuple[np.ndarray, ...]]:
    """Label maps with structure (blocks), noise, ignored pixels and classes left out."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        h, w = int(rng.integers(5, 40)), int(rng.integers(5, 40))
        gt = np.repeat(np.repeat(rng.integers(0, K, (4, 4)), -(-h // 4), 0), -(-w // 4), 1)[:h, :w]
        pred = np.where(rng.random((h, w)) < 0.7, gt, rng.integers(0, K, (h, w)))
        spare = min(set(range(K)) - set(skip))
        for c in skip:  # a class with no ground truth (still predicted now and then)
            gt = np.where(gt == c, spare, gt)
        gt = np.where(rng.random((h, w)) < 0.05, IGNORE, gt)
        out.append((pred, gt))
    return out


def mmseg_metrics(images: list[tuple[np.ndarray, ...]]) -> dict[str, np.ndarray | float]:
    inter = np.zeros(K)
    union = np.zeros(K)
    area_pred = np.zeros(K)
    area_label = np.zeros(K)
    for pred, gt in images:
        keep = gt != IGNORE
        p, g = pred[keep], gt[keep]
        i = np.histogram(p[p == g].astype(float), bins=K, range=(0, K - 1))[0]
        ap = np.histogram(p.astype(float), bins=K, range=(0, K - 1))[0]
        al = np.histogram(g.astype(float), bins=K, range=(0, K - 1))[0]
        inter += i
        area_pred += ap
        area_label += al
        union += ap + al - i
    with np.errstate(invalid="ignore", divide="ignore"):
        iou, acc = inter / union, inter / area_label
        dice, prec = 2 * inter / (area_pred + area_label), inter / area_pred
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-NaN column
        return {
            "aAcc": inter.sum() / area_label.sum(),
            "IoU": iou,
            "Acc": acc,
            "Dice": dice,
            "Precision": prec,
            "mIoU": float(np.nanmean(iou)),
            "mAcc": float(np.nanmean(acc)),
            "mDice": float(np.nanmean(dice)),
        }


def _streamed(images: list[tuple[np.ndarray, ...]]) -> object:
    metric = SegmentationMetric(num_classes=K, ignore_index=IGNORE)
    for pred, gt in images:
        metric.update(pred, gt)
    return metric.compute()


@pytest.mark.parametrize("skip", [(), (2,), (0, 5)])
@pytest.mark.parametrize("seed", range(3))
def test_equals_mmsegmentation(seed: int, skip: tuple[int, ...]) -> None:
    images = _images(seed, skip=skip)
    want = mmseg_metrics(images)
    got = _streamed(images)
    for ours, theirs in [
        (got.iou, want["IoU"]),
        (got.accuracy, want["Acc"]),
        (got.dice, want["Dice"]),
        (got.precision, want["Precision"]),
    ]:
        np.testing.assert_allclose(ours, theirs, rtol=1e-14, equal_nan=True)
    assert got.pixel_accuracy == pytest.approx(want["aAcc"], rel=1e-14)
    assert got.miou == pytest.approx(want["mIoU"], rel=1e-14)
    assert got.mean_accuracy == pytest.approx(want["mAcc"], rel=1e-14)
    assert got.mean_dice == pytest.approx(want["mDice"], rel=1e-14)
    if skip:
        assert np.isnan(got.accuracy[list(skip)]).all()


def test_streaming_and_batched_calls_agree() -> None:
    images = _images(9)
    one = segmentation_iou(
        np.concatenate([p.reshape(-1) for p, _ in images]),
        np.concatenate([g.reshape(-1) for _, g in images]),
        num_classes=K,
        ignore_index=IGNORE,
    )
    streamed = _streamed(images)
    np.testing.assert_array_equal(one.confusion_matrix, streamed.confusion_matrix)
    assert (one.fwiou, one.mean_accuracy) == (streamed.fwiou, streamed.mean_accuracy)


def test_fwiou_by_hand() -> None:
    # class 0: 3 gt pixels, IoU 2/4; class 1: 3 gt pixels, IoU 2/3; class 2 only predicted
    gt = np.array([0, 0, 1, 1, 1, 0, IGNORE])
    pred = np.array([0, 2, 1, 1, 0, 0, 1])
    r = segmentation_iou(pred, gt, num_classes=4, ignore_index=IGNORE)
    assert r.fwiou == pytest.approx(0.5 * 0.5 + 0.5 * 2 / 3, rel=1e-15)
    np.testing.assert_allclose(r.frequency, [0.5, 0.5, 0, 0])
    assert r.mean_accuracy == pytest.approx(2 / 3)
    assert np.isnan(segmentation_iou([IGNORE], [IGNORE], num_classes=2).fwiou)


# ----------------------------------------------------------------------------- torchmetrics


def _torchmetrics(images: list[tuple[np.ndarray, ...]], cls: str, average: str) -> np.ndarray:
    torch = pytest.importorskip("torch")
    classification = pytest.importorskip("torchmetrics.classification")
    metric = getattr(classification, cls)(num_classes=K, average=average, ignore_index=IGNORE)
    for pred, gt in images:
        metric.update(
            torch.from_numpy(pred.astype(np.int64)), torch.from_numpy(gt.astype(np.int64))
        )
    return np.asarray(metric.compute().double().numpy())


@pytest.mark.parametrize("skip", [(), (3,)])
@pytest.mark.parametrize("seed", range(3))
def test_equals_torchmetrics_where_they_overlap(seed: int, skip: tuple[int, ...]) -> None:
    images = _images(seed + 20, skip=skip)
    got = _streamed(images)
    jaccard = "MulticlassJaccardIndex"
    accuracy = "MulticlassAccuracy"
    assert got.miou == pytest.approx(float(_torchmetrics(images, jaccard, "macro")), rel=1e-6)
    assert got.fwiou == pytest.approx(float(_torchmetrics(images, jaccard, "weighted")), rel=1e-6)
    micro = float(_torchmetrics(images, accuracy, "micro"))
    assert got.pixel_accuracy == pytest.approx(micro, rel=1e-6)
    per_class = _torchmetrics(images, jaccard, "none")
    np.testing.assert_allclose(np.nan_to_num(got.iou), per_class, rtol=1e-6)
    recall = _torchmetrics(images, accuracy, "none")
    np.testing.assert_allclose(np.nan_to_num(got.accuracy), recall, rtol=1e-6)
    macro = float(_torchmetrics(images, accuracy, "macro"))
    if not skip:  # every class has ground truth: the two mean accuracies are one number
        assert got.mean_accuracy == pytest.approx(macro, rel=1e-6)
    else:  # torchmetrics averages the predicted-only class in as 0; mmsegmentation leaves it out
        labelled = ~np.isnan(got.accuracy)
        as_torchmetrics = np.nan_to_num(got.accuracy)[got.present].mean()
        assert labelled.sum() < got.present.sum()
        assert macro == pytest.approx(as_torchmetrics, rel=1e-6)
        assert got.mean_accuracy > macro
