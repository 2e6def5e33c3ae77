"""The LVIS protocol (federated, large vocabulary), equal to lvis-api's ``LVISEval``.

LVIS is COCO matching with four differences. :class:`LVISProtocol` (registered as
``protocol="lvis"``) applies them around the shared pipeline stages of
:mod:`ioukit.evaluation` (groups, similarity, the one matcher, accumulation), never as a second
evaluator:

1. **Cap** (before anything else, as ``LVISResults``): at most 300 results per image across
   classes, the highest scores kept (stable: among equal scores the earlier record wins),
   :func:`limit_per_image`. Fixed AP (Dave et al. 2021, lvis-api branch
   ``lvis_challenge_2021``) instead keeps no per-image cap and the top 10 000 results per
   class over the dataset, :func:`limit_per_category`.
2. **Positive areas** (``LVIS.get_ann_ids`` with a class filter): ground truths and results
   whose ``area`` is not in the open interval (0, inf) take no part (:func:`positive_area`).
   Results dropped here still took their place in the cap of step 1.
3. **Federated filter** (:func:`federated_keep`): a result counts only where its class is
   in the image's ``neg_category_ids`` or has ground truth in the image; otherwise nobody
   knows whether the class is there and the result is dropped.
4. **Not exhaustive** (:func:`not_exhaustive`): in an image whose
   ``not_exhaustive_category_ids`` lists the result's class, an unmatched result is IGNORED
   instead of a false positive (applied to the matcher's outcome, before accumulation).

Then COCO matching without crowd regions (``iscrowd`` is not read; an annotation's
``ignore`` key is honoured), IoU thresholds 0.50:0.95, area ranges all/small/medium/large on
the ground truth's ``area`` field, every surviving result of an (image, class) evaluated, and
101-point AP. APr/APc/APf average the classes of each frequency group that have ground truth.

Difference from lvis-api: a ground truth with annotation id 0 matches like any other
(lvis-api stores matches as ids and reads 0 as "unmatched", as pycocotools does).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.accumulate import coco_accumulate_levels
from ioukit.evaluation.groups import Groups
from ioukit.evaluation.match import MatchRule, match_groups
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.registry import ProtocolTraits, get_similarity, register_protocol
from ioukit.evaluation.result import ProtocolResult
from ioukit.evaluation.sharding import (
    empty_predictions,
    merge_outcomes,
    shard_gt_rows,
    shard_outcome,
    take_rows,
)
from ioukit.io.lvis import (
    FREQUENCY_GROUPS,
    LVISGroundTruth,
    read_lvis_ground_truth,
    read_lvis_results,
)

__all__ = [
    "LVIS_AREA_RANGES",
    "LVISProtocol",
    "check_frequencies",
    "evaluate_inputs",
    "evaluate_lvis",
    "federated_keep",
    "federated_labels",
    "format_summary",
    "limit_per_category",
    "limit_per_image",
    "lvis_box_area",
    "not_exhaustive",
    "positive_area",
]


LVIS_AREA_RANGES: dict[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "small": (0.0, 32.0**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}


"""lvis-api's ``Params.area_rng`` (inclusive bounds on the ground truth's ``area``)."""


_STAT_KEYS = ("AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf")


def _top_per_group(groups: np.ndarray, scores: np.ndarray, max_dets: int) -> np.ndarray:
    """Keep mask: the ``max_dets`` highest scores of each group; ties keep input order."""
    groups = np.asarray(groups, dtype=np.int64).reshape(-1)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if groups.shape != scores.shape:
        raise ValueError(f"scores: expected one score per row ({groups.size}), got {scores.size}")
    if max_dets < 0:
        raise ParameterError(f"max_dets: expected a non-negative integer, got {max_dets}")
    n = groups.size
    keep = np.zeros(n, dtype=bool)
    if n == 0:
        return keep
    order = np.lexsort((-scores, groups))  # stable: equal scores keep their input order
    sorted_groups = groups[order]
    start = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    counts = np.diff(np.r_[start, n])
    rank = np.arange(n) - np.repeat(start, counts)
    keep[order[rank < max_dets]] = True
    return keep


def limit_per_image(image_index: np.ndarray, scores: np.ndarray, max_dets: int = 300) -> np.ndarray:
    """Which results survive lvis-api's cap of ``max_dets`` results per image across classes.

    ``LVISResults.limit_dets_per_image``: an image with more than ``max_dets`` results keeps
    its ``max_dets`` highest scores, in a stable sort (equal scores: the earlier row wins).

    Parameters
    ----------
    image_index : ndarray of int, shape (N,)
        Image of each result.
    scores : ndarray of float, shape (N,)
    max_dets : int

    Returns
    -------
    ndarray of bool, shape (N,)
        True for the rows kept (the input order is unchanged).

    Examples
    --------
    >>> limit_per_image([0, 0, 0, 1], [0.5, 0.9, 0.5, 0.1], max_dets=2).tolist()
    [True, True, False, True]
    >>> limit_per_image([], [], max_dets=2).tolist()
    []
    """
    return _top_per_group(np.asarray(image_index), np.asarray(scores), int(max_dets))


def limit_per_category(
    category_id: np.ndarray, scores: np.ndarray, max_dets: int = 10_000
) -> np.ndarray:
    """Which results survive Fixed AP's cap of ``max_dets`` results per class (whole dataset).

    ``LVISResults.limit_dets_per_cat`` (lvis-api branch ``lvis_challenge_2021``): each class
    keeps its ``max_dets`` highest scores over all images, in a stable sort.

    Examples
    --------
    >>> limit_per_category([3, 3, 3, 4], [0.2, 0.7, 0.2, 0.1], max_dets=2).tolist()
    [True, True, False, True]
    """
    return _top_per_group(np.asarray(category_id), np.asarray(scores), int(max_dets))


def positive_area(area: np.ndarray) -> np.ndarray:
    """Rows lvis-api evaluates at all: ``0 < area < inf`` (``LVIS.get_ann_ids``).

    Examples
    --------
    >>> positive_area([0.0, 2.5, float("inf"), float("nan")]).tolist()
    [False, True, False, False]
    """
    area = np.asarray(area, dtype=np.float64)
    return np.asarray((area > 0) & (area < np.inf))


def _pair_keys(
    image_index: np.ndarray, category_id: np.ndarray, category_ids: np.ndarray
) -> np.ndarray:
    """One int64 key per (image row, category id); ids outside ``category_ids`` get -1."""
    cats = np.sort(category_ids)
    n = max(cats.size, 1)
    pos = np.minimum(np.searchsorted(cats, category_id), n - 1)
    known = cats[pos] == category_id if cats.size else np.zeros(len(category_id), dtype=bool)
    return np.where(known, np.asarray(image_index, dtype=np.int64) * n + pos, -1)


def _check_predictions(ground_truth: LVISGroundTruth, predictions: Dataset) -> None:
    if not isinstance(ground_truth, LVISGroundTruth):
        raise DataFormatError(
            "ground_truth: expected an LVISGroundTruth (ioukit.io.lvis.read_lvis_ground_truth), "
            f"got {type(ground_truth).__name__}"
        )
    if not isinstance(predictions, Dataset) or predictions.scores is None:
        raise DataFormatError("predictions: expected a Dataset with scores")
    if len(predictions.images) != len(ground_truth.dataset.images):
        raise DataFormatError(
            "predictions: expected the ground truth's image table "
            f"({len(ground_truth.dataset.images)} images), got {len(predictions.images)}"
        )


def federated_keep(
    ground_truth: LVISGroundTruth, predictions: Dataset, *, gt_rows: np.ndarray | None = None
) -> np.ndarray:
    """Results whose class is known in their image: in its ``neg_category_ids`` or in its GT.

    Parameters
    ----------
    ground_truth : LVISGroundTruth
    predictions : Dataset
        Results on ``ground_truth``'s images.
    gt_rows : ndarray of bool, shape (G,), optional
        The ground truths that count as present (lvis-api: those of positive area).

    Returns
    -------
    ndarray of bool, shape (P,)

    Examples
    --------
    >>> from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results
    >>> gt = read_lvis_ground_truth({
    ...     "images": [{"id": 1, "neg_category_ids": [2], "not_exhaustive_category_ids": []}],
    ...     "categories": [{"id": c, "frequency": "f"} for c in (1, 2, 3)],
    ...     "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
    ...                      "bbox": [0, 0, 2, 2], "area": 4.0}]})
    >>> dets = read_lvis_results([{"image_id": 1, "category_id": c, "bbox": [0, 0, 2, 2],
    ...                            "score": 0.5} for c in (1, 2, 3)], gt)
    >>> federated_keep(gt, dets).tolist()
    [True, True, False]
    """
    _check_predictions(ground_truth, predictions)
    gt = ground_truth.dataset
    cats = gt.categories.ids
    present = np.ones(len(gt), dtype=bool) if gt_rows is None else np.asarray(gt_rows, bool)
    known = np.concatenate(
        [
            _pair_keys(gt.image_index[present], gt.category_id[present], cats),
            _pair_keys(ground_truth.neg_image_index, ground_truth.neg_category_id, cats),
        ]
    )
    keys = _pair_keys(predictions.image_index, predictions.category_id, cats)
    return np.asarray(np.isin(keys, known) & (keys >= 0))


def not_exhaustive(ground_truth: LVISGroundTruth, predictions: Dataset) -> np.ndarray:
    """Results whose class is in their image's ``not_exhaustive_category_ids``.

    Unmatched, such a result is ignored rather than a false positive.

    Examples
    --------
    >>> from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results
    >>> gt = read_lvis_ground_truth({
    ...     "images": [{"id": 1, "neg_category_ids": [], "not_exhaustive_category_ids": [2]}],
    ...     "categories": [{"id": c, "frequency": "c"} for c in (1, 2)],
    ...     "annotations": []})
    >>> dets = read_lvis_results([{"image_id": 1, "category_id": c, "bbox": [0, 0, 2, 2],
    ...                            "score": 0.5} for c in (1, 2)], gt)
    >>> not_exhaustive(gt, dets).tolist()
    [False, True]
    """
    _check_predictions(ground_truth, predictions)
    cats = ground_truth.dataset.categories.ids
    flagged = _pair_keys(
        ground_truth.not_exhaustive_image_index, ground_truth.not_exhaustive_category_id, cats
    )
    keys = _pair_keys(predictions.image_index, predictions.category_id, cats)
    return np.asarray(np.isin(keys, flagged) & (keys >= 0))


def _only(ds: Dataset, keep: np.ndarray, *, clear_crowd: bool = False) -> Dataset:
    """``ds`` as the pipeline should see it: the rows ``~keep`` get a category id that is not
    in the category table (grouping leaves them out), nothing else is copied; ``clear_crowd``
    sets every crowd flag to False (LVIS has no crowd regions).

    A shallow view for :meth:`LVISProtocol.evaluate` only (it bypasses the Dataset check that
    every category is known): the rows keep their numbers, so the outcome's ``pred_row`` and
    matched ground-truth rows refer to the caller's datasets.
    """
    import copy

    cats = np.asarray(ds.categories.ids, dtype=np.int64)
    low = int(cats.min()) if cats.size else 0
    unknown = low - 1 if low > np.iinfo(np.int64).min else int(cats.max()) + 1
    view = copy.copy(ds)
    object.__setattr__(view, "category_id", np.where(keep, ds.category_id, unknown))
    if clear_crowd:
        object.__setattr__(view, "crowd", np.zeros(len(ds), dtype=bool))
    return view


def _not_exhaustive_rows(
    ground_truth: LVISGroundTruth, pred: Dataset, rows: np.ndarray
) -> np.ndarray:
    """:func:`not_exhaustive` of the prediction rows ``rows`` only."""
    cats = ground_truth.dataset.categories.ids
    flagged = _pair_keys(
        ground_truth.not_exhaustive_image_index, ground_truth.not_exhaustive_category_id, cats
    )
    keys = _pair_keys(pred.image_index[rows], pred.category_id[rows], cats)
    return np.asarray(np.isin(keys, flagged) & (keys >= 0))


def _mean_valid(values: np.ndarray, valid_classes: np.ndarray) -> float:
    """lvis-api's ``_summarize``: the mean of the entries > -1, -1 when there are none.

    ``values`` [..., K]: a class's entries are all -1 (no ground truth in the area range) or
    all >= 0, so the entries > -1 in C order are ``values[..., valid_classes]`` flattened:
    the same numbers in the same order, for a bit-identical mean, without scanning [T,R,K].
    """
    if values.size == 0 or valid_classes.size == 0:
        return -1.0
    return float(np.mean(np.ascontiguousarray(values[..., valid_classes]).reshape(-1)))


class _ClassArrays(Mapping[str, np.ndarray]):
    """``precision`` [T, R, K, A] and ``recall`` [T, K, A] over all K classes, built on first
    access from the arrays of the classes with ground truth (axis -2), -1 elsewhere: LVIS
    files list many classes without any, and most callers only read the stats."""

    def __init__(self, compact: dict[str, np.ndarray], cols: np.ndarray, n_classes: int) -> None:
        self._compact = compact
        self._cols = cols
        self._n = n_classes
        self._full: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self._full:
            part = self._compact[key]
            shape = (*part.shape[:-2], self._n, part.shape[-1])
            full = np.full(shape, -1.0)
            full[..., self._cols, :] = part
            self._full[key] = full
        return self._full[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._compact)

    def __len__(self) -> int:
        return len(self._compact)


def _linspace(
    values: Sequence[float] | np.ndarray | None, default: np.ndarray, name: str
) -> tuple[float, ...]:
    if values is None:
        return tuple(default.tolist())
    try:
        array = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name}: expected a sequence of numbers, got {values!r}") from exc
    if array.size == 0 or not np.all((array >= 0) & (array <= 1)):
        raise ParameterError(f"{name}: expected numbers in [0, 1], got {values!r}")
    return tuple(array.tolist())


@dataclass(frozen=True, slots=True)
class LVISProtocol:
    """lvis-api's ``LVISEval`` as a pipeline protocol (``protocol="lvis"``).

    The cap and the federated filter select the rows (:meth:`select`); then the shared stages:
    ``Groups.build`` -> similarity (box or mask IoU, no crowd) -> ``match`` (COCO rule) ->
    not-exhaustive results unmatched become IGNORED on the outcome -> ``coco_accumulate`` ->
    lvis-api's summary (frequency groups).

    Attributes
    ----------
    fixed_ap : bool
        Fixed AP: no per-image cap; the top ``max_dets`` results per class over the dataset.
    max_dets : int
        The cap: 300 per image (lvis-api), or 10 000 per class with ``fixed_ap``.
    iou_thresholds : tuple of float, (T,)
    recall_thresholds : tuple of float, (R,)
    area_ranges : tuple of (name, low, high)
        lvis-api's all/small/medium/large.
    rule : MatchRule
        COCO's greedy rule without crowd regions.

    Examples
    --------
    >>> from ioukit.evaluation import make_protocol
    >>> p = make_protocol("lvis", fixed_ap=True)
    >>> p.name, p.max_dets, p.stat_keys()[-1]
    ('lvis', 10000, 'ARl@10000/cat')
    """

    fixed_ap: bool = False
    max_dets: int = 300
    iou_thresholds: tuple[float, ...] = tuple(np.linspace(0.5, 0.95, 10).tolist())
    recall_thresholds: tuple[float, ...] = tuple(np.linspace(0.0, 1.0, 101).tolist())
    area_ranges: tuple[tuple[str, float, float], ...] = tuple(
        (n, lo, hi) for n, (lo, hi) in LVIS_AREA_RANGES.items()
    )
    rule: MatchRule = field(default_factory=lambda: MatchRule(crowd=False))
    name: str = "lvis"
    can_shard: ClassVar[bool] = True
    """Sharded evaluation runs :meth:`shard_match` on the workers (not with ``fixed_ap``)."""
    input_format: ClassVar[str] = "lvis-json"
    """What sharded evaluation reads: an LVIS ground truth and LVIS (COCO-format) results."""

    @classmethod
    def from_options(
        cls,
        *,
        fixed_ap: bool = False,
        max_dets: int | None = None,
        iou_thresholds: Sequence[float] | np.ndarray | None = None,
    ) -> LVISProtocol:
        """Validate the user's options (as :func:`ioukit.evaluate` takes them)."""
        cap = (10_000 if fixed_ap else 300) if max_dets is None else max_dets
        if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 1:
            raise ParameterError(f"max_dets: expected a positive integer, got {max_dets!r}")
        return cls(
            fixed_ap=bool(fixed_ap),
            max_dets=int(cap),
            iou_thresholds=_linspace(iou_thresholds, np.linspace(0.5, 0.95, 10), "iou_thresholds"),
        )

    def stat_keys(self) -> tuple[str, ...]:
        """The 13 stats in lvis-api's order (``AR@300``, or ``AR@10000/cat`` for Fixed AP)."""
        suffix = f"{self.max_dets}/cat" if self.fixed_ap else str(self.max_dets)
        return (*_STAT_KEYS, *(f"AR{a}@{suffix}" for a in ("", "s", "m", "l")))

    def select(
        self, ground_truth: LVISGroundTruth, predictions: Dataset
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows that lvis-api evaluates: ``(gt_keep (G,), pred_keep (P,))`` bool.

        The cap (per image, or per class for Fixed AP) on every result as read, then positive
        areas, then the federated filter.
        """
        _check_predictions(ground_truth, predictions)
        scores = np.asarray(predictions.scores)
        if self.fixed_ap:
            keep = limit_per_category(predictions.category_id, scores, self.max_dets)
        else:
            keep = limit_per_image(predictions.image_index, scores, self.max_dets)
        keep &= positive_area(predictions.area)
        gt_keep = positive_area(ground_truth.dataset.area)
        keep &= federated_keep(ground_truth, predictions, gt_rows=gt_keep)
        return gt_keep, keep

    def evaluate(
        self,
        gt: LVISGroundTruth | Dataset,
        pred: Dataset,
        /,
        *,
        iou_type: str = "bbox",
    ) -> ProtocolResult:
        """Run the pipeline on an LVIS ground truth; see :func:`evaluate_lvis`."""

        if not isinstance(gt, LVISGroundTruth):
            raise DataFormatError(
                "ground_truth: protocol 'lvis' needs an LVISGroundTruth (neg_category_ids, "
                "not_exhaustive_category_ids, frequency): read it with "
                f"ioukit.io.lvis.read_lvis_ground_truth, got {type(gt).__name__}"
            )
        if iou_type not in ("bbox", "segm"):
            raise ParameterError(f"iou_type: expected 'bbox' or 'segm', got {iou_type!r}")
        gt_keep, pred_keep = self.select(gt, pred)
        # the rows that take no part are hidden from the pipeline (their category made
        # unknown on a shallow view), not copied out: the outcome's rows are the caller's
        gt_view = _only(gt.dataset, gt_keep, clear_crowd=True)
        pred_view = _only(pred, pred_keep)
        n_evaluated = int(np.count_nonzero(pred_keep))
        del pred_keep
        # every surviving result of an (image, class) is evaluated: max_det never truncates
        groups = Groups.build(gt_view, pred_view, use_cats=True, max_det=max(len(pred), 1))
        matrices = get_similarity(iou_type).matrices(gt_view, pred_view, groups)
        outcome = match_groups(
            gt_view,
            pred_view,
            groups,
            matrices,
            thresholds=np.array(self.iou_thresholds),
            rule=self.rule,
            area_ranges=self.area_ranges,
            gt_ignore=gt_view.ignore | gt_view.difficult,
        )
        # what the summary needs from the groups; then they go (bounded peak memory)
        cat_ids = groups.category_ids
        num_pred = np.bincount(groups.pred_class, minlength=len(cat_ids))[: len(cat_ids)]
        largest = max(int(groups.kept_count.max(initial=0)), 1)
        del gt_view, pred_view, groups, matrices
        # not exhaustively annotated: an unmatched result is ignored, not a false positive
        outcome = outcome.ignore_false_positives(_not_exhaustive_rows(gt, pred, outcome.pred_row))
        return self._result(
            gt, len(pred), n_evaluated, cat_ids, num_pred, outcome, iou_type, largest
        )

    def check_shardable(self) -> None:
        """Raise ValueError where shards of images cannot give the one-process numbers."""
        if self.fixed_ap:
            raise ValueError(
                "fixed_ap: Fixed AP keeps the top results of each class over the whole dataset, "
                "which no shard of images can apply on its own; evaluate it in one process"
            )

    def shard_match(
        self, gt: LVISGroundTruth, pred: Dataset, /, *, iou_type: str = "bbox"
    ) -> MatchOutcome:
        """On a worker: :meth:`evaluate` of some images' results, its outcome as the shard
        ships it. lvis-api's cap, the positive-area rule, the federated filter and the match
        are all per image, so a worker holding whole images applies them exactly."""
        rows = shard_gt_rows(gt.dataset, pred)
        shard_gt = dataclasses.replace(gt, dataset=take_rows(gt.dataset, rows))
        result = self.evaluate(shard_gt, pred, iou_type=iou_type)
        assert result.outcome is not None
        num_pred = np.array([row["num_pred"] for row in result.per_class], dtype=np.int64)
        return shard_outcome(result.outcome, rows, pred_count=num_pred)

    def shard_summarize(
        self,
        gt: LVISGroundTruth,
        parts: Sequence[MatchOutcome],
        /,
        *,
        iou_type: str = "bbox",
        pred_row_offsets: Sequence[int] = (),
        n_predictions: int = 0,
        names: Sequence[str] = (),
    ) -> ProtocolResult:
        """On the client: the shards' outcomes merged, accumulated and summarized once."""
        data = gt.dataset
        # ground-truth counts (positive areas, crowds not read), records and category ids
        base = self.evaluate(gt, empty_predictions(data), iou_type=iou_type)
        assert base.outcome is not None
        category_ids = np.asarray(base.params["category_ids"], dtype=np.int64)
        empty = dataclasses.replace(
            base.outcome, pred_count=np.zeros(len(category_ids), dtype=np.int64)
        )
        outcome = merge_outcomes(parts, empty, np.sort(data.images.ids))
        assert outcome.pred_count is not None
        # every result of an (image, class) is evaluated: the largest group is the only cut
        largest = max([int(np.max(p.rank)) + 1 for p in parts if len(p)] + [1])
        return self._result(
            gt,
            int(n_predictions),
            int(outcome.pred_count.sum()),
            category_ids,
            outcome.pred_count,
            outcome,
            iou_type,
            largest,
        )

    def _result(
        self,
        gt: LVISGroundTruth,
        n_read: int,
        n_evaluated: int,
        cat_ids: np.ndarray,
        num_pred: np.ndarray,
        outcome: Any,
        iou_type: str,
        largest: int,
    ) -> ProtocolResult:
        # accumulate the classes with ground truth only (the others stay -1; LVIS files list
        # many classes without any): the same numbers with arrays [T, R, K', A], at most
        # ``largest`` results of an (image, class)
        cols, precision, recall = coco_accumulate_levels(
            outcome,
            recall_thresholds=np.array(self.recall_thresholds),
            max_dets=np.array([largest], dtype=np.int64),
            levels=[0],
        )
        # p_sub [T, R, K', A], r_sub [T, K', A]: the classes ``cols`` (those with ground truth)
        p_sub, r_sub = precision[..., 0], recall[..., 0]
        iou_thr = np.array(self.iou_thresholds)
        area_names = [a[0] for a in self.area_ranges]
        freq_by_id = dict(
            zip(gt.dataset.categories.ids.tolist(), gt.frequency.tolist(), strict=True)
        )
        frequency = np.array([freq_by_id[int(c)] for c in cat_ids], dtype="<U1")
        # a class's entries are > -1 where it has ground truth in the area range, which it then
        # has in "all": the entries > -1 are p_sub's where gt_sub, in the same C order
        gt_sub = outcome.gt_count[cols] > 0  # [K', A]
        freq_sub = frequency[cols]

        def ap(t: float | None = None, area: str = "all", group: str | None = None) -> float:
            a = area_names.index(area)
            s = p_sub[..., a] if t is None else p_sub[np.flatnonzero(iou_thr == t), ..., a]
            if group is None:
                return _mean_valid(s, np.flatnonzero(gt_sub[:, a]))
            members = np.flatnonzero(freq_sub == group)
            return _mean_valid(s[..., members], np.flatnonzero(gt_sub[members, a]))

        def ar(area: str = "all") -> float:
            a = area_names.index(area)
            return _mean_valid(r_sub[..., a], np.flatnonzero(gt_sub[:, a]))

        keys = self.stat_keys()
        values = [
            ap(),
            ap(0.5),
            ap(0.75),
            ap(area="small"),
            ap(area="medium"),
            ap(area="large"),
            ap(group="r"),
            ap(group="c"),
            ap(group="f"),
            ar(),
            ar("small"),
            ar("medium"),
            ar("large"),
        ]
        stats = dict(zip(keys, values, strict=True))

        def per_class_mean(s: np.ndarray) -> np.ndarray:
            # s [..., K'] for area "all": the mean over the leading axes; -1 without ground truth
            out = np.full(len(cat_ids), -1.0)
            if s.size and cols.size:
                out[cols] = s.reshape(-1, cols.size).mean(axis=0)
            return out

        columns = {
            "AP": per_class_mean(p_sub[..., 0]),
            "AP50": per_class_mean(p_sub[np.flatnonzero(iou_thr == 0.5), ..., 0]),
            "AP75": per_class_mean(p_sub[np.flatnonzero(iou_thr == 0.75), ..., 0]),
            keys[9]: per_class_mean(r_sub[..., 0]),
        }
        names = dict(
            zip(gt.dataset.categories.ids.tolist(), gt.dataset.categories.names, strict=True)
        )
        num_gt = outcome.gt_count[:, 0]
        rows: list[dict[str, Any]] = []
        for k, cat in enumerate(cat_ids.tolist()):
            row: dict[str, Any] = {
                "category_id": int(cat),
                "name": names[int(cat)],
                "frequency": str(frequency[k]),
                "num_gt": int(num_gt[k]),
                "num_pred": int(num_pred[k]),
            }
            for key, column in columns.items():
                row[key] = float(column[k])
            rows.append(row)
        params: dict[str, Any] = {
            "iou_type": iou_type,
            "fixed_ap": self.fixed_ap,
            "max_dets_per_image": -1 if self.fixed_ap else self.max_dets,
            "max_dets_per_category": self.max_dets if self.fixed_ap else -1,
            "iou_thresholds": list(self.iou_thresholds),
            "recall_thresholds": list(self.recall_thresholds),
            "area_ranges": {n: [lo, hi] for n, lo, hi in self.area_ranges},
            "category_ids": cat_ids.tolist(),
            "frequency_groups": list(FREQUENCY_GROUPS),
            "num_results_read": n_read,
            "num_results_evaluated": n_evaluated,
        }
        return ProtocolResult(
            "lvis",
            stats,
            tuple(rows),
            _ClassArrays({"precision": p_sub, "recall": r_sub}, cols, len(cat_ids)),
            params,
            outcome=outcome,
        )


def evaluate_lvis(
    ground_truth: LVISGroundTruth,
    predictions: Dataset,
    /,
    *,
    iou_type: str = "bbox",
    fixed_ap: bool = False,
    max_dets: int | None = None,
    iou_thresholds: Sequence[float] | np.ndarray | None = None,
) -> ProtocolResult:
    """LVIS evaluation of ``predictions`` against ``ground_truth`` (lvis-api ``LVISEval``).

    Parameters
    ----------
    ground_truth : LVISGroundTruth
        From :func:`ioukit.io.lvis.read_lvis_ground_truth`.
    predictions : Dataset
        Results on the ground truth's images (:func:`ioukit.io.lvis.read_lvis_results`), all
        of them: the cap is applied here.
    iou_type : {"bbox", "segm"}
        ``"segm"``: mask IoU (both datasets need ``segmentation``).
    fixed_ap : bool
        Fixed AP: no per-image cap, the top ``max_dets`` (default 10 000) results per class
        over the dataset; stats ``AR@10000/cat`` etc.
    max_dets : int, optional
        The cap: results per image (default 300), or per class with ``fixed_ap``.
    iou_thresholds : sequence of float, optional
        Default ``linspace(0.5, 0.95, 10)``.

    Returns
    -------
    ProtocolResult
        ``stats`` with lvis-api's 13 keys in its order: ``AP, AP50, AP75, APs, APm, APl, APr,
        APc, APf, AR@300, ARs@300, ARm@300, ARl@300`` (-1 where nothing counts);
        ``per_class`` rows (``category_id, name, frequency, num_gt, num_pred, AP, AP50, AP75,
        AR@300``; ``num_pred`` counts the results evaluated, after cap and filters);
        ``arrays``: ``precision`` [T, R, K, A] and ``recall`` [T, K, A] as lvis-api's
        ``eval["precision"]`` / ``eval["recall"]``; ``outcome``: the matcher's records (after
        the not-exhaustive rule).

    Examples
    --------
    >>> from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results
    >>> gt = read_lvis_ground_truth({
    ...     "images": [{"id": 1, "neg_category_ids": [2], "not_exhaustive_category_ids": []}],
    ...     "categories": [{"id": 1, "name": "cat", "frequency": "f"},
    ...                    {"id": 2, "name": "dog", "frequency": "r"}],
    ...     "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
    ...                      "bbox": [0, 0, 10, 10], "area": 100.0}]})
    >>> dets = read_lvis_results([
    ...     {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 9], "score": 0.9},
    ...     {"image_id": 1, "category_id": 2, "bbox": [0, 0, 10, 9], "score": 0.95}], gt)
    >>> r = evaluate_lvis(gt, dets)
    >>> round(r.stats["AP"], 3), r.stats["APf"] == r.stats["AP"], r.stats["APr"]
    (0.9, True, -1.0)
    >>> list(r.stats)[-4:]
    ['AR@300', 'ARs@300', 'ARm@300', 'ARl@300']
    """
    protocol = LVISProtocol.from_options(
        fixed_ap=fixed_ap, max_dets=max_dets, iou_thresholds=iou_thresholds
    )
    return protocol.evaluate(ground_truth, predictions, iou_type=iou_type)


def format_summary(result: ProtocolResult) -> str:
    """lvis-api's ``print_results`` block for an LVIS result, as one string.

    Examples
    --------
    >>> r = ProtocolResult("lvis", {"AP": 0.25, "AP50": 0.5, "APs": -1.0, "APr": 0.1,
    ...                    "AR@300": 0.3}, (), params={"iou_thresholds": [0.5, 0.95],
    ...                    "max_dets_per_image": 300, "max_dets_per_category": -1})
    >>> print(format_summary(r))
     Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=300 catIds=all] = 0.250
     Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=300 catIds=all] = 0.500
     Average Precision  (AP) @[ IoU=0.50:0.95 | area=     s | maxDets=300 catIds=all] = -1.000
     Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=300 catIds=  r] = 0.100
     Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=300 catIds=all] = 0.300
    """
    thresholds = result.params["iou_thresholds"]
    per_image = int(result.params.get("max_dets_per_image", 300))
    per_cat = int(result.params.get("max_dets_per_category", -1))
    if per_cat < 0:
        dets = f"{per_image:>3d}"
    elif per_image < 0:
        dets = f"{per_cat}/cat"
    else:
        dets = f"{per_image}/im,{per_cat}/cat"
    lines = []
    for key, value in result.stats.items():
        ap = "AP" in key
        title = "Average Precision" if ap else "Average Recall"
        kind = "(AP)" if ap else "(AR)"
        third = key[2] if len(key) > 2 else ""
        iou = (
            f"{float(key[2:]) / 100:0.2f}"
            if third.isdigit()
            else f"{thresholds[0]:0.2f}:{thresholds[-1]:0.2f}"
        )
        group = third if third in ("r", "c", "f") else "all"
        area = third if third in ("s", "m", "l") else "all"
        lines.append(
            f" {title:<18} {kind} @[ IoU={iou:<9} | area={area:>6s} | maxDets={dets} "
            f"catIds={group:>3s}] = {value:0.3f}"
        )
    return "\n".join(lines)


def check_frequencies(frequencies: object) -> dict[int, str]:
    """``frequencies`` as ``{category_id: "r" | "c" | "f"}``, validated.

    Examples
    --------
    >>> check_frequencies({3: "f", 1: "r"})
    {1: 'r', 3: 'f'}
    """
    if frequencies is None:
        raise ParameterError(
            "frequencies: Evaluator(protocol='lvis') needs frequencies={category_id: 'r'|'c'|'f'}"
            " (the LVIS categories' 'frequency'), got None"
        )
    if not isinstance(frequencies, Mapping):
        raise TypeError(
            "frequencies: expected a mapping {category_id: 'r'|'c'|'f'}, got "
            f"{type(frequencies).__name__}"
        )
    out: dict[int, str] = {}
    for key, value in frequencies.items():
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise TypeError(f"frequencies: expected integer category ids as keys, got {key!r}")
        if value not in FREQUENCY_GROUPS:
            raise ParameterError(f"frequencies[{key}]: expected 'r', 'c' or 'f', got {value!r}")
        out[int(key)] = str(value)
    return dict(sorted(out.items()))


def _check_known(ids: np.ndarray, name: str, frequencies: Mapping[int, str]) -> None:
    for c in ids.tolist():
        if c not in frequencies:
            raise DataFormatError(
                f"{name}: label {c} has no LVIS frequency (frequencies has no key {c}; "
                "give every category id its 'r', 'c' or 'f')"
            )


def federated_labels(
    target: Mapping[str, Any],
    i: int,
    labels: np.ndarray,
    gt_labels: np.ndarray,
    frequencies: Mapping[int, str],
) -> tuple[np.ndarray, np.ndarray]:
    """Image ``i``'s ``neg_category_ids`` and ``not_exhaustive_category_ids`` (default empty),
    after checking that every label of the image has a frequency.

    Examples
    --------
    >>> neg, ne = federated_labels({"neg_category_ids": [2]}, 0, np.array([1]), np.array([1]),
    ...                            {1: "f", 2: "r"})
    >>> neg.tolist(), ne.tolist()
    ([2], [])
    """
    _check_known(labels, f"predictions[{i}].labels", frequencies)
    _check_known(gt_labels, f"targets[{i}].labels", frequencies)
    out = []
    for key in ("neg_category_ids", "not_exhaustive_category_ids"):
        name = f"targets[{i}].{key}"
        value = target.get(key, ())
        detach = getattr(value, "detach", None)
        if detach is not None:  # torch tensor
            value = detach().cpu().numpy()
        ids = np.asarray(value)
        if ids.size == 0:
            ids = np.zeros(0, dtype=np.int64)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise DataFormatError(
                f"{name}: expected a list of integer category ids, got an array of shape "
                f"{ids.shape} and dtype {ids.dtype}"
            )
        ids = ids.astype(np.int64)
        _check_known(ids, name, frequencies)
        out.append(ids)
    return out[0], out[1]


def lvis_box_area(raw: np.ndarray, box_format: str, xyxy: np.ndarray) -> np.ndarray:
    """A result's area as lvis-api computes it from the JSON ``bbox`` ``[x, y, w, h]``:
    ``w * h`` of the incoming widths (xywh, cxcywh), else of the xyxy differences.

    Examples
    --------
    >>> b = np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> lvis_box_area(b, "xywh", b).tolist(), lvis_box_area(b, "xyxy", b).tolist()
    ([12.0], [4.0])
    """
    if box_format in ("xywh", "cxcywh"):
        return np.asarray(raw[:, 2] * raw[:, 3])
    return np.asarray((xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1]))


