"""Evaluation past one process: :func:`evaluate_sharded` on Dask, torch.distributed sync.

:func:`evaluate_sharded` reads the ground truth once, broadcasts it to the workers of a
``dask.distributed`` cluster, lets every worker read and match its own prediction shards, and
merges the small partial results on the client. The result equals :func:`ioukit.evaluate` on
all predictions (the shards concatenated in the given order) bit for bit.

What a worker sends back depends on the protocol:

==============================  ===========================================================
protocol                        partial result
==============================  ===========================================================
``coco`` (bbox, segm)           :class:`CocoPartial`: the pipeline's match outcome packed to
                                42 bytes per evaluated detection (status as bit planes);
                                grouping, similarity and matching run on the workers
``openimages``,                 :class:`~ioukit.metrics.openimages.OpenImagesPartial`: the
``openimages_challenge``        matched records (21 bytes per counted detection)
``voc07``, ``voc10``, ``yolo``  the shard's validated predictions in columnar form (about 90
                                bytes per detection); reading runs on the workers, matching
                                on the client, until these protocols run on the pipeline's
                                matcher too (#10)
==============================  ===========================================================

The client merges partials by sorting their records into the accumulation order (class, then
descending score, then image id, then rank in the image; Open Images: its reference's order),
so the numbers do not depend on how images were split. VOC ranks tied scores across images
in input order, so for it "one process" means the shards concatenated in the given order.

:func:`synced_evaluate` is what :meth:`ioukit.Evaluator.compute` calls under an initialised
``torch.distributed`` process group: for COCO bbox/segm each rank matches its own images and
ONE ``all_gather_object`` ships the compact :class:`CocoPartial` records (with each rank's
ground truth, for the counts), merged on every rank as above; other protocols gather the
columnar datasets (:func:`gather_datasets`) and every rank evaluates them. Images are
numbered rank by rank in arrival order (torchmetrics' convention) or, when the targets carry
``image_id``, identified by it.

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
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError, MissingDependencyError, ParameterError
from ioukit.metrics.protocol import ProtocolResult
from ioukit.metrics.result import EvaluationResult

__all__ = [
    "CocoPartial",
    "concat_predictions",
    "evaluate_sharded",
    "gather_datasets",
    "shard_images",
    "synced_evaluate",
]

_OPENIMAGES = ("openimages", "openimages_challenge")
_COCO_PARTIAL = ("bbox", "segm")
"""COCO similarities whose match outcome the workers compute."""
_SUPPORTED = (
    ("coco", "bbox"),
    ("coco", "segm"),
    ("voc07", "bbox"),
    ("voc10", "bbox"),
    ("yolo", "bbox"),
    ("openimages", "bbox"),
    ("openimages_challenge", "bbox"),
)
"""(protocol, iou_type) pairs tested equal to one process (keypoints, rotated: not yet)."""


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


def _read_shard(gt: Dataset, shard: object, name: str, protocol: str, iou_type: str) -> Dataset:
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
        from ioukit.io.openimages import read_openimages_predictions

        return read_openimages_predictions(shard, gt)
    from ioukit.engine import _predictions

    return _predictions(shard, gt, iou_type="segm" if iou_type == "segm" else "bbox")


def _shard_partial(
    shared: tuple[Dataset, dict[str, Any]],
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
        from ioukit.metrics.openimages import match_openimages

        part = match_openimages(
            gt, pred, challenge=protocol == "openimages_challenge", images=images, **options
        )
        return images, part
    if protocol == "coco" and iou_type in _COCO_PARTIAL:
        return images, CocoPartial.from_match(gt, pred, iou_type, options)
    return images, pred


@dataclass(frozen=True, eq=False)
class CocoPartial:
    """A shard's COCO match outcome, packed: what accumulation needs and nothing else.

    One record per evaluated prediction (the first ``max_dets[-1]`` of each image and class):
    score (8 bytes), class row and rank (4 + 4), image id and category id (8 + 8) and the
    TRUE_POSITIVE / IGNORED status at every (area range, threshold) as two bit planes
    (``2 * ceil(A * T / 8)`` bytes: 10 for COCO's 4 x 10), about 42 bytes per detection.
    Plus the predictions per class (for the per-class table).

    Built on a worker by :meth:`from_match` (the pipeline's groups, similarity and matcher);
    merged on the client by sorting into pycocotools' accumulation order.
    """

    score: np.ndarray
    class_row: np.ndarray
    rank: np.ndarray
    image_id: np.ndarray
    category_id: np.ndarray
    tp_bits: np.ndarray
    ignored_bits: np.ndarray
    num_pred: np.ndarray
    shape: tuple[int, int]

    def __len__(self) -> int:
        return int(self.score.size)

    @property
    def nbytes(self) -> int:
        """Bytes of the per-record arrays (``num_pred`` included)."""
        return int(
            sum(
                a.nbytes
                for a in (
                    self.score,
                    self.class_row,
                    self.rank,
                    self.image_id,
                    self.category_id,
                    self.tp_bits,
                    self.ignored_bits,
                    self.num_pred,
                )
            )
        )

    @classmethod
    def from_match(
        cls, gt: Dataset, pred: Dataset, iou_type: str, options: Mapping[str, Any]
    ) -> CocoPartial:
        """Match ``pred`` (some images' predictions) as ``COCOProtocol.evaluate`` does."""
        # only the ground truth of the shard's images: the others would form groups without
        # predictions, which add nothing but time (their counts come from the client)
        mine = np.isin(gt.image_index, np.unique(pred.image_index))
        _, groups, outcome = _coco_match(_take(gt, np.flatnonzero(mine)), pred, iou_type, options)
        k = len(groups.category_ids)
        num_pred = np.bincount(groups.pred_class, minlength=k)[:k].astype(np.int64)
        a, t = len(outcome.area_names), len(outcome.thresholds)
        return cls(
            score=outcome.score,
            class_row=outcome.class_row.astype(np.int32),
            rank=outcome.rank.astype(np.int32),
            image_id=outcome.image_id,
            category_id=outcome.category_id,
            tp_bits=outcome.tp_bits,  # the outcome's own bit planes (same layout)
            ignored_bits=outcome.ignored_bits,
            num_pred=num_pred,
            shape=(a, t),
        )

    def status(self) -> np.ndarray:
        """The (N, A, T) int8 status array back."""
        return _unpack_status(self.tp_bits, self.ignored_bits, self.shape)


def _unpack_status(
    tp_bits: np.ndarray, ignored_bits: np.ndarray, shape: tuple[int, int]
) -> np.ndarray:
    from ioukit.evaluation.outcome import FALSE_POSITIVE, IGNORED, TRUE_POSITIVE

    a, t = shape
    tp = np.unpackbits(tp_bits, axis=1, count=a * t)
    ign = np.unpackbits(ignored_bits, axis=1, count=a * t)
    if (FALSE_POSITIVE, TRUE_POSITIVE, IGNORED) == (0, 1, 2):  # the codes as bit planes
        out = tp | (ign << 1)
    else:  # pragma: no cover - only if the pipeline renumbers its codes
        out = np.where(tp, TRUE_POSITIVE, np.where(ign, IGNORED, FALSE_POSITIVE))
    return out.astype(np.int8).reshape(len(tp_bits), a, t)


def _coco_match(
    gt: Dataset, pred: Dataset, iou_type: str, options: Mapping[str, Any]
) -> tuple[Any, Any, Any]:
    """(protocol, groups, outcome): the first half of ``COCOProtocol.evaluate``."""
    from ioukit.evaluation.groups import Groups
    from ioukit.evaluation.match import match_groups
    from ioukit.evaluation.protocols import make_protocol
    from ioukit.evaluation.similarity import get_similarity

    protocol = make_protocol("coco", iou_type=iou_type, **options)
    pyco = protocol.compat == "pycocotools"
    groups = Groups.build(gt, pred, use_cats=protocol.use_cats, max_det=protocol.max_dets[-1])
    matrices = get_similarity(iou_type).matrices(gt, pred, groups)
    outcome = match_groups(
        gt,
        pred,
        groups,
        matrices,
        thresholds=np.array(protocol.iou_thresholds),
        rule=protocol.rule,
        area_ranges=protocol.area_ranges,
        gt_ignore=gt.crowd if pyco else gt.crowd | gt.ignore | gt.difficult,
        gt_never_matches=(gt.annotation_id == 0) if pyco else None,
    )
    return protocol, groups, outcome


def _coco_result(
    gt: Dataset, partials: Sequence[CocoPartial], iou_type: str, options: Mapping[str, Any]
) -> ProtocolResult:
    """The second half of ``COCOProtocol.evaluate`` on merged partials (same numbers)."""
    from types import SimpleNamespace

    from ioukit.evaluation.outcome import MatchOutcome

    # ground-truth counts and the per-class table's layout: from the whole ground truth
    protocol, groups, empty = _coco_match(gt, _empty_predictions(gt), iou_type, options)
    parts = list(partials)
    n = sum(len(p) for p in parts)
    a, t = len(protocol.area_ranges), len(protocol.iou_thresholds)
    score = np.concatenate([empty.score, *(p.score for p in parts)])
    class_row = np.concatenate([empty.class_row, *(p.class_row for p in parts)]).astype(np.int64)
    image_id = np.concatenate([empty.image_id, *(p.image_id for p in parts)])
    rank = np.concatenate([empty.rank, *(p.rank for p in parts)]).astype(np.int64)
    order = np.lexsort((rank, image_id, -score, class_row))  # MatchOutcome.sort_key
    width = (a * t + 7) // 8
    tp_bits = np.concatenate([np.zeros((0, width), np.uint8), *(p.tp_bits for p in parts)])
    ignored_bits = np.concatenate(
        [np.zeros((0, width), np.uint8), *(p.ignored_bits for p in parts)]
    )
    category_id = np.concatenate([empty.category_id, *(p.category_id for p in parts)])
    outcome = MatchOutcome(
        pred_row=np.full(n, -1, dtype=np.int64),  # the predictions stay on the workers
        score=score[order],
        class_row=class_row[order].astype(np.int32),
        category_id=category_id[order],
        image_id=image_id[order],
        rank=rank[order].astype(np.int32),
        tp_bits=tp_bits[order],  # the outcome's bit planes as they are (same layout)
        ignored_bits=ignored_bits[order],
        first_gt=np.full(n, -1, dtype=np.int64),  # the matches stay on the workers
        first_iou=np.full(n, np.nan),
        same_bits=np.zeros((n, (t + 7) // 8), dtype=np.uint8),
        other_row=np.zeros(0, dtype=np.int64),
        other_gt=np.zeros((0, t), dtype=np.int64),
        other_iou=np.zeros((0, t)),
        gt_count=empty.gt_count,
        category_ids=empty.category_ids,
        thresholds=empty.thresholds,
        area_names=empty.area_names,
    )
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
) -> tuple[Dataset, dict[str, Any]]:
    from ioukit.io.openimages import OpenImagesGroundTruth

    if isinstance(gt, OpenImagesGroundTruth):
        if protocol not in _OPENIMAGES:
            raise DataFormatError(
                f"gt: Open Images ground truth needs protocol 'openimages' or "
                f"'openimages_challenge', got {protocol!r}"
            )
        if gt.image_labels is not None and protocol == "openimages_challenge":
            options.setdefault("image_labels", gt.image_labels)
        return gt.dataset, options
    from ioukit.engine import _ground_truth as read_gt

    segm = iou_type == "segm"
    strict = protocol == "coco" and options.get("compat") == "pycocotools"
    return read_gt(gt, require_iscrowd=strict, segm=segm), options


def _client(client: Any, workers: int | None = None) -> tuple[Any, Any]:
    """The client to use and, when we made a local cluster, the objects to close."""
    if client is not None:
        return client, None
    if workers is not None and (
        isinstance(workers, bool) or int(workers) != workers or workers < 1
    ):
        raise ParameterError(f"workers: expected a positive number of processes, got {workers!r}")
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise MissingDependencyError(
            'evaluate_sharded needs dask.distributed: pip install "ioukit[dask]"'
        ) from None
    cluster = LocalCluster(  # type: ignore[no-untyped-call,unused-ignore]
        n_workers=int(workers) if workers is not None else (os.cpu_count() or 1),
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
    )
    made = Client(cluster)  # type: ignore[no-untyped-call,unused-ignore]
    return made, (made, cluster)


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
    gt : Dataset, COCO dict or path, or OpenImagesGroundTruth
        Read once on the client and broadcast to every worker.
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
    iou_type : {"bbox", "segm"}
    **options
        Protocol options, as for :func:`ioukit.evaluate`.

    Returns
    -------
    EvaluationResult
        Equal to ``ioukit.evaluate(gt, <all shards concatenated in order>, ...)``: stats,
        per-class rows, params and arrays (COCO precision/recall/scores). For the COCO and Open
        Images protocols the predictions never leave the workers: ``predictions`` is empty and
        the COCO ``outcome`` has ``pred_row`` -1 and no matched ground truth or IoU.

    Raises
    ------
    DataFormatError
        A shard names an image or class the ground truth lacks (the shard's file is named), or
        two shards hold predictions of one image (both are named).
    MissingDependencyError
        ``client`` is None and dask.distributed is not installed.
    """
    from ioukit.engine import _protocol

    _protocol(protocol, iou_type, options)  # every check of evaluate(), before any work
    if (protocol, iou_type) not in _SUPPORTED:
        raise ParameterError(
            f"protocol, iou_type: evaluate_sharded supports "
            f"{', '.join(f'{p}/{t}' for p, t in _SUPPORTED)}, got {protocol}/{iou_type}"
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
        shared = client.scatter((gt_ds, options), broadcast=True, hash=False)
        futures = [
            client.submit(_shard_partial, shared, shard, name, protocol, iou_type, pure=False)
            for shard, name in zip(shards, names, strict=True)
        ]
        results = client.gather(futures)
    finally:
        if owned is not None:
            for thing in owned:
                thing.close()
    return _merge(gt_ds, results, names, protocol, iou_type, options)


def _merge(
    gt: Dataset,
    results: Sequence[tuple[np.ndarray, Any]],
    names: Sequence[str],
    protocol: str,
    iou_type: str,
    options: dict[str, Any],
) -> EvaluationResult:
    """Client side: check the shards are disjoint, merge their partial results."""
    from ioukit.engine import evaluate

    _check_disjoint(gt, [r[0] for r in results], names)
    partials = [r[1] for r in results]
    if protocol in _OPENIMAGES:
        from ioukit.metrics.openimages import accumulate_openimages, match_openimages

        if not partials:
            empty = match_openimages(gt, _empty_predictions(gt), **_oi(protocol, options))
            partials, names = [empty], ["no shards"]
        result: ProtocolResult = accumulate_openimages(gt, partials, names=names)
        return EvaluationResult(result, gt, _empty_predictions(gt))
    if protocol == "coco" and iou_type in _COCO_PARTIAL:
        result = _coco_result(gt, partials, iou_type, options)
        return EvaluationResult(result, gt, _empty_predictions(gt))
    pred = concat_predictions(partials) if partials else _empty_predictions(gt)
    return evaluate(gt, pred, protocol=protocol, iou_type=iou_type, **options)


def _oi(protocol: str, options: Mapping[str, Any]) -> dict[str, Any]:
    return {"challenge": protocol == "openimages_challenge", **options}


def _empty_predictions(gt: Dataset) -> Dataset:
    return Dataset.from_arrays(
        gt.images,
        gt.categories,
        boxes=np.zeros((0, 4)),
        image_index=np.zeros(0, dtype=np.int64),
        category_id=np.zeros(0, dtype=np.int64),
        scores=np.zeros(0),
        segmentation=None if gt.segmentation is None else (),
    )


# ------------------------------------------------------------------------------ torch


def _process_group() -> Any:
    """``torch.distributed`` when a process group of more than one rank is initialised."""
    dist = sys.modules.get("torch.distributed")  # never import torch for a user without it
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist if dist.get_world_size() > 1 else None


def _renumbered(
    parts: Sequence[tuple[Dataset, Dataset]], *, by_image_id: bool = False
) -> tuple[Dataset, Dataset]:
    """Ground truth and predictions of every rank as one pair.

    Images are numbered rank by rank (ids 0 .. n-1), or with ``by_image_id`` keep their ids
    and are ordered by them (which rank held which image does not matter then).
    """
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
    if by_image_id:  # concatenated position -> row in the id-ordered table
        row = np.empty(n, dtype=np.int64)
        row[order] = np.arange(n)
        gt = dataclasses.replace(gt, image_index=row[gt.image_index])
        pred = dataclasses.replace(pred, image_index=row[pred.image_index])
    return gt, pred


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
    dist = _process_group()
    if dist is None:
        return gt, pred
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, (gt, pred, bool(by_image_id)))
    _check_same_mode([g[2] for g in gathered])
    return _renumbered([(g[0], g[1]) for g in gathered], by_image_id=by_image_id)


def _check_same_mode(by_id: Sequence[bool]) -> None:
    if any(by_id) and not all(by_id):
        raise DataFormatError(
            f"targets.image_id: given on rank {list(by_id).index(True)} but not on rank "
            f"{list(by_id).index(False)}; give it on every image of every rank or on none"
        )


@dataclass(frozen=True, eq=False)
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
    from ioukit.evaluation.groups import class_rows
    from ioukit.evaluation.protocols import make_protocol

    by_id = [s.by_image_id for s in states]
    _check_same_mode(by_id)
    parts = [(s.gt, _empty_predictions(s.gt)) for s in states]
    gt, _ = _renumbered(parts, by_image_id=all(by_id) and bool(by_id))
    use_cats = make_protocol("coco", iou_type=iou_type, **options).use_cats
    cat_ids = np.unique(gt.categories.ids)
    offset = 0
    partials = []
    for s in states:
        p = s.partial
        local = np.unique(s.gt.categories.ids)
        num_pred = np.zeros(cat_ids.size, dtype=np.int64)
        np.add.at(num_pred, class_rows(cat_ids, local), p.num_pred[: local.size])
        partials.append(
            dataclasses.replace(
                p,
                # rank by rank: a rank's local ids are its rows 0 .. n-1
                image_id=p.image_id if s.by_image_id else p.image_id + offset,
                class_row=(
                    class_rows(cat_ids, p.category_id).astype(np.int32) if use_cats else p.class_row
                ),
                num_pred=num_pred,
            )
        )
        offset += len(s.gt.images)
    result = _coco_result(gt, partials, iou_type, options)
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

    With ``protocol="coco"`` and ``iou_type`` bbox or segm each rank matches its own images
    and ONE ``all_gather_object`` ships compact :class:`CocoPartial` records (about 42 bytes
    per evaluated detection) with the rank's ground truth (for the per-class counts, the
    category table and the image ids); every rank merges them as :func:`evaluate_sharded`
    does. Other protocols gather the columnar datasets (:func:`gather_datasets`) and every
    rank evaluates all of them. Without an initialised process group of two or more ranks:
    :func:`ioukit.evaluate` on the pair.

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
    from ioukit.engine import evaluate

    dist = _process_group()
    if dist is None:
        return evaluate(gt, pred, protocol=protocol, iou_type=iou_type, **options)
    if protocol != "coco" or iou_type not in _COCO_PARTIAL:
        gt, pred = gather_datasets(gt, pred, by_image_id=by_image_id)
        return evaluate(gt, pred, protocol=protocol, iou_type=iou_type, **options)
    from ioukit.engine import _protocol

    _protocol(protocol, iou_type, options)  # every rank fails alike, before the collective
    state = _rank_state(gt, pred, by_image_id, iou_type, options)
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, state)
    return _merge_ranks(gathered, iou_type, options)
