"""The Ultralytics protocol: the numbers ``yolo val`` prints (precision, recall, mAP50, mAP50-95).

Computed the way current Ultralytics does (``engine/validator.py`` ``match_predictions`` and
``utils/metrics.py`` ``ap_per_class``/``compute_ap``; REFERENCE 3.9):

- IoU is Ultralytics' ``box_iou`` computed as Ultralytics does, in float32:
  ``inter / (area1 + area2 - inter + 1e-7)`` with every step rounded to float32 (so for tiny
  boxes the ``+ 1e-7`` vanishes, and two IoUs equal only in float32 are a tie), compared with
  float32 thresholds (``iouv`` is ``torch.linspace(0.5, 0.95, 10)``).
- Per image and class, for each IoU threshold (default ``0.50:0.05:0.95``), predictions in
  descending confidence each take the unmatched ground truth of highest IoU ``>= t``; among
  equal (float32) IoUs the first ground truth (file order) wins, as NumPy's ``argmax`` does.
- Classes are those present in the ground truth; predictions of other classes are ignored;
  a class with labels but no predictions gets AP 0.
- AP per class and threshold with :func:`~ioukit.evaluation.ap.ultralytics_ap`.
- Precision, recall and F1 curves are interpolated on a 1000-point confidence grid
  (``np.linspace(0, 1, 1000)``); the reported precision and recall are those at the argmax of
  the mean F1 curve smoothed with a box filter of 0.1; ``fitness`` is ``mAP50-95`` (the
  ``Metric.fitness`` weights ``[0, 0, 0, 1]``).

- Confidences are taken as float32 (what a model outputs; scores equal in float32 are ties)
  and predictions are ranked with Ultralytics' own ``np.argsort(-conf)`` on its layout (image
  by image, each image's predictions in descending confidence as NMS leaves them; NumPy's
  default unstable sort): with tied scores Ultralytics' numbers depend on NumPy's sort, and
  ioukit reproduces them on the same NumPy; ``stable_ties=True`` keeps tied predictions in
  row order instead.

Choices: ground-truth crowds are dropped (Ultralytics' COCO converter skips ``iscrowd``
annotations); ``ignore``/``difficult`` flags are not used (Ultralytics has none).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation import grouping
from ioukit.evaluation.groups import class_rows
from ioukit.evaluation.match import MatchRule
from ioukit.evaluation.outcome import threshold_index
from ioukit.evaluation.registry import ProtocolTraits, register_protocol, similarity_reads
from ioukit.evaluation.result import ProtocolResult
from ioukit.evaluation.sharding import MatchedShards
from ioukit.evaluation.similarity.box import Float32BoxIoU
from ioukit.evaluation.similarity.ultralytics import UltralyticsOKS, yolo_similarity

if TYPE_CHECKING:
    from ioukit.evaluation.grouping import MatchedPredictions

__all__ = [
    "CONFIDENCE_GRID",
    "DEFAULT_IOU_THRESHOLDS",
    "YOLOProtocol",
    "evaluate_yolo",
    "float32_threshold",
    "float32_values",
    "match_yolo",
    "match_yolo_records",
    "rematch_similarity",
    "summarize_yolo",
    "ultralytics_class_curves",
    "ultralytics_order",
    "yolo_protocol",
]


@dataclass(frozen=True, slots=True)
class YOLOProtocol(MatchedShards):
    """Ultralytics ``yolo val``: float32 IoU, first-gt ties, ``np.argsort(-conf)`` order.

    ``rule`` is ``MatchRule(tie="first", crowd=False, clamp=None)`` on float32 IoU values and
    float32 thresholds; see :func:`ioukit.evaluation.protocols.yolo.evaluate_yolo`. ``similarity``
    None
    picks one by ``iou_type`` (:func:`ioukit.evaluation.similarity.ultralytics.yolo_similarity`:
    float32
    box IoU, pose OKS, OBB probiou, or the exact rotated IoU).
    """

    iou_thresholds: tuple[float, ...] | None = None
    stable_ties: bool = False
    name: str = "yolo"
    similarity: Any = (
        None  # None: by iou_type (ioukit.evaluation.similarity.ultralytics.yolo_similarity)
    )

    @property
    def rule(self) -> MatchRule:
        """Ultralytics' matching rule."""
        return MatchRule(tie="first", crowd=False, clamp=None)

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """Ultralytics metrics (see :func:`ioukit.evaluation.protocols.yolo.evaluate_yolo`):
        :meth:`match`,
        then :meth:`summarize`."""
        return self.summarize(gt, pred, self.match(gt, pred, iou_type=iou_type), iou_type=iou_type)

    def match(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> MatchedPredictions:
        """The first half of :meth:`evaluate`
        (:func:`ioukit.evaluation.protocols.yolo.match_yolo_records`).

        Run it on each shard of images, merge with :meth:`MatchedPredictions.merge` and call
        :meth:`summarize` once (``pred_row_offsets`` matter only with ``stable_ties=True``).
        """
        similarity = self.similarity if self.similarity is not None else yolo_similarity(iou_type)
        return match_yolo_records(
            gt, pred, iou_thresholds=self.iou_thresholds, similarity=similarity
        )

    def summarize(
        self,
        gt: Dataset,
        pred: Dataset | None,
        matched: MatchedPredictions,
        /,
        *,
        iou_type: str = "bbox",
    ) -> ProtocolResult:
        """The second half of :meth:`evaluate`
        (:func:`ioukit.evaluation.protocols.yolo.summarize_yolo`).

        ``pred`` may be None (the predictions stayed on the workers). Same numbers as
        :meth:`evaluate` on the same match.
        """
        result = summarize_yolo(
            gt, matched, iou_thresholds=self.iou_thresholds, stable_ties=self.stable_ties
        )
        params = {**result.params, "iou_type": iou_type}
        if iou_type == "keypoints":  # the OKS sigmas (None: Ultralytics' default for K)
            similarity = self.similarity
            if similarity is None:
                similarity = yolo_similarity(iou_type)
            params["sigmas"] = getattr(similarity, "sigmas", None)
        return dataclasses.replace(result, params=params)


def yolo_protocol(*, iou_thresholds: object = None, stable_ties: bool = False) -> YOLOProtocol:
    """``protocol="yolo"``'s options: ``iou_thresholds`` (default Ultralytics' 0.5:0.95:0.05).

    >>> yolo_protocol(iou_thresholds=[1.5])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: iou_thresholds: expected numbers in [0.0, 1.0], got [1.5]
    """
    thr = None
    if iou_thresholds is not None:
        try:
            values = np.asarray(iou_thresholds, float).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise ParameterError(
                f"iou_thresholds: expected a sequence of numbers, got {iou_thresholds!r}"
            ) from exc
        if values.size == 0 or not np.all((values >= 0.0) & (values <= 1.0)):
            raise ParameterError(
                f"iou_thresholds: expected numbers in [0.0, 1.0], got {iou_thresholds!r}"
            )
        thr = tuple(values.tolist())
    return YOLOProtocol(thr, bool(stable_ties))


DEFAULT_IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)