def evaluate_inputs(
    gt: Any, predictions: Any, /, *, iou_type: str = "bbox", **options: Any
) -> tuple[ProtocolResult, Dataset, Dataset]:
    """``ioukit.evaluate(gt, predictions, protocol="lvis")`` below the result: read what needs
    reading (an LVIS file or dict carries the federated labels a Dataset lacks), evaluate.

    Returns the protocol's result, the ground truth's Dataset and the predictions' (what
    :class:`~ioukit.analysis.result.EvaluationResult` wraps); declared as the protocol's
    ``evaluate_inputs`` trait, so ``ioukit.evaluate`` imports this module only when asked.

    >>> gt = {"images": [{"id": 1, "neg_category_ids": [], "not_exhaustive_category_ids": []}],
    ...       "categories": [{"id": 1, "name": "cat", "frequency": "c"}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
    ...                        "bbox": [0, 0, 10, 10], "area": 100.0}]}
    >>> dets = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 9], "score": 0.9}]
    >>> result, gt_ds, pred = evaluate_inputs(gt, dets)
    >>> round(result.stats["APc"], 3), len(gt_ds), len(pred)
    (0.9, 1, 1)
    """
    allowed = _IOU_TYPES
    if iou_type not in allowed:
        listed = " or ".join(repr(t) for t in allowed)
        raise ParameterError(f"iou_type: expected {listed}, got {iou_type!r}")
    segm = iou_type == "segm"
    if isinstance(gt, LVISGroundTruth):
        lvis_gt = gt
    elif isinstance(gt, Dataset):
        raise TypeError(
            "gt: protocol='lvis' needs LVIS's labels (neg_category_ids, "
            "not_exhaustive_category_ids, frequency), which a Dataset does not carry: pass the "
            "LVIS file, its dict or ioukit.io.lvis.read_lvis_ground_truth(...) "
            "(or stream with Evaluator(protocol='lvis', frequencies=...))"
        )
    elif isinstance(gt, str | os.PathLike | Mapping):
        lvis_gt = read_lvis_ground_truth(gt, keep_segmentation=segm)
    else:
        raise TypeError(
            "gt: expected an LVISGroundTruth, an LVIS dict or a path for protocol='lvis', "
            f"got {type(gt).__name__}"
        )
    if isinstance(predictions, Dataset):
        pred = predictions
    elif isinstance(predictions, str | os.PathLike | Sequence | Mapping):
        pred = read_lvis_results(predictions, lvis_gt, iou_type=iou_type)  # type: ignore[arg-type]
    else:
        raise TypeError(
            "predictions: expected a Dataset, a list of result dicts or a path, "
            f"got {type(predictions).__name__}"
        )
    result = evaluate_lvis(lvis_gt, pred, iou_type=iou_type, **options)
    return result, lvis_gt.dataset, pred


_IOU_TYPES = ("bbox", "segm")


register_protocol(
    "lvis",
    LVISProtocol.from_options,
    iou_types=_IOU_TYPES,
    traits=ProtocolTraits(summary=format_summary, federated=True, evaluate_inputs=evaluate_inputs),
)
