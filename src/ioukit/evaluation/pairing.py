"""The per-prediction match outcome that error analysis, per-image metrics, thresholds and LRP read.

Built on the evaluation pipeline (#10): :class:`~ioukit.evaluation.Groups`, the registered
similarity (``"bbox"``, ``"segm"``) and the ONE matcher :func:`ioukit.evaluation.match` with
COCO's rule (or a rule given by the caller); nothing here matches by itself. One
:class:`MatchTable` holds the pipeline's :class:`~ioukit.evaluation.MatchOutcome` records at one
threshold for several area ranges at once (the matcher runs once per range, so that the matched
ground truth and its IoU are known in every range, as LRP needs).

:func:`image_pairs` gives, per image and across classes, the similarity of every (prediction,
ground truth) pair from the same similarity stage, for the tests of TIDE that look at other
classes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation import Groups, MatchRule, get_similarity
from ioukit.evaluation.match import match_groups
from ioukit.evaluation.outcome import FALSE_POSITIVE, IGNORED, TRUE_POSITIVE
from ioukit.evaluation.registry import (
    SimilarityReads,
    protocol_has,
    protocol_names,
    protocol_traits,
    similarity_names,
    similarity_reads,
)

__all__ = [
    "FALSE_POSITIVE",
    "IGNORED",
    "TRUE_POSITIVE",
    "MatchTable",
    "check_results",
    "coco_outcome",
    "image_pairs",
    "image_rank_of",
    "require_columns",
    "resolve_pair",
    "subset",
    "table_reads",
]


_ALL_AREAS = (0.0, 1e5**2)
"""COCO's ``"all"`` area range."""


def subset(ds: Dataset, rows: np.ndarray) -> Dataset:
    """The rows ``rows`` of ``ds`` (every per-row column), as a new Dataset.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> ds = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1], [0, 0, 2, 2]],
    ...                          image_index=[0, 0], category_id=[1, 1], scores=[0.5, 0.9])
    >>> subset(ds, np.array([1])).scores.tolist()
    [0.9]
    """
    changes: dict[str, Any] = {}
    for name in (
        "boxes",
        "image_index",
        "category_id",
        "scores",
        "area",
        "crowd",
        "ignore",
        "difficult",
        "annotation_id",
        "keypoints",
        "rotated",
        "group_of",
        "box_wh",
    ):
        value = getattr(ds, name, None)
        if value is not None:
            changes[name] = np.asarray(value)[rows]
    if ds.segmentation is not None:
        changes["segmentation"] = tuple(ds.segmentation[i] for i in rows.tolist())
    return replace(ds, **changes)


