"""The Open Images protocols: ``"openimages"`` (V2) and ``"openimages_challenge"``.

The semantics of the TensorFlow Object Detection API (``utils/per_image_evaluation.py``,
``utils/object_detection_evaluation.py``, ``utils/metrics.py``), which the Open Images
challenges use:

- Per image and class, predictions are ranked by descending score and cut at ``max_dets``
  (10 000). Predictions with an empty box (``x1 >= x2`` or ``y1 >= y2``) or a score <= -10
  (the reference's NMS score floor) are dropped first.
- A prediction looks at the ordinary ground truth of highest IoU (first on ties, no fallback):
  IoU >= ``iou_threshold`` (inclusive, 0.5) makes it a TP if that box is still free, an FP if it
  is taken, ignored if the box is ``difficult`` (or ``ignore``).
- Predictions still FP look at the group-of box (``Dataset.group_of``; ``crowd`` when the
  dataset has no such column) of highest IoA
  (intersection over the *prediction's* area): IoA >= the threshold makes them ignored. Each
  group-of box that absorbed a prediction with score > 0 adds ONE true positive of weight
  ``group_of_weight`` with the highest such score. The number of positives of a class is its
  ordinary boxes plus ``group_of_weight`` times its group-of boxes (difficult ones left out).
- ``"openimages"`` (OIv2, ``OpenImagesDetectionEvaluator``): ``group_of_weight=0``: detections
  inside group-of boxes are simply ignored and group-of boxes are not positives.
- ``"openimages_challenge"`` (``OpenImagesChallengeEvaluator``): ``group_of_weight=1`` by default,
  and only the *verified* classes of an image are evaluated: the image-level labels (positive and
  negative, ``image_labels``) plus the classes of its boxes. Other detections are dropped.
- AP per class: VOC all-point area under the precision envelope with weighted TPs
  (``precision = cumTP / (cumTP + cumFP)``); classes without positives get AP -1 and are left
  out of the mean (the reference's NaN and ``nanmean``).

Ties in score: the reference ranks with ``np.argsort(scores)[::-1]``, numpy's default
quicksort, which does not fix the order of equal scores (it depends on the numpy version and
the CPU: with AVX-512, numpy 2 reorders even four tied values). ioukit fixes it to what a
stable sort reversed gives, *reverse* input order, per image and class and again per class
over all images (images in the ground truth's order, then each image's ranked predictions
followed by its group-of true positives). Without tied scores in a class the two agree exactly.

The evaluation splits in two steps that shards can run separately: :func:`match_openimages`
turns predictions into compact per-record :class:`OpenImagesPartial` results (the predictions
of any subset of images), :func:`accumulate_openimages` merges any number of them into the
numbers. Merged partials give the single-process result bit for bit.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ioukit._kernels import openimages as kernels
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation import grouping
from ioukit.evaluation.ap import voc10_ap
from ioukit.evaluation.groups import class_rows
from ioukit.evaluation.registry import register_protocol
from ioukit.evaluation.result import ProtocolResult
from ioukit.evaluation.sharding import empty_predictions

__all__ = [
    "ImageLabels",
    "OpenImagesPartial",
    "OpenImagesProtocol",
    "accumulate_openimages",
    "evaluate_openimages",
    "match_openimages",
]


FP, TP, IGNORED_DIFFICULT, IGNORED_GROUP_OF = 0, 1, 2, 3


"""Per-prediction status codes of the matching kernel."""


GROUP_OF_TP = 4


_MIN_SCORE = -10.0


"""Record kind of a group-of box's single true positive."""


