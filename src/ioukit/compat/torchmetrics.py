"""torchmetrics' ``MeanAveragePrecision`` on ioukit's pipeline.

:class:`MeanAveragePrecision` is a :class:`torchmetrics.Metric` with torchmetrics'
constructor, states (lists of tensors, gathered under ``torch.distributed`` as torchmetrics
gathers them), ``update(preds, target)`` inputs and ``compute()`` keys. ``compute()`` turns
the states into two COCO datasets exactly as torchmetrics 1.9 does (images numbered in
arrival order, annotation ids from 1, area from ``area`` if positive, else from the box or
the mask, ``iscrowd`` from the targets) and evaluates them with
:mod:`ioukit.compat.pycocotools`, so every number is the one torchmetrics' default
``pycocotools`` backend gives, quirks included (float32 boxes, per-class loop, -1 where
there is nothing to measure).

Change ``from torchmetrics.detection import MeanAveragePrecision`` into
``from ioukit.compat.torchmetrics import MeanAveragePrecision``.

Examples
--------
>>> import torch
>>> from ioukit.compat.torchmetrics import MeanAveragePrecision
>>> preds = [dict(boxes=torch.tensor([[258.0, 41.0, 606.0, 285.0]]),
...               scores=torch.tensor([0.536]), labels=torch.tensor([0]))]
>>> target = [dict(boxes=torch.tensor([[214.0, 41.0, 562.0, 285.0]]),
...                labels=torch.tensor([0]))]
>>> metric = MeanAveragePrecision(iou_type="bbox")
>>> metric.update(preds, target)
>>> result = metric.compute()
>>> round(float(result["map"]), 4), round(float(result["map_50"]), 4)
(0.6, 1.0)
"""

from __future__ import annotations

import contextlib
import copy
import io
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

import ioukit
from ioukit.compat.pycocotools import mask as mask_utils
from ioukit.compat.pycocotools.coco import COCO
from ioukit.compat.pycocotools.cocoeval import COCOeval
from ioukit.errors import MissingDependencyError, ParameterError

try:
    import torch
    from torch import Tensor
    from torch import distributed as dist
    from torchmetrics import Metric
    from torchmetrics.utilities import rank_zero_warn
except ImportError as exc:  # pragma: no cover - torchmetrics is in the test extra
    raise MissingDependencyError(
        "ioukit.compat.torchmetrics needs torch and torchmetrics: pip install torchmetrics"
    ) from exc

__all__ = ["MeanAveragePrecision"]

_BOX_FORMATS = ("xyxy", "xywh", "cxcywh")
_IOU_TYPES = ("segm", "bbox")
_BACKENDS = ("pycocotools", "faster_coco_eval")
_ITEM_KEY = {"bbox": "boxes", "segm": "masks"}


def _iou_types(iou_type: Any) -> tuple[str, ...]:
    types = (iou_type,) if isinstance(iou_type, str) else tuple(iou_type)
    if not types or any(t not in _IOU_TYPES for t in types):
        raise ParameterError(
            f"iou_type: expected one of {_IOU_TYPES} or a tuple of them, got {iou_type!r}"
        )
    return types


def _to_xywh(boxes: Tensor, box_format: str) -> Tensor:
    """torchvision's ``box_convert(boxes, box_format, "xywh")``, same arithmetic and dtype."""
    if box_format == "xywh":
        return boxes.clone()
    if box_format == "cxcywh":  # torchvision goes through xyxy
        cx, cy, w, h = boxes.unbind(-1)
        boxes = torch.stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)
    x1, y1, x2, y2 = boxes.unbind(-1)
    return torch.stack((x1, y1, x2 - x1, y2 - y1), dim=-1)


