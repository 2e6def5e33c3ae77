"""Panoptic quality (Kirillov et al., CVPR 2019): PQ, SQ and RQ for things, stuff and all.

Two entry points, one matcher:

* :func:`panoptic_quality` reads COCO panoptic files (a JSON file and a folder of RGB-encoded
  id PNGs, for ground truth and predictions) and equals panopticapi's ``pq_compute``.
* :func:`panoptic_quality_maps` takes ``(category, instance)`` maps per image, as
  torchmetrics' ``PanopticQuality``; ``compat="torchmetrics"`` reproduces torchmetrics.

Per image, every pixel's (ground-truth segment, predicted segment) pair is counted at once,
giving the (G + 2, P + 2) intersection table from which the matching is read (panopticapi's
rules). For PNG files one compiled pass does it where Pillow holds the decoded pixels (no id,
label or pair array; ``ioukit._kernels.panoptic``); for maps, ``np.bincount`` over
``gt_label * (P + 2) + pred_label``:

* a ground-truth segment and a predicted segment of the same category match when their IoU
  is > 0.5 (strict; such a match is unique), where the union leaves out the predicted pixels
  on ground-truth VOID: ``union = pred_area + gt_area - intersection - |pred ∩ VOID|``;
  ground-truth area is the JSON's ``area``, predicted area the PNG's pixel count;
* crowd ground truth never matches and is never a false negative; every other unmatched
  ground-truth segment is a false negative;
* an unmatched predicted segment is a false positive unless more than half of it lies on
  VOID plus the crowd segment of its category (the last one listed, as panopticapi).

Per category ``PQ = Σ IoU / (TP + FP/2 + FN/2)``, ``SQ = Σ IoU / TP``, ``RQ = TP / (TP + FP/2
+ FN/2)``; ``All`` / ``Things`` / ``Stuff`` average the categories with ``TP + FP + FN > 0``.

Examples
--------
>>> import numpy as np
>>> gt = np.zeros((1, 4, 4, 2), dtype=int)          # (images, H, W, [category, instance])
>>> gt[0, :, :2] = [1, 0]; gt[0, :, 2:] = [2, 0]    # category 1 (a thing) left, 2 (stuff) right
>>> pred = gt.copy(); pred[0, 0, :3] = [1, 0]       # the thing grows by one pixel
>>> r = panoptic_quality_maps(pred, gt, things={1}, stuffs={2})
>>> r["All"]["n"], round(r["All"]["pq"], 4), r["per_class"][1]["sq"]
(2, 0.8819, 0.8888888888888888)
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import array_api_compat
import numpy as np

from ioukit._kernels import panoptic as kernels
from ioukit.errors import DataFormatError, MaskError, ParameterError
from ioukit.io.coco_panoptic import (
    Decoder,
    PanopticAnnotations,
    PanopticImage,
    check_prediction_categories,
    decode_panoptic_png,
    id_to_rgb,
    open_panoptic_png,
    read_coco_panoptic,
    read_panoptic_png,
    resolve_decoder,
)

__all__ = [
    "COMPATS",
    "PanopticResult",
    "panoptic_quality",
    "panoptic_quality_maps",
]

Compat = Literal["panopticapi", "torchmetrics"]
COMPATS: tuple[str, ...] = ("panopticapi", "torchmetrics")
"""Accepted ``compat`` values of :func:`panoptic_quality_maps`."""

_GROUPS = (("All", None), ("Things", True), ("Stuff", False))


@dataclass(frozen=True, eq=False)
class PanopticResult(Mapping[str, Any]):
    """Per-category sufficient statistics of panoptic quality, and panopticapi's view of them.

    The result reads like panopticapi's ``pq_compute`` dict: ``result["All"]``,
    ``result["Things"]``, ``result["Stuff"]`` are ``{"pq", "sq", "rq", "n"}`` and
    ``result["per_class"]`` maps each category id to ``{"pq", "sq", "rq"}`` (0.0 for a
    category with no TP, FP or FN). A group without such a category has ``n = 0`` and NaN
    values (panopticapi raises ``ZeroDivisionError`` there). The statistics add up over
    images, so results of disjoint image sets :meth:`merge` exactly.

    Attributes
    ----------
    category_ids : ndarray of int64, shape (K,)
        Categories in the ground truth's order (maps: things ascending, then stuff).
    isthing : ndarray of bool, shape (K,)
    iou_sum : ndarray of float64, shape (K,)
        Sum of the IoU of the true positives.
    tp, fp, fn : ndarray of int64, shape (K,)
    category_names : tuple of str, length K
    num_images : int
    compat : str
        ``"panopticapi"`` or ``"torchmetrics"`` (its per-class ``pq = sq * rq`` and means).
    """

    category_ids: np.ndarray
    isthing: np.ndarray
    iou_sum: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    category_names: tuple[str, ...]
    num_images: int
    compat: str = "panopticapi"

    # -- per category -------------------------------------------------------------------
    @property
    def present(self) -> np.ndarray:
        """(K,) bool: the category has a TP, FP or FN (it counts in the averages)."""
        present: np.ndarray = (self.tp + self.fp + self.fn) > 0
        return present

    def _per_class(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tp = self.tp.astype(np.float64)
        sq = np.divide(self.iou_sum, tp, out=np.zeros_like(tp), where=tp > 0)
        if self.compat == "torchmetrics":
            # torchmetrics: TP + 0.5 FP + 0.5 FN and RQ are float32 tensors, PQ = SQ * RQ
            tp32, half = self.tp.astype(np.float32), np.float32(0.5)
            den32 = tp32 + half * self.fp.astype(np.float32) + half * self.fn.astype(np.float32)
            rq32 = np.divide(tp32, den32, out=np.zeros_like(tp32), where=den32 > 0)
            rq = rq32.astype(np.float64)
            return sq * rq, sq, rq
        den = tp + 0.5 * self.fp + 0.5 * self.fn
        present = den > 0
        rq = np.divide(tp, den, out=np.zeros_like(tp), where=present)
        pq = np.divide(self.iou_sum, den, out=np.zeros_like(tp), where=present)
        return pq, sq, rq

    @property
    def pq(self) -> np.ndarray:
        """(K,) panoptic quality per category (0 where the category is not present)."""
        return self._per_class()[0]

    @property
    def sq(self) -> np.ndarray:
        """(K,) segmentation quality per category: mean IoU of the true positives (0 if none)."""
        return self._per_class()[1]

    @property
    def rq(self) -> np.ndarray:
        """(K,) recognition quality per category: ``TP / (TP + FP/2 + FN/2)``."""
        return self._per_class()[2]

    # -- panopticapi's structure ----------------------------------------------------------
    def group(self, isthing: bool | None = None) -> dict[str, float | int]:
        """``{"pq", "sq", "rq", "n"}`` averaged over the present categories of a group.

        ``isthing=None`` is ``All``, ``True`` ``Things``, ``False`` ``Stuff``.
        """
        selected = self.present.copy()
        if isthing is not None:
            selected &= self.isthing == isthing
        n = int(selected.sum())
        values = self._per_class()
        if n == 0:
            return {"pq": math.nan, "sq": math.nan, "rq": math.nan, "n": 0}
        if self.compat == "torchmetrics":  # torch.mean; RQ's mean is a float32 tensor
            means = [float(np.mean(v[selected])) for v in values]
            means[2] = float(np.float32(means[2]))
        else:  # panopticapi: a running sum in category order, then / n
            means = [float(np.cumsum(v[selected])[-1]) / n for v in values]
        return {"pq": means[0], "sq": means[1], "rq": means[2], "n": n}

    def per_class(self) -> dict[int, dict[str, float]]:
        """``{category_id: {"pq", "sq", "rq"}}`` for every category, in category order."""
        pq, sq, rq = self._per_class()
        return {
            int(c): {"pq": float(pq[k]), "sq": float(sq[k]), "rq": float(rq[k])}
            for k, c in enumerate(self.category_ids)
        }

    def to_dict(self) -> dict[str, Any]:
        """panopticapi's ``pq_compute`` result as plain Python values."""
        out: dict[str, Any] = {name: self.group(isthing) for name, isthing in _GROUPS}
        out["per_class"] = self.per_class()
        return out

    def __getitem__(self, key: str) -> Any:
        for name, isthing in _GROUPS:
            if key == name:
                return self.group(isthing)
        if key == "per_class":
            return self.per_class()
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(("All", "Things", "Stuff", "per_class"))

    def __len__(self) -> int:
        return 4

    def __repr__(self) -> str:
        a = self.group(None)
        return (
            f"PanopticResult(PQ={a['pq']:.4f}, SQ={a['sq']:.4f}, RQ={a['rq']:.4f}, "
            f"n={a['n']}, categories={len(self.category_ids)}, images={self.num_images}, "
            f"compat={self.compat!r})"
        )

    def summary(self) -> str:
        """panopticapi's printed table (PQ, SQ, RQ in percent and N for All, Things, Stuff)."""
        lines = [
            "{:10s}| {:>5s}  {:>5s}  {:>5s} {:>5s}".format("", "PQ", "SQ", "RQ", "N"),
            "-" * (10 + 7 * 4),
        ]
        for name, isthing in _GROUPS:
            g = self.group(isthing)
            lines.append(
                f"{name:10s}| {100 * g['pq']:5.1f}  {100 * g['sq']:5.1f}  "
                f"{100 * g['rq']:5.1f} {g['n']:5d}"
            )
        return "\n".join(lines)

    def merge(self, other: PanopticResult, /) -> PanopticResult:
        """The result of both image sets (statistics added; categories must be the same)."""
        if not isinstance(other, PanopticResult):
            raise TypeError(f"other: expected a PanopticResult, got {type(other).__name__}")
        if (
            not np.array_equal(self.category_ids, other.category_ids)
            or not np.array_equal(self.isthing, other.isthing)
            or self.compat != other.compat
        ):
            raise ParameterError(
                "other: expected the same categories, isthing and compat, got "
                f"{other.category_ids.tolist()} / compat={other.compat!r} for "
                f"{self.category_ids.tolist()} / compat={self.compat!r}"
            )
        return PanopticResult(
            category_ids=self.category_ids,
            isthing=self.isthing,
            iou_sum=self.iou_sum + other.iou_sum,
            tp=self.tp + other.tp,
            fp=self.fp + other.fp,
            fn=self.fn + other.fn,
            category_names=self.category_names,
            num_images=self.num_images + other.num_images,
            compat=self.compat,
        )


