"""Evaluation past one process: :func:`evaluate_sharded` on Dask, torch.distributed sync.

:func:`evaluate_sharded` reads the ground truth once, broadcasts it to the workers of a
``dask.distributed`` cluster, lets every worker read and match its own prediction shards, and
merges the small per-shard outcomes on the client. The result equals :func:`ioukit.evaluate`
on all predictions (the shards concatenated in the given order) bit for bit.

This module knows no protocol by name: the protocol object (from
:func:`ioukit.evaluation.registry.make_protocol`) says whether it can shard (``can_shard``),
what it reads (``input_format``: COCO JSON by default, LVIS JSON, Open Images CSV), matches a
shard on a worker (``shard_match``: a :class:`~ioukit.evaluation.outcome.MatchOutcome` for
COCO with every similarity and for LVIS, an outcome with the predictions of classes without
ground truth for VOC and YOLO, the Open Images partial) and summarizes the merged outcomes
once (``shard_summarize``); see :mod:`ioukit.evaluation.sharding`. COCO (bbox, segm,
keypoints, rotated, probiou, bbox-float32), VOC, YOLO (bbox, keypoints, rotated, probiou),
LVIS (bbox, segm; not Fixed AP) and Open Images shard on the workers.

What travels is the outcome packed column by column (:func:`pack`): constant columns (the
prediction rows and IoUs that stay on the worker) as one value, integers in the narrowest type
that holds them, image ids as rows of the ground truth's sorted image ids: for COCO's 4 area
ranges x 10 thresholds 29-31 bytes per evaluated detection (score 8, class, category, image
rank, rank in the group, the status as two bit planes of 5 bytes, the matched ground-truth row
and the bits saying at which thresholds it holds).

The client merges the outcomes by sorting their records into the accumulation order (class,
then descending score, then image id, then rank in the image; Open Images: its reference's
order), so the numbers do not depend on how images were split. Each shard's records arrive
sorted, so for COCO this is one stable integer sort that merges the sorted runs
(:func:`merge_order`). VOC ranks tied scores across images in input order, so for it "one
process" means the shards concatenated in the given order.

:func:`synced_evaluate` is what :meth:`ioukit.Evaluator.compute` calls under an initialised
``torch.distributed`` process group: one ``all_gather_object`` ships each rank's ground truth
(and its predictions per image), every rank builds the merged ground truth, matches its own
images as a Dask worker does and a second ``all_gather_object`` ships the packed outcomes,
merged on every rank as above; protocols that cannot shard gather the columnar datasets
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
from collections.abc import Callable, Mapping, Sequence
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
from ioukit.evaluation.registry import protocol_iou_types, protocol_names, similarity_input
from ioukit.evaluation.sharding import (
    empty_predictions,
    id_rows,
    merge_order,
    take_rows,
    with_pred_rows,
)
from ioukit.io.lvis import LVISGroundTruth, read_lvis_ground_truth, read_lvis_results
from ioukit.io.openimages import OpenImagesGroundTruth, read_openimages_predictions

__all__ = [
    "LOCAL_CLUSTER_CONFIG",
    "Packed",
    "can_shard",
    "concat_predictions",
    "evaluate_sharded",
    "gather_datasets",
    "merge_order",
    "pack",
    "shard_images",
    "sharded_pairs",
    "synced_evaluate",
    "unpack",
]


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


# ------------------------------------------------------------------------------ protocols


def can_shard(runner: Any) -> bool:
    """Whether the protocol object ``runner`` matches shards of images on their own."""
    return bool(getattr(runner, "can_shard", False))


def sharded_pairs() -> tuple[tuple[str, str], ...]:
    """The (protocol, iou_type) pairs :func:`evaluate_sharded` evaluates on the workers.

    >>> ("coco", "segm") in sharded_pairs(), ("crowdpose", "keypoints") in sharded_pairs()
    (True, False)
    """
    pairs = []
    for name in protocol_names():
        for iou_type in protocol_iou_types(name):
            try:
                runner = make_runner(name, iou_type, {})
            except (ParameterError, TypeError, ValueError):
                continue
            if can_shard(runner):
                pairs.append((name, iou_type))
    return tuple(pairs)


def _check_can_shard(runner: Any, protocol: str, iou_type: str) -> None:
    if not can_shard(runner):
        raise ParameterError(
            f"protocol, iou_type: evaluate_sharded supports "
            f"{', '.join(f'{p}/{t}' for p, t in sharded_pairs())}, got {protocol}/{iou_type} "
            f"(protocol {protocol!r} with iou_type {iou_type!r} evaluates in one process: "
            "ioukit.evaluate)"
        )
    check = getattr(runner, "check_shardable", None)
    if check is not None:  # e.g. LVIS' Fixed AP: a per-class cap over the whole dataset
        check()


# ------------------------------------------------------------------------------ what travels


@dataclass(frozen=True, slots=True)
class _Column:
    """One array as it travels: ``data`` in a narrower type (or None: every value is
    ``value``), given back as ``dtype`` of shape ``shape``; ``ranks``: image ids shipped as
    rows of the ground truth's sorted image ids."""

    data: np.ndarray | None
    value: Any
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    ranks: bool = False


