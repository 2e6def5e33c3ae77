"""Semantic-segmentation metrics from a confusion matrix: IoU, Dice, accuracy, FWIoU.

Every pixel whose ground truth is not ``ignore_index`` adds one to ``confusion[gt, pred]``.
From the (K, K) matrix, per class ``c``: ``TP = confusion[c, c]``, ``FP`` = column sum - TP,
``FN`` = row sum - TP, and (mmsegmentation's ``IoUMetric`` formulas)

* IoU  = TP / (TP + FP + FN), Dice = 2 TP / (2 TP + FP + FN)
* accuracy (recall) = TP / (TP + FN), precision = TP / (TP + FP)
* pixel accuracy (mmsegmentation's ``aAcc``) = trace / total
* frequency-weighted IoU = sum over classes of (TP + FN) / total x IoU.

**Absent classes.** A per-class value whose denominator is 0 is NaN and left out of its mean
(``np.nanmean``, as mmsegmentation): a class in neither map has no IoU or Dice (``present =
False``), a class without ground-truth pixels has no accuracy; so ``miou`` and ``mean_dice``
average the present classes and ``mean_accuracy`` the classes with ground truth. Only when no
pixel at all was counted are the means and the pixel accuracy NaN.

torchmetrics (``MulticlassJaccardIndex``, ``MulticlassAccuracy``, ``average="macro"``)
gives the same ``miou``; ``average="weighted"`` IoU is ``fwiou`` and ``average="micro"``
accuracy is ``pixel_accuracy``. Its macro accuracy differs where a class is predicted but has
no ground truth: torchmetrics counts it as accuracy 0, mmsegmentation and ioukit leave it out.

Confusion matrices add up, so images can be accumulated one at a time (or per worker and
merged) with :class:`SegmentationMetric`; the result equals one call on all pixels.

Examples
--------
>>> import numpy as np
>>> gt = np.array([[0, 0, 1], [1, 1, 255]])
>>> pred = np.array([[0, 1, 1], [1, 1, 2]])
>>> result = segmentation_iou(pred, gt, num_classes=3)
>>> result.iou
array([0.5 , 0.75,  nan])
>>> float(result.miou)
0.625
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np

from ioukit._array import Array
from ioukit.errors import MaskError, ParameterError

__all__ = [
    "SegmentationMetric",
    "SegmentationResult",
    "confusion_matrix",
    "pixel_confusion_matrix",
    "segmentation_iou",
]


@dataclass(frozen=True, slots=True)
class SegmentationResult:
    """Metrics of a confusion matrix (K classes).

    Attributes
    ----------
    confusion_matrix : numpy.ndarray of int64, shape (K, K)
        ``[gt class, predicted class]`` pixel counts (ignored pixels excluded).
    iou : numpy.ndarray of float64, shape (K,)
        Per-class IoU; NaN for a class absent from both predictions and ground truth.
    dice : numpy.ndarray of float64, shape (K,)
        Per-class Dice; NaN where ``iou`` is.
    present : numpy.ndarray of bool, shape (K,)
        Whether the class appears in the predictions or the ground truth.
    miou : float
        Mean IoU over present classes.
    mean_dice : float
        Mean Dice over present classes.
    pixel_accuracy : float
        Correctly labelled pixels / counted pixels.
    accuracy : numpy.ndarray of float64, shape (K,)
        Per-class accuracy (recall) ``TP / (TP + FN)``; NaN for a class without ground truth.
    precision : numpy.ndarray of float64, shape (K,)
        Per-class ``TP / (TP + FP)``; NaN for a class never predicted.
    frequency : numpy.ndarray of float64, shape (K,)
        Share of the counted pixels whose ground truth is the class.
    mean_accuracy : float
        Mean accuracy over the classes with ground truth (mmsegmentation's ``mAcc``).
    fwiou : float
        Frequency-weighted IoU ``sum(frequency * iou)`` over the classes with ground truth.
    """

    confusion_matrix: np.ndarray
    iou: np.ndarray
    dice: np.ndarray
    present: np.ndarray
    miou: float
    mean_dice: float
    pixel_accuracy: float
    accuracy: np.ndarray
    precision: np.ndarray
    frequency: np.ndarray
    mean_accuracy: float
    fwiou: float

    @classmethod
    def from_confusion(cls, confusion: np.ndarray) -> SegmentationResult:
        """All metrics of a (K, K) confusion matrix (rows: ground truth, columns: prediction).

        Examples
        --------
        >>> r = SegmentationResult.from_confusion(np.array([[3, 1], [0, 0]]))
        >>> r.iou, r.present
        (array([0.75, 0.  ]), array([ True,  True]))
        """
        matrix = np.asarray(confusion, dtype=np.int64)
        tp = np.diagonal(matrix).astype(np.float64)
        gt_total = matrix.sum(axis=1).astype(np.float64)
        pred_total = matrix.sum(axis=0).astype(np.float64)
        union = gt_total + pred_total - tp
        present = union > 0
        safe = np.where(present, union, 1.0)
        iou = np.where(present, tp / safe, np.nan)
        both = gt_total + pred_total
        dice = np.where(present, 2 * tp / np.where(present, both, 1.0), np.nan)
        total = float(matrix.sum())
        if present.any():
            miou, mean_dice = float(iou[present].mean()), float(dice[present].mean())
        else:
            miou = mean_dice = float("nan")
        pixel_accuracy = float(tp.sum()) / total if total > 0 else float("nan")
        labelled = gt_total > 0
        accuracy = np.where(labelled, tp / np.where(labelled, gt_total, 1.0), np.nan)
        predicted = pred_total > 0
        precision = np.where(predicted, tp / np.where(predicted, pred_total, 1.0), np.nan)
        frequency = gt_total / total if total > 0 else np.zeros_like(gt_total)
        if labelled.any():
            mean_accuracy = float(accuracy[labelled].mean())
            fwiou = float((frequency[labelled] * iou[labelled]).sum())
        else:
            mean_accuracy = fwiou = float("nan")
        return cls(
            matrix,
            iou,
            dice,
            present,
            miou,
            mean_dice,
            pixel_accuracy,
            accuracy,
            precision,
            frequency,
            mean_accuracy,
            fwiou,
        )

    def summary(self) -> str:
        """A short text table of the per-class and mean values.

        Examples
        --------
        >>> print(SegmentationResult.from_confusion(np.array([[1, 0], [0, 1]])).summary())
        class      IoU    Dice     Acc
        0       1.0000  1.0000  1.0000
        1       1.0000  1.0000  1.0000
        mean    1.0000  1.0000  1.0000
        pixel accuracy 1.0000, frequency-weighted IoU 1.0000
        """

        def cell(value: float) -> str:
            return f"{'-':>8}" if np.isnan(value) else f"{value:>8.4f}"

        lines = [f"{'class':<6}{'IoU':>8}{'Dice':>8}{'Acc':>8}"]
        for k in range(self.iou.shape[0]):
            if self.present[k]:
                lines.append(
                    f"{k:<6}{cell(self.iou[k])}{cell(self.dice[k])}{cell(self.accuracy[k])}"
                )
            else:
                lines.append(f"{k:<6}{'absent':>8}{'absent':>8}{'absent':>8}")
        means = f"{cell(self.miou)}{cell(self.mean_dice)}{cell(self.mean_accuracy)}"
        lines.append(f"{'mean':<6}{means}")
        lines.append(
            f"pixel accuracy {self.pixel_accuracy:.4f}, frequency-weighted IoU {self.fwiou:.4f}"
        )
        return "\n".join(lines)


def _check_options(num_classes: object, ignore_index: object) -> tuple[int, int | None]:
    if (
        not isinstance(num_classes, (int, np.integer))
        or isinstance(num_classes, bool)
        or num_classes < 1
    ):
        raise ParameterError(f"num_classes: expected an integer >= 1, got {num_classes!r}")
    if ignore_index is not None and (
        not isinstance(ignore_index, (int, np.integer)) or isinstance(ignore_index, bool)
    ):
        raise ParameterError(f"ignore_index: expected an integer or None, got {ignore_index!r}")
    return int(num_classes), None if ignore_index is None else int(ignore_index)


def _check_labels(x: Any, name: str) -> None:
    shape = tuple(x.shape)
    if len(shape) < 1:
        raise MaskError(f"{name}: expected a label map of shape (H, W) or (N, H, W), got a scalar")


def _out_of_range(values: np.ndarray, num_classes: int) -> str | None:
    if values.size == 0:
        return None
    low, high = values.min(), values.max()
    if low < 0 or high >= num_classes:
        bad = low if low < 0 else high
        return f"expected class indices in [0, {num_classes}), got {bad}"
    return None


def _confusion_numpy(
    pred: np.ndarray, gt: np.ndarray, num_classes: int, ignore: int | None
) -> np.ndarray:
    for x, name in ((pred, "pred_labels"), (gt, "gt_labels")):
        if x.dtype.kind not in "iu":
            raise MaskError(f"{name}: expected integer class labels, got dtype {x.dtype}")
    g = gt.reshape(-1)
    p = pred.reshape(-1)
    if ignore is not None:
        keep = g != ignore
        if not keep.all():
            g, p = g[keep], p[keep]
    for values, name in ((g, "gt_labels"), (p, "pred_labels")):
        problem = _out_of_range(values, num_classes)
        if problem:
            where = (
                " (pixels whose gt is ignore_index are skipped)" if name == "pred_labels" else ""
            )
            raise MaskError(f"{name}: {problem}{where}")
    index = g.astype(np.int64) * num_classes + p
    return np.bincount(index, minlength=num_classes * num_classes).reshape(num_classes, num_classes)


def _confusion_torch(pred: Any, gt: Any, num_classes: int, ignore: int | None) -> np.ndarray:
    import torch

    for x, name in ((pred, "pred_labels"), (gt, "gt_labels")):
        if x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool:
            raise MaskError(f"{name}: expected integer class labels, got dtype {x.dtype}")
    g = gt.detach().reshape(-1).to(torch.int64)
    p = pred.detach().reshape(-1).to(torch.int64)
    if ignore is not None:
        keep = g != ignore
        g, p = g[keep], p[keep]
    for values, name in ((g, "gt_labels"), (p, "pred_labels")):
        if values.numel() and (int(values.min()) < 0 or int(values.max()) >= num_classes):
            bad = int(values.min()) if int(values.min()) < 0 else int(values.max())
            raise MaskError(f"{name}: expected class indices in [0, {num_classes}), got {bad}")
    counts = torch.bincount(g * num_classes + p, minlength=num_classes * num_classes)
    matrix: np.ndarray = counts.reshape(num_classes, num_classes).cpu().numpy()
    return matrix.astype(np.int64)


def pixel_confusion_matrix(
    pred_labels: Array, gt_labels: Array, /, *, num_classes: int, ignore_index: int | None = 255
) -> np.ndarray:
    """The (K, K) pixel confusion matrix ``[gt class, predicted class]`` of label maps.

    (Detection's :func:`ioukit.confusion_matrix` is ``[predicted, true]`` with a background row
    and column; this function has its own name so that one name means one axis order.)

    Parameters
    ----------
    pred_labels, gt_labels : array_like of int, same shape (e.g. (H, W) or (N, H, W))
        NumPy arrays or torch tensors (counted on their device).
    num_classes : int
    ignore_index : int or None
        Ground-truth value of pixels to skip (their prediction is not checked).

    Returns
    -------
    numpy.ndarray of int64, shape (K, K)

    Examples
    --------
    >>> pixel_confusion_matrix([0, 1, 1], [0, 0, 1], num_classes=2)
    array([[1, 1],
           [0, 1]])
    """
    k, ignore = _check_options(num_classes, ignore_index)
    pred: Any
    gt: Any
    if array_api_compat.is_torch_array(pred_labels) and array_api_compat.is_torch_array(gt_labels):
        pred, gt = pred_labels, gt_labels
        torch_path = True
    else:
        pred = _as_numpy(pred_labels, "pred_labels")
        gt = _as_numpy(gt_labels, "gt_labels")
        torch_path = False
    _check_labels(pred, "pred_labels")
    _check_labels(gt, "gt_labels")
    if tuple(pred.shape) != tuple(gt.shape):
        raise MaskError(
            "pred_labels and gt_labels: expected the same shape, "
            f"got {tuple(pred.shape)} and {tuple(gt.shape)}"
        )
    if torch_path:
        return _confusion_torch(pred, gt, k, ignore)
    return _confusion_numpy(pred, gt, k, ignore)


def _as_numpy(x: object, name: str) -> np.ndarray:
    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise MaskError(
            f"{name}: expected an array of integer class labels, got {type(x).__name__} ({exc})"
        ) from None


def confusion_matrix(
    pred_labels: Array, gt_labels: Array, /, *, num_classes: int, ignore_index: int | None = 255
) -> np.ndarray:
    """Deprecated name of :func:`pixel_confusion_matrix` (same arguments and result).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     confusion_matrix([0, 1], [0, 1], num_classes=2).tolist()
    [[1, 0], [0, 1]]
    """
    import warnings

    warnings.warn(
        "ioukit.segmentation.confusion_matrix is renamed pixel_confusion_matrix (its axes are "
        "[gt, pred]; ioukit.confusion_matrix for detection is [pred, true])",
        DeprecationWarning,
        stacklevel=2,
    )
    return pixel_confusion_matrix(
        pred_labels, gt_labels, num_classes=num_classes, ignore_index=ignore_index
    )


def segmentation_iou(
    pred_labels: Array, gt_labels: Array, /, *, num_classes: int, ignore_index: int | None = 255
) -> SegmentationResult:
    """Per-class IoU, Dice and accuracy, their means, FWIoU and pixel accuracy of label maps.

    Parameters
    ----------
    pred_labels : array_like of int, shape (H, W) or (N, H, W)
        Predicted class of each pixel, in ``[0, num_classes)``. NumPy or torch (any device).
    gt_labels : array_like of int, same shape
        True class of each pixel, in ``[0, num_classes)`` or ``ignore_index``.
    num_classes : int
    ignore_index : int or None
        Ground-truth value of pixels that are not counted (default 255).

    Returns
    -------
    SegmentationResult
        Absent classes (in neither map) are NaN in ``iou``/``dice``, ``present = False``, and
        left out of the means.

    Raises
    ------
    MaskError
        Shapes differ, labels are not integers, or a label is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.array([[0, 0], [1, 1]])
    >>> r = segmentation_iou(np.array([[0, 1], [1, 1]]), gt, num_classes=3)
    >>> r.iou, r.present
    (array([0.5       , 0.66666667,        nan]), array([ True,  True, False]))
    >>> round(r.miou, 4), r.pixel_accuracy
    (0.5833, 0.75)
    >>> r.accuracy, r.mean_accuracy, round(r.fwiou, 4)  # class 2: no ground truth
    (array([0.5, 1. , nan]), 0.75, 0.5833)
    """
    matrix = pixel_confusion_matrix(
        pred_labels, gt_labels, num_classes=num_classes, ignore_index=ignore_index
    )
    return SegmentationResult.from_confusion(matrix)


class SegmentationMetric:
    """Streaming semantic-segmentation metric: ``update`` per batch, ``merge``, ``compute``.

    Parameters
    ----------
    num_classes : int
    ignore_index : int or None
        Ground-truth value of pixels that are not counted (default 255).

    Examples
    --------
    >>> import numpy as np
    >>> metric = SegmentationMetric(num_classes=2)
    >>> metric.update(np.array([[0, 1]]), np.array([[0, 1]]))
    >>> metric.update(np.array([[1, 1]]), np.array([[0, 255]]))
    >>> other = SegmentationMetric(num_classes=2)
    >>> other.update(np.array([[0]]), np.array([[0]]))
    >>> metric.merge(other)
    >>> metric.confusion_matrix
    array([[2, 1],
           [0, 1]])
    >>> metric.compute().iou
    array([0.66666667, 0.5       ])
    """

    def __init__(self, *, num_classes: int, ignore_index: int | None = 255) -> None:
        self.num_classes, self.ignore_index = _check_options(num_classes, ignore_index)
        self._matrix = np.zeros((self.num_classes, self.num_classes), dtype=np.int64)

    @property
    def confusion_matrix(self) -> np.ndarray:
        """A copy of the accumulated (K, K) matrix ``[gt class, predicted class]``."""
        return self._matrix.copy()

    def update(self, pred_labels: Array, gt_labels: Array, /) -> None:
        """Add the pixels of one batch of label maps (any shape, the same for both)."""
        self._matrix += pixel_confusion_matrix(
            pred_labels, gt_labels, num_classes=self.num_classes, ignore_index=self.ignore_index
        )

    def merge(self, other: SegmentationMetric, /) -> None:
        """Add the counts of another metric (e.g. from another worker) into this one."""
        if not isinstance(other, SegmentationMetric):
            raise TypeError(f"other: expected a SegmentationMetric, got {type(other).__name__}")
        if (other.num_classes, other.ignore_index) != (self.num_classes, self.ignore_index):
            raise ParameterError(
                f"other: expected num_classes={self.num_classes}, "
                f"ignore_index={self.ignore_index}, got num_classes={other.num_classes}, "
                f"ignore_index={other.ignore_index}"
            )
        self._matrix += other._matrix

    def reset(self) -> None:
        """Forget every pixel counted so far."""
        self._matrix[...] = 0

    def compute(self) -> SegmentationResult:
        """The metrics of everything counted so far."""
        return SegmentationResult.from_confusion(self._matrix.copy())
