"""torchmetrics' ``MeanAveragePrecision`` on ioukit's pipeline.

:class:`MeanAveragePrecision` is a :class:`torchmetrics.Metric` with torchmetrics'
constructor, states (lists of tensors, gathered under ``torch.distributed`` as torchmetrics
gathers them), ``update(preds, target)`` inputs and ``compute()`` keys. ``compute()``
concatenates each state once into the columns of the two COCO datasets torchmetrics 1.9
builds (images numbered in arrival order, annotation ids from 1, area from ``area`` if
positive, else from the box or the mask, ``iscrowd`` from the targets), without building
them, and evaluates those columns on :mod:`ioukit.compat.pycocotools`' compiled run: every
number is the one torchmetrics' default ``pycocotools`` backend gives, quirks included
(float32 boxes, -1 where there is nothing to measure); its per-class loop is read from the
slices of one run. Values the compiled run cannot take as pycocotools does (a box of
negative width, a float label...) go through torchmetrics' COCO dicts and pycocotools'
stages instead, with the same numbers (or errors).

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
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import ioukit
from ioukit.compat.iou_types import IOU_TYPES, IouTypeRecord
from ioukit.compat.pycocotools import mask as mask_utils
from ioukit.compat.pycocotools.coco import COCO
from ioukit.compat.pycocotools.cocoeval import COCOeval
from ioukit.errors import MissingDependencyError, ParameterError
from ioukit.evaluation.registry import similarity_input
from ioukit.masks import encode as encode_masks

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
# the iou types torchmetrics takes, and the input key of each (pycocotools' records)
_ITEM_KEY = {name: r.torchmetrics_key for name, r in IOU_TYPES.items() if r.torchmetrics_key}
_IOU_TYPES = tuple(_ITEM_KEY)
_BACKENDS = ("pycocotools", "faster_coco_eval")


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
    kinds: tuple[IouTypeRecord, ...],
    average: str,
    scores: list[Tensor] | None = None,
    crowds: list[Tensor] | None = None,
    area: list[Tensor] | None = None,
) -> dict[str, Any]:
    """The COCO dict torchmetrics' ``CocoBackend._get_coco_format`` builds."""
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    ann_id = 1  # torchmetrics numbers annotations from 1
    both = len(kinds) > 1
    masks_compared = any(k.segm for k in kinds)
    boxes_compared = not all(k.segm for k in kinds)
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
        if masks_compared and len(image_masks) > 0:
            images[-1]["height"], images[-1]["width"] = image_masks[0][0][0], image_masks[0][0][1]
        areas = all_areas[image_id] if all_areas is not None else None
        crowd = all_crowds[image_id] if all_crowds is not None else None
        score_list = all_scores[image_id] if all_scores is not None else None
        for k, label in enumerate(label_list):
            box: list[Any] = image_boxes[k] if boxes is not None else []
            rle: dict[str, Any] = {}
            if masks is not None and len(image_masks) > 0:
                rle = {"size": image_masks[k][0], "counts": image_masks[k][1]}
            if boxes_compared and len(box) != 4:
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
                stat = mask_utils.area(rle) if masks_compared else box[2] * box[3]
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


@dataclass(frozen=True, slots=True)
class _Annotations:
    """One side's annotations (targets or detections) as columns, in arrival order: the
    values torchmetrics' COCO dicts hold (``tolist()`` of each state tensor), without the
    dicts.

    ``image`` (N,) the image number (images are numbered in arrival order); ``label`` (N,);
    ``xywh`` (N, 4) float64 or None; ``rles`` N RLE dicts or None; ``mask_area`` (N,) or
    None; ``box_area`` (N,) or None; ``given_area`` (N,) float64 (targets: ``area``, used
    where > 0) or None; ``crowd`` (N,) bool; ``score`` (N,) float64 or None; ``images``
    the numbers of the images torchmetrics lists (with masks only, every image otherwise);
    ``sizes`` each listed image's ``height`` / ``width`` (segm).
    """

    image: np.ndarray
    label: np.ndarray
    xywh: np.ndarray | None
    rles: list[dict[str, Any]] | None
    mask_area: np.ndarray | None
    box_area: np.ndarray | None
    given_area: np.ndarray | None
    crowd: np.ndarray
    score: np.ndarray | None
    images: np.ndarray
    sizes: dict[int, dict[str, Any]]

    def area(self, use_mask: bool) -> np.ndarray:
        """The ``area`` torchmetrics writes: the given one where positive, else the mask's
        (``use_mask``) or the box's."""
        computed = self.mask_area if use_mask else self.box_area
        assert computed is not None
        if self.given_area is None:
            return computed
        return np.where(self.given_area > 0, self.given_area, computed)