CONFIDENCE_GRID = np.linspace(0.0, 1.0, 1000)


_EPS = 1e-16  # ap_per_class eps


@dataclass(frozen=True, slots=True)
class _ClassCurves:
    ap: np.ndarray  # (K, T), -1 rows for classes without labels
    p_curve: np.ndarray  # (K, 1000)
    r_curve: np.ndarray  # (K, 1000)
    f1_curve: np.ndarray  # (K, 1000)
    pr_precision: np.ndarray  # (K, 1000) envelope at recall grid CONFIDENCE_GRID (UL prec_values)
    has_labels: np.ndarray  # (K,) bool
    num_labels: np.ndarray  # (K,)
    best_index: int
    precision: np.ndarray  # (T, K, 101) Ultralytics' interpolated envelope, -1: no labels
    recall: np.ndarray  # (T, K) final recall, -1: no labels


def _stable_class_sort(classes: np.ndarray, num_classes: int) -> np.ndarray:
    """``np.argsort(classes, kind="stable")``; as int16 (NumPy's radix sort) when it fits."""
    if num_classes < 2**15:
        return np.argsort(classes.astype(np.int16), kind="stable")
    return np.argsort(classes, kind="stable")


def _layout(scores: np.ndarray, image_index: np.ndarray) -> np.ndarray:
    """``np.lexsort((-scores, image_index))`` (``image_index``: any small non-negative ints);
    for float32-valued ``scores`` one stable sort of an unsigned key
    ``image << 32 | descending-order bits of the float32 value``."""
    conf = scores.astype(np.float32)
    if (
        conf.size == 0
        or not np.array_equal(conf, scores)
        or image_index.min() < 0
        or image_index.max() >= 2**31
    ):
        return np.lexsort((-scores, image_index))
    bits = (conf + np.float32(0.0)).view(np.uint32)  # -0.0 -> +0.0 (equal values, one key)
    ordered = np.where(bits >> np.uint32(31) == 1, ~bits, bits | np.uint32(0x80000000))
    key = (image_index.astype(np.uint64) << np.uint64(32)) | (~ordered).astype(np.uint64)
    return np.argsort(key, kind="stable")


