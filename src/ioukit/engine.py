"""One-shot :func:`evaluate` and streaming :class:`Evaluator`: data in, EvaluationResult out.

Both build the canonical :class:`~ioukit.dataset.Dataset` pair and hand it to one protocol
function (``"coco"`` here; ``"voc07"``, ``"voc10"`` and ``"yolo"`` in
:mod:`ioukit.metrics.voc` / :mod:`ioukit.metrics.yolo`, imported on first use).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError
from ioukit.metrics.protocol import ProtocolResult
from ioukit.metrics.result import EvaluationResult

__all__ = ["PROTOCOLS", "Evaluator", "evaluate"]

PROTOCOLS = ("coco", "voc07", "voc10", "yolo")


def _ground_truth(gt: object, *, require_iscrowd: bool, segm: bool = False) -> Dataset:
    if isinstance(gt, Dataset):
        if gt.is_prediction:
            raise DataFormatError("gt: expected ground truth, got a dataset with scores")
        return gt
    if isinstance(gt, str | os.PathLike | Mapping):
        from ioukit.io.coco import read_coco_ground_truth

        return read_coco_ground_truth(gt, require_iscrowd=require_iscrowd, keep_segmentation=segm)
    raise TypeError(f"gt: expected a Dataset, a COCO dict or a path, got {type(gt).__name__}")


def _predictions(predictions: object, gt: Dataset, *, iou_type: str = "bbox") -> Dataset:
    if isinstance(predictions, Dataset):
        if not predictions.is_prediction:
            raise DataFormatError("predictions: expected a dataset with scores, got ground truth")
        return predictions
    if isinstance(predictions, str | os.PathLike | Sequence | Mapping):
        from ioukit.io.coco import read_coco_results

        return read_coco_results(predictions, gt, iou_type=iou_type)  # type: ignore[arg-type]
    raise TypeError(
        "predictions: expected a Dataset, a list of COCO result dicts or a path, "
        f"got {type(predictions).__name__}"
    )


def _run_protocol(
    gt: Dataset, pred: Dataset, protocol: str, iou_type: str, options: dict[str, Any]
) -> ProtocolResult:
    if protocol == "coco":
        from ioukit.metrics.coco import evaluate_coco

        return evaluate_coco(gt, pred, iou_type=iou_type, **options)
    if protocol in ("voc07", "voc10"):
        from ioukit.metrics.voc import evaluate_voc  # type: ignore[import-not-found,unused-ignore]

        interpolation = "11point" if protocol == "voc07" else "all"
        result: ProtocolResult = evaluate_voc(gt, pred, interpolation=interpolation, **options)
        return result
    if protocol == "yolo":
        from ioukit.metrics.yolo import evaluate_yolo  # type: ignore[import-not-found,unused-ignore]

        result = evaluate_yolo(gt, pred, **options)
        return result
    raise ValueError(f"protocol: expected one of {', '.join(PROTOCOLS)}, got {protocol!r}")


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
    protocol : {"coco", "voc07", "voc10", "yolo"}
    iou_type : {"bbox", "segm"}
        ``"segm"`` (COCO protocol): mask IoU of the ``segmentation`` fields (GT polygons or
        RLE, results RLE or polygons), as pycocotools' ``COCOeval(iouType="segm")``.
    **options
        Protocol options. COCO: ``iou_thresholds``, ``recall_thresholds``, ``max_dets``,
        ``area_ranges`` (name -> (low, high)), ``use_cats``, ``compat`` (None or
        ``"pycocotools"``); see :func:`ioukit.metrics.coco.evaluate_coco`. VOC:
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
    if iou_type not in ("bbox", "segm"):
        raise ValueError(f"iou_type: expected 'bbox' or 'segm', got {iou_type!r}")
    if iou_type == "segm" and protocol != "coco":
        raise ValueError(f"iou_type: 'segm' needs protocol='coco', got protocol={protocol!r}")
    compat = options.get("compat")
    segm = iou_type == "segm"
    gt_ds = _ground_truth(
        gt, require_iscrowd=protocol == "coco" and compat == "pycocotools", segm=segm
    )
    pred_ds = _predictions(predictions, gt_ds, iou_type=iou_type)
    return EvaluationResult(
        _run_protocol(gt_ds, pred_ds, protocol, iou_type, dict(options)), gt_ds, pred_ds
    )


def _to_numpy(value: object, name: str, dtype: type, width: int | None = None) -> np.ndarray:
    detach = getattr(value, "detach", None)
    if detach is not None:  # torch tensor: no torch import needed
        value = detach().cpu().numpy()
    try:
        array: np.ndarray = np.array(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise DataFormatError(f"{name}: expected numbers, got {type(value).__name__}") from exc
    if width is None:
        if array.ndim != 1:
            array = array.reshape(-1)
    else:
        if array.size == 0:
            array = array.reshape(0, width)
        if array.ndim != 2 or array.shape[1] != width:
            raise DataFormatError(f"{name}: expected shape (N, {width}), got {array.shape}")
    return array


class Evaluator:
    """Streaming evaluation: ``update`` per image or batch, ``merge`` workers, ``compute``.

    Inputs follow torchmetrics' ``MeanAveragePrecision``: ``update(predictions, targets)``
    takes two equally long lists of per-image dicts, predictions with ``boxes`` (N, 4),
    ``scores`` (N,), ``labels`` (N,), targets with ``boxes``, ``labels`` and optionally
    ``iscrowd`` and ``area`` (box area if missing). NumPy arrays, torch tensors or lists.
    Images are numbered in arrival order; classes are the labels seen (ids = labels).

    Parameters
    ----------
    protocol : {"coco", "voc07", "voc10", "yolo"}
    box_format : {"xyxy", "xywh", "cxcywh"}
        Format of the incoming boxes.
    **options
        Protocol options, as for :func:`evaluate`.

    Examples
    --------
    >>> ev = Evaluator()
    >>> ev.update([{"boxes": [[0, 0, 10, 9]], "scores": [0.9], "labels": [1]}],
    ...           [{"boxes": [[0, 0, 10, 10]], "labels": [1]}])
    >>> r = ev.compute()
    >>> round(r.stats["AP"], 3)
    0.9
    """

    def __init__(self, *, protocol: str = "coco", box_format: str = "xyxy", **options: Any):
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol: expected one of {', '.join(PROTOCOLS)}, got {protocol!r}")
        from ioukit._array import check_format

        self.protocol = protocol
        self.box_format = check_format(box_format, "box_format")
        self.options = dict(options)
        self._pred: list[tuple[np.ndarray, ...]] = []
        self._gt: list[tuple[np.ndarray, ...]] = []

    def __len__(self) -> int:
        """Number of images seen."""
        return len(self._gt)

    def reset(self) -> None:
        """Forget every image."""
        self._pred.clear()
        self._gt.clear()

    def _boxes(self, value: object, name: str) -> np.ndarray:
        boxes = _to_numpy(value, name, np.float64, 4)
        if self.box_format != "xyxy":
            from ioukit.boxes import box_convert

            boxes = np.asarray(box_convert(boxes, self.box_format, "xyxy"), dtype=np.float64)
        return boxes

    def update(
        self, predictions: Sequence[Mapping[str, Any]], targets: Sequence[Mapping[str, Any]]
    ) -> None:
        """Add images: ``predictions[i]`` and ``targets[i]`` describe the same image."""
        if isinstance(predictions, Mapping) or isinstance(targets, Mapping):
            raise TypeError("predictions, targets: expected lists of per-image dicts")
        if len(predictions) != len(targets):
            raise DataFormatError(
                f"predictions, targets: expected equal lengths, got {len(predictions)} and "
                f"{len(targets)}"
            )
        pred_rows, gt_rows = [], []
        for i, (p, t) in enumerate(zip(predictions, targets, strict=True)):
            for key, where, d in (
                ("boxes", "predictions", p),
                ("scores", "predictions", p),
                ("labels", "predictions", p),
                ("boxes", "targets", t),
                ("labels", "targets", t),
            ):
                if key not in d:
                    raise DataFormatError(f"{where}[{i}].{key}: missing")
            boxes = self._boxes(p["boxes"], f"predictions[{i}].boxes")
            scores = _to_numpy(p["scores"], f"predictions[{i}].scores", np.float64)
            labels = _to_numpy(p["labels"], f"predictions[{i}].labels", np.int64)
            n = len(boxes)
            if len(scores) != n or len(labels) != n:
                raise DataFormatError(
                    f"predictions[{i}]: expected {n} scores and labels for {n} boxes, got "
                    f"{len(scores)} and {len(labels)}"
                )
            gt_boxes = self._boxes(t["boxes"], f"targets[{i}].boxes")
            m = len(gt_boxes)
            gt_labels = _to_numpy(t["labels"], f"targets[{i}].labels", np.int64)
            crowd = (
                _to_numpy(t["iscrowd"], f"targets[{i}].iscrowd", np.int64) != 0
                if "iscrowd" in t
                else np.zeros(m, dtype=bool)
            )
            box_area = (gt_boxes[:, 2] - gt_boxes[:, 0]) * (gt_boxes[:, 3] - gt_boxes[:, 1])
            area = (
                _to_numpy(t["area"], f"targets[{i}].area", np.float64) if "area" in t else box_area
            )
            if len(gt_labels) != m or len(crowd) != m or len(area) != m:
                raise DataFormatError(
                    f"targets[{i}]: expected labels, iscrowd and area of length {m}"
                )
            pred_rows.append((boxes, scores, labels))
            gt_rows.append((gt_boxes, gt_labels, crowd, area))
        self._pred.extend(pred_rows)
        self._gt.extend(gt_rows)

    def merge(self, other: Evaluator) -> Evaluator:
        """Append ``other``'s images after this one's (data-parallel workers); returns self."""
        if not isinstance(other, Evaluator):
            raise TypeError(f"other: expected an Evaluator, got {type(other).__name__}")
        if other.protocol != self.protocol or other.options != self.options:
            raise ValueError("other: expected an Evaluator with the same protocol and options")
        self._pred.extend(other._pred)
        self._gt.extend(other._gt)
        return self

    def datasets(self) -> tuple[Dataset, Dataset]:
        """The ground truth and predictions seen so far, as canonical datasets."""
        n_images = len(self._gt)
        images = ImageTable.from_lists(list(range(n_images)), [str(i) for i in range(n_images)])

        def cat(parts: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
            return np.concatenate(parts) if parts else empty

        gt_boxes = cat([g[0] for g in self._gt], np.zeros((0, 4)))
        gt_labels = cat([g[1] for g in self._gt], np.zeros(0, np.int64))
        pred_labels = cat([p[2] for p in self._pred], np.zeros(0, np.int64))
        labels = np.union1d(gt_labels, pred_labels)
        categories = CategoryTable.from_lists(labels.tolist(), [str(c) for c in labels.tolist()])
        gt = Dataset.from_arrays(
            images,
            categories,
            boxes=gt_boxes,
            image_index=np.repeat(np.arange(n_images), [len(g[0]) for g in self._gt]),
            category_id=gt_labels,
            crowd=cat([g[2] for g in self._gt], np.zeros(0, bool)),
            area=cat([g[3] for g in self._gt], np.zeros(0)),
        )
        pred = Dataset.from_arrays(
            images,
            categories,
            boxes=cat([p[0] for p in self._pred], np.zeros((0, 4))),
            image_index=np.repeat(np.arange(n_images), [len(p[0]) for p in self._pred]),
            category_id=pred_labels,
            scores=cat([p[1] for p in self._pred], np.zeros(0)),
        )
        return gt, pred

    def compute(self) -> EvaluationResult:
        """Evaluate every image seen so far."""
        gt, pred = self.datasets()
        return evaluate(gt, pred, protocol=self.protocol, **self.options)