def _validate_inputs(preds: Any, target: Any, iou_type: tuple[str, ...]) -> None:
    """torchmetrics' input checks, as ParameterError (a ValueError) naming the field."""
    names = [_ITEM_KEY[t] for t in iou_type]
    for arg, value in (("preds", preds), ("target", target)):
        if not isinstance(value, Sequence):
            raise ParameterError(f"{arg}: expected a sequence of dicts, got {type(value).__name__}")
    if len(preds) != len(target):
        raise ParameterError(
            f"preds, target: expected the same length, got {len(preds)} and {len(target)}"
        )
    for arg, items, keys in (
        ("preds", preds, [*names, "labels", "scores"]),
        ("target", target, [*names, "labels"]),
    ):
        for i, item in enumerate(items):
            for key in keys:
                if key not in item:
                    raise ParameterError(f"{arg}[{i}]: expected a {key!r} key, got {sorted(item)}")
                if not isinstance(item[key], Tensor):
                    raise ParameterError(
                        f"{arg}[{i}][{key!r}]: expected a torch.Tensor, "
                        f"got {type(item[key]).__name__}"
                    )
            n = item["labels"].size(0)
            for key in keys:
                if item[key].size(0) != n:
                    raise ParameterError(
                        f"{arg}[{i}][{key!r}]: expected {n} rows (one per label), "
                        f"got {item[key].size(0)}"
                    )


def _coco_format(
    labels: list[Tensor],
    all_labels: list[int],
    boxes: list[Tensor] | None,
    masks: list[tuple[Any, ...]] | None,
    iou_type: tuple[str, ...],
    average: str,
    scores: list[Tensor] | None = None,
    crowds: list[Tensor] | None = None,
    area: list[Tensor] | None = None,
) -> dict[str, Any]:
    """The COCO dict torchmetrics' ``CocoBackend._get_coco_format`` builds."""
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    ann_id = 1  # torchmetrics numbers annotations from 1
    both = len(iou_type) > 1
    # each state's tensors as Python lists, in one conversion (the values tolist() gives
    # image by image)
    all_labels_ = _per_image(labels)
    all_boxes = _per_image(boxes) if boxes is not None else None
    all_areas = _per_image(area) if area is not None else None
    all_crowds = _per_image(crowds) if crowds is not None else None
    all_scores = _per_image(scores) if scores is not None else None
    for image_id in range(len(labels)):
        image_boxes: list[Any] = []
        image_masks: tuple[Any, ...] = ()
        if all_boxes is not None:
            image_boxes = all_boxes[image_id]
        if masks is not None:
            image_masks = masks[image_id]
            if len(image_masks) == 0 and boxes is None:
                continue
        label_list = all_labels_[image_id]
        images.append({"id": image_id})
        if "segm" in iou_type and len(image_masks) > 0:
            images[-1]["height"], images[-1]["width"] = image_masks[0][0][0], image_masks[0][0][1]
        areas = all_areas[image_id] if all_areas is not None else None
        crowd = all_crowds[image_id] if all_crowds is not None else None
        score_list = all_scores[image_id] if all_scores is not None else None
        for k, label in enumerate(label_list):
            box: list[Any] = image_boxes[k] if boxes is not None else []
            rle: dict[str, Any] = {}
            if masks is not None and len(image_masks) > 0:
                rle = {"size": image_masks[k][0], "counts": image_masks[k][1]}
            if "bbox" in iou_type and len(box) != 4:
                raise ParameterError(
                    f"boxes: sample {image_id}, element {k}: expected 4 values, got {len(box)}"
                )
            if not isinstance(label, int):
                raise ParameterError(
                    f"labels: sample {image_id}, element {k}: expected an integer, "
                    f"got {type(label).__name__}"
                )
            box_area = mask_area = None
            if areas is not None and areas[k] > 0:
                stat = areas[k]
            else:
                stat = mask_utils.area(rle) if "segm" in iou_type else box[2] * box[3]
                if both:
                    box_area, mask_area = box[2] * box[3], mask_utils.area(rle)
            ann: dict[str, Any] = {
                "id": ann_id,
                "image_id": image_id,
                "area": stat,
                "category_id": label,
                "iscrowd": crowd[k] if crowd is not None else 0,
            }
            if box_area is not None:
                ann["area_bbox"] = box_area
                ann["area_segm"] = mask_area
            if boxes is not None:
                ann["bbox"] = box
            if masks is not None:
                ann["segmentation"] = rle
            if score_list is not None:
                score = score_list[k]
                if not isinstance(score, float):
                    raise ParameterError(
                        f"scores: sample {image_id}, element {k}: expected a float, "
                        f"got {type(score).__name__}"
                    )
                ann["score"] = score
            annotations.append(ann)
            ann_id += 1
    categories = (
        [{"id": i, "name": str(i)} for i in all_labels]
        if average != "micro"
        else [{"id": 0, "name": "0"}]
    )
    return {"images": images, "annotations": annotations, "categories": categories}