def _flat(tensors: list[Tensor], n: int, width: int = 0) -> np.ndarray | None:
    """The tensors' values concatenated as float64 (shape (n,) or (n, width)), each converted
    exactly (a common dtype is converted once); None where a tensor's layout is not one row
    per annotation (the dict route then raises torchmetrics' errors)."""
    rows = [t for t in tensors if t.numel() > 0]
    if width and any(t.ndim != 2 or t.shape[1] != width for t in rows):
        return None
    if not width and any(t.ndim != 1 for t in rows):
        return None
    if sum(t.shape[0] for t in rows) != n:
        return None
    if not rows:
        return np.zeros((0, width) if width else 0, dtype=np.float64)
    if any(t.is_complex() for t in rows):
        return None
    if all(t.dtype == rows[0].dtype for t in rows):
        flat = torch.cat(rows).to(torch.float64)
    else:
        flat = torch.cat([t.to(torch.float64) for t in rows])
    return flat.cpu().numpy()


def _annotations(
    labels: list[Tensor],
    boxes: list[Tensor] | None,
    masks: list[tuple[Any, ...]] | None,
    *,
    scores: list[Tensor] | None = None,
    crowds: list[Tensor] | None = None,
    area: list[Tensor] | None = None,
) -> _Annotations | None:
    """The columns of one side's states, or None where some value is not what the compiled
    route takes as torchmetrics would (a float label, an integer score, a box of another
    width, a crowd flag or area per image of another length...): the dict route then gives
    torchmetrics' numbers or errors."""
    if any(t.ndim != 1 for t in labels):
        return None
    filled = [t for t in labels if t.numel()]
    if any(t.is_floating_point() or t.is_complex() for t in filled):
        return None
    if scores is not None and any(t.numel() and not t.is_floating_point() for t in scores):
        return None
    counts = np.array([t.shape[0] for t in labels], dtype=np.int64)
    n = int(counts.sum())
    image = np.repeat(np.arange(len(labels), dtype=np.int64), counts)
    label = (
        torch.cat(filled).to(torch.int64).cpu().numpy() if filled else np.zeros(0, dtype=np.int64)
    )
    xywh = box_area = None
    if boxes is not None:
        if len(boxes) != len(labels) or any(
            b.numel() == 0 and c for b, c in zip(boxes, counts.tolist(), strict=True)
        ):
            return None
        xywh = _flat(boxes, n, 4)
        if xywh is None:
            return None
        box_area = xywh[:, 2] * xywh[:, 3]
    rles = mask_area = None
    listed = np.arange(len(labels), dtype=np.int64)
    sizes: dict[int, dict[str, Any]] = {}
    if masks is not None:
        if len(masks) != len(labels):
            return None
        rles = [{"size": m[0], "counts": m[1]} for image_masks in masks for m in image_masks]
        if len(rles) != n:
            return None
        mask_area = np.asarray(mask_utils.area(rles), dtype=np.float64).reshape(n)
        sizes = {i: {"height": m[0][0][0], "width": m[0][0][1]} for i, m in enumerate(masks) if m}
        if boxes is None:  # torchmetrics lists only the images with a mask
            listed = np.array(sorted(sizes), dtype=np.int64)
    extra: list[np.ndarray | None] = []
    for values in (scores, crowds, area):
        if values is None:
            extra.append(None)
            continue
        if len(values) != len(labels) or any(
            v.numel() != c for v, c in zip(values, counts.tolist(), strict=True)
        ):
            return None
        extra.append(_flat(values, n))
    score, crowd, given = extra
    if (scores is not None and score is None) or (crowds is not None and crowd is None):
        return None
    if area is not None and given is None:
        return None
    return _Annotations(
        image=image,
        label=label,
        xywh=xywh,
        rles=rles,
        mask_area=mask_area,
        box_area=box_area,
        given_area=given,
        crowd=np.zeros(n, dtype=bool) if crowd is None else crowd != 0,
        score=score,
        images=listed,
        sizes=sizes,
    )


