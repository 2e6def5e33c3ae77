"""Evaluation past one process: :func:`evaluate_sharded` on Dask, torch.distributed sync.

:func:`evaluate_sharded` reads the ground truth once, broadcasts it to the workers of a
``dask.distributed`` cluster, lets every worker read and match its own prediction shards, and
merges the small partial results on the client. The result equals :func:`ioukit.evaluate` on
all predictions (the shards concatenated in the given order) bit for bit.

What a worker sends back depends on the protocol:

==============================  ===========================================================
protocol                        partial result
==============================  ===========================================================
``coco`` (bbox, segm,           :class:`CocoPartial`: the pipeline's match outcome packed to
keypoints, rotated, probiou,    25 bytes per evaluated detection (status as bit planes) plus
bbox-float32)                   its matched ground-truth row (4-6 bytes, for slices and
                                resampling); grouping, similarity and matching on the workers
``lvis`` (bbox, segm)           :class:`LVISPartial`: the 25-byte records; lvis-api's
                                per-image cap, federated filter and match on the workers
                                (Fixed AP, a per-class cap over the dataset, is refused)
``openimages``,                 :class:`OpenImagesPartial`: the
``openimages_challenge``        matched records (21 bytes per counted detection)
``voc07``, ``voc10``, ``yolo``  :class:`MatchedPartial`: ``protocol.match`` on the workers,
(yolo: bbox, keypoints,         packed to about 22-24 bytes per detection; the client merges
rotated, probiou)               and calls ``protocol.summarize`` once
==============================  ===========================================================

The client merges partials by sorting their records into the accumulation order (class, then
descending score, then image id, then rank in the image; Open Images: its reference's order),
so the numbers do not depend on how images were split. Each shard's records arrive sorted, so
for COCO this is one stable integer sort that merges the sorted runs (:func:`merge_order`).
VOC ranks tied scores across images in input order, so for it "one process" means the shards
concatenated in the given order.

:func:`synced_evaluate` is what :meth:`ioukit.Evaluator.compute` calls under an initialised
``torch.distributed`` process group: for COCO (every similarity above) each rank matches its
own images and ONE ``all_gather_object`` ships the compact :class:`CocoPartial` records (with
each rank's ground truth, for the counts), merged on every rank as above; VOC and YOLO (bbox)
ship :class:`MatchedPartial` the same way; other protocols gather the columnar datasets
(:func:`gather_datasets`) and every rank evaluates them. Images are numbered rank by rank in
arrival order (torchmetrics' convention) or, when the targets carry ``image_id``, identified
by it.

Dask and torch are optional and imported only when used (``pip install "ioukit[dask]"``).

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> images = ImageTable.from_lists([1, 2], ["a", "b"])
>>> cats = CategoryTable.from_lists([1], ["cat"])
>>> pred = [Dataset.from_arrays(images, cats, boxes=[[0, 0, 2, 2]], image_index=[i],
...                             category_id=[1], scores=[0.5]) for i in (0, 1)]
>>> len(concat_predictions(pred)), shard_images(pred[1]).tolist()
(2, [1])
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ioukit._evaluate_inputs import ground_truth_dataset as read_gt
from ioukit._evaluate_inputs import make_runner, predictions_dataset, resolve_iou_type
from ioukit._process_group import process_group
from ioukit.analysis.result import EvaluationResult
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.errors import DataFormatError, MissingDependencyError, ParameterError
from ioukit.evaluation.accumulate import coco_accumulate_levels
from ioukit.evaluation.grouping import MatchedPredictions
from ioukit.evaluation.groups import Groups, class_rows
from ioukit.evaluation.match import match_groups
from ioukit.evaluation.outcome import IGNORED, TRUE_POSITIVE, MatchOutcome
from ioukit.evaluation.protocols.openimages import accumulate_openimages, match_openimages
from ioukit.evaluation.registry import similarity_input
from ioukit.evaluation.result import ProtocolResult
from ioukit.io.lvis import LVISGroundTruth, read_lvis_ground_truth, read_lvis_results
from ioukit.io.openimages import OpenImagesGroundTruth, read_openimages_predictions

__all__ = [
    "LOCAL_CLUSTER_CONFIG",
    "CocoPartial",
    "LVISPartial",
    "MatchedPartial",
    "concat_predictions",
    "evaluate_sharded",
    "gather_datasets",
    "merge_order",
    "shard_images",
    "synced_evaluate",
]

_OPENIMAGES = ("openimages", "openimages_challenge")
_MATCHED = ("voc07", "voc10", "yolo")
"""Protocols with a ``match`` / ``summarize`` split (:class:`MatchedPartial`)."""
_COCO_PARTIAL = ("bbox", "segm", "keypoints", "rotated", "probiou", "bbox-float32")
"""COCO similarities whose match outcome the workers compute."""
_SUPPORTED = (
    *(("coco", t) for t in _COCO_PARTIAL),
    ("voc07", "bbox"),
    ("voc10", "bbox"),
    ("yolo", "bbox"),
    ("yolo", "rotated"),
    ("yolo", "probiou"),
    ("yolo", "keypoints"),
    ("openimages", "bbox"),
    ("openimages_challenge", "bbox"),
    ("lvis", "bbox"),
    ("lvis", "segm"),
)
"""(protocol, iou_type) pairs tested equal to one process."""


LOCAL_CLUSTER_CONFIG: Mapping[str, Any] = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
}
"""Dask configuration of the local cluster :func:`evaluate_sharded` makes.

