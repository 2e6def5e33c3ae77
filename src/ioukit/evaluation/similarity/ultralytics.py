"""Ultralytics' similarities in Ultralytics' float32 arithmetic: pose OKS and OBB probiou.

``protocol="yolo"`` reproduces the numbers ``yolo val`` prints; for pose and OBB models these
come from two similarities that Ultralytics computes in float32 (torch tensors of float32):

* ``kpt_iou`` (``ultralytics/utils/metrics.py``; called by ``PoseValidator._process_batch``)::

      d = dx ** 2 + dy ** 2                                     # (N_gt, M, K)
      e = d / ((2 * sigma) ** 2 * (area + eps) * 2)             # area = w * h * 0.53 of the GT box
      oks = (exp(-e) * (v_gt != 0)).sum(-1) / ((v_gt != 0).sum(-1) + eps)

  with ``eps = 1e-7`` and ``sigma`` the 17 COCO sigmas when ``K == 17``, else ``1 / K`` for
  every keypoint (Ultralytics' ``OKS_SIGMA if kpt_shape == [17, 3] else np.ones(K) / K``).
  Every step rounds to float32 in that order: a ground truth with one labelled keypoint divides
  by ``float32(1 + 1e-7) = 1 + 2**-23`` (so a perfect prediction scores ``0.99999988``), one
  without labelled keypoints scores 0.
* ``batch_probiou`` (called by ``OBBValidator._process_batch``): the Bhattacharyya-distance
  similarity of the boxes' Gaussians (see :func:`ioukit.probiou`), formula for formula in
  float32, on Ultralytics' ``xywhr`` boxes (radians, clockwise with y down). A dataset's
  ``rotated`` column (degrees, counter-clockwise, torchvision's convention) is converted
  ``theta = -angle * pi / 180`` in float64 before rounding to float32; corner-only boxes are
  fitted as :func:`ioukit.boxes.box_convert` does (``xyxyxyxy -> cxcywhr``; probiou does not
  depend on which edge is called the width).

NumPy computes the same float32 operations in the same order. ``exp``, ``log``, ``sin`` and
``cos`` are correctly rounded float32 values (computed in float64, then rounded), as torch's
float32 routines give in all but rare cases; the sum over keypoints is NumPy's float32
pairwise sum. Either can differ from torch in the last bit in rare cases (an OKS or probiou
exactly on a threshold could then differ).

Examples
--------
>>> import numpy as np
>>> gt = np.array([[[10.0, 10.0, 2.0], [20.0, 10.0, 0.0], [0.0, 0.0, 0.0]]], np.float32)
>>> float(ultralytics_oks(gt, gt, np.array([100.0], np.float32), ultralytics_sigmas(3))[0, 0])
0.9999998807907104
>>> float(ultralytics_probiou([[0, 0, 2, 2, 0]], [[0, 0, 2, 2, 0]])[0, 0])
0.9995318055152893"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ioukit.boxes import box_convert
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.groups import GroupMatrices
from ioukit.evaluation.similarity.box import Float32BoxIoU
from ioukit.evaluation.similarity.oks import COCO_SIGMAS, check_sigmas, dataset_keypoints
from ioukit.evaluation.similarity.rotated import RotatedIoU, dataset_corners

if TYPE_CHECKING:
    from ioukit.evaluation.groups import GroupMatrices, Groups

__all__ = [
    "UltralyticsOKS",
    "UltralyticsProbIoU",
    "ultralytics_oks",
    "ultralytics_probiou",
    "ultralytics_sigmas",
    "yolo_similarity",
]


_PAIRS_PER_CHUNK = 1 << 16


def _f32(fn: Any, x: np.ndarray) -> np.ndarray:
    """``fn`` in float64 rounded to float32: the correctly rounded float32 result (NumPy's own
    float32 ``exp``/``log``/``sin``/``cos`` are only faithful: ``exp(-1e-7)`` comes out one
    float32 above torch's, which moves probiou of identical boxes from 0.9995318 to 0.9996005).
    """
    return np.asarray(fn(np.asarray(x, dtype=np.float64)), dtype=np.float32)


def ultralytics_sigmas(num_keypoints: int, sigmas: object = None) -> np.ndarray:
    """Ultralytics' pose sigmas for K keypoints (float64, shape (K,)).

    ``sigmas`` given: checked (K positive numbers) and returned. Otherwise the 17 COCO person
    sigmas when ``K == 17``, else ``1 / K`` for every keypoint, as ``PoseValidator`` does.

    Examples
    --------
    >>> ultralytics_sigmas(4).tolist()
    [0.25, 0.25, 0.25, 0.25]
    >>> ultralytics_sigmas(17)[:2].round(6).tolist()
    [0.026, 0.025]
    """

    if sigmas is not None:
        return check_sigmas(sigmas, int(num_keypoints))
    if num_keypoints == 17:
        # Ultralytics' OKS_SIGMA: the COCO sigmas x 10 as float32, divided by 10 in float32;
        # some differ from float32(sigma) by an ulp
        tenfold = np.array(COCO_SIGMAS, dtype=np.float64) * 10
        return (np.round(tenfold, 2).astype(np.float32) / np.float32(10)).astype(np.float64)
    return np.ones(int(num_keypoints)) / int(num_keypoints)


def _oks_f32(
    gt: np.ndarray, pred: np.ndarray, area: np.ndarray, variance: np.ndarray, eps: np.float32
) -> np.ndarray:
    """``kpt_iou`` on broadcastable float32 arrays: gt/pred (..., K, >=2), area (...)."""
    dx = gt[..., 0] - pred[..., 0]
    dy = gt[..., 1] - pred[..., 1]
    d = dx * dx + dy * dy
    scale = variance * (area[..., None] + eps) * np.float32(2)
    e = d / scale
    mask = (gt[..., 2] != 0).astype(np.float32)
    mask = np.broadcast_to(mask, e.shape)
    count = mask.sum(-1, dtype=np.float32) + eps
    kept = _f32(np.exp, -e) * mask
    return np.asarray(kept.sum(-1, dtype=np.float32) / count, dtype=np.float32)


def ultralytics_oks(
    gt_keypoints: np.ndarray,
    pred_keypoints: np.ndarray,
    gt_area: np.ndarray,
    sigmas: np.ndarray,
    *,
    eps: float = 1e-7,
) -> np.ndarray:
    """Ultralytics' ``kpt_iou`` in float32: OKS of every (ground truth, prediction) pair.

    Parameters
    ----------
    gt_keypoints : ndarray, shape (N, K, 3)
        ``(x, y, v)``; keypoints with ``v != 0`` count.
    pred_keypoints : ndarray, shape (M, K, 2) or (M, K, 3)
    gt_area : ndarray, shape (N,)
        The scale (Ultralytics: GT box ``w * h * 0.53``).
    sigmas : ndarray, shape (K,)
    eps : float
        Ultralytics' ``1e-7`` (rounded to float32).

    Returns
    -------
    ndarray of float32, shape (N, M)

    Examples
    --------
    >>> g = np.array([[[0, 0, 2], [10, 0, 2]]], np.float32)
    >>> p = g + np.array([[[1, 0, 0], [0, 0, 0]]], np.float32)
    >>> ultralytics_oks(g, p, np.array([50.0]), np.array([0.5, 0.5])).round(6)
    array([[0.995025]], dtype=float32)
    """
    g = np.asarray(gt_keypoints, dtype=np.float32)
    p = np.asarray(pred_keypoints, dtype=np.float32)
    if g.ndim != 3 or g.shape[2] < 3 or p.ndim != 3 or p.shape[2] < 2 or g.shape[1] != p.shape[1]:
        raise DataFormatError(
            f"gt_keypoints, pred_keypoints: expected (N, K, 3) and (M, K, 2|3), got "
            f"{g.shape} and {p.shape}"
        )
    variance = (np.asarray(sigmas, dtype=np.float32) * np.float32(2)) ** 2
    area = np.asarray(gt_area, dtype=np.float32).reshape(-1)
    return _oks_f32(g[:, None], p[None, :], area[:, None], variance, np.float32(eps))


def _covariance(w: np.ndarray, h: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, ...]:
    a = w * w / np.float32(12)
    b = h * h / np.float32(12)
    cos = _f32(np.cos, theta)
    sin = _f32(np.sin, theta)
    cos2 = cos * cos
    sin2 = sin * sin
    return a * cos2 + b * sin2, a * sin2 + b * cos2, (a - b) * cos * sin


def _probiou_f32(first: np.ndarray, second: np.ndarray, eps: np.float32) -> np.ndarray:
    """``batch_probiou`` on broadcastable float32 (..., 5) xywhr arrays (first: ground truth)."""
    x1, y1 = first[..., 0], first[..., 1]
    x2, y2 = second[..., 0], second[..., 1]
    a1, b1, c1 = _covariance(first[..., 2], first[..., 3], first[..., 4])
    a2, b2, c2 = _covariance(second[..., 2], second[..., 3], second[..., 4])
    aa, bb, cc = a1 + a2, b1 + b2, c1 + c2
    dy, dx = y1 - y2, x1 - x2
    denominator = aa * bb - cc * cc + eps
    t1 = ((aa * (dy * dy) + bb * (dx * dx)) / denominator) * np.float32(0.25)
    t2 = ((cc * (x2 - x1) * dy) / denominator) * np.float32(0.5)
    det1 = np.maximum(a1 * b1 - c1 * c1, np.float32(0))
    det2 = np.maximum(a2 * b2 - c2 * c2, np.float32(0))
    t3 = _f32(np.log, (aa * bb - cc * cc) / (np.float32(4) * np.sqrt(det1 * det2) + eps) + eps)
    t3 = t3 * np.float32(0.5)
    bd = np.clip(t1 + t2 + t3, eps, np.float32(100.0))
    hd = np.sqrt(np.float32(1.0) - _f32(np.exp, -bd) + eps)
    return np.asarray(np.float32(1) - hd, dtype=np.float32)


def ultralytics_probiou(
    gt_xywhr: object, pred_xywhr: object, /, *, eps: float = 1e-7
) -> np.ndarray:
    """Ultralytics' ``batch_probiou`` in float32 on its ``xywhr`` boxes (radians, clockwise).

    Parameters
    ----------
    gt_xywhr : array_like, shape (N, 5)
    pred_xywhr : array_like, shape (M, 5)
    eps : float

    Returns
    -------
    ndarray of float32, shape (N, M)

    Examples
    --------
    >>> ultralytics_probiou([[0, 0, 2, 2, 0]], [[1, 0, 2, 2, 0]]).round(6)
    array([[0.440795]], dtype=float32)
    """
    a = np.asarray(gt_xywhr, dtype=np.float32)
    b = np.asarray(pred_xywhr, dtype=np.float32)
    if a.ndim != 2 or a.shape[1] != 5 or b.ndim != 2 or b.shape[1] != 5:
        raise DataFormatError(
            f"gt_xywhr, pred_xywhr: expected (N, 5) and (M, 5) boxes, got {a.shape} and {b.shape}"
        )
    return _probiou_f32(a[:, None], b[None, :], np.float32(eps))


def _pairs(groups: Groups, out: GroupMatrices) -> tuple[np.ndarray, np.ndarray]:
    """(prediction, ground truth) positions in group order of every matrix cell, row-major."""
    g_count = groups.gt_count
    sizes = np.where(g_count > 0, groups.kept_count * g_count, 0)
    group = np.repeat(np.arange(len(sizes)), sizes)
    local = np.arange(int(sizes.sum())) - np.repeat(out.offsets, sizes)
    width = np.maximum(g_count[group], 1)
    return groups.pred_start[group] + local // width, groups.gt_start[group] + local % width


def _xyxy_area_f32(ds: Dataset, rows: np.ndarray) -> np.ndarray:
    """``xyxy2xywh(box)[:, 2:].prod(1) * 0.53`` in float32, as ``PoseValidator``."""
    b = np.asarray(ds.boxes[rows], dtype=np.float32).reshape(-1, 4)
    w = b[:, 2] - b[:, 0]
    h = b[:, 3] - b[:, 1]
    return np.asarray(w * h * np.float32(0.53), dtype=np.float32)


@dataclass(frozen=True, slots=True)
class UltralyticsOKS:
    """Ultralytics' pose OKS (``kpt_iou``, float32) as a similarity of the evaluation pipeline.

    Needs ``keypoints`` on both datasets; the scale is the ground-truth box's
    ``w * h * 0.53``. Values are float32 stored exactly as float64.

    Parameters
    ----------
    sigmas : tuple of float or None
        Default :func:`ultralytics_sigmas` (COCO's for 17 keypoints, else ``1 / K``).
    eps : float
    """

    reads: ClassVar[str] = "keypoints"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    sigmas: tuple[float, ...] | None = None
    eps: float = 1e-7

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """Float32 OKS [P_i, G_i] of every group."""

        gt_kp, pred_kp = dataset_keypoints(gt, pred)
        k = int(gt_kp.shape[1])
        variance = (ultralytics_sigmas(k, self.sigmas).astype(np.float32) * np.float32(2)) ** 2
        out = GroupMatrices.allocate(groups)
        p_idx, g_idx = _pairs(groups, out)
        g_kp = np.asarray(gt_kp[groups.gt_rows], dtype=np.float32)
        p_kp = np.asarray(pred_kp[groups.pred_rows], dtype=np.float32)
        area = _xyxy_area_f32(gt, groups.gt_rows)
        eps = np.float32(self.eps)
        for lo in range(0, p_idx.size, _PAIRS_PER_CHUNK):
            p, g = p_idx[lo : lo + _PAIRS_PER_CHUNK], g_idx[lo : lo + _PAIRS_PER_CHUNK]
            out.values[lo : lo + p.size] = _oks_f32(g_kp[g], p_kp[p], area[g], variance, eps)
        return out


def _xywhr_f32(ds: Dataset, name: str) -> np.ndarray:
    """Ultralytics ``xywhr`` (radians, clockwise) of every row, float32."""

    if ds.rotated is not None:
        rect = np.asarray(ds.rotated, dtype=np.float64).reshape(-1, 5)
    else:
        rect = np.asarray(box_convert(dataset_corners(ds, name)[0], "xyxyxyxy", "cxcywhr"))
        rect = rect.reshape(-1, 5)
    theta = -rect[:, 4] * (np.pi / 180.0)
    return np.concatenate([rect[:, :4], theta[:, None]], axis=1).astype(np.float32)


@dataclass(frozen=True, slots=True)
class UltralyticsProbIoU:
    """Ultralytics' OBB similarity (``batch_probiou``, float32) for the evaluation pipeline.

    Boxes from the ``rotated`` column, else fitted to the 8-number corners (see the module
    notes). Values are float32 stored exactly as float64.
    """

    reads: ClassVar[str] = "rotated"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    eps: float = 1e-7

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """Float32 probiou [P_i, G_i] of every group (ground truth first, as Ultralytics)."""

        out = GroupMatrices.allocate(groups)
        p_idx, g_idx = _pairs(groups, out)
        g_r = _xywhr_f32(gt, "ground_truth")[groups.gt_rows]
        p_r = _xywhr_f32(pred, "predictions")[groups.pred_rows]
        eps = np.float32(self.eps)
        for lo in range(0, p_idx.size, _PAIRS_PER_CHUNK):
            p, g = p_idx[lo : lo + _PAIRS_PER_CHUNK], g_idx[lo : lo + _PAIRS_PER_CHUNK]
            out.values[lo : lo + p.size] = _probiou_f32(g_r[g], p_r[p], eps)
        return out


def yolo_similarity(iou_type: str, /, *, sigmas: object = None) -> Any:
    """The similarity ``protocol="yolo"`` matches with for ``iou_type``.

    ``"bbox"``: Ultralytics' float32 ``box_iou``; ``"keypoints"``: :class:`UltralyticsOKS`;
    ``"probiou"``: :class:`UltralyticsProbIoU` (Ultralytics' OBB numbers); ``"rotated"``: the
    exact rotated IoU (float64; not what Ultralytics computes, see the README).

    Raises
    ------
    ParameterError
        Another ``iou_type``.

    Examples
    --------
    >>> type(yolo_similarity("probiou")).__name__
    'UltralyticsProbIoU'
    """

    if iou_type == "bbox":
        return Float32BoxIoU()
    if iou_type == "keypoints":
        sig = None if sigmas is None else tuple(np.asarray(sigmas, float).reshape(-1).tolist())
        return UltralyticsOKS(sig)
    if iou_type == "probiou":
        return UltralyticsProbIoU()
    if iou_type == "rotated":
        return RotatedIoU()
    raise ParameterError(
        "iou_type: protocol 'yolo' supports 'bbox', 'keypoints', 'probiou', 'rotated', "
        f"got {iou_type!r}"
    )