def _side(
    ann: _Annotations,
    img_ids: np.ndarray,
    cat_ids: np.ndarray,
    reads: str,
    *,
    micro: bool,
    use_mask_area: bool,
) -> tuple[dict[str, Any], tuple[np.ndarray, np.ndarray]]:
    """The columns pycocotools' ``_prepare`` would gather from torchmetrics' COCO dicts of
    ``ann`` for images ``img_ids`` and categories ``cat_ids``: image by image, category by
    category, arrival order within; annotation ids numbered from 1 in arrival order."""
    label = np.zeros_like(ann.label) if micro else ann.label
    img_pos = np.searchsorted(img_ids, ann.image)
    img_pos = np.minimum(img_pos, max(len(img_ids) - 1, 0))
    kept = np.flatnonzero(img_ids[img_pos] == ann.image) if len(img_ids) else img_pos[:0]
    cat_pos = np.searchsorted(cat_ids, label[kept])
    rows = kept[np.argsort(img_pos[kept] * len(cat_ids) + cat_pos, kind="stable")]
    area = ann.area(use_mask_area)
    cols: dict[str, Any] = {
        "annotation_id": rows + 1,
        "area": area[rows],
        "crowd": ann.crowd[rows],
    }
    if ann.score is not None:
        cols["scores"] = ann.score[rows]
    if reads == "segmentation":
        assert ann.rles is not None
        cols["segmentation"] = [ann.rles[r] for r in rows.tolist()]
    xywh = ann.xywh[rows] if ann.xywh is not None else np.zeros((len(rows), 4))
    cols["box_wh"] = xywh[:, 2:]
    cols["boxes"] = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
    return cols, (img_pos[rows], label[rows])


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