def ultralytics_order(
    pred_class: np.ndarray,
    scores: np.ndarray,
    num_classes: int,
    image_index: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Ultralytics ``ap_per_class``'s order: ``np.argsort(-conf)`` on float32 confidences
    (NumPy's default sort, not stable), then per class.

    The confidences are laid out as Ultralytics concatenates them: image by image in the image
    table's order (its dataloader order), each image's predictions in descending confidence
    (NMS output order; ties in row order). ``image_index`` None: rows as given.

    Returns ``(order, bounds)`` as :func:`ioukit.evaluation.grouping.class_order`. Tied scores
    come out in the order NumPy's sort leaves them, which is what Ultralytics reports on the
    same NumPy.

    Examples
    --------
    >>> order, bounds = ultralytics_order(np.array([0, 0, 0, 0]),
    ...                                   np.array([0.5, 0.25, 0.75, 0.75]), 1)
    >>> sorted(order[:2].tolist()), order[2:].tolist(), bounds.tolist()
    ([2, 3], [0, 1], [0, 4])
    """
    layout = (
        np.arange(len(scores))
        if image_index is None
        else _layout(np.asarray(scores, dtype=np.float64), np.asarray(image_index))
    )
    conf = np.asarray(scores)[layout].astype(np.float32)
    everything = layout[np.argsort(-conf)]  # Ultralytics' exact call: quicksort, ties unspecified
    everything = everything[pred_class[everything] >= 0]
    order = everything[_stable_class_sort(pred_class[everything], num_classes)]
    counts = np.bincount(pred_class[order], minlength=num_classes)
    return order, np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


_AP_GRID = np.linspace(0.0, 1.0, 101)


_AP_STEP = _AP_GRID[1:] - _AP_GRID[:-1]


def _ultralytics_ap_rows(
    recall: np.ndarray, precision: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~ioukit.evaluation.ap.ultralytics_ap` of each row of ``recall``/``precision``
    (T, n), n >= 1, at once: (T,) APs (the same floats), the (T, 101) interpolated envelopes
    they integrate, and row 0's ``mpre``, ``mrec``."""
    t, n = recall.shape
    mrec = np.empty((t, n + 3))
    mrec[:, 0] = 0.0
    mrec[:, 1 : n + 1] = recall
    mrec[:, n + 1] = recall[:, -1]
    mrec[:, n + 2] = 1.0
    mpre = np.empty((t, n + 3))
    mpre[:, 0] = 1.0
    mpre[:, 1 : n + 1] = precision
    mpre[:, n + 1 :] = 0.0
    mpre = np.maximum.accumulate(mpre[:, ::-1], axis=1)[:, ::-1]
    y = np.empty((t, _AP_GRID.size))
    for i in range(t):
        y[i] = np.interp(_AP_GRID, mrec[i], mpre[i])
    ap = np.sum(_AP_STEP * (y[:, 1:] + y[:, :-1]) / 2.0, axis=1)
    return ap, y, mpre[0], mrec[0]


def ultralytics_class_curves(
    tp: np.ndarray,
    pred_class: np.ndarray,
    scores: np.ndarray,
    num_labels: np.ndarray,
    *,
    stable_ties: bool = True,
    image_index: np.ndarray | None = None,
) -> _ClassCurves:
    """Ultralytics ``ap_per_class`` over columnar inputs.

    ``tp`` (T, P) bool, ``pred_class`` (P,) class rows (-1 ignored), ``scores`` (P,),
    ``num_labels`` (K,) labels per class. Class ``k`` counts when ``num_labels[k] > 0``.
    ``stable_ties=False`` orders predictions as Ultralytics does (:func:`ultralytics_order`);
    True keeps tied scores in row order.
    """
    num_classes = num_labels.size
    num_t = tp.shape[0]
    has = num_labels > 0
    if stable_ties:  # grouping.class_order; one uint64-key sort for float32 confidences
        index = np.flatnonzero(pred_class >= 0)
        order = index[_layout(np.asarray(scores)[index], pred_class[index])]
        counts = np.bincount(pred_class[order], minlength=num_classes)
        bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    else:
        order, bounds = ultralytics_order(pred_class, scores, num_classes, image_index)
    ap = np.where(has[:, None], 0.0, -1.0) * np.ones((num_classes, num_t))
    p_curve = np.zeros((num_classes, CONFIDENCE_GRID.size))
    r_curve = np.zeros((num_classes, CONFIDENCE_GRID.size))
    pr_precision = np.zeros((num_classes, CONFIDENCE_GRID.size))
    sampled = np.where(has[None, :, None], 0.0, -1.0) * np.ones((num_t, num_classes, _AP_GRID.size))
    final_recall = np.where(has[None, :], 0.0, -1.0) * np.ones((num_t, num_classes))
    # one running count over all classes; a class's counts are differences of it (integers,
    # exact in float64, equal to Ultralytics' per-class cumsum of 0/1 floats)
    count_type = np.int64 if order.size >= 2**31 else np.int32
    tp_cum: np.ndarray = np.cumsum(tp[:, order], axis=1, dtype=count_type)
    for k in np.flatnonzero(has).tolist():
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        if hi == lo:
            continue
        tpc = tp_cum[:, lo:hi].astype(np.float64)  # (T, n)
        if lo:
            tpc -= tp_cum[:, lo - 1 : lo]
        fpc = np.arange(1, hi - lo + 1, dtype=np.float64) - tpc
        recall = tpc / (num_labels[k] + _EPS)
        precision = tpc / (tpc + fpc)
        conf = scores[order[lo:hi]]
        r_curve[k] = np.interp(-CONFIDENCE_GRID, -conf, recall[0], left=0)
        p_curve[k] = np.interp(-CONFIDENCE_GRID, -conf, precision[0], left=1)
        ap[k], sampled[:, k], mpre, mrec = _ultralytics_ap_rows(recall, precision)
        final_recall[:, k] = recall[:, -1]
        pr_precision[k] = np.interp(CONFIDENCE_GRID, mrec, mpre)
    f1_curve = 2 * p_curve * r_curve / (p_curve + r_curve + _EPS)
    best = int(grouping.smooth(f1_curve[has].mean(0), 0.1).argmax()) if has.any() else 0
    return _ClassCurves(
        ap, p_curve, r_curve, f1_curve, pr_precision, has, num_labels, best, sampled, final_recall
    )


def float32_threshold(thresholds: np.ndarray, *, strict: bool) -> np.ndarray:
    """Float64 thresholds equivalent to Ultralytics' float32 comparisons.

    Ultralytics tests ``float32(iou) >= float32(t)`` (``strict=False``) or
    ``float32(iou) > float32(t)`` (``strict=True``). For a float64 IoU ``q`` these hold when
    ``q`` reaches the midpoint between ``float32(t)`` and its float32 neighbour below
    (``>=``) or passes the midpoint to its neighbour above (``>``). Returned as float64.

    Examples
    --------
    >>> t = float32_threshold(np.array([0.55]), strict=False)[0]
    >>> bool(11 / 20 >= t), bool(11 / 20 >= 0.55 + 1e-12)
    (True, False)
    """
    t32 = np.asarray(thresholds, dtype=np.float64).astype(np.float32)
    side = np.float32(np.inf) if strict else np.float32(-np.inf)
    neighbour = np.nextafter(t32, side)
    return (t32.astype(np.float64) + neighbour.astype(np.float64)) / 2.0


def float32_values(thresholds: np.ndarray) -> np.ndarray:
    """``thresholds`` rounded to float32, as float64 (exactly): Ultralytics' ``iouv`` values.

    Compared with float32 IoU values stored as float64, ``>=`` and ``>`` give exactly
    Ultralytics' float32 comparisons.

    Examples
    --------
    >>> float(float32_values(np.array([0.55]))[0])
    0.550000011920929
    """
    return np.asarray(thresholds, dtype=np.float64).astype(np.float32).astype(np.float64)


def match_yolo(
    gt: Dataset, pred: Dataset, iou_thresholds: np.ndarray, similarity: Any = None
) -> grouping.DatasetMatches:
    """Ultralytics matching of a whole dataset (crowds dropped, confidence-greedy).

    IoU is Ultralytics' float32 ``box_iou``
    (:class:`~ioukit.evaluation.similarity.box.Float32BoxIoU`),
    compared with the float32 thresholds; IoU ties (in float32) go to the first ground truth
    (``MatchRule(tie="first")``). ``similarity``: another one (Ultralytics' pose OKS or OBB
    probiou, :mod:`ioukit.evaluation.ultralytics`).
    """
    none = np.zeros(len(gt), dtype=bool)
    return grouping.match_dataset(
        gt,
        pred,
        iou_thresholds=float32_values(iou_thresholds),
        rule="first",
        gt_ignore=none,
        gt_crowd=none,
        gt_keep=~gt.crowd,
        eps=grouping.ULTRALYTICS_EPS,
        float32=True,
        similarity=similarity,
    )


def evaluate_yolo(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    iou_thresholds: object = None,
    stable_ties: bool = False,
    similarity: Any = None,
) -> ProtocolResult:
    """Ultralytics ``yolo val`` metrics of ``pred`` against ``gt``.

    Parameters
    ----------
    gt, pred : Dataset
    iou_thresholds : array_like, shape (T,), optional
        Default ``np.linspace(0.5, 0.95, 10)``. P, R and F1 use the first threshold.
    stable_ties : bool, default False
        False: predictions ordered by Ultralytics' own ``np.argsort(-conf)`` (float32, NumPy's
        default unstable sort), so tied scores give Ultralytics' numbers, which themselves
        depend on NumPy's sort; True: ties keep row order (a stable, reproducible order).
    similarity : Similarity, optional
        Default Ultralytics' float32 box IoU;
        :func:`ioukit.evaluation.similarity.ultralytics.yolo_similarity`
        gives the pose (OKS) and OBB (probiou) ones.

    Returns
    -------
    ProtocolResult
        ``stats``: ``precision``, ``recall`` (means over classes with labels at the
        F1-optimal confidence), ``mAP50`` (AP at threshold 0.5, -1 if 0.5 is not among the
        thresholds), ``mAP50-95`` (mean over all thresholds), ``fitness`` (= ``mAP50-95``)
        and ``confidence`` (the F1-optimal confidence). ``per_class`` rows (category-id order)
        with ``precision``, ``recall``, ``F1``, ``AP50``, ``AP50-95`` (-1 for classes without
        labels). ``arrays``: ``AP`` (K, T), ``p_curve``/``r_curve``/``f1_curve`` (K, 1000)
        over ``confidence`` (1000,), ``pr_precision`` (K, 1000) over the same grid read as
        recall, ``iou_thresholds`` (T,); ``precision`` (T, K, 101) the precision envelope
        Ultralytics integrates for each AP (interpolated at ``recall_thresholds``
        ``np.linspace(0, 1, 101)``) and ``recall`` (T, K) the final recall, both -1 for
        classes without labels. ``outcome``: the match
        (:class:`~ioukit.evaluation.outcome.MatchOutcome`, every prediction of a ground-truth
        category), which curves and diagnostics reuse.

    Raises
    ------
    ParameterError
        Thresholds outside [0, 1].
    DataFormatError
        Mismatched datasets.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([0], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[0])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                            category_id=[0], scores=[0.9])
    >>> r = evaluate_yolo(gt, pred)
    >>> round(r.stats["mAP50"], 3), round(r.stats["mAP50-95"], 3), round(r.stats["precision"], 3)
    (0.995, 0.995, 1.0)
    """
    thresholds = _thresholds(iou_thresholds)
    matched = match_yolo_records(gt, pred, iou_thresholds=thresholds, similarity=similarity)
    return summarize_yolo(gt, matched, iou_thresholds=thresholds, stable_ties=stable_ties)


def _thresholds(iou_thresholds: object) -> np.ndarray:
    thresholds = (
        DEFAULT_IOU_THRESHOLDS
        if iou_thresholds is None
        else np.asarray(iou_thresholds, dtype=np.float64).reshape(-1)
    )
    if thresholds.size == 0 or not np.all((thresholds >= 0) & (thresholds <= 1)):
        raise ParameterError(
            f"iou_thresholds: expected one or more numbers in [0, 1], got {thresholds.tolist()}"
        )
    return np.asarray(thresholds, dtype=np.float64)


def match_yolo_records(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    iou_thresholds: object = None,
    similarity: Any = None,
) -> MatchedPredictions:
    """The first half of :func:`evaluate_yolo`: Ultralytics' match of every prediction.

    Crowd ground truths are dropped; IoU is Ultralytics' float32 ``box_iou`` (or
    ``similarity``) against the float32 thresholds, ties to the first ground truth. Returns a
    :class:`~ioukit.evaluation.grouping.MatchedPredictions`: one outcome record per prediction
    of a ground-truth category (area range ``"all"``, T thresholds) plus the predictions of
    other categories, which Ultralytics' confidence sort sees too. Outcomes of disjoint image
    shards merge (:meth:`MatchedPredictions.merge`); :func:`summarize_yolo` gives the numbers.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([0], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[0])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                            category_id=[0], scores=[0.9])
    >>> match_yolo_records(gt, pred).outcome.status.shape
    (1, 1, 10)
    """

    thresholds = _thresholds(iou_thresholds)
    none = np.zeros(len(gt), dtype=bool)
    result: MatchedPredictions = grouping.match_records(
        gt,
        pred,
        thresholds=float32_values(thresholds),
        rule=MatchRule(tie="first", crowd=False, clamp=None),
        similarity=similarity
        if similarity is not None
        else Float32BoxIoU(eps=grouping.ULTRALYTICS_EPS),
        gt_ignore=none,
        gt_keep=~gt.crowd,
    )
    return result


def summarize_yolo(
    gt: Dataset,
    matched: MatchedPredictions,
    /,
    *,
    iou_thresholds: object = None,
    stable_ties: bool = False,
) -> ProtocolResult:
    """The second half of :func:`evaluate_yolo`: numbers from a :func:`match_yolo_records` match.

    Reads the ground truth only for its categories and the non-crowd labels per class.
    Ultralytics' confidence layout is rebuilt from the records (image rows of ``gt``'s image
    table, then descending confidence, ties by ``pred_row``), so a merge of disjoint image
    shards gives the one-process numbers; ``stable_ties=True`` ranks ties by ``pred_row``
    across images (after a merge, pass the shards' row offsets). ``iou_thresholds`` must be
    those of the match.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([0], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[0])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                            category_id=[0], scores=[0.9])
    >>> round(summarize_yolo(gt, match_yolo_records(gt, pred)).stats["mAP50"], 3)
    0.995
    """
    thresholds = _thresholds(iou_thresholds)
    outcome = matched.outcome
    if outcome.thresholds.size != thresholds.size:
        raise ParameterError(
            f"iou_thresholds: expected the {outcome.thresholds.size} thresholds of the match, "
            f"got {thresholds.size}"
        )
    category_ids, names = grouping.sorted_categories(gt.categories)
    num_classes = category_ids.size
    gt_class = class_rows(category_ids, gt.category_id)
    num_labels = np.bincount(gt_class[~gt.crowd & (gt_class >= 0)], minlength=num_classes)
    # every prediction (other categories too) in row order, as Ultralytics' arrays hold them
    n = len(outcome)
    all_rows = np.concatenate([outcome.pred_row, matched.other_row])
    by_row = grouping.row_order(all_rows)
    pred_class = np.concatenate([outcome.class_row, np.full(len(matched.other_row), -1)])[by_row]
    scores = np.concatenate([outcome.score, matched.other_score])[by_row]
    image_index = grouping.image_rows(
        gt, np.concatenate([outcome.image_id, matched.other_image_id])
    )[by_row]
    tp = np.zeros((thresholds.size, all_rows.size), dtype=bool)
    # area range 0's bits are 0..T-1 (``MatchOutcome.tp_bits``: bit ``a * T + t``)
    tp[:, :n] = np.unpackbits(outcome.tp_bits, axis=1, count=thresholds.size).T.astype(bool)
    tp = tp[:, by_row]
    # a model's confidences are float32: ties, order and curves are those of float32 values
    conf = scores.astype(np.float32).astype(np.float64)
    curves = ultralytics_class_curves(
        tp,
        pred_class,
        conf,
        num_labels,
        stable_ties=stable_ties,
        image_index=image_index,
    )
    has = curves.has_labels
    i = curves.best_index
    p, r, f1 = curves.p_curve[:, i], curves.r_curve[:, i], curves.f1_curve[:, i]
    at50 = threshold_index(thresholds, 0.5)
    ap50 = curves.ap[:, at50] if at50 is not None else np.full(has.size, -1.0)
    ap_mean = np.where(has, curves.ap.mean(axis=1), -1.0)
    n = int(has.sum())
    map5095 = float(curves.ap[has].mean()) if n else 0.0
    stats = {
        "precision": float(p[has].mean()) if n else 0.0,
        "recall": float(r[has].mean()) if n else 0.0,
        "mAP50": (float(ap50[has].mean()) if n else 0.0) if at50 is not None else -1.0,
        "mAP50-95": map5095,
        "fitness": map5095,
        "confidence": float(CONFIDENCE_GRID[i]),
    }
    num_pred = np.bincount(outcome.class_row, minlength=num_classes)
    rows: list[dict[str, Any]] = [
        {
            "category_id": int(category_ids[k]),
            "name": names[k],
            "num_gt": int(num_labels[k]),
            "num_pred": int(num_pred[k]),
            "precision": float(p[k]) if has[k] else -1.0,
            "recall": float(r[k]) if has[k] else -1.0,
            "F1": float(f1[k]) if has[k] else -1.0,
            "AP50": float(ap50[k]) if has[k] else -1.0,
            "AP50-95": float(ap_mean[k]),
        }
        for k in range(has.size)
    ]
    return ProtocolResult(
        protocol="yolo",
        stats=stats,
        per_class=tuple(rows),
        arrays={
            "AP": curves.ap,
            "p_curve": curves.p_curve,
            "r_curve": curves.r_curve,
            "f1_curve": curves.f1_curve,
            "pr_precision": curves.pr_precision,
            "confidence": CONFIDENCE_GRID.copy(),
            "iou_thresholds": thresholds.copy(),
            "precision": curves.precision,
            "recall": curves.recall,
            "recall_thresholds": _AP_GRID.copy(),
        },
        params={"iou_thresholds": thresholds.tolist(), "stable_ties": bool(stable_ties)},
        outcome=outcome,
    )


def rematch_similarity(iou_type: str, params: Mapping[str, Any], confusion: bool) -> Any:
    """What matched IoUs, curves and the confusion matrix of a yolo result match with when
    they cannot read its outcome: Ultralytics' pose OKS (the evaluation's ``sigmas``; the
    confusion matrix uses box IoU, as ``PoseValidator``), its OBB similarity for oriented
    boxes (:func:`~ioukit.evaluation.similarity.ultralytics.yolo_similarity`); None (box IoU)
    otherwise.

    >>> type(rematch_similarity("keypoints", {}, False)).__name__
    'UltralyticsOKS'
    >>> rematch_similarity("keypoints", {}, True) is None
    True
    """
    reads = similarity_reads(iou_type)
    if reads.keypoints and not confusion:
        sigmas = params.get("sigmas")
        return UltralyticsOKS(None if sigmas is None else tuple(sigmas))
    if reads.oriented:
        return yolo_similarity(iou_type)
    return None


register_protocol(
    "yolo",
    yolo_protocol,
    iou_types=("bbox", "rotated", "probiou", "keypoints"),
    traits=ProtocolTraits(
        rematch=match_yolo,
        rematch_similarity=rematch_similarity,
        ultralytics_curves=True,
        unlisted_classes=True,
    ),
)
