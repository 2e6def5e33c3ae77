"""Slices and resamples of an evaluation, re-accumulated from its match outcome (no re-match).

* :func:`resample`: the evaluation of the dataset in which image ``i`` appears ``counts[i]``
  times, its copies adjacent to it in image order (pycocotools on that dataset, copies given
  the new ids ``i * M + j``), bit for bit: the records of the outcome are repeated, the gt
  counts re-weighted, and the protocol's own ``summarize`` builds the result;
* :func:`slice_result`: a subset of images (``counts`` 0/1: pycocotools with
  ``params.imgIds`` set to that subset) and/or of ground-truth objects (``where``);
* :func:`slices`: several slices side by side, with their deltas to the whole.

Order of the resampled records. pycocotools sorts each class's detections by descending score
(stable) over the images in id order, each image's detections by rank. A copy of an image
keeps its detections' scores and ranks, so the replicate's records are the original ones
repeated, in the same order, except inside a block of records of one (class, score, image)
(tied scores in one image): there the ``c`` copies follow one another, ``r1..rk`` then
``r1..rk`` again, where repeating each record would give ``r1 r1 .. rk rk``.
:class:`ResamplePlan` finds those blocks once and reorders only them.

Slicing by ground-truth attribute is *not* a re-match: a prediction whose recorded match
(area range ``"all"``, at a threshold) is an excluded ground truth becomes ignored at that
threshold in every area range (as a match to an out-of-range ground truth is), and the
excluded ground truths leave the counts. A re-match could instead give that prediction to
another ground truth nearby.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation.groups import class_rows
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.protocols.coco import COCOProtocol
from ioukit.evaluation.registry import make_protocol

if TYPE_CHECKING:  # analysis.result reaches this module lazily: no import cycle
    from ioukit.analysis.result import EvaluationResult

__all__ = [
    "ResamplePlan",
    "SliceTable",
    "image_counts",
    "resample",
    "resample_outcome",
    "result_protocol",
    "slice_result",
    "slices",
]

_NOT_OPTIONS = ("category_ids", "iou_type", "stat_layout")


def result_protocol(result: EvaluationResult, /) -> COCOProtocol:
    """The protocol object ``result`` was computed with (rebuilt from its params).

    Raises
    ------
    ParameterError
        ``result`` is not an evaluation result, the protocol is not of the COCO family
        (``coco`` with bbox, segm, keypoints or another registered similarity), or the result
        has no per-ground-truth records (a sharded evaluation's partials do not carry them).
    """
    if not all(hasattr(result, a) for a in ("protocol", "params", "ground_truth", "outcome")):
        raise ParameterError(
            f"result: expected an EvaluationResult (ioukit.evaluate), got {type(result).__name__}"
        )
    params = dict(result.params)
    options = {k: v for k, v in params.items() if k not in _NOT_OPTIONS}
    try:
        protocol = make_protocol(result.protocol, iou_type=params.get("iou_type"), **options)
    except ParameterError as exc:
        raise ParameterError(
            f"result: slices, resampling, bootstrap and compare support the COCO protocol "
            f"family, got protocol {result.protocol!r} ({exc})"
        ) from None
    # the COCO family: the protocols whose summarize is COCO's (crowdpose re-splits images)
    if not isinstance(protocol, COCOProtocol) or type(protocol).__name__ == "CrowdPoseProtocol":
        raise ParameterError(
            "result: slices, resampling, bootstrap and compare support the COCO protocol "
            f"family (bbox, segm, keypoints), got protocol {result.protocol!r}"
        )
    outcome = result.outcome
    if outcome is None or not outcome.has_gt_records:
        raise ParameterError(
            "result: expected an evaluation whose outcome keeps its ground-truth records "
            "(ioukit.evaluate / Evaluator.merge); this one has none (a sharded partial?)"
        )
    return protocol


def image_counts(
    ground_truth: Dataset, counts: Mapping[int, int] | Sequence[int] | np.ndarray, /
) -> np.ndarray:
    """``counts`` as an int64 array over the images in increasing id order.

    Parameters
    ----------
    ground_truth : Dataset
    counts : mapping of image id to int, or sequence of int of length ``len(images)``
        A mapping leaves the images it does not name at 0; a sequence follows
        ``ground_truth.images.ids``' order.

    Returns
    -------
    ndarray of int64, shape (I,)
        ``out[i]``: the count of the i-th smallest image id.

    Raises
    ------
    ParameterError
        An id that is not an image of the ground truth, a negative or non-integer count, or
        a sequence of the wrong length; the message names the id.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
    >>> images = ImageTable.from_lists([5, 2], ["a", "b"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[], image_index=[], category_id=[])
    >>> image_counts(gt, {5: 3}).tolist(), image_counts(gt, [1, 0]).tolist()
    ([0, 3], [0, 1])
    """
    ids = np.asarray(ground_truth.images.ids, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    out = np.zeros(len(ids), dtype=np.int64)
    if isinstance(counts, Mapping):
        for key, value in counts.items():
            if isinstance(key, bool) or not isinstance(key, int | np.integer):
                raise ParameterError(f"counts: expected integer image ids as keys, got {key!r}")
            at = int(np.searchsorted(sorted_ids, int(key)))
            if at >= len(sorted_ids) or sorted_ids[at] != int(key):
                raise ParameterError(
                    f"counts: image id {int(key)} is not an image of the ground truth"
                )
            out[at] = _count(value, f"counts[{int(key)}]")
        return out
    array = np.asarray(counts)
    if array.shape != (len(ids),):
        raise ParameterError(
            f"counts: expected a mapping of image id to count or {len(ids)} counts (one per "
            f"image, in the image table's order), got shape {array.shape}"
        )
    if array.dtype.kind == "f":
        bad_float = ~np.isfinite(array) | (array != np.round(array))
        if bad_float.any():
            bad = int(np.flatnonzero(bad_float)[0])
            raise ParameterError(
                f"counts[{int(ids[bad])}]: expected a non-negative integer, got {array[bad]!r}"
            )
        array = array.astype(np.int64)
    elif array.dtype.kind not in "iu":
        raise ParameterError(f"counts: expected integer counts, got dtype {array.dtype}")
    if np.any(array < 0):
        bad = int(np.flatnonzero(array < 0)[0])
        raise ParameterError(
            f"counts[{int(ids[bad])}]: expected a non-negative integer, got {int(array[bad])}"
        )
    out[:] = array.astype(np.int64)[order]
    return out


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float | np.floating) and float(value).is_integer() and value >= 0:
            return int(value)
        raise ParameterError(f"{name}: expected a non-negative integer, got {value!r}")
    if value < 0:
        raise ParameterError(f"{name}: expected a non-negative integer, got {int(value)}")
    return int(value)


@dataclass(frozen=True, eq=False)
class ResamplePlan:
    """What a replicate of an outcome needs, computed once per outcome.

    Attributes
    ----------
    sorted_ids : ndarray of int64, shape (I,)
        The ground truth's image ids, increasing (the axis of every ``counts``).
    record_image : ndarray of int64, shape (N,)
        Position of each record's image in ``sorted_ids``.
    tie_block : ndarray of int64, shape (N,)
        Block number of a record in a block of several records with one (class, score,
        image), -1 for the others.
    gt_image : ndarray of int64, shape (G,)
        Position of each regular ground truth's image in ``sorted_ids``.
    """

    outcome: MatchOutcome
    sorted_ids: np.ndarray
    record_image: np.ndarray
    tie_block: np.ndarray
    gt_image: np.ndarray

    @classmethod
    def build(cls, outcome: MatchOutcome, image_ids: np.ndarray, /) -> ResamplePlan:
        """The plan of ``outcome`` over the images ``image_ids`` (any order)."""
        if not outcome.has_gt_records:
            raise ParameterError(
                "outcome: expected the per-ground-truth records (gt_row...), got an outcome "
                "without them"
            )
        sorted_ids = np.sort(np.asarray(image_ids, dtype=np.int64))
        record_image = np.searchsorted(sorted_ids, outcome.image_id).astype(np.int64)
        gt_image = np.searchsorted(sorted_ids, np.asarray(outcome.gt_image_id)).astype(np.int64)
        n = len(outcome)
        tie_block = np.full(n, -1, dtype=np.int64)
        if n > 1:
            same = (
                (outcome.class_row[1:] == outcome.class_row[:-1])
                & (outcome.score[1:] == outcome.score[:-1])
                & (outcome.image_id[1:] == outcome.image_id[:-1])
            )
            if same.any():
                start = np.flatnonzero(np.concatenate(([True], ~same)))
                block = np.cumsum(np.concatenate(([True], ~same))) - 1
                size = np.diff(np.append(start, n))
                tied = size[block] > 1
                tie_block[tied] = block[tied]
        return cls(outcome, sorted_ids, record_image, tie_block, gt_image)

    def order(self, counts: np.ndarray, /) -> np.ndarray:
        """(N',) int64: the replicate's records (indices into the outcome) in accumulation
        order, for ``counts`` (I,) over ``sorted_ids``."""
        c = counts[self.record_image]
        index = np.repeat(np.arange(len(c), dtype=np.int64), c)
        tied = self.tie_block >= 0
        if tied.any() and index.size:
            at = np.flatnonzero(tied[index])
            if at.size:
                rec = index[at]
                copy = at - (np.cumsum(c) - c)[rec]
                index[at] = rec[np.lexsort((rec, copy, self.tie_block[rec]))]
        return index

    def gt_weights(self, counts: np.ndarray, /) -> np.ndarray:
        """(G,) int64: how many times each regular ground truth is drawn."""
        return np.asarray(counts[self.gt_image], dtype=np.int64)

    def gt_count(self, counts: np.ndarray, /) -> np.ndarray:
        """(K, A) int64: the replicate's regular ground truths per class and area range."""
        o = self.outcome
        n_k, n_a = o.gt_count.shape
        w = self.gt_weights(counts)
        in_range = np.asarray(o.gt_in_range)
        cls = np.asarray(o.gt_class_row, dtype=np.int64)
        out = np.zeros((n_k, n_a), dtype=np.int64)
        for a in range(n_a):
            out[:, a] = np.bincount(cls, weights=w * in_range[:, a], minlength=n_k)[:n_k].astype(
                np.int64
            )
        return out


def resample_outcome(plan: ResamplePlan, counts: np.ndarray, /) -> MatchOutcome:
    """The outcome of the dataset with image ``sorted_ids[i]`` drawn ``counts[i]`` times.

    Records keep their rows, image ids and ranks (a copy of an image is the image);
    ``gt_count`` and the per-ground-truth columns are those of the copies.
    """
    counts = np.asarray(counts, dtype=np.int64)
    o = plan.outcome
    taken = o.take(plan.order(counts))
    w = plan.gt_weights(counts)
    g = np.repeat(np.arange(len(w), dtype=np.int64), w)
    return dataclasses.replace(
        taken,
        gt_count=plan.gt_count(counts),
        gt_row=np.asarray(o.gt_row)[g],
        gt_class_row=np.asarray(o.gt_class_row)[g],
        gt_image_id=np.asarray(o.gt_image_id)[g],
        gt_in_range=np.asarray(o.gt_in_range)[g],
    )


@dataclass(frozen=True, slots=True)
class _Layout:
    # the Groups fields COCOProtocol.summarize reads for its per-class table
    category_ids: np.ndarray
    gt_rows: np.ndarray
    gt_class: np.ndarray
    pred_class: np.ndarray


def _layout(
    gt: Dataset, pred: Dataset, plan: ResamplePlan, counts: np.ndarray, gt_keep: np.ndarray
) -> _Layout:
    cat_ids = np.sort(gt.categories.ids)
    image_pos = np.searchsorted(plan.sorted_ids, gt.images.ids)  # image row -> position
    g_cls = class_rows(cat_ids, gt.category_id)
    g_rows = np.flatnonzero((g_cls >= 0) & gt_keep)
    g_w = counts[image_pos[gt.image_index[g_rows]]]
    whole = plan.outcome  # before resampling: its records are predictions, once each
    if whole.unrecorded is None:  # the predictions are at hand
        p_image = image_pos[pred.image_index]
        p_category = np.asarray(pred.category_id)
    else:  # they stayed on the workers: the records, and the rows max_dets cut
        cut = np.asarray(whole.unrecorded, dtype=np.int64).reshape(-1, 3)
        cut_image = np.searchsorted(plan.sorted_ids, np.repeat(cut[:, 0], cut[:, 2]))
        p_image = np.concatenate([plan.record_image, cut_image])
        p_category = np.concatenate([whole.category_id, np.repeat(cut[:, 1], cut[:, 2])])
    p_cls = class_rows(cat_ids, p_category)
    p_rows = np.flatnonzero(p_cls >= 0)
    p_w = counts[p_image[p_rows]]
    return _Layout(
        category_ids=cat_ids,
        gt_rows=np.repeat(g_rows, g_w),
        gt_class=np.repeat(g_cls[g_rows], g_w),
        pred_class=np.repeat(p_cls[p_rows], p_w),
    )


def _summarized(
    result: EvaluationResult,
    protocol: COCOProtocol,
    plan: ResamplePlan,
    counts: np.ndarray,
    gt_keep: np.ndarray,
) -> EvaluationResult:
    gt, pred = result.ground_truth, result.predictions
    layout = _layout(gt, pred, plan, counts, gt_keep)
    iou_type = str(result.params.get("iou_type", "bbox"))
    outcome = resample_outcome(plan, counts)
    summary = protocol.summarize(gt, pred, layout, outcome, iou_type=iou_type)
    return type(result)(summary, gt, pred)


def resample(
    result: EvaluationResult, counts: Mapping[int, int] | Sequence[int] | np.ndarray, /
) -> EvaluationResult:
    """The evaluation of the dataset in which each image appears ``counts[id]`` times.

    Equal, bit for bit, to pycocotools on the dataset in which image ``id`` appears
    ``counts[id]`` times, its copies adjacent to it (new ids ``id * M + j``): all stats, the
    per-class rows and the precision/recall/scores arrays. A re-accumulation of the outcome,
    not a re-match.

    Parameters
    ----------
    result : EvaluationResult
        A COCO-family evaluation (bbox, segm, keypoints).
    counts : mapping of image id to int, or sequence of int
        How many times each image is drawn (a mapping leaves the others at 0; a sequence
        follows ``result.ground_truth.images.ids``).

    Returns
    -------
    EvaluationResult
        Its datasets are ``result``'s (the outcome's rows refer to them; a copy of an image
        is the image, so per-image tables read the original images).

    Raises
    ------
    ParameterError
        An unknown image id, a negative or non-integer count (the message names the id), or
        a protocol outside the COCO family.

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, dt = make_detections(num_images=4, num_classes=2, seed=0)
    >>> r = ioukit.evaluate(gt, dt)
    >>> twice = resample(r, {i["id"]: 2 for i in gt["images"]})
    >>> twice.stats["AP"] == r.stats["AP"]
    True
    """
    protocol = result_protocol(result)
    outcome = result.outcome
    assert outcome is not None
    gt = result.ground_truth
    c = image_counts(gt, counts)
    plan = ResamplePlan.build(outcome, gt.images.ids)
    return _summarized(result, protocol, plan, c, np.ones(len(gt), bool))


Where = Callable[[Dataset], Any] | Sequence[bool] | np.ndarray


def _where_mask(gt: Dataset, where: Where) -> np.ndarray:
    value = where(gt) if callable(where) else where
    mask = np.asarray(value)
    if mask.shape != (len(gt),) or mask.dtype != np.bool_:
        raise ParameterError(
            f"where: expected {len(gt)} booleans (one per ground-truth row) or a callable "
            f"returning them, got dtype {mask.dtype} and shape {mask.shape}"
        )
    return mask


def _exclude_gt(outcome: MatchOutcome, keep: np.ndarray) -> MatchOutcome:
    # predictions matched (area "all") to a dropped ground truth: IGNORED at that threshold,
    # in every area range; the dropped ground truths leave the records and the counts
    n, n_a, n_t = len(outcome), len(outcome.area_names), len(outcome.thresholds)
    matched = np.asarray(outcome.matched_gt)
    flip = np.zeros(matched.shape, dtype=bool)  # [N, T]: matched to a dropped ground truth
    at = matched >= 0
    flip[at] = ~keep[matched[at]]
    tp_bits, ign_bits = outcome.tp_bits, outcome.ignored_bits
    if flip.any():
        width = n_a * n_t
        tp = np.unpackbits(tp_bits, axis=1, count=width).reshape(n, n_a, n_t).astype(bool)
        ign = np.unpackbits(ign_bits, axis=1, count=width).reshape(n, n_a, n_t).astype(bool)
        tp &= ~flip[:, None, :]
        ign |= flip[:, None, :]
        tp_bits = np.packbits(tp.reshape(n, width), axis=1)
        ign_bits = np.packbits(ign.reshape(n, width), axis=1)
    gt_rows = np.asarray(outcome.gt_row)
    kept = keep[gt_rows]
    in_range = np.asarray(outcome.gt_in_range)[kept]
    cls = np.asarray(outcome.gt_class_row)[kept]
    n_k = outcome.gt_count.shape[0]
    gt_count = np.zeros((n_k, n_a), dtype=np.int64)
    for a in range(n_a):
        gt_count[:, a] = np.bincount(cls[in_range[:, a]], minlength=n_k)[:n_k]
    return dataclasses.replace(
        outcome,
        tp_bits=tp_bits,
        ignored_bits=ign_bits,
        gt_count=gt_count,
        gt_row=gt_rows[kept],
        gt_class_row=cls,
        gt_image_id=np.asarray(outcome.gt_image_id)[kept],
        gt_in_range=in_range,
    )


def slice_result(
    result: EvaluationResult,
    /,
    *,
    image_ids: Sequence[int] | np.ndarray | None = None,
    where: Where | None = None,
) -> EvaluationResult:
    """The evaluation restricted to some images and/or some ground-truth objects.

    Parameters
    ----------
    result : EvaluationResult
        A COCO-family evaluation.
    image_ids : sequence of int, optional
        The images kept: equal, bit for bit, to pycocotools with ``params.imgIds`` set to
        them. Repeated ids count once. Default all.
    where : ndarray of bool (len(ground_truth),), or callable, optional
        The ground-truth objects kept (``where(ground_truth) -> bool array`` for a callable);
        e.g. ``lambda gt: gt.area > 1000``, or a mask built from an extra annotation key of
        the source file (the rows follow its annotations). Predictions matched to a dropped
        object become ignored (not a re-match; see the module notes).

    Returns
    -------
    EvaluationResult

    Raises
    ------
    ParameterError
        An id that is not an image of the ground truth, or a mask of the wrong shape.

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, dt = make_detections(num_images=6, num_classes=2, seed=0)
    >>> r = ioukit.evaluate(gt, dt)
    >>> s = slice_result(r, image_ids=[i["id"] for i in gt["images"]])
    >>> s.stats == r.stats
    True
    """
    protocol = result_protocol(result)
    outcome = result.outcome
    assert outcome is not None
    gt = result.ground_truth
    keep = np.ones(len(gt), dtype=bool)
    if where is not None:
        keep = _where_mask(gt, where)
        outcome = _exclude_gt(outcome, keep)
    if image_ids is None:
        counts = np.ones(len(gt.images), dtype=np.int64)
    else:
        ids = np.asarray(image_ids)
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
            raise ParameterError(
                f"image_ids: expected a sequence of integer image ids, got {image_ids!r:.80}"
            )
        counts = image_counts(gt, dict.fromkeys(np.unique(ids).tolist(), 1))
    plan = ResamplePlan.build(outcome, gt.images.ids)
    return _summarized(result, protocol, plan, counts, keep)


@dataclass(frozen=True, slots=True)
class SliceTable:
    """Slices of one evaluation side by side with the whole.

    Attributes
    ----------
    whole : dict of str to float
        The evaluation's stats.
    results : dict of str to EvaluationResult
        Each slice, by name.
    """

    whole: dict[str, float]
    results: dict[str, EvaluationResult]

    def rows(self) -> list[dict[str, Any]]:
        """One row per slice: ``slice``, each stat and ``delta_<stat>`` (slice - whole;
        NaN where either is -1, no data)."""
        out = []
        for name, r in self.results.items():
            row: dict[str, Any] = {"slice": name}
            for key, value in r.stats.items():
                row[key] = value
            for key, value in r.stats.items():
                base = self.whole.get(key, -1.0)
                row["delta_" + key] = (
                    float("nan") if value == -1.0 or base == -1.0 else value - base
                )
            out.append(row)
        return out

    def to_text(self) -> str:
        """A text table: the whole, then each slice with its deltas."""
        keys = list(self.whole)
        width = max([5, *(len(n) for n in self.results)])
        lines = [f"{'slice':<{width}}  " + "  ".join(f"{k:>14}" for k in keys)]
        lines.append(f"{'(all)':<{width}}  " + "  ".join(f"{self.whole[k]:>14.3f}" for k in keys))
        for row in self.rows():
            cells = []
            for k in keys:
                d = row["delta_" + k]
                delta = "" if np.isnan(d) else f"({d:+.3f})"
                cells.append(f"{row[k]:>6.3f}{delta:>8}")
            lines.append(f"{row['slice']:<{width}}  " + "  ".join(cells))
        return "\n".join(lines)


def slices(result: EvaluationResult, named: Mapping[str, Any], /) -> SliceTable:
    """Several slices of ``result``: each value is a sequence of image ids or a mapping of
    :func:`slice_result`'s options (``{"image_ids": ..., "where": ...}``).

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, dt = make_detections(num_images=6, num_classes=2, seed=0)
    >>> r = ioukit.evaluate(gt, dt)
    >>> t = slices(r, {"first": [gt["images"][0]["id"]]})
    >>> list(t.results), "delta_AP" in t.rows()[0]
    (['first'], True)
    """
    if not isinstance(named, Mapping):
        raise ParameterError(f"slices: expected a mapping of name to image ids, got {named!r:.80}")
    out: dict[str, EvaluationResult] = {}
    for name, spec in named.items():
        if isinstance(spec, Mapping):
            unknown = set(spec) - {"image_ids", "where"}
            if unknown:
                raise ParameterError(
                    f"slices[{name!r}]: expected the keys 'image_ids' and/or 'where', got "
                    f"{sorted(unknown)}"
                )
            out[str(name)] = slice_result(result, **spec)
        else:
            out[str(name)] = slice_result(result, image_ids=spec)
    return SliceTable(dict(result.stats), out)