@dataclass(frozen=True, slots=True)
class Packed:
    """A shard's part (any dataclass of arrays) as it travels: its type and its fields, every
    array packed (:func:`pack`); :func:`unpack` gives the part back bit for bit."""

    kind: type
    fields: tuple[tuple[str, Any], ...]

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays that travel."""
        return sum(_nbytes(v) for _, v in self.fields)


def _nbytes(value: Any) -> int:
    if isinstance(value, Packed):
        return value.nbytes
    if isinstance(value, _Column):
        return 0 if value.data is None else int(value.data.nbytes)
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    return 0


def _narrowest(values: np.ndarray) -> np.ndarray:
    """Integers in the smallest type holding their range (unsigned when none is negative)."""
    low, high = int(values.min()), int(values.max())
    types = (np.uint8, np.uint16, np.uint32) if low >= 0 else (np.int8, np.int16, np.int32)
    for dtype in types:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return values.astype(dtype)
    return values.astype(np.int64)


def _pack_array(name: str, array: np.ndarray, image_ids: np.ndarray) -> Any:
    kind = array.dtype.kind
    if array.size == 0 or kind not in "iuf":
        return np.ascontiguousarray(array)
    flat = array.reshape(-1)
    first = flat[0]
    if kind == "f" and np.isnan(first):
        if np.isnan(flat).all():
            return _Column(None, first, array.shape, array.dtype)
    elif (flat == first).all():
        return _Column(None, first, array.shape, array.dtype)
    if kind == "f":
        return np.ascontiguousarray(array)
    rows = id_rows(image_ids, flat) if name.endswith("image_id") else None
    ranks = rows is not None
    values = flat if rows is None else rows
    return _Column(_narrowest(values).reshape(array.shape), None, array.shape, array.dtype, ranks)


def pack(part: Any, image_ids: np.ndarray) -> Any:
    """``part`` (a dataclass of arrays, or of such dataclasses) as it travels.

    Parameters
    ----------
    part : dataclass instance
        E.g. a :class:`~ioukit.evaluation.outcome.MatchOutcome`.
    image_ids : ndarray of int64, shape (I,)
        The ground truth's sorted image ids (fields named ``*image_id`` travel as rows of it).

    Examples
    --------
    >>> from ioukit.evaluation.outcome import MatchOutcome
    >>> o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
    >>> unpack(pack(o, np.array([7])), np.array([7])).gt_count.tolist()
    [[0]]
    """
    if not dataclasses.is_dataclass(part) or isinstance(part, type):
        return part
    fields = []
    for f in dataclasses.fields(part):
        value = getattr(part, f.name)
        if isinstance(value, np.ndarray):
            value = _pack_array(f.name, value, image_ids)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = pack(value, image_ids)
        fields.append((f.name, value))
    return Packed(type(part), tuple(fields))


def unpack(packed: Any, image_ids: np.ndarray) -> Any:
    """The part :func:`pack` packed, bit for bit."""
    if not isinstance(packed, Packed):
        return packed
    values: dict[str, Any] = {}
    for name, value in packed.fields:
        if isinstance(value, _Column):
            data = value.data
            if data is None:  # one value: a read-only broadcast view (merging keeps it one)
                value = np.broadcast_to(np.asarray(value.value, dtype=value.dtype), value.shape)
            elif value.ranks:
                value = image_ids[data.astype(np.int64)].astype(value.dtype)
            else:
                value = data.astype(value.dtype)
        elif isinstance(value, Packed):
            value = unpack(value, image_ids)
        values[name] = value
    return packed.kind(**values)


# ------------------------------------------------------------------------------ reading

_COCO_JSON = "coco-json"


_GroundTruth = tuple[Any, dict[str, Any]]
"""The ground truth the workers get, and options it brings (Open Images' image labels)."""


def _coco_ground_truth(protocol: str, runner: Any, gt: object, iou_type: str) -> _GroundTruth:
    if isinstance(gt, OpenImagesGroundTruth):
        raise DataFormatError(
            f"gt: Open Images ground truth needs protocol 'openimages' or "
            f"'openimages_challenge', got {protocol!r}"
        )
    read = read_gt(
        gt,
        require_iscrowd=getattr(runner, "compat", None) == "pycocotools",
        segm=similarity_input(iou_type) == "segmentation",
        keypoints=similarity_input(iou_type) == "keypoints",
    )
    return read, {}


def _lvis_ground_truth(protocol: str, runner: Any, gt: object, iou_type: str) -> _GroundTruth:
    if isinstance(gt, LVISGroundTruth):
        return gt, {}
    if isinstance(gt, str | os.PathLike | Mapping):
        keep = similarity_input(iou_type) == "segmentation"
        return read_lvis_ground_truth(gt, keep_segmentation=keep), {}
    raise TypeError(
        "gt: protocol='lvis' needs LVIS's labels (neg_category_ids, "
        "not_exhaustive_category_ids, frequency): pass the LVIS file, its dict or "
        f"ioukit.io.lvis.read_lvis_ground_truth(...), got {type(gt).__name__}"
    )


def _openimages_ground_truth(protocol: str, runner: Any, gt: object, iou_type: str) -> _GroundTruth:
    if not isinstance(gt, OpenImagesGroundTruth):
        return read_gt(gt, require_iscrowd=False), {}
    labels = gt.image_labels
    verified = getattr(runner, "challenge", False) and labels is not None
    return gt.dataset, ({"image_labels": labels} if verified else {})


def _coco_predictions(gt: Any, source: object, iou_type: str) -> Dataset:
    read_as = iou_type if similarity_input(iou_type) in ("segmentation", "keypoints") else "bbox"
    return predictions_dataset(source, gt, iou_type=read_as)


def _lvis_predictions(gt: Any, source: object, iou_type: str) -> Dataset:
    return read_lvis_results(source, gt, iou_type=iou_type)  # type: ignore[arg-type]


def _openimages_predictions(gt: Any, source: object, iou_type: str) -> Dataset:
    return read_openimages_predictions(source, gt)  # type: ignore[arg-type]


_READERS: dict[str, tuple[Callable[..., _GroundTruth], Callable[..., Dataset]]] = {
    _COCO_JSON: (_coco_ground_truth, _coco_predictions),
    "lvis-json": (_lvis_ground_truth, _lvis_predictions),
    "openimages-csv": (_openimages_ground_truth, _openimages_predictions),
}
"""A protocol's ``input_format`` -> (ground-truth reader, shard reader)."""


def _readers(runner: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return _READERS[getattr(runner, "input_format", _COCO_JSON)]


def _dataset(gt: Any) -> Dataset:
    """The ground truth's Dataset (an LVIS ground truth carries one)."""
    return gt.dataset if isinstance(gt, LVISGroundTruth) else gt


# ------------------------------------------------------------------------------ worker side


def _read_shard(runner: Any, gt: Any, shard: object, name: str, iou_type: str) -> Dataset:
    data = _dataset(gt)
    if isinstance(shard, Dataset):
        if not shard.is_prediction:
            raise DataFormatError(f"{name}: expected predictions (with scores), got ground truth")
        if len(shard.images) != len(data.images) or not np.array_equal(
            shard.images.ids, data.images.ids
        ):
            raise DataFormatError(f"{name}: expected predictions over the ground truth's images")
        return shard
    if not isinstance(shard, str | os.PathLike):
        raise TypeError(f"{name}: expected a path or a Dataset, got {type(shard).__name__}")
    pred: Dataset = _readers(runner)[1](gt, shard, iou_type)
    return pred


def _shard_partial(
    shared: tuple[Any, Any], shard: object, name: str, iou_type: str
) -> tuple[np.ndarray, int, Any]:
    """Run on a worker: read one shard, match it; (its image rows, its number of predictions,
    its packed outcome)."""
    gt, runner = shared
    pred = _read_shard(runner, gt, shard, name, iou_type)
    part = runner.shard_match(gt, pred, iou_type=iou_type)
    return shard_images(pred), len(pred), pack(part, np.sort(_dataset(gt).images.ids))


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


# ------------------------------------------------------------------------------ client side


SCATTER_ROUNDS = 4
"""How many times :func:`evaluate_sharded` scatters the ground truth: once, then again each
time the workers holding it all died (their tasks are then cancelled) and some shards are left."""


def _run_shards(
    client: Any,
    shared: tuple[Any, Any],
    shards: Sequence[Any],
    names: Sequence[str],
    iou_type: str,
) -> list[tuple[np.ndarray, int, Any]]:
    """Every shard's (image rows, predictions, packed outcome), in order, surviving the loss
    of the scattered data.

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
            i: client.submit(_shard_partial, scattered, shards[i], names[i], iou_type, pure=False)
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
        A protocol that can shard (:func:`sharded_pairs`: every protocol of
        :func:`ioukit.evaluate` but CrowdPose, DOTA, mmrotate, panoptic and the pedestrian
        protocols ``citypersons``, ``crowdhuman`` and ``caltech``, which are refused naming the
        protocol).
    iou_type : {"bbox", "segm", "boundary", "keypoints", "rotated", "probiou", "bbox-float32"}
        Protocol ``"coco"`` takes all of them (keypoints: the shards are COCO keypoint results;
        rotated/probiou: Datasets with a ``rotated`` column; boundary: boundary AP, as segm
        results), ``"yolo"`` bbox, keypoints, rotated and probiou, ``"lvis"`` bbox and segm;
        the others ``"bbox"``.
    **options
        Protocol options, as for :func:`ioukit.evaluate`.

    Returns
    -------
    EvaluationResult
        Equal to ``ioukit.evaluate(gt, <all shards concatenated in order>, ...)``: stats,
        per-class rows, params and arrays (COCO precision/recall/scores). The predictions
        never leave the workers: ``predictions`` is empty and the COCO ``outcome`` has
        ``pred_row`` -1 and no IoU (NaN), but its matched ground truths (rows of
        ``result.ground_truth``) and ground-truth records, so that ``result.resample``,
        ``result.slice``, :func:`ioukit.bootstrap` and :func:`ioukit.compare` give the
        numbers they give on ``ioukit.evaluate``'s result.

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
    _check_can_shard(runner, protocol, iou_type)
    if isinstance(shards, str | os.PathLike | Dataset | Mapping):
        raise TypeError("shards: expected a list of paths or Datasets, got a single one")
    shards = list(shards)
    names = [
        str(Path(s)) if isinstance(s, str | os.PathLike) else f"shards[{i}]"
        for i, s in enumerate(shards)
    ]
    gt_read, runner = _prepare(gt, runner, protocol, iou_type, options)
    client, owned = _client(client, workers)
    try:
        results = _run_shards(client, (gt_read, runner), shards, names, iou_type)
    finally:
        if owned is not None:
            for thing in owned:
                thing.close()
    return _merge(runner, gt_read, results, names, iou_type)


def _prepare(
    gt: object, runner: Any, protocol: str, iou_type: str, options: Mapping[str, Any]
) -> tuple[Any, Any]:
    """The ground truth the workers get (read as the protocol's ``input_format`` says) and the
    protocol object, rebuilt with what the ground truth brings (Open Images' image labels)."""
    gt_read, brought = _readers(runner)[0](protocol, runner, gt, iou_type)
    if any(key not in options for key in brought):
        runner = make_runner(protocol, iou_type, {**brought, **options})
    return gt_read, runner


def _merge(
    runner: Any,
    gt: Any,
    results: Sequence[tuple[np.ndarray, int, Any]],
    names: Sequence[str],
    iou_type: str,
) -> EvaluationResult:
    """Client side: check the shards are disjoint, merge and summarize their outcomes."""
    data = _dataset(gt)
    _check_disjoint(data, [r[0] for r in results], names)
    image_ids = np.sort(data.images.ids)
    sizes = [r[1] for r in results]
    result = runner.shard_summarize(
        gt,
        [unpack(r[2], image_ids) for r in results],
        iou_type=iou_type,
        pred_row_offsets=np.cumsum([0, *sizes])[:-1].tolist(),
        n_predictions=sum(sizes),
        names=list(names),
    )
    return EvaluationResult(result, data, empty_predictions(data))


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
        gt = take_rows(gt, gt_order)
        pred = take_rows(pred, np.argsort(pred.image_index, kind="stable"))
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


def _rank_rows(states: Sequence[_RankState], by_image_id: bool) -> tuple[np.ndarray, np.ndarray]:
    """(image row in the merged table of each rank's images, concatenated rank by rank;
    first row of each rank's images in that concatenation)."""
    sizes = [len(g.images) for g, _, _ in states]
    offsets = np.cumsum([0, *sizes])
    row = np.arange(int(offsets[-1]), dtype=np.int64)
    if by_image_id:
        ids = np.concatenate([np.zeros(0, np.int64), *(g.images.ids for g, _, _ in states)])
        order = np.argsort(ids.astype(np.int64), kind="stable")
        row[order] = np.arange(order.size)
    return row, offsets[:-1]


def _rank_predictions(
    gt: Dataset,
    pred: Dataset,
    states: Sequence[_RankState],
    rank: int,
    by_image_id: bool,
) -> tuple[Dataset, np.ndarray]:
    """This rank's predictions over the merged tables (with ``by_image_id`` in image order),
    and the row each has in every rank's predictions merged as one process orders them."""
    row, offsets = _rank_rows(states, by_image_id)
    image_row = row[int(offsets[rank]) + np.asarray(pred.image_index, dtype=np.int64)]
    counts = np.zeros(len(gt.images), dtype=np.int64)
    for r, (_, _, c) in enumerate(states):
        counts[row[int(offsets[r]) : int(offsets[r]) + len(c)]] = c
    if by_image_id:  # one process orders predictions by image (stably)
        order = np.argsort(image_row, kind="stable")
        image_row = image_row[order]
        start = np.cumsum(counts) - counts
        first = np.searchsorted(image_row, image_row)  # first of its image in this rank
        global_rows = start[image_row] + np.arange(image_row.size) - first
    else:  # rank by rank
        order = np.arange(len(pred))
        before = sum(int(np.sum(c)) for _, _, c in states[:rank])
        global_rows = before + order
    mine = dataclasses.replace(
        take_rows(pred, order),
        images=gt.images,
        categories=gt.categories,
        image_index=image_row,
    )
    return mine, global_rows.astype(np.int64)


_RankState = tuple[Dataset, bool, np.ndarray]
"""What a rank ships first: its ground truth, whether its targets gave image ids, and its
predictions per image (rows of its image table)."""


def _rank_state(gt: Dataset, pred: Dataset, by_image_id: bool) -> _RankState:
    counts = np.bincount(np.asarray(pred.image_index, dtype=np.int64), minlength=len(gt.images))
    return gt, bool(by_image_id), counts[: len(gt.images)]


def _merged_ground_truth(states: Sequence[_RankState]) -> tuple[Dataset, bool]:
    """Every rank's ground truth (rank order) as one process has it, and whether images are
    identified by their ids (empty ranks agree with either)."""
    by_id = _check_same_mode([s[1] for s in states], [len(s[0].images) for s in states])
    merged, _ = _renumbered([(g, empty_predictions(g)) for g, _, _ in states], by_image_id=by_id)
    return merged, by_id


def _rank_part(
    runner: Any,
    merged: Dataset,
    by_id: bool,
    states: Sequence[_RankState],
    rank: int,
    pred: Dataset,
    iou_type: str,
) -> Packed:
    """This rank's own images matched against the merged ground truth, packed; its prediction
    rows are those of every rank's predictions as one process orders them."""
    mine, rows = _rank_predictions(merged, pred, states, rank, by_id)
    part = with_pred_rows(runner.shard_match(merged, mine, iou_type=iou_type), rows)
    packed: Packed = pack(part, np.sort(merged.images.ids))
    return packed


def _merge_ranks(
    runner: Any,
    merged: Dataset,
    states: Sequence[_RankState],
    parts: Sequence[Packed],
    iou_type: str,
) -> EvaluationResult:
    """Every rank's packed outcome (rank order) into the result of one process."""
    image_ids = np.sort(merged.images.ids)
    result = runner.shard_summarize(
        merged,
        [unpack(p, image_ids) for p in parts],
        iou_type=iou_type,
        pred_row_offsets=[0] * len(parts),  # the rows are those of all ranks already
        n_predictions=int(sum(int(np.sum(s[2])) for s in states)),
        names=[f"rank {r}" for r in range(len(parts))],
    )
    return EvaluationResult(result, merged, empty_predictions(merged))


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

    For a protocol that can shard (:func:`sharded_pairs`) ONE ``all_gather_object`` ships
    each rank's ground truth and its predictions per image, every rank builds the merged
    ground truth and matches its own images (``protocol.shard_match``), and a second one
    ships the packed outcomes (about 30 bytes per evaluated COCO detection), merged and
    summarized on every rank as :func:`evaluate_sharded` does. Other protocols gather the
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
    runner = make_runner(protocol, iou_type, options)  # every rank fails alike, before any
    if not can_shard(runner) or getattr(runner, "input_format", _COCO_JSON) != _COCO_JSON:
        gt, pred = gather_datasets(gt, pred, by_image_id=by_image_id)
        return evaluate(gt, pred, protocol=protocol, iou_type=iou_type, **options)
    states: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(states, _rank_state(gt, pred, by_image_id))
    merged, by_id = _merged_ground_truth(states)
    parts: list[Any] = [None] * len(states)
    part = _rank_part(runner, merged, by_id, states, dist.get_rank(), pred, iou_type)
    dist.all_gather_object(parts, part)
    return _merge_ranks(runner, merged, states, parts, iou_type)
