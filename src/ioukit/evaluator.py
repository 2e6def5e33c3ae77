"""Streaming evaluation: :class:`Evaluator` takes per-image dicts (torchmetrics'
``MeanAveragePrecision`` inputs), merges workers and evaluates once, on one process or every
rank of a torch.distributed group.

It sits above :mod:`ioukit.engine` (``evaluate``) and :mod:`ioukit.distributed`
(``synced_evaluate``), which it calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ioukit import masks
from ioukit._array import check_format
from ioukit._evaluate_inputs import make_runner
from ioukit._process_group import process_group
from ioukit._renamed import renamed_keyword, warn_renamed
from ioukit.analysis.result import EvaluationResult
from ioukit.boxes import box_convert
from ioukit.dataset import CategoryTable, Dataset, ImageTable, check_boxes, check_finite
from ioukit.distributed import synced_evaluate
from ioukit.engine import evaluate
from ioukit.errors import DataFormatError, MaskError, ParameterError
from ioukit.evaluation.protocols.lvis import (
    check_frequencies,
    evaluate_lvis,
    federated_labels,
    lvis_box_area,
)
from ioukit.evaluation.registry import (
    protocol_has,
    protocol_iou_types,
    resolve_iou_type,
    similarity_reads,
)
from ioukit.evaluation.similarity.oks import concat_keypoints, streamed_keypoints
from ioukit.evaluation.similarity.rotated import (
    ROTATED_BOX_FORMATS,
    rotated_columns,
    streamed_rotated,
)
from ioukit.io.lvis import LVISGroundTruth

__all__ = ["Evaluator", "lvis_result"]


def _image_id(target: Mapping[str, Any], name: str) -> int | None:
    """A target's ``image_id`` as an int (int, NumPy or torch scalar), or None if absent."""
    if not isinstance(target, Mapping) or "image_id" not in target:
        return None
    value = target["image_id"]
    arr = _to_numpy(value, name, np.float64).reshape(-1)
    if isinstance(value, bool) or arr.size != 1 or arr[0] != np.floor(arr[0]):
        raise DataFormatError(f"{name}: expected one integer image id, got {value!r}")
    return int(_to_numpy(value, name, np.int64).reshape(-1)[0])


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


def _same_k(
    seen: tuple[int, str] | None, keypoints: np.ndarray, name: str, place: str = ""
) -> tuple[int, str] | None:
    """``seen`` (K and where it was first seen), or ``keypoints``' (seen at ``place``, default
    ``name``) when it is the first; a DataFormatError naming both places when ``keypoints``
    (N, K, 3) has another K."""
    if not len(keypoints):
        return seen
    k = int(keypoints.shape[1])
    if seen is None:
        return k, place or name
    if k != seen[0]:
        raise DataFormatError(
            f"{name}: expected {seen[0]} keypoints per instance as in {seen[1]}, got {k}; "
            "every image must have the same keypoints"
        )
    return seen


class _Masks:
    """One image's masks, run-length encoded on arrival (bounded memory)."""

    __slots__ = ("area", "boxes", "rles", "size")

    def __init__(self, value: object, name: str) -> None:

        host = masks.to_host(value, name=name)
        known = not (host.size == 0 and host.ndim != 3)
        if not known:  # e.g. [] or torch.zeros(0): no masks, size unknown
            host = np.zeros((0, 0, 0), dtype=np.uint8)
        runs = masks.encode_runs(host, name=name)
        xywh = runs.to_bbox()
        self.rles: list[dict[str, Any]] = runs.to_rles()
        self.area: np.ndarray = runs.area().astype(np.float64)
        self.boxes: np.ndarray = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
        self.size: tuple[int, int] | None = (
            (int(host.shape[1]), int(host.shape[2])) if known else None
        )

    def __len__(self) -> int:
        return len(self.rles)