@dataclass(frozen=True, slots=True, eq=False)
class ImageLabels:
    """Verified image-level labels: class ``category_id[i]`` was checked on image row
    ``image_index[i]`` and found present (``positive``) or absent.

    Attributes
    ----------
    image_index : ndarray of int64, shape (L,)
        Rows of the ground truth's :class:`~ioukit.dataset.ImageTable`.
    category_id : ndarray of int64, shape (L,)
    positive : ndarray of bool, shape (L,)

    Examples
    --------
    >>> labels = ImageLabels.from_arrays([0, 0], [1, 2], [True, False])
    >>> len(labels), labels.category_id.tolist()
    (2, [1, 2])
    """

    image_index: np.ndarray
    category_id: np.ndarray
    positive: np.ndarray

    @classmethod
    def from_arrays(
        cls, image_index: object, category_id: object, positive: object | None = None
    ) -> ImageLabels:
        """Build from array-likes (``positive`` defaults to all True); checks equal lengths."""
        rows = np.ascontiguousarray(image_index, dtype=np.int64).reshape(-1)
        cats = np.ascontiguousarray(category_id, dtype=np.int64).reshape(-1)
        pos = (
            np.ones(rows.size, dtype=bool)
            if positive is None
            else np.ascontiguousarray(positive, dtype=bool).reshape(-1)
        )
        if not rows.size == cats.size == pos.size:
            raise DataFormatError(
                f"image_labels: expected image_index, category_id and positive of equal length, "
                f"got {rows.size}, {cats.size} and {pos.size}"
            )
        for a in (rows, cats, pos):
            a.setflags(write=False)
        return cls(rows, cats, pos)

    def __len__(self) -> int:
        return int(self.image_index.size)


@dataclass(frozen=True, slots=True, eq=False)
class OpenImagesPartial:
    """Matched predictions of some images: what accumulation needs, and nothing else.

    One record per counted prediction (TP or FP) and per group-of true positive; ignored
    predictions leave no record. 21 bytes per record.

    Attributes
    ----------
    class_row : ndarray of int32, shape (R,)
        Row of the record's class in the ground truth's sorted category ids.
    image_row : ndarray of int32, shape (R,)
        Row of its image in the ground truth's image table.
    position : ndarray of int32, shape (R,)
        Place in its (image, class) list: ranked predictions first, group-of TPs after them.
    score : ndarray of float64, shape (R,)
    kind : ndarray of int8, shape (R,)
        :data:`TP`, :data:`FP` or :data:`GROUP_OF_TP` (weight ``group_of_weight``).
    params : tuple
        The protocol and options that produced it; partials merge only when they agree.
    images : ndarray of int64
        Image rows whose predictions these records cover (sorted); overlapping partials are
        refused.
    """

    class_row: np.ndarray
    image_row: np.ndarray
    position: np.ndarray
    score: np.ndarray
    kind: np.ndarray
    params: tuple[tuple[str, Any], ...]
    images: np.ndarray

    def __len__(self) -> int:
        return int(self.score.size)

    @property
    def nbytes(self) -> int:
        """Bytes held by the record arrays (the image list included)."""
        return int(
            self.class_row.nbytes
            + self.image_row.nbytes
            + self.position.nbytes
            + self.score.nbytes
            + self.kind.nbytes
            + self.images.nbytes
        )


def _options(
    challenge: bool, group_of_weight: float | None, iou_threshold: float, max_dets: int
) -> tuple[float, float, int]:
    weight = (1.0 if challenge else 0.0) if group_of_weight is None else float(group_of_weight)
    if not weight >= 0.0:
        raise ParameterError(f"group_of_weight: expected a number >= 0, got {group_of_weight!r}")
    threshold = float(iou_threshold)
    if not 0.0 <= threshold <= 1.0:
        raise ParameterError(f"iou_threshold: expected a number in [0, 1], got {iou_threshold!r}")
    if isinstance(max_dets, bool) or not isinstance(max_dets, int | np.integer) or max_dets < 1:
        raise ParameterError(f"max_dets: expected a positive integer, got {max_dets!r}")
    return weight, threshold, int(max_dets)


def _params(
    challenge: bool,
    weight: float,
    threshold: float,
    max_dets: int,
    image_labels: ImageLabels | None,
) -> tuple[tuple[str, Any], ...]:
    labels = None
    if challenge and image_labels is not None:  # a fingerprint: partials must agree on it
        digest = hashlib.sha1(usedforsecurity=False)
        for a in (image_labels.image_index, image_labels.category_id, image_labels.positive):
            digest.update(np.ascontiguousarray(a).tobytes())
        labels = f"{len(image_labels)} labels, sha1 {digest.hexdigest()[:12]}"
    return (
        ("protocol", "openimages_challenge" if challenge else "openimages"),
        ("group_of_weight", weight),
        ("iou_threshold", threshold),
        ("max_dets", max_dets),
        ("image_labels", labels),
    )


