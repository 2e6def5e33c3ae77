"""Evaluation past one process: :func:`evaluate_sharded` on Dask, torch.distributed sync.

:func:`evaluate_sharded` reads the ground truth once, broadcasts it to the workers of a
``dask.distributed`` cluster, lets every worker read and match its own prediction shards, and
merges the small partial results on the client. The result equals :func:`ioukit.evaluate` on
all predictions (the shards concatenated in the given order) bit for bit.

What a worker sends back depends on the protocol:

==============================  ===========================================================
protocol                        partial result
==============================  ===========================================================
``openimages``,                 :class:`~ioukit.metrics.openimages.OpenImagesPartial`: the
``openimages_challenge``        matched records (21 bytes per counted detection); matching
                                runs on the workers
``coco``, ``voc07``, ``voc10``, the shard's validated predictions in columnar form (about 60
``yolo``                        bytes per detection, plus masks for segm); reading and
                                validation run on the workers, matching on the client, until
                                the pipeline's match outcome is the partial result (#10)
==============================  ===========================================================

:func:`gather_datasets` is what :meth:`ioukit.Evaluator.compute` calls under an initialised
``torch.distributed`` process group: ONE ``all_gather_object`` of each rank's columnar
datasets, after which every rank evaluates the same data (images numbered rank by rank, in
arrival order, as torchmetrics does).

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

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError, MissingDependencyError
from ioukit.metrics.protocol import ProtocolResult
from ioukit.metrics.result import EvaluationResult

__all__ = ["concat_predictions", "evaluate_sharded", "gather_datasets", "shard_images"]

_OPENIMAGES = ("openimages", "openimages_challenge")


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


_OPTIONAL = ("segmentation", "keypoints", "rotated", "group_of", "box_wh")


def _concat(
    parts: Sequence[Dataset],
    images: ImageTable,
    categories: CategoryTable,
    image_offsets: Sequence[int],
) -> Dataset:
    """One Dataset from ``parts`` (every column, optional ones too), image rows shifted."""
    columns: dict[str, Any] = {
        "boxes": np.concatenate([p.boxes for p in parts]),
        "image_index": np.concatenate(
            [p.image_index + o for p, o in zip(parts, image_offsets, strict=True)]
        ),
        "scores": (
            np.concatenate([p.scores for p in parts if p.scores is not None])
            if parts[0].is_prediction
            else None
        ),
    }
    for name in ("category_id", "area", "crowd", "ignore", "difficult", "annotation_id"):
        columns[name] = np.concatenate([getattr(p, name) for p in parts])
    if len(np.unique(columns["annotation_id"])) != len(columns["annotation_id"]):
        columns["annotation_id"] = np.arange(1, len(columns["boxes"]) + 1)  # ids per part
    for name in _OPTIONAL:
        values = [getattr(p, name) for p in parts]
        if all(v is None for v in values):
            columns[name] = None
        elif any(v is None for v in values):
            raise DataFormatError(f"parts: expected the column {name!r} in every part or in none")
        elif name == "segmentation":
            columns[name] = tuple(x for v in values for x in v)
        else:
            columns[name] = np.concatenate(values)
    return Dataset(images=images, categories=categories, **columns)


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
    from ioukit.io.coco import read_coco_results

    return read_coco_results(shard, gt, iou_type=iou_type)


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
    return images, pred


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


def _client(client: Any) -> tuple[Any, Any]:
    """The client to use and, when we made a local cluster, the objects to close."""
    if client is not None:
        return client, None
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise MissingDependencyError(
            'evaluate_sharded needs dask.distributed: pip install "ioukit[dask]"'
        ) from None
    cluster = LocalCluster(  # type: ignore[no-untyped-call,unused-ignore]
        n_workers=os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    made = Client(cluster)  # type: ignore[no-untyped-call,unused-ignore]
    return made, (made, cluster)


def evaluate_sharded(
    gt: Any,
    shards: Sequence[Any],
    /,
    *,
    client: Any = None,
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
        all be in one shard; shards may be empty.
    client : dask.distributed.Client, optional
        Default: a local cluster with one single-threaded worker process per core, closed
        afterwards.
    protocol : str
        Any protocol of :func:`ioukit.evaluate`.
    iou_type : {"bbox", "segm"}
    **options
        Protocol options, as for :func:`ioukit.evaluate`.

    Returns
    -------
    EvaluationResult
        Equal to ``ioukit.evaluate(gt, <all shards concatenated in order>, ...)``. For the Open
        Images protocols ``predictions`` is empty (the predictions never leave the workers).

    Raises
    ------
    DataFormatError
        A shard names an image or class the ground truth lacks (the shard's file is named), or
        two shards hold predictions of one image (both are named).
    MissingDependencyError
        ``client`` is None and dask.distributed is not installed.
    """
    from ioukit.evaluation.protocols import make_protocol

    if iou_type not in ("bbox", "segm"):
        raise ValueError(f"iou_type: expected 'bbox' or 'segm', got {iou_type!r}")
    make_protocol(protocol, iou_type=iou_type, **options)  # every check before any work
    if isinstance(shards, str | os.PathLike | Dataset | Mapping):
        raise TypeError("shards: expected a list of paths or Datasets, got a single one")
    shards = list(shards)
    names = [
        str(Path(s)) if isinstance(s, str | os.PathLike) else f"shards[{i}]"
        for i, s in enumerate(shards)
    ]
    gt_ds, options = _ground_truth(gt, protocol, iou_type, dict(options))
    client, owned = _client(client)
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
    )


# ------------------------------------------------------------------------------ torch


def _process_group() -> Any:
    """``torch.distributed`` when a process group of more than one rank is initialised."""
    dist = sys.modules.get("torch.distributed")  # never import torch for a user without it
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist if dist.get_world_size() > 1 else None


def _renumbered(parts: Sequence[tuple[Dataset, Dataset]]) -> tuple[Dataset, Dataset]:
    """Ground truth and predictions of every rank as one pair, images numbered rank by rank."""
    offsets = np.cumsum([0] + [len(g.images) for g, _ in parts])
    n = int(offsets[-1])
    has_size = any(np.isfinite(g.images.widths).any() for g, _ in parts)
    widths = np.concatenate([g.images.widths for g, _ in parts])
    heights = np.concatenate([g.images.heights for g, _ in parts])
    images = ImageTable.from_lists(
        list(range(n)),
        [str(i) for i in range(n)],
        widths.tolist() if has_size else None,
        heights.tolist() if has_size else None,
    )
    labels = np.union1d(
        np.concatenate([g.categories.ids for g, _ in parts]),
        np.concatenate([p.categories.ids for _, p in parts]),
    )
    categories = CategoryTable.from_lists(labels.tolist(), [str(c) for c in labels.tolist()])

    offsets_list = [int(o) for o in offsets[:-1]]
    gt = _concat([g for g, _ in parts], images, categories, offsets_list)
    pred = _concat([p for _, p in parts], images, categories, offsets_list)
    return gt, pred


def gather_datasets(gt: Dataset, pred: Dataset, /) -> tuple[Dataset, Dataset]:
    """Every rank's ground truth and predictions, on every rank (torch.distributed).

    Without an initialised process group of two or more ranks, returns the pair unchanged.
    Otherwise one ``all_gather_object`` ships each rank's columnar datasets (a few arrays per
    rank, not one tensor per image) and the images are renumbered rank by rank.

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
    dist.all_gather_object(gathered, (gt, pred))
    return _renumbered(gathered)
