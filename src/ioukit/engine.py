"""One-shot :func:`evaluate` and streaming :class:`Evaluator`: data in, EvaluationResult out.

Both build the canonical :class:`~ioukit.dataset.Dataset` pair and hand it to one protocol
function (``"coco"`` here; ``"voc07"``, ``"voc10"`` and ``"yolo"`` in
:mod:`ioukit.evaluation.protocols.voc` / :mod:`ioukit.evaluation.protocols.yolo`, imported on first
use).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ioukit._evaluate_inputs import (
    ground_truth_dataset,
    make_runner,
    predictions_dataset,
)
from ioukit.analysis.result import EvaluationResult
from ioukit.dataset import Dataset
from ioukit.evaluation.registry import (
    protocol_names,
    protocol_traits,
    resolve_iou_type,
)

__all__ = ["PROTOCOLS", "evaluate", "run_lvis"]

PROTOCOLS = protocol_names()
"""The protocol names :func:`evaluate` takes (the registry's; imports no protocol module)."""


def evaluate(
    gt: Dataset | Mapping[str, Any] | str | os.PathLike[str],
    predictions: Dataset | Sequence[Mapping[str, Any]] | str | os.PathLike[str],
    /,
    *,
    protocol: str = "coco",
    iou_type: str = "bbox",
    **options: Any,
) -> EvaluationResult:
    """Evaluate detections against ground truth under one protocol.

    Parameters
    ----------
    gt : Dataset, dict or path
        Ground truth: a :class:`~ioukit.dataset.Dataset`, a COCO dict or a COCO JSON path.
    predictions : Dataset, list of dict or path
        Detections: a Dataset sharing ``gt``'s image table, a list of COCO result dicts
        (``image_id``, ``category_id``, ``bbox`` xywh, ``score``) or a path to such a file.
    protocol : str
        A name of :data:`PROTOCOLS` (``"coco"``, ``"voc07"``, ``"voc10"``, ``"yolo"``,
        ``"lvis"``, ``"dota"``...). ``"lvis"``: ``gt`` is an LVIS file, dict or
        :class:`~ioukit.io.lvis.LVISGroundTruth`; see
        :func:`ioukit.evaluation.protocols.lvis.evaluate_lvis`
        (options ``fixed_ap``, ``max_dets``).
    iou_type : {"bbox", "segm"}
        ``"segm"`` (COCO protocol): mask IoU of the ``segmentation`` fields (GT polygons or
        RLE, results RLE or polygons), as pycocotools' ``COCOeval(iouType="segm")``.
    **options
        Protocol options. COCO: ``iou_thresholds``, ``recall_thresholds``, ``max_dets``,
        ``area_ranges`` (name -> (low, high)), ``use_cats``, ``compat`` (None or
        ``"pycocotools"``); see :func:`ioukit.evaluation.protocols.coco.evaluate_coco`. VOC:
        ``iou_threshold``, ``pixel_inclusive``.

    Returns
    -------
    EvaluationResult
        ``stats`` (COCO: the 12 keys AP ... ARl), ``per_class``, ``precision`` [T,R,K,A,M],
        ``recall`` [T,K,A,M], ``scores``, ``summary()``, ``to_dict()``.

    Examples
    --------
    >>> gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "cat"}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
    ...                        "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 0}]}
    >>> dets = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 9], "score": 0.9}]
    >>> r = evaluate(gt, dets)
    >>> round(r.stats["AP"], 3), round(r.stats["AP50"], 3)
    (0.9, 1.0)
    >>> rle = {"size": [4, 4], "counts": "448"}  # column 1 of a 4 x 4 image
    >>> gt = {"images": [{"id": 1, "height": 4, "width": 4}], "categories": [{"id": 1}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "iscrowd": 0,
    ...                        "bbox": [1, 0, 1, 4], "area": 4, "segmentation": rle}]}
    >>> dets = [{"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9}]
    >>> round(evaluate(gt, dets, iou_type="segm").stats["AP"], 3)
    1.0
    """
    own = protocol_traits(protocol).evaluate_inputs  # LVIS: its files carry federated labels
    if own is not None:
        return EvaluationResult(*own(gt, predictions, iou_type=iou_type, **options))
    iou_type = resolve_iou_type(protocol, iou_type)
    runner = make_runner(protocol, iou_type, options)
    strict = protocol_traits(protocol).strict_compat  # iscrowd on every annotation
    own_reader = getattr(runner, "read_ground_truth", None)  # a protocol with its own columns
    if own_reader is not None and isinstance(gt, str | os.PathLike | Mapping):
        gt_ds = own_reader(gt)
    else:
        gt_ds = ground_truth_dataset(
            gt,
            require_iscrowd=strict is not None and options.get("compat") == strict,
            iou_type=iou_type,
        )
    pred_ds = predictions_dataset(predictions, gt_ds, iou_type=iou_type)
    side_data = getattr(runner, "with_ground_truth_source", None)  # CrowdPose's crowd index
    if side_data is not None and isinstance(gt, str | os.PathLike | Mapping):
        runner = side_data(gt)
    return EvaluationResult(runner.evaluate(gt_ds, pred_ds, iou_type=iou_type), gt_ds, pred_ds)


def run_lvis(
    gt: Any,
    predictions: Any,
    /,
    *,
    iou_type: str = "bbox",
    **options: Any,
) -> EvaluationResult:
    """``ioukit.evaluate(gt, predictions, protocol="lvis")``: read what needs reading, evaluate.

    Parameters
    ----------
    gt : LVISGroundTruth, dict or path
        An LVIS ground truth (file, parsed dict, or from ``read_lvis_ground_truth``).
    predictions : Dataset, list of dict or path
        LVIS (COCO-format) results: a file, the list, or a Dataset on ``gt``'s images.
    iou_type : {"bbox", "segm"}
    **options
        ``fixed_ap``, ``max_dets``, ``iou_thresholds`` (see :func:`evaluate_lvis`).

    Returns
    -------
    EvaluationResult
        Its ``summary()`` is lvis-api's block.

    Examples
    --------
    >>> gt = {"images": [{"id": 1, "neg_category_ids": [], "not_exhaustive_category_ids": []}],
    ...       "categories": [{"id": 1, "name": "cat", "frequency": "c"}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
    ...                        "bbox": [0, 0, 10, 10], "area": 100.0}]}
    >>> dets = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 9], "score": 0.9}]
    >>> r = run_lvis(gt, dets)
    >>> round(r.stats["APc"], 3), r.per_class[0]["frequency"]
    (0.9, 'c')
    """

    own = protocol_traits("lvis").evaluate_inputs
    assert own is not None  # the LVIS protocol reads its own inputs
    return EvaluationResult(*own(gt, predictions, iou_type=iou_type, **options))