Dask starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also turns off glibc's
dynamic mmap threshold: every large NumPy array is then mapped and unmapped afresh, and
reading and matching a shard cost about 20 % more CPU (measured: 6.8 vs 5.5 CPU seconds
for 8 shards of 175 000 predictions). Unset, the workers keep glibc's defaults. Use the same
setting for a cluster of your own (``dask.config.set(LOCAL_CLUSTER_CONFIG)`` before starting
it, or ``distributed: nanny: pre-spawn-environ: MALLOC_TRIM_THRESHOLD_: null`` in the Dask
configuration file of ``dask worker``).
"""


def shard_images(pred: Dataset, /) -> np.ndarray:
    """Sorted rows (in the ground truth's image table) of the images ``pred`` has boxes on."""
    return np.unique(pred.image_index)


def concat_predictions(parts: Sequence[Dataset], /) -> Dataset:
    """Predictions over one image table, concatenated in order (rows of ``parts[0]`` first).

    Raises
    ------
    DataFormatError
        No parts, ground truth among them, or parts over different image/category tables.
    """
    if not parts:
        raise DataFormatError("parts: expected at least one prediction dataset, got none")
    first = parts[0]
    for i, p in enumerate(parts):
        if not isinstance(p, Dataset) or not p.is_prediction:
            raise DataFormatError(f"parts[{i}]: expected a prediction Dataset (with scores)")
        if len(p.images) != len(first.images) or not np.array_equal(p.images.ids, first.images.ids):
            raise DataFormatError(f"parts[{i}]: expected the image table of parts[0]")
        if not np.array_equal(p.categories.ids, first.categories.ids):
            raise DataFormatError(f"parts[{i}]: expected the category table of parts[0]")
    if len(parts) == 1:
        return first
    return _concat(parts, first.images, first.categories, [0] * len(parts))


def _take(data: Dataset, rows: np.ndarray) -> Dataset:
    """The rows ``rows`` of ``data`` (every column), over the same image and category tables."""
    columns: dict[str, Any] = {}
    for f in dataclasses.fields(Dataset):
        value = getattr(data, f.name)
        if f.name in ("images", "categories") or value is None:
            columns[f.name] = value
        elif f.name == "segmentation":
            columns[f.name] = tuple(value[i] for i in rows.tolist())
        else:
            columns[f.name] = value[rows]
    return Dataset(**columns)


def _concat(
    parts: Sequence[Dataset],
    images: ImageTable,
    categories: CategoryTable,
    image_offsets: Sequence[int],
) -> Dataset:
    """One Dataset from ``parts`` (every column, optional ones too), image rows shifted."""
    columns: dict[str, Any] = {"images": images, "categories": categories}
    for f in dataclasses.fields(Dataset):
        if f.name in columns:
            continue
        values = [getattr(p, f.name) for p in parts]
        if all(v is None for v in values):
            columns[f.name] = None
        elif any(v is None for v in values):
            raise DataFormatError(f"parts: expected the column {f.name!r} in every part or in none")
        elif f.name == "segmentation":
            columns[f.name] = tuple(x for v in values for x in v)
        elif f.name == "image_index":
            columns[f.name] = np.concatenate(
                [v + o for v, o in zip(values, image_offsets, strict=True)]
            )
        else:
            columns[f.name] = np.concatenate(values)
    ids = columns["annotation_id"]
    if len(np.unique(ids)) != len(ids):  # each part numbered its own 1..n
        columns["annotation_id"] = np.arange(1, len(ids) + 1)
    return Dataset(**columns)


# ------------------------------------------------------------------------------ worker side


def _read_shard(gt: Any, shard: object, name: str, protocol: str, iou_type: str) -> Dataset:
    lvis_gt = None
    if protocol == "lvis":  # LVIS ground truth: the Dataset and the federated labels
        lvis_gt, gt = gt, gt.dataset
    if isinstance(shard, Dataset):
        if not shard.is_prediction:
            raise DataFormatError(f"{name}: expected predictions (with scores), got ground truth")
        if len(shard.images) != len(gt.images) or not np.array_equal(
            shard.images.ids, gt.images.ids
        ):
            raise DataFormatError(f"{name}: expected predictions over the ground truth's images")
        return shard
    if not isinstance(shard, str | os.PathLike):
        raise TypeError(f"{name}: expected a path or a Dataset, got {type(shard).__name__}")
    if protocol in _OPENIMAGES:
        return read_openimages_predictions(shard, gt)
    if lvis_gt is not None:
        return read_lvis_results(shard, lvis_gt, iou_type=iou_type)

    return predictions_dataset(
        shard,
        gt,
        iou_type=iou_type
        if similarity_input(iou_type) in ("segmentation", "keypoints")
        else "bbox",
    )


def _shard_partial(
    shared: tuple[Any, dict[str, Any]],
    shard: object,
    name: str,
    protocol: str,
    iou_type: str,
) -> tuple[np.ndarray, Any]:
    """Run on a worker: read one shard, return (its image rows, its partial result)."""
    gt, options = shared
    pred = _read_shard(gt, shard, name, protocol, iou_type)
    images = shard_images(pred)
    if protocol in _OPENIMAGES:
        part = match_openimages(
            gt, pred, challenge=protocol == "openimages_challenge", images=images, **options
        )
        return images, part
    if protocol == "coco" and iou_type in _COCO_PARTIAL:
        return images, CocoPartial.from_match(gt, pred, iou_type, options)
    if protocol == "lvis":
        return images, LVISPartial.from_match(gt, pred, iou_type, options)
    return images, MatchedPartial.from_match(gt, pred, protocol, iou_type, options)


@dataclass(frozen=True, slots=True, eq=False)
class CocoPartial:
    """A shard's COCO match outcome, packed: what accumulation needs and nothing else.

    One record per evaluated prediction (the first ``max_dets[-1]`` of each image and class),
    in accumulation order: score (8 bytes), the row of its category among the ground truth's
    sorted category ids (2 bytes below 32 768 categories), the rank of its image among the
    ground truth's sorted image ids (4; 2 below 32 768 images), its rank in its (image,
    class) group (1 byte while ``max_dets`` stays below 256) and the TRUE_POSITIVE / IGNORED
    status at every (area range, threshold) as the outcome's two bit planes (``2 * ceil(A *
    T / 8)`` bytes: 10 for COCO's 4 x 10): 25 bytes per detection with the defaults. Plus the
    predictions per class (for the per-class table) and, from :meth:`from_match`, the matched
    ground truths (the outcome's ``first_gt`` in the narrowest signed type, 4 bytes below 2**31
    ground truths, and ``same_bits``, 2 bytes for 10 thresholds; the rare other rows dense):
    slices, resampling and :func:`ioukit.compare` read them; their IoUs stay on the worker.

    Built on a worker by :meth:`from_match` (the pipeline's groups, similarity and matcher);
    merged on the client by :func:`merge_order` (one integer sort of the already sorted
    shards) into pycocotools' accumulation order.
    """

    score: np.ndarray
    category_row: np.ndarray
    image_rank: np.ndarray
    rank: np.ndarray
    tp_bits: np.ndarray
    ignored_bits: np.ndarray
    num_pred: np.ndarray
    shape: tuple[int, int]
    first_gt: np.ndarray | None = None
    """The outcome's ``first_gt`` as rows of the ground truth ``from_match`` got (narrowest
    signed type; -1: none); None: the matches stayed on the worker (LVIS)."""
    same_bits: np.ndarray | None = None
    other_row: np.ndarray | None = None
    other_gt: np.ndarray | None = None
    """The outcome's ``same_bits``, ``other_row`` and ``other_gt`` (rows as ``first_gt``)."""

    def __len__(self) -> int:
        return int(self.score.size)

    @property
    def has_matches(self) -> bool:
        """Whether the matched ground-truth rows came along (not their IoUs)."""
        return self.first_gt is not None

    @property
    def nbytes(self) -> int:
        """Bytes of the per-record arrays (``num_pred`` and the matches included)."""
        arrays = [
            self.score,
            self.category_row,
            self.image_rank,
            self.rank,
            self.tp_bits,
            self.ignored_bits,
            self.num_pred,
        ]
        for extra in (self.first_gt, self.same_bits, self.other_row, self.other_gt):
            if extra is not None:
                arrays.append(extra)
        return int(sum(a.nbytes for a in arrays))

    @classmethod
    def from_match(
        cls, gt: Dataset, pred: Dataset, iou_type: str, options: Mapping[str, Any]
    ) -> CocoPartial:
        """Match ``pred`` (some images' predictions) as ``COCOProtocol.evaluate`` does."""
        # only the ground truth of the shard's images: the others would form groups without
        # predictions, which add nothing but time (their counts come from the client)
        mine = np.flatnonzero(np.isin(gt.image_index, np.unique(pred.image_index)))
        protocol, groups, outcome = _coco_match(_take(gt, mine), pred, iou_type, options)
        k = len(groups.category_ids)
        num_pred = np.bincount(groups.pred_class, minlength=k)[:k].astype(np.int64)
        return cls.from_outcome(
            gt, outcome, groups.category_ids, num_pred, protocol.max_dets[-1], gt_rows=mine
        )

    @classmethod
    def from_outcome(
        cls,
        gt: Dataset,
        outcome: Any,
        category_ids: np.ndarray,
        num_pred: np.ndarray,
        rank_bound: int,
        *,
        gt_rows: np.ndarray | None = None,
    ) -> CocoPartial:
        """Pack a :class:`~ioukit.evaluation.outcome.MatchOutcome` of predictions over
        ``gt``'s image table (``category_ids``: the sorted ids class rows refer to; ranks
        below ``rank_bound``). With ``gt_rows`` (the rows of ``gt`` the outcome's ground
        truth came from) the matched ground truths come along, as rows of ``gt``."""

        a, t = len(outcome.area_names), len(outcome.thresholds)
        image_rank = np.searchsorted(np.sort(gt.images.ids), outcome.image_id)
        k = len(category_ids)
        matches: dict[str, np.ndarray] = {}
        if gt_rows is not None:
            to_gt = np.append(np.asarray(gt_rows, dtype=np.int64), -1)  # -1 stays -1
            matches = {
                "first_gt": _narrow(to_gt[outcome.first_gt], len(gt) + 1),
                "same_bits": np.asarray(outcome.same_bits, dtype=np.uint8),
                "other_row": np.asarray(outcome.other_row, dtype=np.int64),
                "other_gt": to_gt[np.asarray(outcome.other_gt, dtype=np.int64)],
            }
        return cls(
            score=outcome.score,
            category_row=_narrow(class_rows(category_ids, outcome.category_id), k),
            image_rank=_narrow(image_rank, len(gt.images)),
            rank=_narrow(outcome.rank, rank_bound, unsigned=True),
            tp_bits=outcome.tp_bits,  # the outcome's own bit planes (same layout)
            ignored_bits=outcome.ignored_bits,
            num_pred=np.asarray(num_pred, dtype=np.int64),
            shape=(a, t),
            **matches,
        )

    def status(self) -> np.ndarray:
        """The (N, A, T) int8 status array back."""

        a, t = self.shape
        tp = np.unpackbits(self.tp_bits, axis=1, count=a * t)
        ign = np.unpackbits(self.ignored_bits, axis=1, count=a * t)
        codes = tp * np.uint8(TRUE_POSITIVE) + ign * np.uint8(IGNORED)
        return codes.view(np.int8).reshape(len(self), a, t)


@dataclass(frozen=True, slots=True, eq=False)
class MatchedPartial:
    """A shard's VOC or YOLO match (``protocol.match``), packed for the client.

    One record per prediction of a ground-truth category, in accumulation order: score (8
    bytes), class row (2), image rank (4; 2 below 32 768 images), the prediction's row in
    its shard and its rank in its (image, class) group (the narrowest unsigned types), and
    the outcome's TRUE_POSITIVE / IGNORED bit planes (2 bytes for VOC's one threshold, 4 for
    Ultralytics' ten): 22 bytes per detection for VOC and 24 for YOLO with a few million
    predictions per shard (the columnar predictions shipped before were about 90). Plus the
    rows, scores and image ids of the predictions of categories the ground truth lacks
    (Ultralytics' confidence order sees them), the shard's number of predictions (its row
    offset in the concatenation, the order VOC ranks tied scores by)
    and the ground-truth counts of its match.
    """

    score: np.ndarray
    class_row: np.ndarray
    image_rank: np.ndarray
    pred_row: np.ndarray
    rank: np.ndarray
    tp_bits: np.ndarray
    ignored_bits: np.ndarray
    other_row: np.ndarray
    other_score: np.ndarray
    other_image_id: np.ndarray
    n_rows: int
    gt_count: np.ndarray
    category_ids: np.ndarray
    thresholds: np.ndarray
    area_names: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.score.size)

    @property
    def nbytes(self) -> int:
        """Bytes of the per-record arrays (the other-category predictions included)."""
        return int(
            sum(
                a.nbytes
                for a in (
                    self.score,
                    self.class_row,
                    self.image_rank,
                    self.pred_row,
                    self.rank,
                    self.tp_bits,
                    self.ignored_bits,
                    self.other_row,
                    self.other_score,
                    self.other_image_id,
                )
            )
        )

    @classmethod
    def from_match(
        cls, gt: Dataset, pred: Dataset, protocol: str, iou_type: str, options: Mapping[str, Any]
    ) -> MatchedPartial:
        """``make_protocol(protocol).match`` on ``pred`` (some images' predictions), packed."""

        runner = make_runner(protocol, iou_type, options)
        mine = np.isin(gt.image_index, np.unique(pred.image_index))
        matched = runner.match(_take(gt, np.flatnonzero(mine)), pred, iou_type=iou_type)
        outcome = matched.outcome
        k, n = len(outcome.category_ids), len(pred)
        image_rank = np.searchsorted(np.sort(gt.images.ids), outcome.image_id)
        return cls(
            score=np.asarray(outcome.score, dtype=np.float64),
            class_row=_narrow(outcome.class_row, k),
            image_rank=_narrow(image_rank, len(gt.images)),
            pred_row=_narrow(outcome.pred_row, n, unsigned=True),
            rank=_narrow(outcome.rank, n + 1, unsigned=True),
            tp_bits=outcome.tp_bits,
            ignored_bits=outcome.ignored_bits,
            other_row=np.asarray(matched.other_row, dtype=np.int64),
            other_score=np.asarray(matched.other_score, dtype=np.float64),
            other_image_id=np.asarray(matched.other_image_id, dtype=np.int64),
            n_rows=n,
            gt_count=np.asarray(outcome.gt_count, dtype=np.int64),
            category_ids=np.asarray(outcome.category_ids, dtype=np.int64),
            thresholds=np.asarray(outcome.thresholds, dtype=np.float64),
            area_names=tuple(outcome.area_names),
        )