def _per_image(tensors: list[Tensor]) -> list[list[Any]]:
    """``[t.cpu().tolist() for t in tensors]``, converted in one call where the tensors
    share a dtype and trailing shape (the same Python values)."""
    if not tensors:
        return []
    first = tensors[0]
    if any(t.dtype != first.dtype or t.shape[1:] != first.shape[1:] for t in tensors):
        return [t.cpu().tolist() for t in tensors]
    flat = torch.cat(list(tensors)).cpu().tolist()
    out, at = [], 0
    for t in tensors:
        n = t.shape[0]
        out.append(flat[at : at + n])
        at += n
    return out


def _classes(detection_labels: list[Tensor], groundtruth_labels: list[Tensor]) -> list[int]:
    if detection_labels or groundtruth_labels:
        return list(torch.cat(detection_labels + groundtruth_labels).unique().cpu().tolist())  # type: ignore[no-untyped-call]
    return []


def _per_class(coco_eval: COCOeval, classes: list[int]) -> tuple[list[float], list[float]]:
    """``stats[0]`` and ``stats[8]`` of pycocotools' run with ``params.catIds = [k]`` for each
    class ``k``: the summary of the class's slice of ``coco_eval``'s arrays (a class is
    matched and accumulated on its own, so the slice holds that run's values)."""
    p = coco_eval.params
    position = {c: n for n, c in enumerate(p.catIds)}
    precision, recall = coco_eval.eval["precision"], coco_eval.eval["recall"]
    one = COCOeval(iouType=p.iouType)
    one.params = copy.copy(p)
    map_per_class, mar_per_class = [], []
    for class_id in classes:
        k = position[class_id]
        one.params.catIds = [class_id]
        one.eval = {"precision": precision[:, :, k : k + 1], "recall": recall[:, k : k + 1]}
        one.summarize()
        map_per_class.append(float(one.stats[0]))
        mar_per_class.append(float(one.stats[8]))
    return map_per_class, mar_per_class


def _stats_dict(stats: Sequence[float], prefix: str, max_dets: list[int]) -> dict[str, Tensor]:
    names = ["map", "map_50", "map_75", "map_small", "map_medium", "map_large"]
    names += [f"mar_{m}" for m in max_dets] + ["mar_small", "mar_medium", "mar_large"]
    return {
        f"{prefix}{n}": torch.tensor([float(s)], dtype=torch.float32)
        for n, s in zip(names, stats, strict=True)
    }


def _ious_to_tensors(ious: dict[Any, Any]) -> dict[Any, Any]:
    return {
        k: torch.tensor(v, dtype=torch.float32) if isinstance(v, np.ndarray) else v
        for k, v in ious.items()
    }