class _NotCompiled(Exception):  # noqa: N818 - a signal, not an error
    """The columns route cannot reproduce torchmetrics here: take the dict route."""


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

    @property
    def _kinds(self) -> tuple[IouTypeRecord, ...]:
        """The records of ``iou_type``, in its order."""
        return tuple(IOU_TYPES[t] for t in self.iou_type)

    @property
    def _compares_masks(self) -> bool:
        return any(k.segm for k in self._kinds)

    @property
    def _compares_boxes(self) -> bool:
        return not all(k.segm for k in self._kinds)

    def _batch_values(
        self, items: Sequence[dict[str, Tensor]], warn: bool
    ) -> tuple[list[Tensor] | None, list[tuple[Any, ...]] | None]:
        """Each item's boxes in xywh (torchvision's ``box_convert`` arithmetic, in the
        boxes' dtype; one conversion for the batch where the boxes share a dtype and device)
        and masks as RLE tuples, as torchmetrics' ``_get_safe_item_values`` gives them."""
        boxes: list[Tensor] | None = None
        masks: list[tuple[Any, ...]] | None = None
        if self._compares_boxes:
            # torchmetrics' DDP fix for empties: a 1-d empty tensor becomes (1, 0)
            boxes = [
                b.unsqueeze(0) if b.numel() == 0 and b.ndim == 1 else b
                for b in (item["boxes"] for item in items)
            ]
            full = [i for i, b in enumerate(boxes) if b.numel() > 0]
            first = boxes[full[0]] if full else None
            if first is not None and all(
                boxes[i].ndim == 2
                and boxes[i].shape[1] == 4
                and boxes[i].dtype == first.dtype
                and boxes[i].device == first.device
                for i in full
            ):
                converted = _to_xywh(torch.cat([boxes[i] for i in full]), self.box_format)
                parts = torch.split(converted, [boxes[i].shape[0] for i in full])
                for i, part in zip(full, parts, strict=True):
                    boxes[i] = part
            else:
                for i in full:
                    boxes[i] = _to_xywh(boxes[i], self.box_format)
        if self._compares_masks:
            masks = []
            for item in items:
                stack = item["masks"].cpu().numpy()
                rles: Any = (
                    encode_masks(stack)  # (N, H, W) at once, as mask_utils.encode each
                    if stack.ndim == 3 and len(stack)
                    else [mask_utils.encode(np.asfortranarray(m)) for m in stack]
                )
                masks.append(tuple((tuple(r["size"]), r["counts"]) for r in rles))
        limit = self.max_detection_thresholds[-1]
        if warn and any(
            len(v) > limit for values in (boxes, masks) if values is not None for v in values
        ):
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
        boxes, masks = self._batch_values(preds, warn=self.warn_on_many_detections)
        if boxes is not None:
            self.detection_box.extend(boxes)
        if masks is not None:
            self.detection_mask.extend(masks)
        self.detection_labels.extend(item["labels"] for item in preds)
        self.detection_scores.extend(item["scores"] for item in preds)
        boxes, masks = self._batch_values(target, warn=False)
        if boxes is not None:
            self.groundtruth_box.extend(boxes)
        if masks is not None:
            self.groundtruth_mask.extend(masks)
        for item in target:
            labels = item["labels"]
            self.groundtruth_labels.append(labels)
            self.groundtruth_crowds.append(item.get("iscrowd", torch.zeros_like(labels)))
            self.groundtruth_area.append(item.get("area", torch.zeros_like(labels)))

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
            self._kinds,
            average,
            crowds=self.groundtruth_crowds,
            area=self.groundtruth_area,
        )
        coco_dt.dataset = _coco_format(
            dt_labels,
            all_labels,
            self.detection_box or None,
            self.detection_mask or None,
            self._kinds,
            average,
            scores=self.detection_scores,
        )
        with contextlib.redirect_stdout(io.StringIO()):
            coco_gt.createIndex()
            coco_dt.createIndex()
        return coco_dt, coco_gt

    def _evaluator(self, coco_gt: COCO | None, coco_dt: COCO | None, iou_type: str) -> COCOeval:
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
        tables = None if self.corrected else self._tables()
        if tables is None:
            return self._compute_coco()
        try:
            return self._compute_columns(*tables)
        except _NotCompiled:
            return self._compute_coco()

    def _tables(self) -> tuple[_Annotations, _Annotations] | None:
        gt = _annotations(
            self.groundtruth_labels,
            self.groundtruth_box or None,
            self.groundtruth_mask or None,
            crowds=self.groundtruth_crowds,
            area=self.groundtruth_area,
        )
        dt = _annotations(
            self.detection_labels,
            self.detection_box or None,
            self.detection_mask or None,
            scores=self.detection_scores,
        )
        return None if gt is None or dt is None else (gt, dt)

    def _compute_columns(self, gt: _Annotations, dt: _Annotations) -> dict[str, Any]:
        """:meth:`compute` from the states' columns: each evaluation torchmetrics runs, on
        the columns its COCO dicts would give (one run serves its per-class loop)."""
        max_dets = self.max_detection_thresholds
        # torch.cat(labels).unique().tolist(), from the label columns
        classes = np.unique(np.concatenate([dt.label, gt.label])).tolist()
        both = len(self.iou_type) > 1
        # torchmetrics' area: the mask's wherever masks are compared, for either iou type
        use_mask = self._compares_masks
        runs: dict[tuple[str, str, bool], COCOeval] = {}

        def run(i_type: str, average: str, dt_mask_area: bool) -> COCOeval:
            key = (i_type, average, dt_mask_area)
            if key not in runs:
                runs[key] = self._run_columns(gt, dt, i_type, average, dt_mask_area, use_mask)
            return runs[key]

        result: dict[str, Any] = {}
        average = self.average
        with contextlib.redirect_stdout(io.StringIO()):
            for i_type in self.iou_type:
                prefix = f"{i_type}_" if both else ""
                if len(gt.images) == 0 or len(dt.images) == 0:
                    result.update(_stats_dict(12 * [-1.0], prefix, max_dets))
                    continue
                # with both iou types torchmetrics gives the detections this type's area
                own_area = IOU_TYPES[i_type].segm
                coco_eval = run(i_type, average, own_area if both else use_mask)
                coco_eval.summarize()
                result.update(_stats_dict(coco_eval.stats, prefix, max_dets))
                if self.extended_summary:
                    result[f"{prefix}ious"] = _ious_to_tensors(coco_eval.ious)
                    result[f"{prefix}precision"] = torch.tensor(coco_eval.eval["precision"])
                    result[f"{prefix}recall"] = torch.tensor(coco_eval.eval["recall"])
                    result[f"{prefix}scores"] = torch.tensor(coco_eval.eval["scores"])
                if self.class_metrics:
                    # torchmetrics' per-class loop runs on fresh macro datasets (their
                    # detections' area not swapped), kept for the next iou type too; its run
                    # with params.catIds = [k] has the class's slice of one run's arrays
                    average = "macro"
                    map_per_class, mar_per_class = _per_class(
                        run(i_type, "macro", use_mask), classes
                    )
                    map_values = torch.tensor(map_per_class, dtype=torch.float32)
                    mar_values = torch.tensor(mar_per_class, dtype=torch.float32)
                else:
                    map_values = torch.tensor([-1], dtype=torch.float32)
                    mar_values = torch.tensor([-1], dtype=torch.float32)
                result[f"{prefix}map_per_class"] = map_values
                result[f"{prefix}mar_{max_dets[-1]}_per_class"] = mar_values
        result["classes"] = torch.tensor(classes, dtype=torch.int32)
        return result

    def _run_columns(
        self,
        gt: _Annotations,
        dt: _Annotations,
        i_type: str,
        average: str,
        dt_mask_area: bool,
        gt_mask_area: bool,
    ) -> COCOeval:
        """pycocotools' evaluate + accumulate of torchmetrics' COCO datasets for
        ``i_type`` and ``average``, on their columns; raises :class:`_NotCompiled` where only
        the dict route reproduces it."""
        micro = average == "micro"
        img_ids = gt.images
        labels = np.concatenate([dt.label, gt.label])
        cat_ids = np.zeros(1, dtype=np.int64) if micro else np.unique(labels)
        reads = similarity_input(i_type)
        assert reads is not None
        coco_eval = self._evaluator(None, None, i_type)
        coco_eval.params.imgIds = img_ids.tolist()
        coco_eval.params.catIds = cat_ids.tolist()
        gt_side = _side(gt, img_ids, cat_ids, reads, micro=micro, use_mask_area=gt_mask_area)
        dt_side = _side(dt, img_ids, cat_ids, reads, micro=micro, use_mask_area=dt_mask_area)
        # an image's size, from the targets' masks or the detections' (the rebuilt dicts of
        # extended_summary's ious read it from either side, as pycocotools from each COCO)
        sizes = [gt.sizes.get(i) or dt.sizes.get(i, {}) for i in img_ids.tolist()]
        if not coco_eval._evaluate_columns(gt_side, dt_side, sizes):
            raise _NotCompiled
        coco_eval.accumulate()
        return coco_eval

    def _compute_coco(self) -> dict[str, Any]:
        """:meth:`compute` through torchmetrics' COCO dicts and :class:`COCOeval` (the
        Python stages where the compiled route cannot take the values)."""
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
        if self._compares_masks:
            self.detection_mask = self._gather_tuple_list(self.detection_mask, process_group)
            self.groundtruth_mask = self._gather_tuple_list(self.groundtruth_mask, process_group)

    @staticmethod
    def _gather_tuple_list(items: list[Any], process_group: Any | None = None) -> list[Any]:
        world_size = dist.get_world_size(group=process_group)
        dist.barrier(group=process_group)
        gathered: list[Any] = [None] * world_size
        dist.all_gather_object(gathered, items, group=process_group)
        return [gathered[rank][i] for i in range(len(gathered[0])) for rank in range(world_size)]
