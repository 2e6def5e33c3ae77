"""Object keypoint similarity (OKS), as pycocotools' ``COCOeval.computeOks``.

For a prediction ``d`` and a ground truth ``g`` with K keypoints ``(x, y, v)``::

    e_k = (dx_k ** 2 + dy_k ** 2) / (2 sigma_k) ** 2 / (area_g + eps) / 2
    OKS = mean over the visible keypoints of g (v > 0) of exp(-e_k)

with ``eps = np.spacing(1)`` and ``area_g`` the ground truth's ``area`` field (the segment's
area in COCO). A ground truth without a visible keypoint measures, over all K keypoints, the
distance from each predicted keypoint to the outside of the box three times its size
(``x - w .. x + 2 w``, the same in y). The values are bit-identical to pycocotools' (same
operation order, NumPy's exp, NumPy's pairwise summation order).

Examples
--------
>>> import numpy as np
>>> gt = np.array([[[10.0, 10.0, 2.0], [20.0, 10.0, 2.0], [0.0, 0.0, 0.0]]])  # (1, 3, 3)
>>> pred = gt.copy()
>>> pred[0, 1, 0] += 2.0
>>> keypoint_similarity(pred, gt, gt_area=[100.0], sigmas=[0.1, 0.1, 0.1]).round(6)
array([[0.803265]])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ioukit.errors import DataFormatError

__all__ = [
    "COCO_SIGMAS",
    "CROWDPOSE_SIGMAS",
    "check_sigmas",
    "keypoint_similarity",
]

_COCO = [0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87, 0.87]
COCO_SIGMAS: np.ndarray = np.array([*_COCO, 0.89, 0.89]) / 10.0
"""The 17 COCO person keypoint sigmas (pycocotools' ``kpt_oks_sigmas``): nose, eyes, ears,
shoulders, elbows, wrists, hips, knees, ankles."""
COCO_SIGMAS.setflags(write=False)

CROWDPOSE_SIGMAS: np.ndarray = (
    np.array([0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87, 0.87, 0.89, 0.89, 0.79, 0.79])
    / 10.0
)
"""The 14 CrowdPose sigmas (shoulders, elbows, wrists, hips, knees, ankles, head, neck)."""
CROWDPOSE_SIGMAS.setflags(write=False)

_EPS = float(np.spacing(1))
_CHUNK_TERMS = 1 << 21
"""Terms (one float64 each) held at once: the work is done in chunks of groups this size."""
_PARALLEL_MIN_TERMS = 1 << 18
"""From this many terms in a chunk, groups are shared between OpenMP threads."""


def check_sigmas(sigmas: object, num_keypoints: int | None = None) -> np.ndarray:
    """Validate per-keypoint OKS sigmas and return them as a read-only float64 vector.

    Parameters
    ----------
    sigmas : sequence of float, shape (K,), or None
        One positive, finite sigma per keypoint. ``None`` gives :data:`COCO_SIGMAS` (which
        needs ``num_keypoints`` to be 17 or None).
    num_keypoints : int, optional
        K of the data; a different length is an error naming both.

    Returns
    -------
    ndarray of float64, shape (K,)

    Raises
    ------
    ValueError
        Not a vector of positive finite numbers, or its length is not ``num_keypoints``.

    Examples
    --------
    >>> check_sigmas(None).shape
    (17,)
    >>> check_sigmas([0.5, 0.5], 3)
    Traceback (most recent call last):
    ...
    ValueError: sigmas: expected 3 values (one per keypoint of the data), got 2
    """
    if sigmas is None:
        if num_keypoints is not None and num_keypoints != len(COCO_SIGMAS):
            raise ValueError(
                f"sigmas: the default COCO person sigmas are for 17 keypoints, but the data has "
                f"{num_keypoints}; pass sigmas= with {num_keypoints} values"
            )
        return COCO_SIGMAS
    try:
        array = np.array(sigmas, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sigmas: expected a sequence of numbers, got {sigmas!r}") from exc
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"sigmas: expected a non-empty 1-D sequence, got shape {array.shape}")
    if not np.all(np.isfinite(array) & (array > 0)):
        bad = int(np.flatnonzero(~(np.isfinite(array) & (array > 0)))[0])
        raise ValueError(f"sigmas[{bad}]: expected a positive finite number, got {array[bad]}")
    if num_keypoints is not None and array.size != num_keypoints:
        raise ValueError(
            f"sigmas: expected {num_keypoints} values (one per keypoint of the data), "
            f"got {array.size}"
        )
    array.setflags(write=False)
    return array


def _keypoint_array(values: object, name: str, *, visibility: bool) -> np.ndarray:
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataFormatError(f"{name}: expected an array of numbers") from exc
    if array.ndim != 3 or array.shape[2] not in ((3,) if visibility else (2, 3)):
        want = "(N, K, 3)" if visibility else "(N, K, 2) or (N, K, 3)"
        raise DataFormatError(f"{name}: expected shape {want}, got {array.shape}")
    finite = np.isfinite(array[:, :, :2])
    if not finite.all():
        n, k, c = np.argwhere(~finite)[0]
        raise DataFormatError(
            f"{name}[{n}, {k}, {c}]: expected a finite coordinate, got {array[n, k, c]}"
        )
    if visibility:
        v = array[:, :, 2]
        good = (v == 0) | (v == 1) | (v == 2)
        if not good.all():
            n, k = np.argwhere(~good)[0]
            raise DataFormatError(
                f"{name}[{n}, {k}, 2]: expected a visibility flag 0, 1 or 2, got {v[n, k]}"
            )
    return array


def keypoint_similarity(
    pred_keypoints: object,
    gt_keypoints: object,
    /,
    *,
    gt_area: Sequence[float] | np.ndarray,
    gt_boxes: Sequence[Sequence[float]] | np.ndarray | None = None,
    sigmas: Sequence[float] | np.ndarray | None = None,
) -> np.ndarray:
    """OKS of every prediction against every ground truth, as pycocotools computes it.

    Parameters
    ----------
    pred_keypoints : array_like, shape (P, K, 2) or (P, K, 3)
        Predicted ``(x, y[, score or visibility])``; only x and y are used.
    gt_keypoints : array_like, shape (G, K, 3)
        Ground-truth ``(x, y, v)`` with ``v`` in {0, 1, 2}; only ``v > 0`` keypoints count.
    gt_area : array_like, shape (G,)
        The scale of each ground truth: COCO's ``area`` (segment area), or ``w * h * 0.53``
        of its box for CrowdPose / Ultralytics.
    gt_boxes : array_like, shape (G, 4), optional
        xyxy boxes; needed only for ground truths without a visible keypoint (their OKS is
        measured to the outside of the box tripled about its centre... exactly pycocotools'
        ``x - w .. x + 2 w``).
    sigmas : array_like, shape (K,), optional
        Per-keypoint sigmas; default :data:`COCO_SIGMAS` (K = 17).

    Returns
    -------
    ndarray of float64, shape (P, G)
        ``oks[pred, gt]`` in [0, 1].

    Examples
    --------
    >>> kp = np.zeros((0, 17, 3))
    >>> keypoint_similarity(kp, kp, gt_area=[]).shape
    (0, 0)
    >>> gt = np.array([[[5.0, 5.0, 0.0]]])  # nothing visible: the tripled box decides
    >>> pred = np.array([[[5.0, 5.0], [40.0, 5.0]]])[:, :1]
    >>> keypoint_similarity(pred, gt, gt_area=[4.0], gt_boxes=[[4, 4, 6, 6]], sigmas=[1.0])
    array([[1.]])
    """
    pred = _keypoint_array(pred_keypoints, "pred_keypoints", visibility=False)
    gt = _keypoint_array(gt_keypoints, "gt_keypoints", visibility=True)
    if pred.shape[1] != gt.shape[1]:
        raise DataFormatError(
            f"pred_keypoints: expected {gt.shape[1]} keypoints per instance like gt_keypoints, "
            f"got {pred.shape[1]}"
        )
    variances = (check_sigmas(sigmas, gt.shape[1]) * 2) ** 2
    area = np.array(gt_area, dtype=np.float64).reshape(-1)
    if area.shape != (gt.shape[0],) or not np.all(np.isfinite(area)):
        raise DataFormatError(
            f"gt_area: expected {gt.shape[0]} finite numbers, got {np.shape(gt_area)}"
        )
    hidden = ~(gt[:, :, 2] > 0).any(axis=1)
    if gt_boxes is None:
        if hidden.any():
            raise DataFormatError(
                f"gt_boxes: needed for gt_keypoints[{int(np.flatnonzero(hidden)[0])}], which "
                "has no visible keypoint"
            )
        boxes = np.zeros((gt.shape[0], 4))
    else:
        boxes = np.array(gt_boxes, dtype=np.float64)
        if boxes.shape != (gt.shape[0], 4) or not np.all(np.isfinite(boxes)):
            raise DataFormatError(
                f"gt_boxes: expected shape ({gt.shape[0]}, 4) of finite numbers, got {boxes.shape}"
            )
    n_pred, n_gt = pred.shape[0], gt.shape[0]
    values = _group_oks(
        pred[:, :, :2],
        gt,
        boxes,
        area,
        variances,
        gt_start=np.zeros(1, dtype=np.intp),
        gt_end=np.full(1, n_gt, dtype=np.intp),
        pred_start=np.zeros(1, dtype=np.intp),
        pred_count=np.full(1, n_pred if n_gt else 0, dtype=np.intp),
    )[0]
    return values.reshape(n_pred, n_gt) if n_gt else np.zeros((n_pred, 0))


def _group_oks(
    pred_xy: np.ndarray,
    gt_keypoints: np.ndarray,
    gt_boxes: np.ndarray,
    gt_area: np.ndarray,
    variances: np.ndarray,
    *,
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    pred_count: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """OKS matrices ``[P_i, G_i]`` of every group, flat, and their offsets (private helper).

    Parameters
    ----------
    pred_xy : ndarray, shape (P, K, 2) or (P, K, 3)
        Prediction keypoints (x, y used), rows already in group order.
    gt_keypoints : ndarray, shape (G, K, 3)
    gt_boxes : ndarray, shape (G, 4)
        xyxy; used for ground truths without a visible keypoint.
    gt_area : ndarray, shape (G,)
        OKS scale of each ground truth (``eps`` is added here).
    variances : ndarray, shape (K,)
        ``(2 sigma) ** 2``.
    gt_start, gt_end, pred_start, pred_count : ndarray of intp, shape (n_groups,)
        Group ``i``'s ground truths are rows ``gt_start[i]:gt_end[i]``, its predictions
        ``pred_start[i]:pred_start[i] + pred_count[i]`` (already cut to ``max_dets``).

    Returns
    -------
    values : ndarray of float64, shape (sum(P_i * G_i),)
    offsets : ndarray of int64, shape (n_groups,)
        Start of group ``i``'s row-major matrix in ``values``.
    """
    from ioukit._kernels import oks as kernel

    n_k = variances.shape[0]
    gt_start = np.ascontiguousarray(gt_start, dtype=np.intp)
    gt_end = np.ascontiguousarray(gt_end, dtype=np.intp)
    pred_start = np.ascontiguousarray(pred_start, dtype=np.intp)
    g_count = gt_end - gt_start
    pred_count = np.where(g_count > 0, np.asarray(pred_count, dtype=np.intp), 0)
    pred_count = np.ascontiguousarray(pred_count, dtype=np.intp)
    n_groups = len(gt_start)
    sizes = pred_count * g_count
    offsets = np.zeros(n_groups, dtype=np.intp)
    np.cumsum(sizes[:-1], out=offsets[1:])
    values = np.empty(int(sizes.sum()), dtype=np.float64)
    if values.size == 0:
        return values, offsets.astype(np.int64)

    gt = np.ascontiguousarray(gt_keypoints, dtype=np.float64)
    visible = gt[:, :, 2] > 0
    n_visible = visible.sum(axis=1)
    n_terms = np.ascontiguousarray(np.where(n_visible > 0, n_visible, n_k), dtype=np.intp)
    # visible keypoints first, in order; then -1 (the kernel reads only the first n_terms)
    order = np.argsort(~visible, axis=1, kind="stable")
    visible_index = np.ascontiguousarray(np.where(np.take_along_axis(visible, order, 1), order, -1))
    visible_index = visible_index.astype(np.intp, copy=False)
    x, y = gt_boxes[:, 0], gt_boxes[:, 1]
    w, h = gt_boxes[:, 2] - x, gt_boxes[:, 3] - y
    outer_box = np.ascontiguousarray(np.stack([x - w, y - h, x + w * 2, y + h * 2], axis=1))
    area_eps = np.ascontiguousarray(gt_area + _EPS, dtype=np.float64)
    pred = np.ascontiguousarray(pred_xy, dtype=np.float64)
    variances = np.ascontiguousarray(variances, dtype=np.float64)

    # terms per group: P_i rows of S_i = sum of its ground truths' n_terms
    cum = np.zeros(len(n_terms) + 1, dtype=np.intp)
    np.cumsum(n_terms, out=cum[1:])
    group_terms = pred_count * (cum[gt_end] - cum[gt_start])
    term_offsets = np.zeros(n_groups + 1, dtype=np.intp)
    np.cumsum(group_terms, out=term_offsets[1:])
    first = 0
    while first < n_groups:
        # the largest run of groups whose terms fit in a chunk (at least one group)
        last = int(np.searchsorted(term_offsets, term_offsets[first] + _CHUNK_TERMS, "right"))
        last = min(max(last - 1, first + 1), n_groups)
        base = int(term_offsets[first])
        total = int(term_offsets[last]) - base
        local = np.ascontiguousarray(term_offsets[:-1] - base)
        terms = np.empty(total, dtype=np.float64)
        parallel = total >= _PARALLEL_MIN_TERMS
        kernel.fill_terms(
            first, last, gt_start, gt_end, pred_start, pred_count, local, gt, visible_index,
            n_terms, outer_box, area_eps, pred, variances, terms, parallel,
        )  # fmt: skip
        np.exp(terms, out=terms)
        kernel.sum_terms(
            first, last, gt_start, gt_end, pred_count, local, n_terms, offsets, terms, values,
            parallel,
        )  # fmt: skip
        first = last
    return values, offsets.astype(np.int64)