def image_pairs(
    gt: Dataset, pred: Dataset, iou_type: str = "bbox", *, chunk: int = 1 << 20
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Similarity of every (prediction, ground truth) pair of the same image, all classes.

    The pipeline's similarity stage on class-agnostic groups (one group per image, every
    prediction kept); crowd columns hold the crowd form (intersection / prediction area).
    Yielded in chunks of whole images of about ``chunk`` pairs (bounded memory).

    Yields
    ------
    pred_rows, gt_rows, values : ndarray, shape (M,)
        Prediction-major: the pairs of one prediction are consecutive (and in one chunk),
        ground truths in the image's group order (class, then file order).

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1, 2], ["a", "b"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[2])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[5, 0, 15, 10]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> [(p.tolist(), g.tolist(), v.round(4).tolist()) for p, g, v in image_pairs(gt, pred)]
    [([0], [0], [0.3333])]
    """

    groups = Groups.build(gt, pred, use_cats=False, max_det=max(len(pred), 1))
    matrices = get_similarity(iou_type).matrices(gt, pred, groups)
    n_p = groups.kept_count
    n_g = groups.gt_count
    sizes = np.where(n_g > 0, n_p * n_g, 0)
    ends = np.cumsum(sizes)
    first = 0
    while first < len(sizes):
        # whole groups up to about ``chunk`` pairs (at least one group)
        last = max(
            int(np.searchsorted(ends, ends[first] - sizes[first] + chunk, "right")), first + 1
        )
        last = min(last, len(sizes))
        ids = np.arange(first, last)
        first = last
        size = sizes[ids]
        total = int(size.sum())
        if total == 0:
            continue
        group = np.repeat(ids, size)
        local = np.arange(total, dtype=np.int64) - (np.cumsum(size) - size)[group - ids[0]]
        width = n_g[group]
        p_pos = groups.pred_start[group] + local // width
        g_pos = groups.gt_start[group] + local % width
        values = matrices.values[matrices.offsets[group] + local]
        yield groups.pred_rows[p_pos], groups.gt_rows[g_pos], values


@dataclass(frozen=True, slots=True, eq=False)
class MatchTable:
    """Outcome of matching at one IoU threshold, per evaluated prediction and area range.

    Attributes
    ----------
    iou_threshold : float
    area_names : tuple of str, length A
        ``"all"`` first.
    cat_ids : ndarray of int64, shape (K,)
        Sorted category ids of the ground truth; class index ``k`` means ``cat_ids[k]``.
    pred_rows : ndarray of int64, shape (N,)
        Rows of the prediction dataset that were evaluated, in the pipeline's accumulation
        order: class, descending score, image id, rank in the (image, class) group.
    pred_image, pred_class : ndarray of int64, shape (N,)
        Image-table row and class index of each evaluated prediction.
    pred_score : ndarray of float64, shape (N,)
    status : ndarray of int8, shape (N, A)
        ``TRUE_POSITIVE`` (1), ``FALSE_POSITIVE`` (0) or ``IGNORED`` (2).
    matched_gt : ndarray of int64, shape (N, A)
        Row of the ground-truth dataset matched (true positives and ignored matches), or -1.
    match_iou : ndarray of float64, shape (N, A)
        IoU with the matched ground truth; 0 when unmatched.
    gt_rows : ndarray of int64, shape (G,)
        Ground-truth rows of known classes.
    gt_image, gt_class : ndarray of int64, shape (G,)
    gt_regular : ndarray of bool, shape (G, A)
        Counted as a positive in area range ``a`` (not crowd, ignore, difficult; area in range).
    image_rank : ndarray of int64, shape (I,)
        Rank of each image-table row by image id.
    """

    iou_threshold: float
    area_names: tuple[str, ...]
    cat_ids: np.ndarray
    pred_rows: np.ndarray
    pred_image: np.ndarray
    pred_class: np.ndarray
    pred_score: np.ndarray
    status: np.ndarray
    matched_gt: np.ndarray
    match_iou: np.ndarray
    gt_rows: np.ndarray
    gt_image: np.ndarray
    gt_class: np.ndarray
    gt_regular: np.ndarray
    image_rank: np.ndarray

    def num_positives(self, area: int = 0) -> np.ndarray:
        """Regular ground truths per class in area range ``area``, shape (K,)."""
        keep = self.gt_regular[:, area]
        return np.bincount(self.gt_class[keep], minlength=len(self.cat_ids))[: len(self.cat_ids)]


def table_reads(iou_type: object) -> SimilarityReads:
    """What a one-threshold table (TIDE, per image, thresholds, LRP) matches with: a
    similarity of boxes or masks (box IoU, mask IoU, boundary IoU...), else ParameterError.

    >>> table_reads("boundary").masks
    True
    >>> table_reads("keypoints")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: iou_type: expected a similarity of boxes or masks ('bbox', ...
    """
    reads = similarity_reads(iou_type)
    if not _boxes_or_masks(reads):
        names = [n for n in similarity_names() if _boxes_or_masks(similarity_reads(n))]
        raise ParameterError(
            f"iou_type: expected a similarity of boxes or masks ({', '.join(map(repr, names))}), "
            f"got {iou_type!r}"
        )
    return reads


def _boxes_or_masks(reads: SimilarityReads) -> bool:
    return reads.column == "boxes" or reads.masks


def require_columns(reads: SimilarityReads, iou_type: str, gt: Dataset, pred: Dataset) -> None:
    """DataFormatError unless both sides carry the masks a mask similarity compares."""
    if not reads.masks:
        return
    for ds, name in ((gt, "gt"), (pred, "results")):
        if ds.segmentation is None:
            raise DataFormatError(
                f"{name}: expected masks ('segmentation') for iou_type={iou_type!r}, got none"
            )


def check_results(gt: Dataset, pred: Dataset) -> None:
    """DataFormatError unless ``gt`` is ground truth and ``pred`` scored results over its image
    table (the messages of the routes that read a results file: TIDE, per-pair tables).

    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images, cats = ImageTable.from_lists([1], ["a"]), CategoryTable.from_lists([1], ["c"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], image_index=[0],
    ...                          category_id=[1])
    >>> check_results(gt, gt)
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: results: expected predictions with scores, got ground truth
    """
    if gt.is_prediction:
        raise DataFormatError("gt: expected ground truth (no scores), got predictions")
    if pred.scores is None:
        raise DataFormatError("results: expected predictions with scores, got ground truth")
    if len(pred.images) != len(gt.images):
        raise DataFormatError(
            "results: expected the ground truth's image table "
            f"({len(gt.images)} images), got {len(pred.images)} images"
        )


_EVERY_RESULT = 2**62


"""``max_dets`` of an LVIS outcome: every result it evaluated counts."""


def resolve_pair(
    gt: Any, predictions: Dataset | None, iou_type: str | None
) -> tuple[Dataset, Dataset, str, Any]:
    """``(ground truth, predictions, iou_type, reusable outcome)`` from an EvaluationResult
    or two Datasets; the outcome is the result's COCO :class:`MatchOutcome` when the
    evaluation used COCO's default rules (else None: the caller matches again).

    Examples
    --------
    >>> resolve_pair(3, None, None)
    Traceback (most recent call last):
    ...
    TypeError: gt: expected an EvaluationResult, or a Dataset and predictions=Dataset, got int
    """
    if predictions is None:
        ground_truth = getattr(gt, "ground_truth", None)
        preds = getattr(gt, "predictions", None)
        if not isinstance(ground_truth, Dataset) or not isinstance(preds, Dataset):
            raise TypeError(
                "gt: expected an EvaluationResult, or a Dataset and predictions=Dataset, "
                f"got {type(gt).__name__}"
            )
        params = dict(getattr(gt, "params", {}) or {})
        kind = iou_type or str(params.get("iou_type") or "bbox")
        protocol = getattr(gt, "protocol", None)
        traits = protocol_traits(protocol)
        federated = protocol in protocol_names() and protocol_has(protocol, "federated")
        reusable = (
            traits.coco_pairing
            and params.get("compat") is None
            and params.get("use_cats", True)
            and kind == params.get("iou_type", "bbox")
            and list(params.get("area_ranges", {}).get("all", [])) == [0.0, 1e10]
        )
        outcome = getattr(gt, "outcome", None)
        if federated and outcome is not None:
            # LVIS: the only match with its rules (cap, federated filter, not exhaustive)
            if kind != params.get("iou_type", "bbox"):
                raise ParameterError(
                    f"iou_type: expected the LVIS evaluation's {params.get('iou_type')!r}, "
                    f"got {kind!r} (matching again would drop LVIS's federated rules)"
                )
            return ground_truth, preds, kind, (outcome, _EVERY_RESULT, True)
        dets = params.get("max_dets") or [0]
        return (
            ground_truth,
            preds,
            kind,
            (outcome, int(max(dets))) if reusable and outcome else None,
        )
    if not isinstance(gt, Dataset) or not isinstance(predictions, Dataset):
        raise TypeError(
            "gt, predictions: expected two Datasets, "
            f"got {type(gt).__name__} and {type(predictions).__name__}"
        )
    return gt, predictions, iou_type or "bbox", None


def image_rank_of(gt: Dataset) -> np.ndarray:
    """Rank of each image-table row by image id (pycocotools evaluates images sorted by id)."""
    rank = np.empty(len(gt.images), dtype=np.int64)
    rank[np.argsort(gt.images.ids, kind="stable")] = np.arange(len(gt.images))
    return rank


def coco_outcome(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    iou_threshold: float = 0.5,
    area_ranges: Mapping[str, Sequence[float]] | None = None,
    max_dets: int = 100,
    iou_type: str = "bbox",
    rule: Any = None,
    reuse: Any = None,
) -> MatchTable:
    """Match ``pred`` to ``gt`` by the COCO rule at one threshold, per area range.

    Parameters
    ----------
    gt, pred : Dataset
        Ground truth and predictions on the same image table.
    iou_threshold : float
        A match needs ``IoU >= min(iou_threshold, 1 - 1e-10)``.
    area_ranges : mapping of str to (low, high), optional
        Default: ``{"all": (0, 1e10)}``; ``"all"`` is always first.
    max_dets : int
        Predictions evaluated per (image, class).
    iou_type : {"bbox", "segm"}
        The pipeline's similarity: box IoU, or mask IoU of the ``segmentation`` columns.
    rule : MatchRule, optional
        Default: COCO's (``>=``, last of equal IoUs, crowds absorb, ``1 - 1e-10`` clamp).
    reuse : (MatchOutcome, int) or (MatchOutcome, int, True), optional
        An evaluation's outcome (COCO rule, area range "all" first) and its ``max_dets``: read
        instead of matching again when it holds ``iou_threshold``, only "all" is asked for and
        its ``max_dets`` is at least ``max_dets``. An LVIS evaluation's outcome (from
        :func:`resolve_pair`) is always read: every result it evaluated counts (``max_dets``
        does not apply), its regular ground truths are LVIS's (positive area, not ``ignore``;
        ``iscrowd`` is not read); a request it cannot serve is an error (matching again
        would drop the cap, the federated filter and the not-exhaustive rule).

    Returns
    -------
    MatchTable

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 9], [0, 0, 10, 8]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.8, 0.9])
    >>> t = coco_outcome(gt, pred)
    >>> t.pred_rows.tolist(), t.status[:, 0].tolist(), t.matched_gt[:, 0].tolist()
    ([1, 0], [1, 0], [0, -1])
    """
    check_results(gt, pred)

    if not 0.0 <= float(iou_threshold) <= 1.0:
        raise ParameterError(f"iou_threshold: expected a number in [0, 1], got {iou_threshold!r}")
    if int(max_dets) < 1:
        raise ParameterError(f"max_dets: expected a positive integer, got {max_dets!r}")
    require_columns(table_reads(iou_type), iou_type, gt, pred)
    ranges = {"all": _ALL_AREAS} if area_ranges is None else dict(area_ranges)
    if "all" not in ranges:
        ranges = {"all": _ALL_AREAS, **ranges}
    names = ("all", *(n for n in ranges if n != "all"))
    lo = np.array([float(ranges[n][0]) for n in names])
    hi = np.array([float(ranges[n][1]) for n in names])

    lvis = reuse is not None and tuple(reuse[2:]) == (True,)  # federated: read, never rematch
    if reuse is not None and (rule is None or lvis) and names == ("all",):
        outcome, evaluated = reuse[0], int(reuse[1])
        table = (
            _from_outcome(
                gt, pred, outcome, float(iou_threshold), evaluated if lvis else int(max_dets),
                lo, hi, lvis=lvis,
            )
            if evaluated >= int(max_dets) or lvis
            else None
        )  # fmt: skip
        if table is not None:
            return table
    if lvis:
        thresholds = np.asarray(reuse[0].thresholds).tolist()
        raise ParameterError(
            f"iou_threshold, area_ranges: an LVIS evaluation holds area range 'all' at "
            f"{thresholds}, got {float(iou_threshold)!r} and {list(names)} (matching again "
            "would drop LVIS's cap, federated filter and not-exhaustive rule)"
        )
    groups = Groups.build(gt, pred, max_det=int(max_dets))
    matrices = get_similarity(iou_type).matrices(gt, pred, groups)
    outcomes = [
        match_groups(
            gt,
            pred,
            groups,
            matrices,
            thresholds=np.array([float(iou_threshold)]),
            rule=rule if rule is not None else MatchRule(),
            area_ranges=((n, float(a), float(b)),),
        )
        for n, a, b in zip(names, lo, hi, strict=True)
    ]
    first = outcomes[0]
    status = np.stack([o.status_at(0) for o in outcomes], axis=1)
    matched = np.stack([o.matched_gt_at(0) for o in outcomes], axis=1)
    miou = np.nan_to_num(np.stack([o.iou_at(0) for o in outcomes], axis=1), nan=0.0)
    g_rows = groups.gt_rows
    g_ignore = gt.crowd[g_rows] | gt.ignore[g_rows] | gt.difficult[g_rows]
    g_area = gt.area[g_rows]
    g_regular = ~g_ignore[:, None] & (g_area[:, None] >= lo) & (g_area[:, None] <= hi)
    return MatchTable(
        iou_threshold=float(iou_threshold),
        area_names=names,
        cat_ids=groups.category_ids.astype(np.int64),
        pred_rows=first.pred_row,
        pred_image=pred.image_index[first.pred_row],
        pred_class=first.class_row.astype(np.int64),
        pred_score=first.score,
        status=status,
        matched_gt=matched,
        match_iou=miou,
        gt_rows=g_rows,
        gt_image=gt.image_index[g_rows],
        gt_class=groups.gt_class,
        gt_regular=g_regular,
        image_rank=groups.image_rank,
    )


def _from_outcome(
    gt: Dataset,
    pred: Dataset,
    outcome: Any,
    threshold: float,
    max_dets: int,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    lvis: bool = False,
) -> MatchTable | None:
    """The table of an evaluation's outcome (no new match), or None when it cannot serve.
    ``lvis``: LVIS's regular ground truths (positive area, not ``ignore``; no crowd)."""
    t_index = np.flatnonzero(np.asarray(outcome.thresholds) == threshold)
    if len(t_index) == 0 or not outcome.area_names or outcome.area_names[0] != "all":
        return None
    t = int(t_index[0])
    ranks = np.asarray(outcome.rank)
    keep = ranks < max_dets
    cat_ids = np.asarray(outcome.category_ids, dtype=np.int64)
    known = np.isin(gt.category_id, cat_ids)
    g_rows = np.flatnonzero(known)
    g_cls = np.searchsorted(cat_ids, gt.category_id[g_rows])
    g_area = gt.area[g_rows]
    if lvis:  # lvis-api: only 0 < area < inf takes part; iscrowd is not read
        g_ignore = gt.ignore[g_rows] | gt.difficult[g_rows] | ~((g_area > 0) & (g_area < np.inf))
    else:
        g_ignore = gt.crowd[g_rows] | gt.ignore[g_rows] | gt.difficult[g_rows]
    g_regular = ~g_ignore[:, None] & (g_area[:, None] >= lo) & (g_area[:, None] <= hi)
    rows = np.asarray(outcome.pred_row)[keep]
    return MatchTable(
        iou_threshold=threshold,
        area_names=("all",),
        cat_ids=cat_ids,
        pred_rows=rows,
        pred_image=pred.image_index[rows],
        pred_class=np.asarray(outcome.class_row)[keep].astype(np.int64),
        pred_score=np.asarray(outcome.score)[keep],
        status=outcome.status_at(t)[keep][:, None],
        matched_gt=outcome.matched_gt_at(t)[keep][:, None],
        match_iou=np.nan_to_num(outcome.iou_at(t)[keep], nan=0.0)[:, None],
        gt_rows=g_rows,
        gt_image=gt.image_index[g_rows],
        gt_class=g_cls,
        gt_regular=g_regular,
        image_rank=image_rank_of(gt),
    )
