"""Detection confusion matrix with a background row and column (Ultralytics semantics).

Axis order: ``matrix[pred, true]`` — **rows are predicted classes, columns are ground-truth
classes**, as in Ultralytics; index ``K`` (the last) is *background*. So
``matrix[i, j]`` (i, j < K) counts ground truths of class j matched by a prediction of class
i; ``matrix[i, K]`` counts predictions of class i that matched nothing (false positives);
``matrix[K, j]`` counts ground truths of class j that nothing matched (missed).
``matrix[K, K]`` is always 0.

Semantics of Ultralytics' ``ConfusionMatrix.process_batch`` (``utils/metrics.py``), per image:

- predictions with confidence ``> score_threshold`` (strict, default 0.25) take part;
- matching is class-agnostic on Ultralytics' IoU (``inter / (union + 1e-7)``) with
  ``IoU > iou_threshold`` (strict, default 0.45), compared as Ultralytics does in float32
  (an IoU that rounds to ``float32(iou_threshold)`` does not pass);
- ``matching="confidence"`` (default, Ultralytics 8.4, checked cell for cell against
  8.4.190 by ``benchmarks/check_ultralytics.py``): predictions in descending confidence
  (stable) each take the unmatched ground truth of highest IoU (ties: first ground truth);
- ``matching="iou"`` (Ultralytics 8.0 - 8.3): every prediction keeps its highest-IoU ground
  truth, then every ground truth keeps the highest-IoU prediction among those that chose it
  (ties: first index; those versions' unstable sort leaves ties unspecified).

ioukit choices: ground-truth crowds are left out (Ultralytics' COCO converter drops them);
predictions whose category is not in ``gt.categories`` are left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation import grouping
from ioukit.evaluation.groups import Groups, class_rows
from ioukit.evaluation.protocols.yolo import float32_values
from ioukit.evaluation.similarity.box import Float32BoxIoU

__all__ = ["ConfusionMatrix", "confusion_matrix"]


@dataclass(frozen=True, slots=True)
class ConfusionMatrix:
    """Counts of (predicted class, true class) pairs with a background class.

    Attributes
    ----------
    matrix : ndarray of int64, shape (K + 1, K + 1)
        ``matrix[pred, true]``; rows predictions, columns ground truth; index K = background.
    labels : tuple of str, length K + 1
        Category names in category-id order, then ``"background"``.
    category_ids : ndarray of int64, shape (K,)
    iou_threshold, score_threshold : float
    pred_gt : ndarray of int64, shape (N,), optional
        Per prediction row of ``pred``: the row in ``gt`` of the ground truth it matched
        (class-agnostic, whatever the two classes), -1 for none. The cell of a prediction is
        ``(class of pred, class of gt)``, or ``(class of pred, background)`` when it is
        kept and -1.
    pred_kept : ndarray of bool, shape (N,), optional
        Predictions that take part (``score > score_threshold``, a known category).
    gt_kept : ndarray of bool, shape (G,), optional
        Ground truths that take part (not crowd, a known category); one kept and matched by
        no prediction is in ``(background, its class)``.
    """

    matrix: np.ndarray
    labels: tuple[str, ...]
    category_ids: np.ndarray
    iou_threshold: float
    score_threshold: float
    pred_gt: np.ndarray | None = None
    pred_kept: np.ndarray | None = None
    gt_kept: np.ndarray | None = None

    @property
    def tp(self) -> np.ndarray:
        """(K,) correctly classified matches per class (the diagonal)."""
        return np.diagonal(self.matrix)[:-1].copy()

    @property
    def fp(self) -> np.ndarray:
        """(K,) predictions of each class that are not a correct match (row sum - diagonal)."""
        return np.asarray(self.matrix.sum(axis=1) - np.diagonal(self.matrix))[:-1]

    @property
    def fn(self) -> np.ndarray:
        """(K,) ground truths of each class not correctly matched (column sum - diagonal)."""
        return np.asarray(self.matrix.sum(axis=0) - np.diagonal(self.matrix))[:-1]

    def to_text(self) -> str:
        """The matrix as an aligned text table (rows predicted, columns true).

        Examples
        --------
        >>> cm = ConfusionMatrix(np.array([[2, 1], [0, 0]]), ("cat", "background"),
        ...                      np.array([1]), 0.45, 0.25)
        >>> print(cm.to_text())
        pred \\ true  cat  background
        cat            2           1
        background     0           0
        """
        corner = "pred \\ true"
        first = max(len(corner), *(len(label) for label in self.labels))
        widths = [
            max(len(label), *(len(str(v)) for v in self.matrix[:, j]))
            for j, label in enumerate(self.labels)
        ]
        lines = [
            "  ".join(
                [
                    corner.ljust(first),
                    *(lab.rjust(w) for lab, w in zip(self.labels, widths, strict=True)),
                ]
            )
        ]
        for i, label in enumerate(self.labels):
            cells = (str(v).rjust(w) for v, w in zip(self.matrix[i].tolist(), widths, strict=True))
            lines.append("  ".join([label.ljust(first), *cells]))
        return "\n".join(line.rstrip() for line in lines)


def confusion_matrix(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    iou_threshold: float = 0.45,
    score_threshold: float = 0.25,
    matching: str = "confidence",
    similarity: Any = None,
) -> ConfusionMatrix:
    """Confusion matrix of ``pred`` against ``gt`` (``matrix[pred, true]``, background last).

    Parameters
    ----------
    gt, pred : Dataset
    iou_threshold : float, default 0.45
        A pair matches when ``IoU > iou_threshold``.
    score_threshold : float, default 0.25
        Only predictions with ``score > score_threshold`` count.
    matching : {"confidence", "iou"}
        Greedy in descending confidence, as Ultralytics 8.4 (default), or the IoU-ranked
        matching of Ultralytics 8.0 - 8.3.
    similarity : Similarity, optional
        Default Ultralytics' float32 box IoU; e.g. its OBB probiou
        (:class:`~ioukit.evaluation.similarity.ultralytics.UltralyticsProbIoU`) or the exact
        rotated IoU.

    Returns
    -------
    ConfusionMatrix

    Raises
    ------
    ParameterError
        Unknown ``matching``, thresholds outside [0, 1].
    DataFormatError
        Mismatched datasets.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([0, 1], ["cat", "dog"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [20, 20, 30, 30]],
    ...                          image_index=[0, 0], category_id=[0, 1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [50, 50, 60, 60]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.9, 0.8])
    >>> cm = confusion_matrix(gt, pred)
    >>> cm.matrix
    array([[0, 0, 0],
           [1, 0, 1],
           [0, 1, 0]])
    >>> cm.pred_gt  # the dog prediction on the cat (a confusion), then a lone prediction
    array([ 0, -1])
    """
    if matching not in ("confidence", "iou"):
        raise ParameterError(f"matching: expected 'confidence' or 'iou', got {matching!r}")
    for name, value in (("iou_threshold", iou_threshold), ("score_threshold", score_threshold)):
        if not 0.0 <= float(value) <= 1.0:
            raise ParameterError(f"{name}: expected a number in [0, 1], got {value!r}")
    grouping.check_pair(gt, pred)
    category_ids, names = grouping.sorted_categories(gt.categories)
    k = category_ids.size
    gt_class = class_rows(category_ids, gt.category_id)
    pred_class = class_rows(category_ids, pred.category_id)
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    gt_keep = (gt_class >= 0) & ~gt.crowd
    # Ultralytics compares float32 confidences and float32 IoUs with its thresholds
    pred_keep = (pred_class >= 0) & (scores.astype(np.float32) > np.float32(float(score_threshold)))
    threshold = float(float32_values(np.array([float(iou_threshold)]))[0])
    if matching == "confidence":
        matched = _match_confidence(gt, pred, gt_keep, pred_keep, threshold, similarity)
    else:
        matched = _match_iou(gt, pred, gt_keep, pred_keep, threshold, similarity)

    matrix = np.zeros((k + 1, k + 1), dtype=np.int64)
    hit = matched >= 0
    np.add.at(matrix, (pred_class[hit], gt_class[matched[hit]]), 1)
    lone_pred = pred_keep & ~hit
    np.add.at(matrix, (pred_class[lone_pred], np.full(int(lone_pred.sum()), k)), 1)
    gt_hit = np.zeros(len(gt), dtype=bool)
    gt_hit[matched[hit]] = True
    missed = gt_keep & ~gt_hit
    np.add.at(matrix, (np.full(int(missed.sum()), k), gt_class[missed]), 1)
    return ConfusionMatrix(
        matrix=matrix,
        labels=(*names, "background"),
        category_ids=category_ids,
        iou_threshold=float(iou_threshold),
        score_threshold=float(score_threshold),
        pred_gt=matched,
        pred_kept=pred_keep,
        gt_kept=gt_keep,
    )


def _first_per(key: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The first position of ``order`` (sorted by ``key`` first) for each distinct key."""
    if order.size == 0:
        return order
    k = key[order]
    return np.asarray(order[np.r_[True, k[1:] != k[:-1]]])