def _same_options(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Equal option mappings; arrays and sequences compare by value (never an ambiguous
    truth value)."""
    if a.keys() != b.keys():
        return False
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            if not _same_options(x, y):
                return False
            continue
        if isinstance(x, np.ndarray | list | tuple) or isinstance(y, np.ndarray | list | tuple):
            try:
                if not np.array_equal(np.asarray(x, dtype=object), np.asarray(y, dtype=object)):
                    return False
            except ValueError:
                return False
            continue
        if x != y:
            return False
    return True


class Evaluator:
    """Streaming evaluation: ``update`` per image or batch, ``merge`` workers, ``compute``.

    Inputs follow torchmetrics' ``MeanAveragePrecision``: ``update(predictions, targets)``
    takes two equally long lists of per-image dicts, predictions with ``boxes`` (N, 4),
    ``scores`` (N,), ``labels`` (N,), targets with ``boxes``, ``labels`` and optionally
    ``iscrowd`` and ``area`` (box area if missing). NumPy arrays, torch tensors or lists.
    Images are numbered in arrival order, unless the targets carry an integer ``image_id``
    (on every image or on none; each id once): then images are identified by it and the
    result equals :func:`evaluate` on the same data written as COCO JSON. Classes are the
    labels seen (ids = labels).

    With ``iou_type="segm"`` (COCO protocol) both sides carry ``masks`` (N, H, W) binary
    (bool or 0/1 integers; NumPy, torch on any device) instead of, or besides, ``boxes``.
    The masks are encoded to COCO RLE on ``update`` (memory stays bounded) and compared by
    mask IoU (``iou_type="boundary"``: boundary IoU). Missing boxes are the masks' tight
    boxes; a target's ``area`` defaults to its mask's pixel count, and a prediction's area is
    always its mask's pixel count (as pycocotools' ``loadRes`` for segm results without
    ``bbox``). The result equals :func:`evaluate` with the same ``iou_type`` on the same data
    written as COCO JSON.

    Parameters
    ----------
    protocol : {"coco", "voc07", "voc10", "yolo", "lvis"}
        ``"lvis"`` (bbox, segm): pass ``frequencies={category_id: "r"|"c"|"f"}`` (the vocabulary:
        every label seen needs one); targets may carry ``neg_category_ids`` and
        ``not_exhaustive_category_ids`` (lists of ids, default empty); ``compute`` builds the
        :class:`~ioukit.io.lvis.LVISGroundTruth` and equals ``evaluate(..., protocol="lvis")``
        on the same data written as LVIS JSON (``fixed_ap`` etc. as options).
    iou_type : str
        Any registered similarity the protocol takes
        (:func:`ioukit.evaluation.registry.similarity_names`); what ``update`` reads follows
        the column it compares. Masks (``"segm"``, ``"boundary"``): ``masks`` as above
        (``"segm"`` needs ``protocol="coco"`` or ``"lvis"``, ``"boundary"`` ``"coco"``).
        Keypoints (``"keypoints"``): ``keypoints`` (N, K, 3). Oriented boxes
        (``"rotated"``/``"probiou"``): ``boxes`` are (N, 5) ``cxcywhr`` (degrees,
        counter-clockwise) or (N, 8) corners (protocols coco, dota, mmrotate, yolo).
    fmt : {"xyxy", "xywh", "cxcywh"} or {"cxcywhr", "xywhr", "xyxyxyxy"}
        Format of the incoming boxes (``fmt``, as everywhere in ioukit; the old name
        ``box_format`` still works with a DeprecationWarning); for oriented boxes the default
        takes (N, 5) as ``cxcywhr`` and (N, 8) as ``xyxyxyxy``.
    sync : bool, default True
        Under an initialised ``torch.distributed`` process group, ``compute`` evaluates every
        rank's images and every rank returns the same result (every rank must call
        ``compute``, as with any collective). COCO bbox/segm: each rank matches its own images
        and one ``all_gather_object`` ships compact partial results (about 42 bytes per
        detection, plus each rank's ground truth); other protocols gather the datasets (see
        :func:`ioukit.distributed.synced_evaluate`). Images are numbered rank by rank in
        arrival order, or identified by the targets' ``image_id`` (then it does not matter
        which rank saw which image; an id on two ranks is an error naming both).
        ``False``: this rank's images only.
    box_format : str, optional
        Deprecated name of ``fmt``.
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

    Instance masks (here one 4 x 4 image):

    >>> import numpy as np
    >>> gt_mask = np.zeros((1, 4, 4), dtype=bool)
    >>> gt_mask[0, :, 1] = True
    >>> pred_mask = gt_mask.copy()
    >>> pred_mask[0, 0, 2] = True  # one extra pixel: IoU 4/5
    >>> ev = Evaluator(iou_type="segm")
    >>> ev.update([{"masks": pred_mask, "scores": [0.9], "labels": [1]}],
    ...           [{"masks": gt_mask, "labels": [1]}])
    >>> round(ev.compute().stats["AP"], 3)  # a match at IoU 0.50 ... 0.80: 7 of 10
    0.7
    >>> len(ev), ev.iou_type
    (1, 'segm')
    """

    def __init__(
        self,
        *,
        protocol: str = "coco",
        iou_type: str = "bbox",
        fmt: str = "xyxy",
        sync: bool = True,
        box_format: str | None = None,
        **options: Any,
    ):
        fmt = renamed_keyword("ioukit.Evaluator", "box_format", "fmt", box_format, fmt, "xyxy")
        self._frequencies: dict[int, str] | None = None  # protocol="lvis": the vocabulary
        if protocol_has(protocol, "federated"):  # LVIS: the vocabulary, federated labels
            options = dict(options)
            self._frequencies = check_frequencies(options.pop("frequencies", None))
            allowed = protocol_iou_types(protocol)
            if iou_type not in allowed:
                raise ParameterError(
                    f"iou_type: Evaluator(protocol={protocol!r}) supports "
                    f"{' and '.join(repr(t) for t in allowed)}, got {iou_type!r}"
                )
        iou_type = resolve_iou_type(protocol, iou_type)
        make_runner(protocol, iou_type, options)  # validated here, once, before any update
        reads = similarity_reads(iou_type)  # what update() takes: boxes, masks, keypoints...
        if not (reads.column == "boxes" or reads.masks or reads.keypoints or reads.oriented):
            raise ParameterError(
                "iou_type: Evaluator streams boxes, masks, keypoints and oriented boxes, got "
                f"{iou_type!r}, which compares {reads.column!r}"
            )

        self.protocol = protocol
        self.iou_type = iou_type
        self._oriented = reads.oriented
        if self._oriented:  # oriented boxes: cxcywhr, xywhr, xyxyxyxy, or by width (xyxy)
            if fmt not in (*ROTATED_BOX_FORMATS, "xyxy"):
                raise ParameterError(
                    f"fmt: expected one of {', '.join(map(repr, ROTATED_BOX_FORMATS))} "
                    f"for iou_type={iou_type!r}, got {fmt!r}"
                )
            self.fmt = fmt
        else:
            self.fmt = check_format(fmt, "fmt")
        self.options = dict(options)
        self.sync = bool(sync)  # gather every rank's images under torch.distributed
        self._pred: list[tuple[np.ndarray, ...]] = []
        self._gt: list[tuple[np.ndarray, ...]] = []
        # segm only, one entry per image: RLE dicts of predictions and targets, image size
        self._pred_rles: list[list[dict[str, Any]]] = []
        self._gt_rles: list[list[dict[str, Any]]] = []
        self._sizes: list[tuple[float, float]] = []
        # targets' image_id (None: not given) and where each id arrived, for the error
        self._image_ids: list[int | None] = []
        self._id_where: dict[int, str] = {}
        # keypoints: K of the first person seen and where it came from (every image's K must
        # be it; refused at update, so that compute never fails for good)
        self._keypoints_k: tuple[int, str] | None = None
        self._updates = 0
        # update/merge/reset/datasets are atomic: one image's predictions and targets are
        # appended together even when several threads update one Evaluator
        import threading  # only an Evaluator needs it, not evaluate() (#9)

        self._lock = threading.RLock()

    def __len__(self) -> int:
        """Number of images seen."""
        return len(self._gt)

    @property
    def box_format(self) -> str:
        """Deprecated name of ``fmt`` (the incoming boxes' format)."""
        warn_renamed("ioukit.Evaluator.box_format", "ioukit.Evaluator.fmt")
        return self.fmt

    def reset(self) -> None:
        """Forget every image."""
        with self._lock:
            self._pred.clear()
            self._gt.clear()
            self._pred_rles.clear()
            self._gt_rles.clear()
            self._sizes.clear()
            self._image_ids.clear()
            self._id_where.clear()
            self._keypoints_k = None

    def _boxes(self, value: object, name: str) -> np.ndarray:
        boxes = _to_numpy(value, name, np.float64, 4)
        check_boxes(boxes, name, self.fmt)  # the Dataset's own check, at arrival
        if self.fmt != "xyxy":
            boxes = np.asarray(box_convert(boxes, self.fmt, "xyxy"), dtype=np.float64)
        return boxes

    def _segm_side(self, d: Mapping[str, Any], name: str) -> tuple[_Masks, np.ndarray]:
        """Encoded masks and xyxy boxes (given, or the masks' tight boxes) of one side."""

        if "masks" not in d:
            raise DataFormatError(f"{name}.masks: missing (iou_type={self.iou_type!r} needs masks)")
        m = _Masks(d["masks"], f"{name}.masks")
        if "boxes" not in d:
            return m, m.boxes
        boxes = self._boxes(d["boxes"], f"{name}.boxes")
        if len(boxes) != len(m):
            raise MaskError(
                f"{name}: expected one box per mask, got {len(boxes)} boxes for {len(m)} masks"
            )
        return m, boxes

    def update(
        self, predictions: Sequence[Mapping[str, Any]], targets: Sequence[Mapping[str, Any]]
    ) -> None:
        """Add images: ``predictions[i]`` and ``targets[i]`` describe the same image.

        Nothing is added when any image is malformed (the error names it).
        """
        if isinstance(predictions, Mapping) or isinstance(targets, Mapping):
            raise TypeError("predictions, targets: expected lists of per-image dicts")
        if len(predictions) != len(targets):
            raise DataFormatError(
                f"predictions, targets: expected equal lengths, got {len(predictions)} and "
                f"{len(targets)}"
            )
        segm = similarity_reads(self.iou_type).masks  # segm, boundary
        kp = similarity_reads(self.iou_type).keypoints
        box_key = () if segm else ("boxes",)
        pred_rows: list[tuple[np.ndarray, ...]] = []
        gt_rows: list[tuple[np.ndarray, ...]] = []
        pred_rles: list[list[dict[str, Any]]] = []
        gt_rles: list[list[dict[str, Any]]] = []
        sizes: list[tuple[float, float]] = []
        image_ids = [_image_id(t, f"targets[{i}].image_id") for i, t in enumerate(targets)]
        k_seen = self._keypoints_k
        for i, (p, t) in enumerate(zip(predictions, targets, strict=True)):
            for key, where, d in (
                *(("boxes", "predictions", p) for _ in box_key if not kp),
                *(
                    ("keypoints", where, d)
                    for where, d in (("predictions", p), ("targets", t))
                    if kp
                ),
                ("scores", "predictions", p),
                ("labels", "predictions", p),
                *(("boxes", "targets", t) for _ in box_key),
                ("labels", "targets", t),
            ):
                if key not in d:
                    raise DataFormatError(f"{where}[{i}].{key}: missing")
            if segm:
                p_masks, boxes = self._segm_side(p, f"predictions[{i}]")
                t_masks, gt_boxes = self._segm_side(t, f"targets[{i}]")
                size = self._image_size(p_masks, t_masks, i)
            elif kp:
                p_kp, boxes, p_area = streamed_keypoints(p, f"predictions[{i}]", self._boxes)
                t_kp, gt_boxes, _ = streamed_keypoints(t, f"targets[{i}]", self._boxes)
                for side, kps in (("targets", t_kp), ("predictions", p_kp)):
                    name = f"{side}[{i}].keypoints"
                    k_seen = _same_k(k_seen, kps, name, f"update call {self._updates}, {name}")
            elif self._oriented:
                fmt = None if self.fmt == "xyxy" else self.fmt
                p_rot, boxes, p_area = streamed_rotated(p["boxes"], f"predictions[{i}].boxes", fmt)
                t_rot, gt_boxes, t_area = streamed_rotated(t["boxes"], f"targets[{i}].boxes", fmt)
            else:
                boxes = self._boxes(p["boxes"], f"predictions[{i}].boxes")
                gt_boxes = self._boxes(t["boxes"], f"targets[{i}].boxes")
            scores = _to_numpy(p["scores"], f"predictions[{i}].scores", np.float64)
            check_finite(scores, f"predictions[{i}].scores")
            labels = _to_numpy(p["labels"], f"predictions[{i}].labels", np.int64)
            n = len(boxes)
            if len(scores) != n or len(labels) != n:
                what = "masks" if segm else "boxes"
                raise DataFormatError(
                    f"predictions[{i}]: expected {n} scores and labels for {n} {what}, got "
                    f"{len(scores)} and {len(labels)}"
                )
            m = len(gt_boxes)
            gt_labels = _to_numpy(t["labels"], f"targets[{i}].labels", np.int64)
            fed: tuple[np.ndarray, ...] = ()
            if self._frequencies is not None:  # LVIS: federated labels, area as lvis-api's
                fed = federated_labels(t, i, labels, gt_labels, self._frequencies)
                if not segm:  # segm: the mask's pixel count, as for COCO
                    raw = _to_numpy(p["boxes"], f"predictions[{i}].boxes", np.float64, 4)
                    p_area = lvis_box_area(raw, self.fmt, boxes)
            crowd = (
                _to_numpy(t["iscrowd"], f"targets[{i}].iscrowd", np.int64) != 0
                if "iscrowd" in t
                else np.zeros(m, dtype=bool)
            )
            if "area" in t:
                area = _to_numpy(t["area"], f"targets[{i}].area", np.float64)
                check_finite(area, f"targets[{i}].area")
            elif segm:
                area = t_masks.area
            elif self._oriented:
                area = t_area
            else:
                area = (gt_boxes[:, 2] - gt_boxes[:, 0]) * (gt_boxes[:, 3] - gt_boxes[:, 1])
            if len(gt_labels) != m or len(crowd) != m or len(area) != m:
                raise DataFormatError(
                    f"targets[{i}]: expected labels, iscrowd and area of length {m}, got "
                    f"{len(gt_labels)}, {len(crowd)} and {len(area)}"
                )
            if segm:
                pred_rows.append((boxes, scores, labels, p_masks.area))
                pred_rles.append(p_masks.rles)
                gt_rles.append(t_masks.rles)
                sizes.append(size)
            elif kp:
                pred_rows.append((boxes, scores, labels, p_area, p_kp))
            elif self._oriented:
                pred_rows.append((boxes, scores, labels, p_area, p_rot))
            elif fed:
                pred_rows.append((boxes, scores, labels, p_area))
            else:
                pred_rows.append((boxes, scores, labels))
            extra = (t_kp,) if kp else (t_rot,) if self._oriented else fed
            gt_rows.append((gt_boxes, gt_labels, crowd, area, *extra))
        with self._lock:
            where = f"update call {self._updates}, targets"
            if k_seen is not None and self._keypoints_k is not None:  # another thread's K
                _same_k(self._keypoints_k, np.zeros((1, k_seen[0], 3)), k_seen[1])
            self._check_ids(image_ids, [f"{where}[{i}]" for i in range(len(image_ids))])
            self._keypoints_k = self._keypoints_k or k_seen
            self._updates += 1
            self._pred.extend(pred_rows)
            self._gt.extend(gt_rows)
            self._pred_rles.extend(pred_rles)
            self._gt_rles.extend(gt_rles)
            self._sizes.extend(sizes)

    def _check_ids(self, image_ids: Sequence[int | None], where: Sequence[str]) -> None:
        """Record new images' ids (under the lock); DataFormatError before any change."""
        if not image_ids:
            return
        given = [i is not None for i in image_ids]
        ref = self._image_ids[0] is not None if self._image_ids else given[0]
        for k, g in enumerate(given):
            if g != ref:
                raise DataFormatError(
                    f"{where[k]}.image_id: {'given' if g else 'missing'} here but "
                    f"{'missing' if g else 'given'} on "
                    f"{'images added earlier' if self._image_ids else where[0]}; give image_id "
                    "on every image or on none"
                )
        new: dict[int, str] = {}
        for image_id, place in zip(image_ids, where, strict=True):
            if image_id is None:
                continue
            first = self._id_where.get(image_id, new.get(image_id))
            if first is not None:
                raise DataFormatError(
                    f"{place}.image_id: image_id {image_id} was already given by {first}; "
                    "each image must be added once"
                )
            new[image_id] = place
        self._id_where.update(new)
        self._image_ids.extend(image_ids)

    @staticmethod
    def _image_size(pred: _Masks, target: _Masks, i: int) -> tuple[float, float]:

        if pred.size is not None and target.size is not None and pred.size != target.size:
            raise MaskError(
                f"predictions[{i}].masks: expected masks of the image's size (H, W) = "
                f"{target.size} as in targets[{i}].masks, got {pred.size}"
            )
        size = target.size if target.size is not None else pred.size
        return (float("nan"), float("nan")) if size is None else (float(size[0]), float(size[1]))

    def merge(self, other: Evaluator) -> Evaluator:
        """Append ``other``'s images after this one's (data-parallel workers); returns self."""
        if not isinstance(other, Evaluator):
            raise TypeError(f"other: expected an Evaluator, got {type(other).__name__}")
        if (
            other.protocol != self.protocol
            or other.iou_type != self.iou_type
            or not _same_options(other.options, self.options)
            or other._frequencies != self._frequencies
        ):
            raise ParameterError(
                "other: expected an Evaluator with the same protocol, iou_type and options, got "
                f"protocol={other.protocol!r}, iou_type={other.iou_type!r}, "
                f"options={other.options!r} (this one: protocol={self.protocol!r}, "
                f"iou_type={self.iou_type!r}, options={self.options!r})"
            )
        if other is self:
            raise ParameterError("other: expected another Evaluator, got this one")
        with other._lock:
            parts = (
                list(other._pred),
                list(other._gt),
                list(other._pred_rles),
                list(other._gt_rles),
                list(other._sizes),
            )
            ids = list(other._image_ids)
            other_k = other._keypoints_k
        with self._lock:
            if other_k is not None and self._keypoints_k is not None:
                _same_k(self._keypoints_k, np.zeros((1, other_k[0], 3)), f"other ({other_k[1]})")
            self._check_ids(ids, [f"other's image {k}" for k in range(len(ids))])
            self._keypoints_k = self._keypoints_k or other_k
            self._pred.extend(parts[0])
            self._gt.extend(parts[1])
            self._pred_rles.extend(parts[2])
            self._gt_rles.extend(parts[3])
            self._sizes.extend(parts[4])
        return self

    def datasets(self) -> tuple[Dataset, Dataset]:
        """The ground truth and predictions seen so far, as canonical datasets.

        With ``iou_type="segm"`` both carry ``segmentation`` (RLE dicts) and the image table
        the images' sizes.
        """
        with self._lock:
            return self._datasets()

    def _order(self) -> list[int]:
        """The images' positions in evaluation order: arrival order, or with ``image_id`` the
        ids' order (which image arrived first, on which worker, then does not matter)."""
        ids = self._image_ids
        if ids and ids[0] is not None:
            return sorted(range(len(ids)), key=lambda k: int(ids[k] or 0))
        return list(range(len(self._gt)))

    def _datasets(self, category_ids: list[int] | None = None) -> tuple[Dataset, Dataset]:
        order = self._order()
        gts = [self._gt[k] for k in order]
        preds = [self._pred[k] for k in order]
        n_images = len(gts)
        segm = similarity_reads(self.iou_type).masks
        given = [self._image_ids[k] for k in order]
        ids = [int(i) for i in given if i is not None] or list(range(n_images))
        stems = [str(i) for i in ids]
        if segm:
            sizes = [self._sizes[k] for k in order]
            heights = [s[0] for s in sizes]
            widths = [s[1] for s in sizes]
            images = ImageTable.from_lists(ids, stems, widths, heights)
        else:
            images = ImageTable.from_lists(ids, stems)

        def cat(parts: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
            return np.concatenate(parts) if parts else empty

        gt_boxes = cat([g[0] for g in gts], np.zeros((0, 4)))
        gt_labels = cat([g[1] for g in gts], np.zeros(0, np.int64))
        pred_labels = cat([p[2] for p in preds], np.zeros(0, np.int64))
        labels = (
            np.union1d(gt_labels, pred_labels)
            if category_ids is None
            else np.asarray(category_ids, dtype=np.int64)
        )
        categories = CategoryTable.from_lists(labels.tolist(), [str(c) for c in labels.tolist()])
        kp = similarity_reads(self.iou_type).keypoints
        gt_kp = pred_kp = None
        if kp:
            gt_kp = concat_keypoints([g[4] for g in gts], "targets")
            pred_kp = concat_keypoints([p[4] for p in preds], "predictions")
        gt_rot: dict[str, Any] = {}
        pred_rot: dict[str, Any] = {}
        if self._oriented:
            gt_rot = rotated_columns([g[4] for g in gts])
            pred_rot = rotated_columns([p[4] for p in preds])
        gt = Dataset.from_arrays(
            images,
            categories,
            boxes=gt_boxes,
            image_index=np.repeat(np.arange(n_images), [len(g[0]) for g in gts]),
            category_id=gt_labels,
            crowd=cat([g[2] for g in gts], np.zeros(0, bool)),
            area=cat([g[3] for g in gts], np.zeros(0)),
            segmentation=(
                [r for rles in [self._gt_rles[k] for k in order] for r in rles]
                if segm
                else gt_rot.pop("segmentation", None)
            ),
            keypoints=gt_kp,
            # pycocotools ignores a person without a labelled keypoint (num_keypoints == 0)
            ignore=None if gt_kp is None else ~(gt_kp[:, :, 2] > 0).any(axis=1),
            **gt_rot,
        )
        pred = Dataset.from_arrays(
            images,
            categories,
            boxes=cat([p[0] for p in preds], np.zeros((0, 4))),
            image_index=np.repeat(np.arange(n_images), [len(p[0]) for p in preds]),
            category_id=pred_labels,
            scores=cat([p[1] for p in preds], np.zeros(0)),
            area=cat([p[3] for p in preds], np.zeros(0))
            if segm or kp or self._oriented or self._frequencies is not None
            else None,
            segmentation=(
                [r for rles in [self._pred_rles[k] for k in order] for r in rles]
                if segm
                else pred_rot.pop("segmentation", None)
            ),
            keypoints=pred_kp,
            **pred_rot,
        )
        return gt, pred

    def compute(self) -> EvaluationResult:
        """Evaluate every image seen so far (every rank's, under torch.distributed)."""
        if self._frequencies is not None:  # LVIS: categories = frequencies' keys
            with self._lock:
                gt, pred = self._datasets(list(self._frequencies))
                federated = [(self._gt[k][4], self._gt[k][5]) for k in self._order()]
            return lvis_result(
                gt,
                pred,
                federated,
                self._frequencies,
                sync=self.sync,
                iou_type=self.iou_type,
                options=self.options,
            )
        with self._lock:
            gt, pred = self._datasets()
            by_id = bool(self._image_ids) and self._image_ids[0] is not None
        if self.sync:
            return synced_evaluate(
                gt,
                pred,
                by_image_id=by_id,
                protocol=self.protocol,
                iou_type=self.iou_type,
                **self.options,
            )
        return evaluate(gt, pred, protocol=self.protocol, iou_type=self.iou_type, **self.options)


def lvis_result(
    gt: Dataset,
    pred: Dataset,
    federated: Sequence[tuple[np.ndarray, np.ndarray]],
    frequencies: Mapping[int, str],
    *,
    sync: bool,
    iou_type: str,
    options: Mapping[str, Any],
) -> EvaluationResult:
    """Build the LVISGroundTruth from the Evaluator's datasets (categories = ``frequencies``'
    keys, in order) and run :func:`ioukit.evaluation.protocols.lvis.evaluate_lvis`.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([0], ["0"])
    >>> cats = CategoryTable.from_lists([1], ["1"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 9]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> fed = [(np.zeros(0, np.int64), np.zeros(0, np.int64))]
    >>> r = lvis_result(gt, pred, fed, {1: "c"}, sync=False, iou_type="bbox", options={})
    >>> round(r.stats["APc"], 3)
    0.9
    """
    if sync and process_group() is not None:
        raise NotImplementedError(
            "sync: Evaluator(protocol='lvis') does not gather ranks yet; pass sync=False "
            "and merge the ranks' Evaluators, or evaluate the written LVIS files"
        )
    n = [len(f[0]) for f in federated], [len(f[1]) for f in federated]
    rows = np.arange(len(federated))

    def cat(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    lvis_gt = LVISGroundTruth(
        dataset=gt,
        frequency=np.array([frequencies[c] for c in gt.categories.ids.tolist()], dtype="<U1"),
        neg_image_index=np.repeat(rows, n[0]),
        neg_category_id=cat([f[0] for f in federated]),
        not_exhaustive_image_index=np.repeat(rows, n[1]),
        not_exhaustive_category_id=cat([f[1] for f in federated]),
    )
    result = evaluate_lvis(lvis_gt, pred, iou_type=iou_type, **options)
    return EvaluationResult(result, lvis_gt.dataset, pred)