def _matched_result(
    gt: Dataset,
    partials: Sequence[MatchedPartial],
    protocol: str,
    iou_type: str,
    options: Mapping[str, Any],
) -> ProtocolResult:
    """``summarize`` of the shards' matches merged: the one-process numbers."""

    runner = make_runner(protocol, iou_type, options)
    parts = list(partials)
    if not parts:
        parts = [MatchedPartial.from_match(gt, _empty_predictions(gt), protocol, iou_type, options)]
    first = parts[0]
    offsets = np.cumsum([0] + [p.n_rows for p in parts])[:-1].tolist()
    t = len(first.thresholds)
    image_ids = np.sort(gt.images.ids)
    score = np.concatenate([p.score for p in parts])
    class_row = np.concatenate([p.class_row.astype(np.int64) for p in parts])
    image_rank = np.concatenate([p.image_rank.astype(np.int64) for p in parts])
    order = merge_order(class_row, score, image_rank, len(image_ids))
    pred_row = np.concatenate(
        [p.pred_row.astype(np.int64) + o for p, o in zip(parts, offsets, strict=True)]
    )
    rank = np.concatenate([p.rank.astype(np.int64) for p in parts])
    n = len(order)
    class_row = class_row[order]
    outcome = MatchOutcome(
        pred_row=pred_row[order],
        score=score[order],
        class_row=class_row.astype(np.int32),
        category_id=first.category_ids[class_row],
        image_id=image_ids[image_rank[order]],
        rank=rank[order].astype(np.int32),
        tp_bits=np.concatenate([p.tp_bits for p in parts])[order],
        ignored_bits=np.concatenate([p.ignored_bits for p in parts])[order],
        first_gt=np.broadcast_to(np.int64(-1), (n,)),  # the matches stay on the workers
        first_iou=np.broadcast_to(np.float64(np.nan), (n,)),
        same_bits=np.broadcast_to(np.uint8(0), (n, (t + 7) // 8)),
        other_row=np.zeros(0, dtype=np.int64),
        other_gt=np.zeros((0, t), dtype=np.int64),
        other_iou=np.zeros((0, t)),
        gt_count=np.sum([p.gt_count for p in parts], axis=0).astype(np.int64),
        category_ids=first.category_ids,
        thresholds=first.thresholds,
        area_names=first.area_names,
    )
    matched = MatchedPredictions(
        outcome,
        np.concatenate([p.other_row + o for p, o in zip(parts, offsets, strict=True)]),
        np.concatenate([p.other_score for p in parts]),
        np.concatenate([p.other_image_id for p in parts]),
    )
    result: ProtocolResult = runner.summarize(gt, None, matched, iou_type=iou_type)
    return result


def _narrow(values: np.ndarray, bound: int, *, unsigned: bool = False) -> np.ndarray:
    """``values`` (in ``[0, bound)``) in the smallest integer dtype holding ``bound``."""
    for dtype in (np.uint8, np.uint16, np.uint32) if unsigned else (np.int16, np.int32):
        if bound <= np.iinfo(dtype).max:
            return np.asarray(values).astype(dtype)
    return np.asarray(values).astype(np.int64)


def merge_order(
    class_row: np.ndarray, score: np.ndarray, image_rank: np.ndarray, n_images: int
) -> np.ndarray:
    """Permutation of concatenated shards' records into accumulation order.

    Each shard's records are in accumulation order (class row, descending score, image,
    rank in the group) and no image is in two shards, so a STABLE sort by (class row,
    descending score, image) reproduces one process's order (within an image the shard's
    own rank order is kept). The three keys are packed in one integer (the score as its
    dense rank) when they fit, and numpy's stable sort (timsort) merges the already sorted
    runs of the shards in O(N log shards); otherwise a lexsort of the three.

    Parameters
    ----------
    class_row, image_rank : ndarray of int, shape (N,)
        Non-negative.
    score : ndarray of float64, shape (N,)
    n_images : int
        Bound on ``image_rank``.

    Returns
    -------
    ndarray of int64, shape (N,)

    Examples
    --------
    >>> merge_order(np.array([0, 1, 0]), np.array([0.5, 0.9, 0.7]), np.array([3, 1, 2]), 4)
    array([2, 0, 1])
    """
    neg = -np.asarray(score, dtype=np.float64)
    if neg.size == 0:
        return np.zeros(0, dtype=np.int64)
    levels = np.sort(neg, kind="stable")  # merges the shards' descending runs
    levels = levels[np.r_[True, levels[1:] != levels[:-1]]]
    dense = np.searchsorted(levels, neg)
    classes = int(np.max(class_row)) + 1
    if classes * levels.size * max(int(n_images), 1) < 2**62:
        key = np.asarray(class_row, dtype=np.int64) * levels.size + dense
        key *= max(int(n_images), 1)
        key += image_rank
        return np.argsort(key, kind="stable").astype(np.int64, copy=False)
    return np.lexsort((image_rank, dense, class_row)).astype(np.int64, copy=False)


def _coco_match(
    gt: Dataset, pred: Dataset, iou_type: str, options: Mapping[str, Any]
) -> tuple[Any, Any, Any]:
    """(protocol, groups, outcome): the first half of ``COCOProtocol.evaluate`` (and of
    ``KeypointProtocol``'s, whose similarity is its own OKS and whose pycocotools mode also
    ignores ground truths without keypoints)."""

    protocol = make_runner("coco", iou_type, options)
    pyco = protocol.compat == "pycocotools"
    groups = Groups.build(gt, pred, use_cats=protocol.use_cats, max_det=protocol.max_dets[-1])
    if similarity_input(iou_type) == "keypoints":
        similarity = protocol.similarity()
        ignore = gt.crowd | gt.ignore if pyco else gt.crowd | gt.ignore | gt.difficult
    else:
        similarity = protocol.similarity_for(iou_type)
        ignore = gt.crowd if pyco else gt.crowd | gt.ignore | gt.difficult
    outcome = match_groups(
        gt,
        pred,
        groups,
        similarity.matrices(gt, pred, groups),
        thresholds=np.array(protocol.iou_thresholds),
        rule=protocol.rule,
        area_ranges=protocol.area_ranges,
        gt_ignore=ignore,
        gt_never_matches=(gt.annotation_id == 0) if pyco else None,
    )
    return protocol, groups, outcome


@dataclass(frozen=True, slots=True, eq=False)
class LVISPartial:
    """A shard's LVIS match (``protocol="lvis"``): its records as a :class:`CocoPartial`
    (25 bytes per evaluated result) plus the shard's numbers of results read and evaluated.

    lvis-api's cap (the top ``max_dets`` results of each image), the positive-area rule, the
    federated filter (an image's negative and not-exhaustive classes) and the match are all
    per image, so a worker holding whole images applies them exactly; the client merges the
    records and accumulates once. Fixed AP (the top results per class over the whole
    dataset) is not per image and is refused.
    """

    records: CocoPartial
    n_read: int
    n_evaluated: int

    def __len__(self) -> int:
        return len(self.records)

    @property
    def nbytes(self) -> int:
        """Bytes of the per-record arrays."""
        return self.records.nbytes

    @classmethod
    def from_match(
        cls, gt: Any, pred: Dataset, iou_type: str, options: Mapping[str, Any]
    ) -> LVISPartial:
        """``LVISProtocol.evaluate`` on ``pred`` (some images' results), its outcome packed."""

        runner = make_runner("lvis", iou_type, options)
        data = gt.dataset
        mine = np.isin(data.image_index, np.unique(pred.image_index))
        shard_gt = dataclasses.replace(gt, dataset=_take(data, np.flatnonzero(mine)))
        result = runner.evaluate(shard_gt, pred, iou_type=iou_type)
        category_ids = np.asarray(result.params["category_ids"], dtype=np.int64)
        num_pred = np.array([row["num_pred"] for row in result.per_class], dtype=np.int64)
        records = CocoPartial.from_outcome(
            data, result.outcome, category_ids, num_pred, len(pred) + 1
        )
        return cls(records, len(pred), int(result.params["num_results_evaluated"]))


class _Rows:
    """Stands for the predictions where only their number is read."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n


def _lvis_result(
    gt: Any, partials: Sequence[LVISPartial], iou_type: str, options: Mapping[str, Any]
) -> ProtocolResult:
    """The second half of ``LVISProtocol.evaluate`` on merged partials (same numbers)."""
    from typing import cast

    runner = make_runner("lvis", iou_type, options)
    data = gt.dataset
    # ground-truth counts (positive areas, crowds not read) and the category ids
    base = runner.evaluate(gt, _empty_predictions(data), iou_type=iou_type)
    category_ids = np.asarray(base.params["category_ids"], dtype=np.int64)
    parts = [p.records for p in partials]
    outcome = _merged_outcome(data, parts, base.outcome, category_ids)
    # every result of an (image, class) is evaluated: the largest group is the only cut
    largest = max([int(p.rank.max()) + 1 for p in parts if len(p)] + [1])
    active, precision, recall = coco_accumulate_levels(
        outcome,
        recall_thresholds=np.array(runner.recall_thresholds),
        max_dets=np.array([largest], dtype=np.int64),
        levels=[0],
    )
    num_pred = np.zeros(len(category_ids), dtype=np.int64)
    for p in parts:
        num_pred += p.num_pred
    result: ProtocolResult = runner._result(
        gt,
        cast(Any, _Rows(sum(p.n_read for p in partials))),
        sum(p.n_evaluated for p in partials),
        category_ids,
        num_pred,
        outcome,
        iou_type,
        precision[..., 0],
        recall[..., 0],
        active,
    )
    return result


def _merged_outcome(
    gt: Dataset,
    parts: Sequence[CocoPartial],
    empty: Any,
    category_ids: np.ndarray,
    *,
    use_cats: bool = True,
) -> Any:
    """One MatchOutcome of the partials' records in accumulation order (the predictions and
    the IoUs stay on the workers: ``pred_row`` -1, ``iou`` NaN; the matched ground truths
    come along when every partial has them, as rows of ``gt``), with ``empty``'s regular
    ground-truth records (``gt_row``...).

    ``empty``: the outcome of ``gt`` against no predictions (its counts, category ids,
    thresholds and area names are the merged outcome's); every partial's ``category_row``
    and ``image_rank`` refer to ``category_ids`` and ``gt``'s sorted image ids.
    """

    n = sum(len(p) for p in parts)
    a, t = len(empty.area_names), len(empty.thresholds)
    image_ids = np.sort(gt.images.ids)
    score = np.concatenate([empty.score, *(p.score for p in parts)])
    category_row = np.concatenate(
        [np.zeros(0, np.int64), *(p.category_row.astype(np.int64) for p in parts)]
    )
    image_rank = np.concatenate(
        [np.zeros(0, np.int64), *(p.image_rank.astype(np.int64) for p in parts)]
    )
    class_row = category_row if use_cats else np.zeros(n, dtype=np.int64)
    order = merge_order(class_row, score, image_rank, len(image_ids))
    score = score[order]
    class_row = class_row[order].astype(np.int32)
    category_id = category_ids[category_row[order]]
    del category_row
    image_id = image_ids[image_rank[order]]
    del image_rank
    rank = np.concatenate([np.zeros(0, np.int32), *(p.rank for p in parts)])
    rank = rank[order].astype(np.int32)
    width = (a * t + 7) // 8
    tp_bits = np.concatenate([np.zeros((0, width), np.uint8), *(p.tp_bits for p in parts)])
    tp_bits = tp_bits[order]
    ignored_bits = np.concatenate(
        [np.zeros((0, width), np.uint8), *(p.ignored_bits for p in parts)]
    )
    ignored_bits = ignored_bits[order]
    matches = _merged_matches(parts, order, t)
    del order
    return MatchOutcome(
        pred_row=np.broadcast_to(np.int64(-1), (n,)),  # the predictions stay on the workers
        score=score,
        class_row=class_row,
        category_id=category_id,
        image_id=image_id,
        rank=rank,
        tp_bits=tp_bits,  # the outcome's bit planes as they are (same layout)
        ignored_bits=ignored_bits,
        first_iou=np.broadcast_to(np.float64(np.nan), (n,)),  # the IoUs stay on the workers
        other_iou=np.full((len(matches["other_row"]), t), np.nan),
        **matches,
        gt_count=empty.gt_count,
        category_ids=empty.category_ids,
        thresholds=empty.thresholds,
        area_names=empty.area_names,
        # the regular ground truths: those of ``empty``, the match of the whole (merged)
        # ground truth, so its rows are rows of ``gt`` (resampling and slices read them)
        gt_row=empty.gt_row,
        gt_class_row=empty.gt_class_row,
        gt_image_id=empty.gt_image_id,
        gt_in_range=empty.gt_in_range,
    )


def _merged_matches(parts: Sequence[CocoPartial], order: np.ndarray, t: int) -> dict[str, Any]:
    """``first_gt``, ``same_bits``, ``other_row`` and ``other_gt`` of the partials' records
    concatenated and taken in ``order`` (as :meth:`MatchOutcome.take`); no match at all when
    a partial came without them."""
    n = len(order)
    if not all(p.has_matches for p in parts):
        return {
            "first_gt": np.broadcast_to(np.int64(-1), (n,)),
            "same_bits": np.broadcast_to(np.uint8(0), (n, (t + 7) // 8)),
            "other_row": np.zeros(0, dtype=np.int64),
            "other_gt": np.zeros((0, t), dtype=np.int64),
        }
    starts = np.cumsum([0, *(len(p) for p in parts)])[:-1]
    first_gt = np.concatenate(
        [np.zeros(0, np.int64), *(np.asarray(p.first_gt, dtype=np.int64) for p in parts)]
    )[order]
    same_bits = np.concatenate(
        [np.zeros((0, (t + 7) // 8), np.uint8), *(np.asarray(p.same_bits) for p in parts)]
    )[order]
    other_row = np.concatenate(
        [
            np.zeros(0, np.int64),
            *(np.asarray(p.other_row) + s for p, s in zip(parts, starts, strict=True)),
        ]
    ).astype(np.int64)
    other_gt = np.concatenate(
        [np.zeros((0, t), np.int64), *(np.asarray(p.other_gt, dtype=np.int64) for p in parts)]
    )
    # the exception rows where ``order`` picks one, in the new numbering
    at = np.flatnonzero(np.isin(order, other_row))
    source = np.searchsorted(other_row, order[at])
    return {
        "first_gt": first_gt,
        "same_bits": same_bits,
        "other_row": at.astype(np.int64),
        "other_gt": other_gt[source],
    }


def _coco_result(
    gt: Dataset, partials: Sequence[CocoPartial], iou_type: str, options: Mapping[str, Any]
) -> ProtocolResult:
    """The second half of ``COCOProtocol.evaluate`` on merged partials (same numbers).

    Every partial's ``category_row`` and ``image_rank`` refer to ``gt``'s sorted category
    and image ids.
    """
    from types import SimpleNamespace

    # ground-truth counts and the per-class table's layout: from the whole ground truth
    protocol, groups, empty = _coco_match(gt, _empty_predictions(gt), iou_type, options)
    parts = list(partials)
    outcome = _merged_outcome(gt, parts, empty, groups.category_ids, use_cats=protocol.use_cats)
    k = len(groups.category_ids)
    num_pred = np.zeros(k, dtype=np.int64)
    for p in parts:
        num_pred += p.num_pred[:k]
    layout = SimpleNamespace(
        category_ids=groups.category_ids,
        gt_rows=groups.gt_rows,
        gt_class=groups.gt_class,
        pred_class=np.repeat(np.arange(k), num_pred),
    )
    result: ProtocolResult = protocol.summarize(gt, None, layout, outcome, iou_type=iou_type)
    return result


# ------------------------------------------------------------------------------ client side


def _check_disjoint(gt: Dataset, covered: Sequence[np.ndarray], names: Sequence[str]) -> None:
    if not covered:
        return
    owner = np.concatenate([np.full(c.size, i, dtype=np.int64) for i, c in enumerate(covered)])
    rows = np.concatenate(list(covered))
    order = np.argsort(rows, kind="stable")
    dup = np.flatnonzero(np.diff(rows[order]) == 0)
    if dup.size:
        a, b = int(owner[order[dup[0]]]), int(owner[order[dup[0] + 1]])
        image = gt.images.stems[int(rows[order[dup[0]]])]
        image_id = int(gt.images.ids[int(rows[order[dup[0]]])])
        raise DataFormatError(
            f"{names[a]}, {names[b]}: image {image!r} (id {image_id}) appears in both shards; "
            f"each image's predictions must be in exactly one shard ({dup.size} such images)"
        )


def _ground_truth(
    gt: object, protocol: str, iou_type: str, options: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    """The ground truth every worker gets: a Dataset, or for LVIS an LVISGroundTruth."""

    if isinstance(gt, OpenImagesGroundTruth):
        if protocol not in _OPENIMAGES:
            raise DataFormatError(
                f"gt: Open Images ground truth needs protocol 'openimages' or "
                f"'openimages_challenge', got {protocol!r}"
            )
        if gt.image_labels is not None and protocol == "openimages_challenge":
            options.setdefault("image_labels", gt.image_labels)
        return gt.dataset, options
    if protocol == "lvis":
        if isinstance(gt, LVISGroundTruth):
            return gt, options
        if isinstance(gt, str | os.PathLike | Mapping):
            return read_lvis_ground_truth(
                gt, keep_segmentation=similarity_input(iou_type) == "segmentation"
            ), options
        raise TypeError(
            "gt: protocol='lvis' needs LVIS's labels (neg_category_ids, "
            "not_exhaustive_category_ids, frequency): pass the LVIS file, its dict or "
            f"ioukit.io.lvis.read_lvis_ground_truth(...), got {type(gt).__name__}"
        )

    strict = protocol == "coco" and options.get("compat") == "pycocotools"
    keypoints = similarity_input(iou_type) == "keypoints"
    return read_gt(
        gt,
        require_iscrowd=strict,
        segm=similarity_input(iou_type) == "segmentation",
        keypoints=keypoints,
    ), options


def _client(client: Any, workers: int | None = None) -> tuple[Any, Any]:
    """The client to use and, when we made a local cluster, the objects to close."""
    if client is not None:
        return client, None
    if workers is not None and (
        isinstance(workers, bool) or int(workers) != workers or workers < 1
    ):
        raise ParameterError(f"workers: expected a positive number of processes, got {workers!r}")
    try:
        import dask
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise MissingDependencyError(
            'evaluate_sharded needs dask.distributed: pip install "ioukit[dask]"'
        ) from None
    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        cluster = LocalCluster(  # type: ignore[no-untyped-call,unused-ignore]
            n_workers=int(workers) if workers is not None else (os.cpu_count() or 1),
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
        )
    made = Client(cluster)  # type: ignore[no-untyped-call,unused-ignore]
    return made, (made, cluster)


SCATTER_ROUNDS = 4
"""How many times :func:`evaluate_sharded` scatters the ground truth: once, then again each
time the workers holding it all died (their tasks are then cancelled) and some shards are left."""


def _run_shards(
    client: Any,
    shared: tuple[Any, dict[str, Any]],
    shards: Sequence[Any],
    names: Sequence[str],
    protocol: str,
    iou_type: str,
) -> list[tuple[np.ndarray, Any]]:
    """Every shard's (image rows, partial), in order, surviving the loss of the scattered data.

    Dask reruns a task whose worker died on another worker (``distributed.scheduler.allowed-
    failures`` times), but scattered data has no recipe: once every worker holding the ground
    truth is gone (OOM-killed, preempted, restarted by its nanny) the tasks that need it are
    cancelled. Then the ground truth is scattered again and only the shards without a result
    are submitted again, up to :data:`SCATTER_ROUNDS` rounds. Errors of a shard itself (a bad
    file, ``KilledWorker`` for a shard that kills its worker each time) are raised as they are.
    """
    results: list[Any] = [None] * len(shards)
    pending = list(range(len(shards)))
    for attempt in range(SCATTER_ROUNDS):
        scattered = client.scatter(shared, broadcast=True, hash=False)
        futures = {
            i: client.submit(
                _shard_partial, scattered, shards[i], names[i], protocol, iou_type, pure=False
            )
            for i in pending
        }
        lost = []
        for i, future in futures.items():
            try:
                results[i] = future.result()
            except CancelledError:  # the scattered ground truth was lost with its workers
                if attempt == SCATTER_ROUNDS - 1:
                    raise
                lost.append(i)
        del futures, scattered
        pending = lost
        if not pending:
            break
    return results


def evaluate_sharded(
    gt: Any,
    shards: Sequence[Any],
    /,
    *,
    client: Any = None,
    workers: int | None = None,
    protocol: str = "coco",
    iou_type: str = "bbox",
    **options: Any,
) -> EvaluationResult:
    """Evaluate prediction shards on a Dask cluster; the result of one process, bit for bit.

    Parameters
    ----------
    gt : Dataset, COCO dict or path, OpenImagesGroundTruth or LVISGroundTruth
        Read once on the client and broadcast to every worker (``protocol="lvis"``: an LVIS
        file, dict or :class:`~ioukit.io.lvis.LVISGroundTruth`).
    shards : sequence of paths or Datasets
        Prediction files (COCO results JSON; Open Images predictions CSV for the Open Images
        protocols) or prediction Datasets over ``gt``'s images. Each image's predictions must
        all be in one shard; shards may be empty. (COCO segm results: ``loadRes`` takes every
        area from the boxes when the file's first record has a ``bbox``; each shard file
        applies that rule to its own first record.)
    client : dask.distributed.Client, optional
        Default: a local cluster with one single-threaded worker process per core (or
        ``workers`` of them), closed afterwards.
    workers : int, optional
        Number of worker processes of the local cluster made when ``client`` is None.
    protocol : str
        Any protocol of :func:`ioukit.evaluate`.
    iou_type : {"bbox", "segm", "keypoints", "rotated", "probiou", "bbox-float32"}
        Protocol ``"coco"`` takes all of them (keypoints: the shards are COCO keypoint results;
        rotated/probiou: Datasets with a ``rotated`` column), ``"yolo"`` bbox, keypoints,
        rotated and probiou, ``"lvis"`` bbox and segm; the others ``"bbox"``.
    **options
        Protocol options, as for :func:`ioukit.evaluate`.

    Returns
    -------
    EvaluationResult
        Equal to ``ioukit.evaluate(gt, <all shards concatenated in order>, ...)``: stats,
        per-class rows, params and arrays (COCO precision/recall/scores). For the COCO and Open
        Images protocols the predictions never leave the workers: ``predictions`` is empty and
        the COCO ``outcome`` has ``pred_row`` -1 and no IoU (NaN), but its matched ground
        truths (rows of ``result.ground_truth``) and ground-truth records, so that
        ``result.resample``, ``result.slice``, :func:`ioukit.bootstrap` and
        :func:`ioukit.compare` give the numbers they give on ``ioukit.evaluate``'s result.

    Raises
    ------
    DataFormatError
        A shard names an image or class the ground truth lacks (the shard's file is named), or
        two shards hold predictions of one image (both are named).
    MissingDependencyError
        ``client`` is None and dask.distributed is not installed.
    """

    iou_type = resolve_iou_type(protocol, iou_type)
    runner = make_runner(protocol, iou_type, options)  # every check of evaluate(), before work
    if (protocol, iou_type) not in _SUPPORTED:
        raise ParameterError(
            f"protocol, iou_type: evaluate_sharded supports "
            f"{', '.join(f'{p}/{t}' for p, t in _SUPPORTED)}, got {protocol}/{iou_type}"
        )
    if protocol == "lvis" and runner.fixed_ap:
        raise ValueError(
            "fixed_ap: Fixed AP keeps the top results of each class over the whole dataset, "
            "which no shard of images can apply on its own; evaluate it in one process"
        )
    if isinstance(shards, str | os.PathLike | Dataset | Mapping):
        raise TypeError("shards: expected a list of paths or Datasets, got a single one")
    shards = list(shards)
    names = [
        str(Path(s)) if isinstance(s, str | os.PathLike) else f"shards[{i}]"
        for i, s in enumerate(shards)
    ]
    gt_ds, options = _ground_truth(gt, protocol, iou_type, dict(options))
    client, owned = _client(client, workers)
    try:
        results = _run_shards(client, (gt_ds, options), shards, names, protocol, iou_type)
    finally:
        if owned is not None:
            for thing in owned:
                thing.close()
    return _merge(gt_ds, results, names, protocol, iou_type, options)


def _merge(
    gt: Any,
    results: Sequence[tuple[np.ndarray, Any]],
    names: Sequence[str],
    protocol: str,
    iou_type: str,
    options: dict[str, Any],
) -> EvaluationResult:
    """Client side: check the shards are disjoint, merge their partial results."""
    if protocol == "lvis":
        data = gt.dataset
        _check_disjoint(data, [r[0] for r in results], names)
        result = _lvis_result(gt, [r[1] for r in results], iou_type, options)
        return EvaluationResult(result, data, _empty_predictions(data))
    _check_disjoint(gt, [r[0] for r in results], names)
    partials = [r[1] for r in results]
    if protocol in _OPENIMAGES:
        if not partials:
            empty = match_openimages(gt, _empty_predictions(gt), **_oi(protocol, options))
            partials, names = [empty], ["no shards"]
        result = accumulate_openimages(gt, partials, names=names)
        return EvaluationResult(result, gt, _empty_predictions(gt))
    if protocol == "coco" and iou_type in _COCO_PARTIAL:
        result = _coco_result(gt, partials, iou_type, options)
    else:  # VOC, YOLO
        result = _matched_result(gt, partials, protocol, iou_type, options)
    return EvaluationResult(result, gt, _empty_predictions(gt))


def _oi(protocol: str, options: Mapping[str, Any]) -> dict[str, Any]:
    return {"challenge": protocol == "openimages_challenge", **options}


def _empty_predictions(gt: Dataset) -> Dataset:
    """No predictions over ``gt``'s tables, with its optional geometry columns (empty)."""
    keypoints = None if gt.keypoints is None else np.zeros((0, *gt.keypoints.shape[1:]))
    return Dataset.from_arrays(
        gt.images,
        gt.categories,
        boxes=np.zeros((0, 4)),
        image_index=np.zeros(0, dtype=np.int64),
        category_id=np.zeros(0, dtype=np.int64),
        scores=np.zeros(0),
        segmentation=None if gt.segmentation is None else (),
        keypoints=keypoints,
        rotated=None if gt.rotated is None else np.zeros((0, 5)),
    )


# ------------------------------------------------------------------------------ torch


def _renumbered(
    parts: Sequence[tuple[Dataset, Dataset]], *, by_image_id: bool = False
) -> tuple[Dataset, Dataset]:
    """Ground truth and predictions of every rank as one pair.

    Images are numbered rank by rank (ids 0 .. n-1), or with ``by_image_id`` keep their ids
    and are ordered by them, rows too (which rank held which image does not matter then).
    """
    gt, pred, _ = _renumbered_rows(parts, by_image_id=by_image_id)
    return gt, pred


def _renumbered_rows(
    parts: Sequence[tuple[Dataset, Dataset]], *, by_image_id: bool = False
) -> tuple[Dataset, Dataset, np.ndarray]:
    """:func:`_renumbered`, and the row in the merged ground truth of each ground-truth row
    of the parts concatenated in rank order ((sum of len(gt),) int64)."""
    offsets = np.cumsum([0] + [len(g.images) for g, _ in parts])
    n = int(offsets[-1])
    has_size = any(np.isfinite(g.images.widths).any() for g, _ in parts)
    widths = np.concatenate([g.images.widths for g, _ in parts])
    heights = np.concatenate([g.images.heights for g, _ in parts])
    ids = np.arange(n, dtype=np.int64)
    order = np.arange(n)
    if by_image_id:
        ids = np.concatenate([g.images.ids for g, _ in parts]).astype(np.int64)
        order = np.argsort(ids, kind="stable")
        _check_unique_ids(ids, order, offsets)
    images = ImageTable.from_lists(
        ids[order].tolist(),
        [str(i) for i in ids[order].tolist()],
        widths[order].tolist() if has_size else None,
        heights[order].tolist() if has_size else None,
    )
    labels = np.union1d(
        np.concatenate([g.categories.ids for g, _ in parts]),
        np.concatenate([p.categories.ids for _, p in parts]),
    )
    categories = CategoryTable.from_lists(labels.tolist(), [str(c) for c in labels.tolist()])

    offsets_list = [int(o) for o in offsets[:-1]]
    gt = _concat([g for g, _ in parts], images, categories, offsets_list)
    pred = _concat([p for _, p in parts], images, categories, offsets_list)
    gt_rows = np.arange(len(gt), dtype=np.int64)
    if by_image_id:  # concatenated position -> row in the id-ordered table
        row = np.empty(n, dtype=np.int64)
        row[order] = np.arange(n)
        gt = dataclasses.replace(gt, image_index=row[gt.image_index])
        pred = dataclasses.replace(pred, image_index=row[pred.image_index])
        # rows in image-id order too (stable: an image keeps its own order), so that what
        # ranks tied scores by input order (VOC) sees the order of one process on the ids
        gt_order = np.argsort(gt.image_index, kind="stable")
        gt = _take(gt, gt_order)
        pred = _take(pred, np.argsort(pred.image_index, kind="stable"))
        gt_rows[gt_order] = np.arange(len(gt), dtype=np.int64)
    return gt, pred, gt_rows


def _check_unique_ids(ids: np.ndarray, order: np.ndarray, offsets: np.ndarray) -> None:
    """DataFormatError naming both ranks (and positions) of an image id seen twice."""
    dup = np.flatnonzero(np.diff(ids[order]) == 0)
    if not dup.size:
        return
    first, second = (int(order[dup[0]]), int(order[dup[0] + 1]))
    where = []
    for pos in (first, second):
        rank = int(np.searchsorted(offsets, pos, side="right")) - 1
        where.append(f"rank {rank} (its image {pos - int(offsets[rank])} in arrival order)")
    raise DataFormatError(
        f"targets.image_id: image_id {int(ids[first])} seen on {where[0]} and on {where[1]}; "
        f"each image must be given once, on one rank ({dup.size} such ids)"
    )


def gather_datasets(
    gt: Dataset, pred: Dataset, /, *, by_image_id: bool = False
) -> tuple[Dataset, Dataset]:
    """Every rank's ground truth and predictions, on every rank (torch.distributed).

    Without an initialised process group of two or more ranks, returns the pair unchanged.
    Otherwise one ``all_gather_object`` ships each rank's columnar datasets (a few arrays per
    rank, not one tensor per image) and the images are renumbered rank by rank, or with
    ``by_image_id`` keep their ids (each must be on one rank) and are ordered by them.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([0], ["0"])
    >>> cats = CategoryTable.from_lists([1], ["1"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], image_index=[0],
    ...                          category_id=[1])
    >>> gather_datasets(gt, gt)[0] is gt  # no process group: unchanged
    True
    """
    dist = process_group()
    if dist is None:
        return gt, pred
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, (gt, pred, bool(by_image_id)))
    by_id = _check_same_mode([g[2] for g in gathered], [len(g[0].images) for g in gathered])
    return _renumbered([(g[0], g[1]) for g in gathered], by_image_id=by_id)


def _check_same_mode(by_id: Sequence[bool], sizes: Sequence[int]) -> bool:
    """Whether images are identified by ``image_id`` (the ranks' common mode).

    A rank without images has no ids to give: it agrees with any mode (an ``IterableDataset``
    split can leave a rank empty).
    """
    active = [(rank, b) for rank, (b, n) in enumerate(zip(by_id, sizes, strict=True)) if n]
    given = [rank for rank, b in active if b]
    missing = [rank for rank, b in active if not b]
    if given and missing:
        raise DataFormatError(
            f"targets.image_id: given on rank {given[0]} but not on rank {missing[0]}; give "
            "it on every image of every rank or on none"
        )
    return bool(given)


@dataclass(frozen=True, slots=True, eq=False)
class _RankState:
    """What one rank contributes to a synced COCO ``compute``: its ground truth (the summary
    needs its per-class counts, categories and image ids) and its matched predictions."""

    gt: Dataset
    by_image_id: bool
    partial: CocoPartial


def _rank_state(
    gt: Dataset, pred: Dataset, by_image_id: bool, iou_type: str, options: Mapping[str, Any]
) -> _RankState:
    """Match this rank's own images (pipeline groups, similarity, matcher)."""
    return _RankState(gt, by_image_id, CocoPartial.from_match(gt, pred, iou_type, options))


def _merge_ranks(
    states: Sequence[_RankState], iou_type: str, options: Mapping[str, Any]
) -> EvaluationResult:
    """Every rank's states (rank order) into the result of one process; what each rank runs."""

    by_id = _check_same_mode([s.by_image_id for s in states], [len(s.gt.images) for s in states])
    parts = [(s.gt, _empty_predictions(s.gt)) for s in states]
    gt, _, gt_rows = _renumbered_rows(parts, by_image_id=by_id)
    cat_ids = np.unique(gt.categories.ids)
    image_ids = np.sort(gt.images.ids)
    offset = 0
    gt_offset = 0
    partials = []
    for s in states:
        p = s.partial
        # a rank's matched ground-truth rows (-1: none) to rows of the merged ground truth
        to_gt = np.append(gt_rows[gt_offset : gt_offset + len(s.gt)], -1)
        gt_offset += len(s.gt)
        matches: dict[str, Any] = {}
        if p.has_matches:
            matches = {
                "first_gt": to_gt[np.asarray(p.first_gt, dtype=np.int64)],
                "other_gt": to_gt[np.asarray(p.other_gt, dtype=np.int64)],
            }
        # a rank's rows refer to its own sorted category and image ids: to the merged ones
        local = np.unique(s.gt.categories.ids)
        num_pred = np.zeros(cat_ids.size, dtype=np.int64)
        np.add.at(num_pred, class_rows(cat_ids, local), p.num_pred[: local.size])
        local_images = np.sort(s.gt.images.ids)[p.image_rank]
        if not s.by_image_id:  # rank by rank: a rank's local ids are its rows 0 .. n-1
            local_images = local_images + offset
        partials.append(
            dataclasses.replace(
                p,
                category_row=class_rows(cat_ids, local[p.category_row]),
                image_rank=np.searchsorted(image_ids, local_images),
                num_pred=num_pred,
                **matches,
            )
        )
        offset += len(s.gt.images)
    result = _coco_result(gt, partials, iou_type, options)
    return EvaluationResult(result, gt, _empty_predictions(gt))


@dataclass(frozen=True, slots=True, eq=False)
class _MatchedRankState:
    """What one rank contributes to a synced VOC / YOLO ``compute``: its ground truth (the
    summary reads the merged ground truth's counts and categories) and its packed match."""

    gt: Dataset
    by_image_id: bool
    partial: MatchedPartial
    pred_counts: np.ndarray
    """Predictions per image, in ``gt``'s sorted image ids (the rank's rows are in id order)."""


def _matched_state(
    gt: Dataset,
    pred: Dataset,
    by_image_id: bool,
    protocol: str,
    iou_type: str,
    options: Mapping[str, Any],
) -> _MatchedRankState:
    """Match this rank's own images; with ``by_image_id`` its predictions in id order."""
    counts = np.zeros(len(gt.images), dtype=np.int64)
    if by_image_id:  # this rank's predictions in image-id order (stable), counted per id
        image_rank = np.argsort(np.argsort(gt.images.ids, kind="stable"))[pred.image_index]
        pred = _take(pred, np.argsort(image_rank, kind="stable"))
        counts = np.bincount(image_rank, minlength=len(gt.images))
    part = MatchedPartial.from_match(gt, pred, protocol, iou_type, options)
    return _MatchedRankState(gt, by_image_id, part, counts)


def _global_rows(
    rows: np.ndarray, local_rank: np.ndarray, start: np.ndarray, global_start: np.ndarray
) -> np.ndarray:
    """Rows of one rank's id-ordered predictions in all ranks' id-ordered predictions."""
    k = np.asarray(local_rank, dtype=np.int64)
    out: np.ndarray = np.asarray(rows, dtype=np.int64) - start[k] + global_start[k]
    return out


def _merge_matched_ranks(
    states: Sequence[_MatchedRankState], protocol: str, iou_type: str, options: Mapping[str, Any]
) -> EvaluationResult:
    """Every rank's VOC / YOLO states (rank order) into the result of one process."""

    by_id = _check_same_mode([s.by_image_id for s in states], [len(s.gt.images) for s in states])
    parts = [(s.gt, _empty_predictions(s.gt)) for s in states]
    gt, _ = _renumbered(parts, by_image_id=by_id)
    cat_ids = np.unique(gt.categories.ids)
    image_ids = np.sort(gt.images.ids)
    offset = 0
    partials = []
    counts = np.zeros(image_ids.size, dtype=np.int64)
    for s in states:
        if by_id:
            counts[np.searchsorted(image_ids, np.sort(s.gt.images.ids))] = s.pred_counts
    all_start = np.cumsum(counts) - counts  # first row of each image, all ranks, id order
    for s in states:
        p = s.partial
        # a rank's rows refer to its own sorted category and image ids: to the merged ones
        rows = class_rows(cat_ids, p.category_ids)
        gt_count = np.zeros((cat_ids.size, p.gt_count.shape[1]), dtype=np.int64)
        np.add.at(gt_count, rows, p.gt_count)
        shift = 0 if s.by_image_id else offset  # rank by rank: local ids are rows 0 .. n-1
        local_images = np.sort(s.gt.images.ids)[p.image_rank] + shift
        row_changes: dict[str, Any] = {}
        if by_id:  # VOC ranks tied scores by input order: the order of all ranks' ids
            local_ids = np.sort(s.gt.images.ids)
            start = np.cumsum(s.pred_counts) - s.pred_counts
            global_start = all_start[np.searchsorted(image_ids, local_ids)]
            other_rank = np.searchsorted(local_ids, p.other_image_id)
            row_changes = {
                "pred_row": _global_rows(p.pred_row, p.image_rank, start, global_start),
                "other_row": _global_rows(p.other_row, other_rank, start, global_start),
                "n_rows": 0,  # the rows are global already
            }
        partials.append(
            dataclasses.replace(
                p,
                class_row=rows[p.class_row],
                image_rank=np.searchsorted(image_ids, local_images),
                other_image_id=p.other_image_id + shift,
                gt_count=gt_count,
                category_ids=cat_ids,
                **row_changes,
            )
        )
        offset += len(s.gt.images)
    result = _matched_result(gt, partials, protocol, iou_type, options)
    return EvaluationResult(result, gt, _empty_predictions(gt))


def synced_evaluate(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    by_image_id: bool = False,
    protocol: str = "coco",
    iou_type: str = "bbox",
    **options: Any,
) -> EvaluationResult:
    """Evaluate every rank's images on every rank (what ``Evaluator.compute`` runs).

    With ``protocol="coco"`` (any of its similarities) each rank matches its own images
    and ONE ``all_gather_object`` ships compact :class:`CocoPartial` records (about 30 bytes
    per evaluated detection) with the rank's ground truth (for the per-class counts, the
    category table and the image ids); every rank merges them as :func:`evaluate_sharded`
    does. VOC and YOLO (bbox) ship :class:`MatchedPartial` records likewise (their numbers
    are those of the ranks' datasets concatenated rank by rank). Other protocols gather the
    columnar datasets (:func:`gather_datasets`) and every rank evaluates all of them.
    Without an initialised process group of two or more ranks: :func:`ioukit.evaluate` on
    the pair.

    Parameters
    ----------
    gt, pred : Dataset
        This rank's ground truth and predictions over one image table whose ids are 0 .. n-1
        in arrival order, or (``by_image_id``) the images' own ids.
    by_image_id : bool
        The image ids identify images across ranks (each on one rank; the result is then
        that of one process on the same data, whichever rank saw which image). False:
        images are numbered rank by rank in arrival order (torchmetrics' convention).
    protocol, iou_type, **options
        As for :func:`ioukit.evaluate`.

    Raises
    ------
    DataFormatError
        An image id on two ranks (both are named), or image ids on some ranks only.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([0], ["0"])
    >>> cats = CategoryTable.from_lists([1], ["1"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 2, 2]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 2, 2]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> round(synced_evaluate(gt, pred).stats["AP"], 6)  # no process group: this rank alone
    1.0
    """

    dist = process_group()
    if dist is None:
        return evaluate(gt, pred, protocol=protocol, iou_type=iou_type, **options)
    matched = protocol in _MATCHED and iou_type == "bbox"
    if not matched and (protocol != "coco" or iou_type not in _COCO_PARTIAL):
        gt, pred = gather_datasets(gt, pred, by_image_id=by_image_id)
        return evaluate(gt, pred, protocol=protocol, iou_type=iou_type, **options)

    make_runner(protocol, iou_type, options)  # every rank fails alike, before the collective
    gathered: list[Any] = [None] * dist.get_world_size()
    if matched:
        matched_state = _matched_state(gt, pred, by_image_id, protocol, iou_type, options)
        dist.all_gather_object(gathered, matched_state)
        return _merge_matched_ranks(gathered, protocol, iou_type, options)
    state = _rank_state(gt, pred, by_image_id, iou_type, options)
    dist.all_gather_object(gathered, state)
    return _merge_ranks(gathered, iou_type, options)