def _match_iou(
    gt: Dataset,
    pred: Dataset,
    gt_keep: np.ndarray,
    pred_keep: np.ndarray,
    threshold: float,
    similarity: Any = None,
) -> np.ndarray:
    """Original gt index matched by each prediction (-1 if none), Ultralytics 8.0-8.3 rule.

    Per image (class-agnostic), candidates are pairs with float32 ``IoU > threshold``; each
    prediction keeps its highest-IoU candidate, then each ground truth keeps, among the
    predictions that kept it, the one of highest IoU (ties: first index at both steps).
    IoU matrices come from the pipeline (groups + :class:`Float32BoxIoU`).
    """

    g_rows, p_rows = np.flatnonzero(gt_keep), np.flatnonzero(pred_keep)
    g_extra = {} if similarity is None else grouping.similarity_columns(gt, g_rows)
    p_extra = {} if similarity is None else grouping.similarity_columns(pred, p_rows)
    g_sub = grouping.subset_rows(gt, g_rows, **g_extra)
    p_sub = grouping.subset_rows(pred, p_rows, **p_extra)
    groups = Groups.build(g_sub, p_sub, use_cats=False, max_det=max(len(p_rows), 1))
    sim = Float32BoxIoU(eps=grouping.ULTRALYTICS_EPS) if similarity is None else similarity
    values = sim.matrices(g_sub, p_sub, groups).values
    g_count = groups.gt_count
    sizes = np.where(g_count > 0, groups.kept_count * g_count, 0)
    group = np.repeat(np.arange(len(sizes)), sizes)
    local = np.arange(values.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    d, j = local // g_count[group], local % g_count[group]
    pair_pred = p_rows[groups.pred_rows[groups.pred_start[group] + d]]
    pair_gt = g_rows[groups.gt_rows[groups.gt_start[group] + j]]
    hit = values > threshold
    pair_pred, pair_gt, value = pair_pred[hit], pair_gt[hit], values[hit]
    # each prediction: its best candidate (first gt on ties)
    first = _first_per(pair_pred, np.lexsort((pair_gt, -value, pair_pred)))
    pair_pred, pair_gt, value = pair_pred[first], pair_gt[first], value[first]
    # each ground truth: the best of the predictions that chose it (first prediction on ties)
    first = _first_per(pair_gt, np.lexsort((pair_pred, -value, pair_gt)))
    matched = np.full(len(pred), -1, dtype=np.int64)
    matched[pair_pred[first]] = pair_gt[first]
    return matched


def _match_confidence(
    gt: Dataset,
    pred: Dataset,
    gt_keep: np.ndarray,
    pred_keep: np.ndarray,
    threshold: float,
    similarity: Any = None,
) -> np.ndarray:
    """Class-agnostic greedy matching in descending confidence with float32 ``IoU > threshold``,
    IoU ties to the first ground truth (the pipeline's matcher, ``tie="first"``)."""
    none = np.zeros(len(gt), dtype=bool)
    kept = np.flatnonzero(pred_keep)
    extra = {} if similarity is None else grouping.similarity_columns(pred, kept)
    sub = grouping.subset_rows(pred, kept, **extra)
    result = grouping.match_dataset(
        gt,
        sub,
        iou_thresholds=np.array([threshold]),
        rule="first",
        gt_ignore=none,
        gt_crowd=none,
        gt_keep=gt_keep,
        strict=True,
        eps=grouping.ULTRALYTICS_EPS,
        class_agnostic=True,
        float32=True,
        similarity=similarity,
    )
    matched = np.full(len(pred), -1, dtype=np.int64)
    matched[kept] = result.matched[0]
    return matched