class MeanAveragePrecision(Metric):
    """COCO mAP / mAR of detections, torchmetrics' ``MeanAveragePrecision`` on ioukit.

    Parameters
    ----------
    box_format : {"xyxy", "xywh", "cxcywh"}
        Layout of the ``boxes`` tensors, shape (N, 4).
    iou_type : "bbox", "segm" or a tuple of both
        What is compared: ``boxes`` and/or ``masks`` (shape (N, H, W), bool or uint8). With
        both, every key is prefixed ``bbox_`` / ``segm_``.
    iou_thresholds, rec_thresholds : list of float, optional
        Default ``0.5:0.95:0.05`` and ``0:1:0.01``.
    max_detection_thresholds : list of 3 int, optional
        Default ``[1, 10, 100]`` (sorted); the keys ``mar_<m>`` follow them.
    class_metrics : bool
        Also ``map_per_class`` and ``mar_<last>_per_class`` (else those are ``-1``).
    extended_summary : bool
        Also ``ious``, ``precision`` (T, R, K, A, M), ``recall`` (T, K, A, M) and ``scores``.
    average : {"macro", "micro"}
        Micro pools every class into one before matching.
    backend : {"pycocotools", "faster_coco_eval"}
        Accepted for torchmetrics' signature and ignored: the numbers are pycocotools'.
    corrected : bool
        ioukit's own COCO numbers instead of torchmetrics' (keyword only; not a torchmetrics
        argument): ``map``, ``map_50``, ``map_75`` and the size APs read the last of
        ``max_detection_thresholds`` (pycocotools reads 100 for ``map``, so it is -1 when 100
        is not among them). Every other number is the same; see ``docs/dropin.md``.
    **kwargs
        :class:`torchmetrics.Metric`'s (``dist_sync_on_step``, ``process_group``, ...).

    Examples
    --------
    >>> import torch
    >>> m = MeanAveragePrecision(class_metrics=True)
    >>> m.update([dict(boxes=torch.tensor([[0.0, 0, 10, 10]]), scores=torch.tensor([0.9]),
    ...                labels=torch.tensor([3]))],
    ...          [dict(boxes=torch.tensor([[0.0, 0, 10, 10]]), labels=torch.tensor([3]))])
    >>> r = m.compute()
    >>> float(r["map"]), float(r["map_per_class"]), r["classes"].tolist()
    (1.0, 1.0, 3)
    """

    is_differentiable: bool = False
    higher_is_better: bool | None = True
    full_state_update: bool = True
    plot_lower_bound: float = 0.0
    plot_upper_bound: float = 1.0
    warn_on_many_detections: bool = True

    __jit_unused_properties__: ClassVar[list[str]] = [
        "is_differentiable",
        "higher_is_better",
        "plot_lower_bound",
        "plot_upper_bound",
        "plot_legend_name",
        "metric_state",
        "_update_called",
    ]

    detection_box: list[Tensor]
    detection_mask: list[tuple[Any, ...]]
    detection_scores: list[Tensor]
    detection_labels: list[Tensor]
    groundtruth_box: list[Tensor]
    groundtruth_mask: list[tuple[Any, ...]]
    groundtruth_labels: list[Tensor]
    groundtruth_crowds: list[Tensor]
    groundtruth_area: list[Tensor]

    def __init__(
        self,
        box_format: str = "xyxy",
        iou_type: str | tuple[str, ...] = "bbox",
        iou_thresholds: list[float] | None = None,
        rec_thresholds: list[float] | None = None,
        max_detection_thresholds: list[int] | None = None,
        class_metrics: bool = False,
        extended_summary: bool = False,
        average: str = "macro",
        backend: str = "pycocotools",
        *,
        corrected: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not isinstance(corrected, bool):
            raise ParameterError(f"corrected: expected True or False, got {corrected!r}")
        self.corrected = corrected
        if box_format not in _BOX_FORMATS:
            raise ParameterError(f"box_format: expected one of {_BOX_FORMATS}, got {box_format!r}")
        self.box_format = box_format
        self.iou_type = _iou_types(iou_type)
        for name, value in (("iou_thresholds", iou_thresholds), ("rec_thresholds", rec_thresholds)):
            if value is not None and not isinstance(value, list):
                raise ParameterError(f"{name}: expected None or a list of floats, got {value!r}")
        # torchmetrics' defaults: float32 linspace read back as Python floats
        self.iou_thresholds = iou_thresholds or torch.linspace(0.5, 0.95, 10).tolist()
        self.rec_thresholds = rec_thresholds or torch.linspace(0.0, 1.00, 101).tolist()
        if max_detection_thresholds is not None and (
            not isinstance(max_detection_thresholds, list) or len(max_detection_thresholds) != 3
        ):
            raise ParameterError(
                "max_detection_thresholds: expected None or a list of 3 ints, "
                f"got {max_detection_thresholds!r}"
            )
        max_dets, _ = torch.sort(
            torch.tensor(max_detection_thresholds or [1, 10, 100], dtype=torch.int)
        )
        self.max_detection_thresholds: list[int] = max_dets.tolist()
        for name, flag in (
            ("class_metrics", class_metrics),
            ("extended_summary", extended_summary),
        ):
            if not isinstance(flag, bool):
                raise ParameterError(f"{name}: expected a bool, got {flag!r}")
        self.class_metrics = class_metrics
        self.extended_summary = extended_summary
        if average not in ("macro", "micro"):
            raise ParameterError(f"average: expected 'macro' or 'micro', got {average!r}")
        self.average = average
        if backend not in _BACKENDS:
            raise ParameterError(f"backend: expected one of {_BACKENDS}, got {backend!r}")
        self.backend = backend  # accepted, ignored: the numbers are pycocotools'

        for name in (
            "detection_box",
            "detection_mask",
            "detection_scores",
            "detection_labels",
            "groundtruth_box",
            "groundtruth_mask",
            "groundtruth_labels",
            "groundtruth_crowds",
            "groundtruth_area",
        ):
            self.add_state(name, default=[], dist_reduce_fx=None)

    def _item_values(self, item: dict[str, Any], warn: bool) -> tuple[Any, Any]:
        boxes: Tensor | None = None
        masks: tuple[Any, ...] | None = None
        if "bbox" in self.iou_type:
            boxes = item["boxes"]
            if boxes.numel() == 0 and boxes.ndim == 1:  # torchmetrics' DDP fix for empties
                boxes = boxes.unsqueeze(0)
            if boxes.numel() > 0:
                boxes = _to_xywh(boxes, self.box_format)
        if "segm" in self.iou_type:
            rles = []
            for m in item["masks"].cpu().numpy():
                rle = mask_utils.encode(np.asfortranarray(m))
                assert isinstance(rle, dict)
                rles.append((tuple(rle["size"]), rle["counts"]))
            masks = tuple(rles)
        limit = self.max_detection_thresholds[-1]
        if warn and any(v is not None and len(v) > limit for v in (boxes, masks)):
            rank_zero_warn(
                f"Encountered more than {limit} detections in a single image. This means that"
                " certain detections with the lowest scores will be ignored, that may have an"
                " undesirable impact on performance. Please consider adjusting the"
                " `max_detection_threshold` to suit your use case. To disable this warning, set"
                " attribute class `warn_on_many_detections=False`, after initializing the metric.",
                UserWarning,
            )
        return boxes, masks

    def update(self, preds: list[dict[str, Tensor]], target: list[dict[str, Tensor]]) -> None:
        """Add a batch: one dict per image, torchmetrics' keys.

        Parameters
        ----------
        preds : list of dict
            ``boxes`` (N, 4) float and/or ``masks`` (N, H, W); ``scores`` (N,) float;
            ``labels`` (N,) int.
        target : list of dict
            ``boxes`` and/or ``masks``, ``labels``; optional ``iscrowd`` (N,) and ``area`` (N,)
            (an area <= 0 is replaced by the box's or mask's).
        """
        _validate_inputs(preds, target, self.iou_type)
        for item in preds:
            boxes, masks = self._item_values(item, warn=self.warn_on_many_detections)
            if boxes is not None:
                self.detection_box.append(boxes)
            if masks is not None:
                self.detection_mask.append(masks)
            self.detection_labels.append(item["labels"])
            self.detection_scores.append(item["scores"])
        for item in target:
            boxes, masks = self._item_values(item, warn=False)
            if boxes is not None:
                self.groundtruth_box.append(boxes)
            if masks is not None:
                self.groundtruth_mask.append(masks)
            self.groundtruth_labels.append(item["labels"])
            self.groundtruth_crowds.append(item.get("iscrowd", torch.zeros_like(item["labels"])))
            self.groundtruth_area.append(item.get("area", torch.zeros_like(item["labels"])))

    def _datasets(self, average: str) -> tuple[COCO, COCO]:
        gt_labels, dt_labels = self.groundtruth_labels, self.detection_labels
        if average == "micro":
            gt_labels = [torch.zeros_like(x) for x in gt_labels]
            dt_labels = [torch.zeros_like(x) for x in dt_labels]
        all_labels = _classes(dt_labels, gt_labels)
        coco_gt, coco_dt = COCO(), COCO()
        coco_gt.dataset = _coco_format(
            gt_labels,
            all_labels,
            self.groundtruth_box or None,
            self.groundtruth_mask or None,
            self.iou_type,
            average,
            crowds=self.groundtruth_crowds,
            area=self.groundtruth_area,
        )
        coco_dt.dataset = _coco_format(
            dt_labels,
            all_labels,
            self.detection_box or None,
            self.detection_mask or None,
            self.iou_type,
            average,
            scores=self.detection_scores,
        )
        with contextlib.redirect_stdout(io.StringIO()):
            coco_gt.createIndex()
            coco_dt.createIndex()
        return coco_dt, coco_gt

    def _evaluator(self, coco_gt: COCO, coco_dt: COCO, iou_type: str) -> COCOeval:
        coco_eval = COCOeval(coco_gt, coco_dt, iouType=iou_type)
        coco_eval.params.iouThrs = np.array(self.iou_thresholds, dtype=np.float64)
        coco_eval.params.recThrs = np.array(self.rec_thresholds, dtype=np.float64)
        coco_eval.params.maxDets = self.max_detection_thresholds
        return coco_eval

    def compute(self) -> dict[str, Any]:
        """Evaluate every image seen so far (every rank's, under torch.distributed).

        Returns
        -------
        dict
            ``map, map_50, map_75, map_small, map_medium, map_large, mar_<m1>, mar_<m2>,
            mar_<m3>, mar_small, mar_medium, mar_large`` (float32 scalars, -1 where there is
            nothing to measure), ``map_per_class`` and ``mar_<m3>_per_class`` (float32, one per
            class, or -1 without ``class_metrics``), ``classes`` (int32), and with
            ``extended_summary`` ``ious`` (dict by (image, class)), ``precision``, ``recall``,
            ``scores`` (float64).
        """
        max_dets = self.max_detection_thresholds
        coco_dt, coco_gt = self._datasets(self.average)
        classes = _classes(self.detection_labels, self.groundtruth_labels)
        result: dict[str, Any] = {}
        with contextlib.redirect_stdout(io.StringIO()):
            for i_type in self.iou_type:
                prefix = "" if len(self.iou_type) == 1 else f"{i_type}_"
                if len(self.iou_type) > 1:
                    # torchmetrics swaps the detections' area per iou type (not the targets')
                    for ann in coco_dt.dataset["annotations"]:
                        ann["area"] = ann[f"area_{i_type}"]
                if len(coco_dt.imgs) == 0 or len(coco_gt.imgs) == 0:
                    result.update(_stats_dict(12 * [-1.0], prefix, max_dets))
                    continue
                coco_eval = self._evaluator(coco_gt, coco_dt, i_type)
                coco_eval.evaluate()
                coco_eval.accumulate()
                coco_eval.summarize()
                native = self._native(coco_gt, coco_dt, i_type) if self.corrected else None
                stats = coco_eval.stats if native is None else list(native.stats.values())
                result.update(_stats_dict(stats, prefix, max_dets))
                if self.extended_summary:
                    result[f"{prefix}ious"] = _ious_to_tensors(coco_eval.ious)
                    result[f"{prefix}precision"] = torch.tensor(coco_eval.eval["precision"])
                    result[f"{prefix}recall"] = torch.tensor(coco_eval.eval["recall"])
                    result[f"{prefix}scores"] = torch.tensor(coco_eval.eval["scores"])
                if self.class_metrics:
                    # as torchmetrics: fresh macro datasets, kept for the next iou type too;
                    # its run per class (params.catIds = [k]) has the class's slice of one
                    # macro run's arrays, so each class is summarized from that slice
                    same = len(self.iou_type) == 1 and self.average != "micro"
                    macro_eval = coco_eval if same else None  # the run on equal datasets
                    coco_dt, coco_gt = self._datasets("macro")
                    if macro_eval is None:
                        macro_eval = self._evaluator(coco_gt, coco_dt, i_type)
                        macro_eval.evaluate()
                        macro_eval.accumulate()
                    map_per_class, mar_per_class = _per_class(macro_eval, classes)
                    if self.corrected:
                        rows = {
                            r["category_id"]: r
                            for r in self._native(coco_gt, coco_dt, i_type).per_class
                        }
                        last = f"AR{max_dets[-1]}"
                        map_per_class = [float(rows[c]["AP"]) for c in classes]
                        mar_per_class = [float(rows[c][last]) for c in classes]
                    map_values = torch.tensor(map_per_class, dtype=torch.float32)
                    mar_values = torch.tensor(mar_per_class, dtype=torch.float32)
                else:
                    map_values = torch.tensor([-1], dtype=torch.float32)
                    mar_values = torch.tensor([-1], dtype=torch.float32)
                result[f"{prefix}map_per_class"] = map_values
                result[f"{prefix}mar_{max_dets[-1]}_per_class"] = mar_values
        result["classes"] = torch.tensor(classes, dtype=torch.int32)
        return result

    def _native(self, coco_gt: COCO, coco_dt: COCO, iou_type: str) -> Any:
        # ioukit's COCO protocol (no pycocotools quirks) on the same ground truth and results
        return ioukit.evaluate(
            coco_gt.dataset,
            coco_dt.dataset["annotations"],
            iou_type=iou_type,
            iou_thresholds=list(self.iou_thresholds),
            recall_thresholds=list(self.rec_thresholds),
            max_dets=list(self.max_detection_thresholds),
        )

    def _apply(self, fn: Callable[..., Any], exclude_state: Sequence[str] = ()) -> Any:
        """Move or cast the tensor states, leaving the masks' RLE tuples alone."""
        return super()._apply(
            fn, exclude_state=(*exclude_state, "detection_mask", "groundtruth_mask")
        )

    def _sync_dist(
        self, dist_sync_fn: Callable[..., Any] | None = None, process_group: Any | None = None
    ) -> None:
        """Gather the states over ranks; the RLE tuples through ``all_gather_object``."""
        super()._sync_dist(dist_sync_fn=dist_sync_fn, process_group=process_group)  # type: ignore[arg-type]
        if "segm" in self.iou_type:
            self.detection_mask = self._gather_tuple_list(self.detection_mask, process_group)
            self.groundtruth_mask = self._gather_tuple_list(self.groundtruth_mask, process_group)

    @staticmethod
    def _gather_tuple_list(items: list[Any], process_group: Any | None = None) -> list[Any]:
        world_size = dist.get_world_size(group=process_group)
        dist.barrier(group=process_group)
        gathered: list[Any] = [None] * world_size
        dist.all_gather_object(gathered, items, group=process_group)
        return [gathered[rank][i] for i in range(len(gathered[0])) for rank in range(world_size)]