def _group_of(gt: Dataset) -> np.ndarray:
    """Group-of flags: the ``group_of`` column, else COCO ``crowd`` (e.g. from an Evaluator)."""
    return gt.group_of if gt.group_of is not None else gt.crowd


def _evaluable_keys(
    gt: Dataset, gt_class: np.ndarray, num_classes: int, image_labels: ImageLabels | None
) -> np.ndarray:
    """Sorted unique image_row * K + class_row of the verified (image, class) pairs."""
    keys = [gt.image_index[gt_class >= 0] * num_classes + gt_class[gt_class >= 0]]
    if image_labels is not None:
        if image_labels.image_index.size and (
            image_labels.image_index.min() < 0 or image_labels.image_index.max() >= len(gt.images)
        ):
            raise DataFormatError("image_labels.image_index: every row must point into gt.images")
        ids, _ = grouping.sorted_categories(gt.categories)
        rows = class_rows(ids, image_labels.category_id)
        keys.append(image_labels.image_index[rows >= 0] * num_classes + rows[rows >= 0])
    return np.unique(np.concatenate(keys))


def match_openimages(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    challenge: bool = False,
    group_of_weight: float | None = None,
    iou_threshold: float = 0.5,
    image_labels: ImageLabels | None = None,
    max_dets: int = 10000,
    images: np.ndarray | None = None,
) -> OpenImagesPartial:
    """Match predictions to ground truth; the mergeable first half of the evaluation.

    Parameters
    ----------
    gt, pred : Dataset
        Ground truth (``group_of`` column, else ``crowd``) and predictions over its images.
    challenge : bool
        Evaluate only the verified classes of each image (``"openimages_challenge"``).
    group_of_weight : float, optional
        Default 0 (V2) or 1 (challenge).
    iou_threshold : float, default 0.5
    image_labels : ImageLabels, optional
        Verified image-level labels (challenge only; positives and negatives both count).
    max_dets : int, default 10000
        Predictions kept per image and class.
    images : ndarray of int64, optional
        Image rows these predictions cover (default: the images they fall on). A partial
        that covers images without predictions keeps merged overlaps detectable.

    Returns
    -------
    OpenImagesPartial

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [0, 0, 10, 9]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[.9, .8])
    >>> p = match_openimages(gt, pred)
    >>> p.kind.tolist(), p.score.tolist()  # TP, FP
    ([1, 0], [0.9, 0.8])
    """

    grouping.check_pair(gt, pred)
    weight, threshold, max_dets = _options(challenge, group_of_weight, iou_threshold, max_dets)
    if image_labels is not None and not isinstance(image_labels, ImageLabels):
        raise TypeError(
            "image_labels: expected an ioukit.evaluation.protocols.openimages.ImageLabels, "
            f"got "
            f"{type(image_labels).__name__}"
        )
    ids, _ = grouping.sorted_categories(gt.categories)
    num_classes = max(int(ids.size), 1)
    gt_class = class_rows(ids, gt.category_id)
    pred_class = class_rows(ids, pred.category_id)
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    boxes = pred.boxes
    keep = (pred_class >= 0) & (boxes[:, 0] < boxes[:, 2]) & (boxes[:, 1] < boxes[:, 3])
    keep &= scores > _MIN_SCORE  # the reference's NMS step keeps scores > -10 only
    pred_key = pred.image_index * num_classes + pred_class
    if challenge:
        keep &= np.isin(pred_key, _evaluable_keys(gt, gt_class, num_classes, image_labels))
    rows = np.flatnonzero(keep)
    # rank: group key, then descending score, ties in reverse input order (argsort()[::-1])
    order = rows[np.lexsort((-rows, -scores[rows], pred_key[rows]))]
    keys = pred_key[order]
    group_keys, first = np.unique(keys, return_index=True)
    rank = np.arange(keys.size) - np.repeat(first, np.diff(np.append(first, keys.size)))
    order = order[rank < max_dets]
    keys = keys[rank < max_dets]
    rank = rank[rank < max_dets]
    pred_start = np.searchsorted(keys, group_keys).astype(np.int64)
    pred_start = np.append(pred_start, keys.size).astype(np.int64)

    known = gt_class >= 0
    gt_key = gt.image_index * num_classes + gt_class
    group_of = _group_of(gt)
    difficult = gt.difficult | gt.ignore

    def side(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sel = np.flatnonzero(mask)
        sel = sel[np.argsort(gt_key[sel], kind="stable")]
        start = np.searchsorted(gt_key[sel], group_keys, side="left")
        stop = np.searchsorted(gt_key[sel], group_keys, side="right")
        return sel, start.astype(np.int64), stop.astype(np.int64)

    # gather each side so that group g owns one contiguous slice
    def gathered(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sel, start, stop = side(mask)
        counts = stop - start
        offsets = np.zeros(group_keys.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        idx = np.repeat(start - offsets[:-1], counts) + np.arange(int(offsets[-1]))
        return sel[idx], offsets

    ordinary, gt_start = gathered(known & ~group_of)
    groups, group_start = gathered(known & group_of)
    n = order.size
    status = np.empty(n, dtype=np.int8)
    matched = np.empty(n, dtype=np.int64)
    overlap = np.empty(n, dtype=np.float64)
    group_score = np.zeros(groups.size, dtype=np.float64)
    kernels.match_groups(
        np.ascontiguousarray(boxes[order]),
        np.ascontiguousarray(scores[order]),
        pred_start,
        np.ascontiguousarray(gt.boxes[ordinary]),
        np.ascontiguousarray(difficult[ordinary], dtype=np.uint8),
        gt_start,
        np.ascontiguousarray(gt.boxes[groups]),
        group_start,
        threshold,
        status,
        matched,
        overlap,
        group_score,
    )
    counted = (status == FP) | (status == TP)
    # group-of TPs: after the group's ranked predictions, in the image's group-of order
    group_of_group = np.repeat(np.arange(group_keys.size), np.diff(group_start))
    sizes = np.diff(pred_start)
    go_position = sizes[group_of_group] + (np.arange(groups.size) - group_start[group_of_group])
    go = (group_score > 0) & (weight > 0)
    go_keys = group_keys[group_of_group[go]]
    class_row = np.concatenate([keys[counted] % num_classes, go_keys % num_classes])
    image_row = np.concatenate([keys[counted] // num_classes, go_keys // num_classes])
    covered = np.unique(pred.image_index) if images is None else np.unique(images)
    return OpenImagesPartial(
        class_row=class_row.astype(np.int32),
        image_row=image_row.astype(np.int32),
        position=np.concatenate([rank[counted], go_position[go]]).astype(np.int32),
        score=np.concatenate([scores[order][counted], group_score[go]]),
        kind=np.concatenate([status[counted], np.full(int(go.sum()), GROUP_OF_TP)]).astype(np.int8),
        params=_params(challenge, weight, threshold, max_dets, image_labels),
        images=covered.astype(np.int64),
    )


def _num_positives(gt: Dataset, num_classes: int, weight: float) -> np.ndarray:
    """Positives per class, summed image by image in image order as the reference does."""
    ids, _ = grouping.sorted_categories(gt.categories)
    gt_class = class_rows(ids, gt.category_id)
    counted = (gt_class >= 0) & ~(gt.difficult | gt.ignore)
    key = gt.image_index[counted] * num_classes + gt_class[counted]
    group = _group_of(gt)[counted]
    keys, inverse = np.unique(key, return_inverse=True)
    ordinary = np.bincount(inverse, weights=~group, minlength=keys.size)
    grouped = np.bincount(inverse, weights=group, minlength=keys.size)
    per_image = ordinary + weight * grouped  # float, as n + w * g in the reference
    total = np.zeros(num_classes)
    cls = keys % num_classes
    order = np.argsort(cls, kind="stable")  # image order within each class
    bounds = np.searchsorted(cls[order], np.arange(num_classes + 1))
    values = per_image[order]
    for k in np.flatnonzero(np.diff(bounds)):
        total[k] = np.cumsum(values[bounds[k] : bounds[k + 1]])[-1]  # sequential sum
    return total


def accumulate_openimages(
    gt: Dataset, partials: Sequence[OpenImagesPartial], /, *, names: Sequence[str] | None = None
) -> ProtocolResult:
    """Merge partial results (of disjoint image sets) into the Open Images numbers.

    Parameters
    ----------
    gt : Dataset
        The ground truth every partial was matched against.
    partials : sequence of OpenImagesPartial
        From :func:`match_openimages`, in any order.
    names : sequence of str, optional
        One label per partial for error messages (e.g. shard file names).

    Returns
    -------
    ProtocolResult
        ``stats={"mAP": ...}``; ``per_class`` rows (category-id order) with ``category_id``,
        ``name``, ``num_gt`` (positives, group-of boxes weighted), ``num_pred`` (counted
        records), ``AP`` (-1 without positives), ``TP`` (weighted), ``FP``; ``arrays``:
        ``AP`` (K,), and the curves ``curve_recall``/``curve_precision``/``curve_scores``
        of all classes concatenated with ``curve_bounds`` (K + 1,).

    Raises
    ------
    DataFormatError
        Partials made with different options, or covering the same image (both named).

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1, 2], ["a", "b"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]] * 2,
    ...                          image_index=[0, 1], category_id=[1, 1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]] * 2,
    ...                            image_index=[0, 1], category_id=[1, 1], scores=[.9, .8])
    >>> halves = [Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[i],
    ...                               category_id=[1], scores=[s]) for i, s in ((0, .9), (1, .8))]
    >>> parts = [match_openimages(gt, h) for h in halves]
    >>> accumulate_openimages(gt, parts).stats == evaluate_openimages(gt, pred).stats
    True
    """
    if not partials:
        raise DataFormatError("partials: expected at least one partial result, got none")
    labels = [f"partial {i}" for i in range(len(partials))] if names is None else list(names)
    if len(labels) != len(partials):
        raise DataFormatError(
            f"names: expected one name per partial ({len(partials)}), got {len(labels)}"
        )
    params = partials[0].params
    for label, part in zip(labels, partials, strict=True):
        if not isinstance(part, OpenImagesPartial):
            raise TypeError(f"{label}: expected an OpenImagesPartial, got {type(part).__name__}")
        if part.params != params:
            raise DataFormatError(
                f"{label}: expected the options of {labels[0]} {dict(params)}, got "
                f"{dict(part.params)}"
            )
    owner = np.concatenate([np.full(p.images.size, i) for i, p in enumerate(partials)])
    covered = np.concatenate([p.images for p in partials])
    if covered.size and (covered.min() < 0 or covered.max() >= len(gt.images)):
        raise DataFormatError(
            f"partials: image rows outside the ground truth's {len(gt.images)} images"
        )
    order = np.argsort(covered, kind="stable")
    dup = np.flatnonzero(np.diff(covered[order]) == 0)
    if dup.size:
        a, b = owner[order[dup[0]]], owner[order[dup[0] + 1]]
        stem = gt.images.stems[int(covered[order[dup[0]]])]
        raise DataFormatError(
            f"{labels[a]}, {labels[b]}: image {stem!r} appears in both; each image must be in "
            f"exactly one shard"
        )
    options = dict(params)
    weight = float(options["group_of_weight"])
    ids, names_sorted = grouping.sorted_categories(gt.categories)
    num_classes = int(ids.size)
    class_row = np.concatenate([p.class_row for p in partials]).astype(np.int64)
    image_row = np.concatenate([p.image_row for p in partials]).astype(np.int64)
    position = np.concatenate([p.position for p in partials]).astype(np.int64)
    score = np.concatenate([p.score for p in partials])
    kind = np.concatenate([p.kind for p in partials])
    labels_w = np.where(kind == TP, 1.0, np.where(kind == GROUP_OF_TP, weight, 0.0))
    # per class: descending score; ties: later in (image, position) concatenation first
    order = np.lexsort((-position, -image_row, -score, class_row))
    class_row, score, labels_w = class_row[order], score[order], labels_w[order]
    bounds = np.searchsorted(class_row, np.arange(num_classes + 1))
    num_gt = _num_positives(gt, max(num_classes, 1), weight)[:num_classes]
    ap = np.full(num_classes, np.nan)
    curve_recall = np.zeros(score.size)
    curve_precision = np.zeros(score.size)
    tp_total = np.zeros(num_classes)
    fp_total = np.zeros(num_classes, dtype=np.int64)
    for k in range(num_classes):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        tp = labels_w[lo:hi]
        cum_tp = np.cumsum(tp)
        cum_fp = np.cumsum((tp <= 0).astype(np.float64))
        tp_total[k] = cum_tp[-1] if hi > lo else 0.0
        fp_total[k] = int(cum_fp[-1]) if hi > lo else 0
        if num_gt[k] == 0:
            continue
        precision = cum_tp / (cum_tp + cum_fp)
        recall = cum_tp / num_gt[k]
        curve_recall[lo:hi] = recall
        curve_precision[lo:hi] = precision
        ap[k] = voc10_ap(recall, precision)
    valid = ~np.isnan(ap)
    mean_ap = float(np.nanmean(ap)) if valid.any() else -1.0
    ap_out = np.where(valid, ap, -1.0)
    rows: list[dict[str, Any]] = [
        {
            "category_id": int(ids[k]),
            "name": names_sorted[k],
            "num_gt": float(num_gt[k]),
            "num_pred": int(bounds[k + 1] - bounds[k]),
            "AP": float(ap_out[k]),
            "TP": float(tp_total[k]),
            "FP": int(fp_total[k]),
        }
        for k in range(num_classes)
    ]
    return ProtocolResult(
        protocol=str(options["protocol"]),
        stats={"mAP": mean_ap},
        per_class=tuple(rows),
        arrays={
            "AP": ap_out,
            "curve_recall": curve_recall,
            "curve_precision": curve_precision,
            "curve_scores": score,
            "curve_bounds": bounds.astype(np.int64),
        },
        params={k: v for k, v in params if k != "protocol"},
    )


def evaluate_openimages(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    challenge: bool = False,
    group_of_weight: float | None = None,
    iou_threshold: float = 0.5,
    image_labels: ImageLabels | None = None,
    max_dets: int = 10000,
) -> ProtocolResult:
    """Open Images mAP of ``pred`` against ``gt`` (TensorFlow Object Detection API rules).

    Parameters
    ----------
    gt, pred : Dataset
        Ground truth (``group_of`` column, else ``crowd``; e.g. from
        :func:`ioukit.io.openimages.read_openimages_ground_truth`) and predictions over its
        image table.
    challenge : bool, default False
        ``False``: ``"openimages"`` (OIv2); ``True``: ``"openimages_challenge"``.
    group_of_weight : float, optional
        Weight of a group-of box as a positive; default 0 (V2) or 1 (challenge).
    iou_threshold : float, default 0.5
        Inclusive, for both IoU and the group-of IoA.
    image_labels : ImageLabels, optional
        Challenge: verified image-level labels (positive and negative).
    max_dets : int, default 10000
        Predictions kept per image and class (the reference's NMS output limit).

    Returns
    -------
    ProtocolResult
        See :func:`accumulate_openimages`.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["person"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [20, 0, 60, 40]],
    ...                          image_index=[0, 0], category_id=[1, 1], group_of=[False, True])
    >>> pred = Dataset.from_arrays(images, cats,
    ...                            boxes=[[0, 0, 10, 10], [25, 5, 35, 15], [30, 5, 40, 15]],
    ...                            image_index=[0, 0, 0], category_id=[1, 1, 1],
    ...                            scores=[.9, .8, .7])
    >>> evaluate_openimages(gt, pred).stats["mAP"]  # both inside the group: ignored
    1.0
    >>> r = evaluate_openimages(gt, pred, challenge=True)  # the group counts once, as a TP
    >>> r.stats["mAP"], r.per_class[0]["num_gt"], r.per_class[0]["TP"]
    (1.0, 2.0, 2.0)
    """
    part = match_openimages(
        gt,
        pred,
        challenge=challenge,
        group_of_weight=group_of_weight,
        iou_threshold=iou_threshold,
        image_labels=image_labels,
        max_dets=max_dets,
    )
    return accumulate_openimages(gt, [part])


@dataclass(frozen=True, slots=True, eq=False)
class OpenImagesProtocol:
    """The ``"openimages"`` / ``"openimages_challenge"`` entries of the protocol registry.

    Examples
    --------
    >>> p = OpenImagesProtocol.from_options(challenge=True, group_of_weight=0.5)
    >>> p.name, p.group_of_weight
    ('openimages_challenge', 0.5)
    """

    challenge: bool = False
    group_of_weight: float | None = None
    iou_threshold: float = 0.5
    image_labels: ImageLabels | None = None
    max_dets: int = 10000
    name: str = "openimages"
    can_shard: ClassVar[bool] = True
    """Sharded evaluation runs :meth:`shard_match` on the workers."""
    input_format: ClassVar[str] = "openimages-csv"
    """What sharded evaluation reads: Open Images predictions CSV files."""

    @classmethod
    def from_options(
        cls,
        *,
        challenge: bool = False,
        group_of_weight: float | None = None,
        iou_threshold: float = 0.5,
        image_labels: ImageLabels | None = None,
        max_dets: int = 10000,
    ) -> OpenImagesProtocol:
        """Validate the options (``ValueError``) and build the protocol."""
        _options(challenge, group_of_weight, iou_threshold, max_dets)
        if image_labels is not None and not isinstance(image_labels, ImageLabels):
            raise TypeError(
                "image_labels: expected an ioukit.evaluation.protocols.openimages.ImageLabels, "
                f"got "
                f"{type(image_labels).__name__}"
            )
        name = "openimages_challenge" if challenge else "openimages"
        return cls(challenge, group_of_weight, iou_threshold, image_labels, max_dets, name)

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """See :func:`evaluate_openimages`."""
        if iou_type != "bbox":
            raise ParameterError(
                f"iou_type: protocol {self.name!r} supports 'bbox', got {iou_type!r}"
            )
        return evaluate_openimages(
            gt,
            pred,
            challenge=self.challenge,
            group_of_weight=self.group_of_weight,
            iou_threshold=self.iou_threshold,
            image_labels=self.image_labels,
            max_dets=self.max_dets,
        )

    def shard_match(
        self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox"
    ) -> OpenImagesPartial:
        """On a worker: :func:`match_openimages` of some images' predictions."""
        return match_openimages(gt, pred, images=np.unique(pred.image_index), **self._kwargs())

    def shard_summarize(
        self,
        gt: Dataset,
        parts: Sequence[OpenImagesPartial],
        /,
        *,
        iou_type: str = "bbox",
        pred_row_offsets: Sequence[int] = (),
        n_predictions: int = 0,
        names: Sequence[str] = (),
    ) -> ProtocolResult:
        """On the client: :func:`accumulate_openimages` of the shards' partials."""
        if not parts:
            parts = [match_openimages(gt, empty_predictions(gt), **self._kwargs())]
            names = ["no shards"]
        return accumulate_openimages(gt, parts, names=list(names) or None)

    def _kwargs(self) -> dict[str, Any]:
        return {
            "challenge": self.challenge,
            "group_of_weight": self.group_of_weight,
            "iou_threshold": self.iou_threshold,
            "image_labels": self.image_labels,
            "max_dets": self.max_dets,
        }


def _openimages(challenge: bool) -> Callable[..., Any]:
    def factory(**options: Any) -> Any:
        return OpenImagesProtocol.from_options(challenge=challenge, **options)

    # its options: those of from_options but ``challenge`` (the registry lists them)
    own = inspect.signature(OpenImagesProtocol.from_options)
    factory.__signature__ = own.replace(  # type: ignore[attr-defined]
        parameters=[p for p in own.parameters.values() if p.name != "challenge"]
    )
    return factory


register_protocol("openimages", _openimages(False))
register_protocol("openimages_challenge", _openimages(True))