# ---- the matcher ------------------------------------------------------------------------
#
# Labels per pixel: 0 unknown (a PNG id missing from segments_info), 1 VOID, 2 + k segment k.


@dataclass(frozen=True)
class _ImageStats:
    """One image's outcome: category index per TP (with its IoU), per FP, per FN."""

    tp_category: np.ndarray
    tp_iou: np.ndarray
    fp_category: np.ndarray
    fn_category: np.ndarray


def _pair_counts(pair: np.ndarray, g: int, p: int) -> np.ndarray:
    """(g + 2, p + 2) int64 table of pixels per (ground-truth label, predicted label).

    ``pair`` (N,) holds ``gt_label * (p + 2) + pred_label`` for every pixel.
    """
    return np.bincount(pair, minlength=(g + 2) * (p + 2)).reshape(g + 2, p + 2)


def _match(
    counts: np.ndarray,
    gt_category: np.ndarray,
    gt_crowd: np.ndarray,
    gt_area: np.ndarray,
    pred_category: np.ndarray,
    crowd_row: np.ndarray | None,
    *,
    torchmetrics: bool,
) -> _ImageStats:
    """Match one image from its pair table; categories are indices in [0, K).

    ``crowd_row[p]`` is the ground-truth row of the crowd segment of predicted segment p's
    category (-1 when none). torchmetrics' rules: no crowd, the union also leaves out
    ground-truth pixels predicted VOID, a ground-truth segment more than half predicted VOID
    is no FN, and IoU and the void ratios are float32.
    """
    inter = counts[2:, 2:]  # (G, P)
    on_void = counts[1, 2:]  # (P,) predicted pixels on ground-truth VOID
    pred_area = counts[:, 2:].sum(axis=0)  # (P,)
    candidate = (inter > 0) & (gt_category[:, None] == pred_category[None, :])
    candidate &= ~gt_crowd[:, None]
    if torchmetrics:  # its loop runs over (pred, gt) pairs sorted by pred first
        pj, gi = np.nonzero(candidate.T)
    else:  # panopticapi's runs over (gt id, pred id) ascending
        gi, pj = np.nonzero(candidate)
    shared = inter[gi, pj]
    with np.errstate(divide="ignore", invalid="ignore"):  # only for inconsistent JSON areas
        if torchmetrics:
            predicted_void = counts[2:, 1]  # (G,) ground-truth pixels predicted VOID
            union = pred_area[pj] - on_void[pj] + gt_area[gi] - predicted_void[gi] - shared
            iou32 = shared.astype(np.float32) / union.astype(np.float32)
            hit = iou32 > 0.5
            iou = iou32.astype(np.float64)
        else:
            union = ((pred_area[pj] + gt_area[gi]) - shared) - on_void[pj]
            iou = shared / union
            hit = iou > 0.5
    gt_matched = np.zeros(len(gt_category), dtype=bool)
    gt_matched[gi[hit]] = True
    pred_matched = np.zeros(len(pred_category), dtype=bool)
    pred_matched[pj[hit]] = True
    if torchmetrics:
        ratio = predicted_void.astype(np.float32) / gt_area.astype(np.float32)
        fn = ~gt_matched & (ratio <= 0.5)
        ignored = on_void.astype(np.float32) / pred_area.astype(np.float32) > 0.5
    else:
        fn = ~gt_matched & ~gt_crowd
        ignored_pixels = on_void.copy()
        if crowd_row is not None:
            has = crowd_row >= 0
            cols = np.flatnonzero(has)
            ignored_pixels[cols] += inter[crowd_row[cols], cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            ignored = ignored_pixels / pred_area > 0.5
    fp = ~pred_matched & ~ignored
    return _ImageStats(
        tp_category=gt_category[gi[hit]],
        tp_iou=iou[hit],
        fp_category=pred_category[fp],
        fn_category=gt_category[fn],
    )


def _result(
    stats: Sequence[_ImageStats],
    category_ids: np.ndarray,
    isthing: np.ndarray,
    names: tuple[str, ...],
    compat: str,
) -> PanopticResult:
    k = len(category_ids)

    def count(parts: list[np.ndarray]) -> np.ndarray:
        joined = np.concatenate(parts) if parts else np.empty(0, np.intp)
        return np.bincount(joined, minlength=k).astype(np.int64)

    tp_cat = [s.tp_category for s in stats]
    if compat == "torchmetrics":  # torchmetrics adds up each image's sums
        iou_sum = np.zeros(k)
        for s in stats:
            iou_sum += np.bincount(s.tp_category, weights=s.tp_iou, minlength=k)
    else:  # panopticapi adds each IoU in turn, image after image (bincount is sequential)
        cats = np.concatenate(tp_cat) if tp_cat else np.empty(0, np.intp)
        ious = np.concatenate([s.tp_iou for s in stats]) if stats else np.empty(0)
        iou_sum = np.bincount(cats, weights=ious, minlength=k).astype(np.float64)
    return PanopticResult(
        category_ids=np.asarray(category_ids, dtype=np.int64),
        isthing=np.asarray(isthing, dtype=bool),
        iou_sum=iou_sum,
        tp=count(tp_cat),
        fp=count([s.fp_category for s in stats]),
        fn=count([s.fn_category for s in stats]),
        category_names=names,
        num_images=len(stats),
        compat=compat,
    )


# ---- COCO panoptic files --------------------------------------------------------------


def _pixel_pairs(
    gt_image: Any, pred_image: Any, gt_ids: np.ndarray, pred_ids: np.ndarray
) -> np.ndarray:
    """(G + 2, P + 2) int64 table of pixels per (ground-truth label, predicted label) of two
    decoded PNGs (Pillow images of :func:`~ioukit.io.coco_panoptic.open_panoptic_png`, or the
    (H, W, 3 | 4) arrays of :func:`~ioukit.io.coco_panoptic.decode_panoptic_png`); labels: 0
    an id not in the list, 1 VOID (id 0), 2 + k segment k. One compiled pass over the pixels
    where they are: the arrays, Pillow's storage (its Arrow export, Pillow >= 11.2), else
    ``tobytes()``."""
    counts = np.zeros((len(gt_ids) + 2, len(pred_ids) + 2), dtype=np.int64)
    if isinstance(gt_image, np.ndarray) and isinstance(pred_image, np.ndarray):
        kernels.count_pairs(
            gt_image.reshape(-1), gt_image.shape[2], pred_image.reshape(-1),
            pred_image.shape[2], gt_ids, pred_ids, counts,
        )  # fmt: skip
        return counts
    try:
        gt_export, pred_export = gt_image.__arrow_c_array__(), pred_image.__arrow_c_array__()
    except (AttributeError, ValueError):  # older Pillow, or an image Arrow cannot export
        gt_bytes, gt_step = _pixel_bytes(gt_image)
        pred_bytes, pred_step = _pixel_bytes(pred_image)
        kernels.count_pairs(gt_bytes, gt_step, pred_bytes, pred_step, gt_ids, pred_ids, counts)
    else:
        kernels.count_pairs_arrow(gt_export, pred_export, gt_ids, pred_ids, counts)
    return counts


def _pixel_bytes(image: Any) -> tuple[bytes, int]:
    return image.tobytes(), 3 if image.mode == "RGB" else 4


def _unknown_id_error(ids: np.ndarray, png: str, image: PanopticImage) -> None:
    """Raise for the first pixel (raster order) whose id is neither VOID nor a segment."""
    unknown = ~np.isin(ids, np.concatenate([[0], image.ids]))
    y, x = (int(v) for v in np.argwhere(unknown)[0])
    value = int(ids[y, x])
    r, g, b = id_to_rgb(np.array(value)).tolist()
    raise DataFormatError(
        f"{png}: pixel (x={x}, y={y}) has segment id {value} (RGB {r}, {g}, {b}), which is "
        f"not in {image.where}.segments_info"
    )


def _category_index(category_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(category_ids, kind="stable")
    return category_ids[order], order


def _to_index(cats: np.ndarray, sorted_ids: np.ndarray, order: np.ndarray) -> np.ndarray:
    return order[np.searchsorted(sorted_ids, cats)]


def _crowd_rows(gt: PanopticImage, gt_cat: np.ndarray, pred_cat: np.ndarray) -> np.ndarray | None:
    """Per predicted segment, the row of the last-listed crowd segment of its category."""
    crowd = np.flatnonzero(gt.iscrowd)
    if crowd.size == 0:
        return None
    last: dict[int, int] = {}
    for row in crowd[np.argsort(gt.position[crowd], kind="stable")]:
        last[int(gt_cat[row])] = int(row)  # panopticapi: a dict, so the last one listed wins
    rows = np.full(len(pred_cat), -1, dtype=np.intp)
    for cat, row in last.items():
        rows[pred_cat == cat] = row
    return rows


def _decode(
    path: os.PathLike[str], size: tuple[int, int] | None, size_from: str, decoder: str
) -> tuple[Any, tuple[int, int]]:
    """A decoded PNG for :func:`_pixel_pairs` and its (width, height): pyspng's array, or
    the Pillow image itself (its pixels are read where Pillow keeps them: no copy)."""
    if decoder == "pyspng":
        pixels = decode_panoptic_png(path, size=size, size_from=size_from, decoder="pyspng")
        return pixels, (pixels.shape[1], pixels.shape[0])
    image = open_panoptic_png(path, size=size, size_from=size_from)
    return image, image.size


def _evaluate_image(
    gt_data: PanopticAnnotations,
    pred_data: PanopticAnnotations,
    gt: PanopticImage,
    pred: PanopticImage,
    categories: tuple[np.ndarray, np.ndarray],
    decoder: str,
) -> _ImageStats:
    gt_png = gt_data.png_path(gt)
    pred_png = pred_data.png_path(pred)
    size = gt_data.image_sizes.get(gt.image_id)
    size_from = f"{gt_data.label}: images entry of image_id {gt.image_id!r}"
    gt_image, gt_size = _decode(gt_png, size, size_from, decoder)
    pred_image, _ = _decode(pred_png, gt_size, f"{gt_png}", decoder)
    counts = _pixel_pairs(gt_image, pred_image, gt.ids, pred.ids)
    if counts[0].any():
        _unknown_id_error(read_panoptic_png(gt_png), os.fspath(gt_png), gt)
    if counts[:, 0].any():
        _unknown_id_error(read_panoptic_png(pred_png), os.fspath(pred_png), pred)
    pred_area = counts[:, 2:].sum(axis=0)
    if len(pred.ids) and not pred_area.all():
        k = int(np.flatnonzero(pred_area == 0)[0])
        raise DataFormatError(
            f"{pred.where}.segments_info[{int(pred.position[k])}].id: segment {int(pred.ids[k])} "
            f"has no pixel in {pred_png}"
        )
    gt_cat = _to_index(gt.category_ids, *categories)
    pred_cat = _to_index(pred.category_ids, *categories)
    return _match(
        counts,
        gt_cat,
        gt.iscrowd,
        gt.area,
        pred_cat,
        _crowd_rows(gt, gt_cat, pred_cat),
        torchmetrics=False,
    )


def _check_folder(data: PanopticAnnotations, argument: str) -> None:
    if data.folder is None:
        raise ParameterError(
            f"{argument}: required when the JSON is not a path ending in .json, got None"
        )
    if not data.folder.is_dir():
        raise DataFormatError(
            f"{data.folder}: expected the folder of {data.label}'s PNG files ({argument}), "
            "got no such folder"
        )


def _workers(workers: int | None) -> int:
    if workers is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        return max(1, min(4, cores or os.cpu_count() or 1))
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ParameterError(f"workers: expected a positive integer or None, got {workers!r}")
    return workers


def panoptic_quality(
    gt_json: str | os.PathLike[str] | Mapping[str, Any],
    pred_json: str | os.PathLike[str] | Mapping[str, Any],
    gt_folder: str | os.PathLike[str] | None = None,
    pred_folder: str | os.PathLike[str] | None = None,
    *,
    workers: int | None = None,
    decoder: Decoder = "auto",
) -> PanopticResult:
    """Panoptic quality of COCO panoptic predictions, as panopticapi's ``pq_compute``.

    Parameters
    ----------
    gt_json, pred_json : str, os.PathLike or Mapping
        COCO panoptic JSON files (or their parsed dicts, not modified). The ground truth
        gives ``categories`` (with ``isthing``) and, per image, ``segments_info`` with ``id``,
        ``category_id``, ``iscrowd`` (0 if missing) and ``area``; the predictions give
        ``segments_info`` with ``id`` and ``category_id``. Every ground-truth image needs a
        prediction record (same ``image_id``); other prediction records are not read.
    gt_folder, pred_folder : str or os.PathLike, optional
        Folders of the PNG files (``file_name`` of each record). Default: the JSON path
        without ``.json``, as panopticapi.
    workers : int, optional
        Threads decoding PNGs and counting pixels (default: ``min(4, usable CPU cores)``;
        Pillow's decoder and NumPy release the GIL). The result does not depend on it: images
        are added up in file order.
    decoder : {"auto", "pyspng", "pillow"}
        The PNG decoder: ``"auto"`` is pyspng (libspng, about 1.8x faster than Pillow on
        COCO panoptic PNGs) when it is installed, else Pillow; files pyspng does not decode
        the same way go to Pillow (:func:`ioukit.io.coco_panoptic.decode_panoptic_png`).
        The result does not depend on it.

    Returns
    -------
    PanopticResult
        ``result["All"]``, ``["Things"]``, ``["Stuff"]``: ``{"pq", "sq", "rq", "n"}``;
        ``result["per_class"]``: ``{category_id: {"pq", "sq", "rq"}}``; arrays of shape (K,)
        in ``tp``, ``fp``, ``fn``, ``iou_sum``.

    Raises
    ------
    DataFormatError
        One error naming the file and place: a PNG id not in ``segments_info``, a predicted
        segment without pixels, duplicate segment ids, a category missing from
        ``categories``, a PNG of another size than its ``images`` entry (or than the
        ground-truth PNG), a file that is not an RGB PNG, a missing file or folder, an image
        without a prediction record.
    MissingDependencyError
        Pillow is not installed (``pip install "ioukit[panoptic]"``), or pyspng for
        ``decoder="pyspng"``.
    ParameterError
        ``workers`` is not a positive integer, ``decoder`` not one of ``"auto"``, ``"pyspng"``,
        ``"pillow"``.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> import numpy as np
    >>> from PIL import Image
    >>> from ioukit.io.coco_panoptic import id_to_rgb
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "gt").mkdir(); (root / "pred").mkdir()
    >>> ids = np.zeros((4, 6), dtype=np.uint32); ids[:, :3] = 5; ids[:, 3:] = 9   # (H, W)
    >>> Image.fromarray(id_to_rgb(ids)).save(root / "gt" / "1.png")
    >>> ids[0, 3] = 5                                   # the thing takes one stuff pixel
    >>> Image.fromarray(id_to_rgb(ids)).save(root / "pred" / "1.png")
    >>> cats = [{"id": 1, "isthing": 1}, {"id": 2, "isthing": 0}]
    >>> seg = [{"id": 5, "category_id": 1, "iscrowd": 0, "area": 12},
    ...        {"id": 9, "category_id": 2, "iscrowd": 0, "area": 12}]
    >>> ann = [{"image_id": 1, "file_name": "1.png", "segments_info": seg}]
    >>> _ = (root / "gt.json").write_text(json.dumps({"categories": cats, "annotations": ann}))
    >>> _ = (root / "pred.json").write_text(json.dumps({"annotations": ann}))
    >>> r = panoptic_quality(root / "gt.json", root / "pred.json")
    >>> round(r["All"]["pq"], 4), r["Things"]["n"], r["per_class"][2]["sq"]
    (0.9199, 1, 0.9166666666666666)
    >>> print(r.summary())
              |    PQ     SQ     RQ     N
    --------------------------------------
    All       |  92.0   92.0  100.0     2
    Things    |  92.3   92.3  100.0     1
    Stuff     |  91.7   91.7  100.0     1
    """
    threads = _workers(workers)
    chosen = resolve_decoder(decoder)
    gt_data = read_coco_panoptic(gt_json, gt_folder, label=None)
    pred_data = read_coco_panoptic(pred_json, pred_folder, predictions=True)
    _check_folder(gt_data, "gt_folder")
    _check_folder(pred_data, "pred_folder")
    check_prediction_categories(pred_data, gt_data.category_ids.tolist(), gt_data.label)
    by_image = {image.image_id: image for image in pred_data.images}
    pairs: list[tuple[PanopticImage, PanopticImage]] = []
    for gt in gt_data.images:
        pred = by_image.get(gt.image_id)
        if pred is None:
            raise DataFormatError(
                f"{pred_data.label}: annotations: no record for image_id {gt.image_id!r} "
                f"({gt.where})"
            )
        pairs.append((gt, pred))
    categories = _category_index(gt_data.category_ids)

    def one(pair: tuple[PanopticImage, PanopticImage]) -> _ImageStats:
        return _evaluate_image(gt_data, pred_data, pair[0], pair[1], categories, chosen)

    stats = _run(one, pairs, threads)
    return _result(
        stats, gt_data.category_ids, gt_data.isthing, gt_data.category_names, "panopticapi"
    )


def _run(fn: Any, items: Sequence[Any], threads: int) -> list[_ImageStats]:
    """``[fn(x) for x in items]``, on ``threads`` threads; the first failing item's error."""
    if threads == 1 or len(items) < 2:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(threads, len(items))) as pool:
        futures: list[Future[_ImageStats]] = [pool.submit(fn, x) for x in items]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise


# ---- (category, instance) maps ----------------------------------------------------------


def _category_set(values: object, name: str) -> set[int]:
    if isinstance(values, str | bytes) or not isinstance(values, Collection):
        raise ParameterError(
            f"{name}: expected a collection of integer category ids, got {values!r}"
        )
    out: set[int] = set()
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise ParameterError(f"{name}: expected integer category ids, got {v!r}")
        out.add(int(v))
    return out


def _as_map(x: object, name: str) -> np.ndarray:
    if array_api_compat.is_torch_array(x):
        x = x.detach().cpu().numpy()
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise MaskError(
            f"{name}: expected an integer array, got {type(x).__name__} ({exc})"
        ) from None
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise MaskError(f"{name}: expected integer (category, instance) pairs, got dtype {a.dtype}")
    if a.ndim < 2 or a.shape[-1] != 2:
        raise MaskError(
            f"{name}: expected shape (*spatial, 2) with (category, instance) last, got {a.shape}"
        )
    return a.reshape(-1, 2).astype(np.int64, copy=False)


def _map_segments(
    pairs: np.ndarray,
    things: np.ndarray,
    stuffs: np.ndarray,
    *,
    merge_stuff: bool,
    allow_unknown: bool,
    name: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Pixel labels (1 VOID, 2 + k segment k) and each segment's category, shapes (N,), (S,)."""
    category, instance = pairs[:, 0], pairs[:, 1]
    is_stuff = np.isin(category, stuffs)
    void = ~(is_stuff | np.isin(category, things))
    if not allow_unknown and void.any():
        i = int(np.flatnonzero(void)[0])
        raise MaskError(
            f"{name}: point {i} has category {int(category[i])}, which is in neither things nor "
            "stuffs (allow_unknown_pred_categories=True makes it VOID)"
        )
    if merge_stuff:
        instance = np.where(is_stuff, 0, instance)
    cats, cat_of = np.unique(category, return_inverse=True)
    insts, inst_of = np.unique(instance, return_inverse=True)
    key = cat_of.astype(np.int64) * len(insts) + inst_of
    key[void] = -1
    keys, label = np.unique(key, return_inverse=True)
    label = label.astype(np.intp)
    if keys.size and keys[0] == -1:
        keys = keys[1:]
        label += 1
    else:
        label += 2
    return label.reshape(-1), cats[keys // len(insts)]


def panoptic_quality_maps(
    pred: Any,
    gt: Any,
    /,
    *,
    things: Collection[int],
    stuffs: Collection[int],
    compat: Compat = "panopticapi",
    allow_unknown_pred_categories: bool = False,
) -> PanopticResult:
    """Panoptic quality of ``(category, instance)`` maps, image by image (torchmetrics' input).

    Each distinct ``(category, instance)`` pair of an image is one segment; a category in
    neither ``things`` nor ``stuffs`` is VOID. Segments never match across images.

    Parameters
    ----------
    pred, gt : array_like of int, shape ``(B, *spatial, 2)``, or sequences of B such arrays
        For each image and point the pair ``(category_id, instance_id)`` (NumPy, torch on any
        device, nested lists). Images of a sequence may differ in size; ``pred[b]`` and
        ``gt[b]`` must have the same shape.
    things, stuffs : collection of int
        Thing and stuff category ids (disjoint, not both empty).
    compat : {"panopticapi", "torchmetrics"}
        ``"panopticapi"`` (default): panopticapi's rules on the maps (each ``(category,
        instance)`` is its own segment, the union leaves out predicted pixels on VOID, every
        unmatched ground-truth segment is an FN, IoU in float64). ``"torchmetrics"``:
        torchmetrics' ``PanopticQuality`` exactly: stuff instance ids are set to 0 (one
        segment per stuff category), the union also leaves out ground-truth pixels predicted
        VOID, a ground-truth segment more than half predicted VOID is no FN, IoU and the
        VOID ratios in float32, per-class ``pq = sq * rq``.
    allow_unknown_pred_categories : bool
        Treat a predicted category in neither set as VOID instead of raising (torchmetrics'
        ``allow_unknown_preds_category``).

    Returns
    -------
    PanopticResult
        Categories: ``things`` ascending, then ``stuffs`` ascending (torchmetrics' per-class
        order); ``result["All"]["pq"]`` is torchmetrics' ``compute()``.

    Raises
    ------
    MaskError
        Shapes differ or are not ``(*spatial, 2)``, values are not integers, or a predicted
        category is unknown.
    ParameterError
        Bad ``things``, ``stuffs`` or ``compat``.

    Examples
    --------
    torchmetrics' docstring example (``PanopticQuality(things={0, 1}, stuffs={6, 7})`` gives
    0.5463):

    >>> pred = [[[[6, 0], [0, 0], [6, 0], [6, 0]], [[0, 0], [0, 0], [6, 0], [0, 1]],
    ...          [[0, 0], [0, 0], [6, 0], [0, 1]], [[0, 0], [7, 0], [6, 0], [1, 0]],
    ...          [[0, 0], [7, 0], [7, 0], [7, 0]]]]
    >>> gt = [[[[6, 0], [0, 1], [6, 0], [0, 1]], [[0, 1], [0, 1], [6, 0], [0, 1]],
    ...        [[0, 1], [0, 1], [6, 0], [1, 0]], [[0, 1], [7, 0], [1, 0], [1, 0]],
    ...        [[0, 1], [7, 0], [7, 0], [7, 0]]]]
    >>> r = panoptic_quality_maps(pred, gt, things={0, 1}, stuffs={6, 7}, compat="torchmetrics")
    >>> round(r["All"]["pq"], 4), r.pq.round(4).tolist()
    (0.5463, [0.5185, 0.0, 0.6667, 1.0])
    >>> r.category_ids.tolist(), r["Things"]["n"]
    ([0, 1, 6, 7], 2)
    """
    if compat not in COMPATS:
        raise ParameterError(
            f"compat: expected one of {', '.join(map(repr, COMPATS))}, got {compat!r}"
        )
    thing_set = _category_set(things, "things")
    stuff_set = _category_set(stuffs, "stuffs")
    if thing_set & stuff_set:
        raise ParameterError(
            f"things, stuffs: expected disjoint sets, got {sorted(thing_set & stuff_set)} in both"
        )
    if not thing_set | stuff_set:
        raise ParameterError("things, stuffs: expected at least one category, got none")
    category_ids = np.array(sorted(thing_set) + sorted(stuff_set), dtype=np.int64)
    isthing = np.arange(len(category_ids)) < len(thing_set)
    things_arr = np.array(sorted(thing_set), dtype=np.int64)
    stuffs_arr = np.array(sorted(stuff_set), dtype=np.int64)
    categories = _category_index(category_ids)
    tm = compat == "torchmetrics"
    n_pred, n_gt = _length(pred, "pred"), _length(gt, "gt")
    if n_pred != n_gt:
        raise MaskError(f"pred, gt: expected the same number of images, got {n_pred} and {n_gt}")
    stats: list[_ImageStats] = []
    for b in range(n_pred):
        p_map, g_map = _as_map(pred[b], f"pred[{b}]"), _as_map(gt[b], f"gt[{b}]")
        p_shape, g_shape = np.shape(pred[b]), np.shape(gt[b])
        if p_shape != g_shape:
            raise MaskError(
                f"pred[{b}], gt[{b}]: expected the same shape, got {p_shape} and {g_shape}"
            )
        p_label, p_cat = _map_segments(
            p_map,
            things_arr,
            stuffs_arr,
            merge_stuff=tm,
            allow_unknown=allow_unknown_pred_categories,
            name=f"pred[{b}]",
        )
        g_label, g_cat = _map_segments(
            g_map, things_arr, stuffs_arr, merge_stuff=tm, allow_unknown=True, name=f"gt[{b}]"
        )
        counts = _pair_counts(g_label * (len(p_cat) + 2) + p_label, len(g_cat), len(p_cat))
        gt_area = counts[2:, :].sum(axis=1)
        stats.append(
            _match(
                counts,
                _to_index(g_cat, *categories),
                np.zeros(len(g_cat), dtype=bool),
                gt_area if tm else gt_area.astype(np.float64),
                _to_index(p_cat, *categories),
                None,
                torchmetrics=tm,
            )
        )
    names = tuple(str(c) for c in category_ids.tolist())
    return _result(stats, category_ids, isthing, names, compat)


def _length(x: object, name: str) -> int:
    try:
        return len(x)  # type: ignore[arg-type]
    except TypeError:
        raise MaskError(
            f"{name}: expected a batch (B, *spatial, 2) or a sequence of (*spatial, 2) maps, "
            f"got {type(x).__name__}"
        ) from None
