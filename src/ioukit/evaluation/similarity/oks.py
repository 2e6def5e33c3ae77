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
array([[0.803265]])"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ioukit._host import host_float64
from ioukit._kernels import oks as kernel
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.groups import GroupMatrices
from ioukit.evaluation.registry import register_similarity

if TYPE_CHECKING:
    from ioukit.evaluation.groups import GroupMatrices, Groups

__all__ = [
    "COCO_SIGMAS",
    "CROWDPOSE_SIGMAS",
    "OKS",
    "OKS_AREAS",
    "OKS_EPS",
    "RANGE_AREAS",
    "box_xywh",
    "check_sigmas",
    "concat_keypoints",
    "dataset_keypoints",
    "keypoint_similarity",
    "oks_scale",
    "streamed_keypoints",
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


OKS_EPS = float(np.spacing(1))


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
    ParameterError
        Not a vector of positive finite numbers, or its length is not ``num_keypoints``.

    Examples
    --------
    >>> check_sigmas(None).shape
    (17,)
    >>> check_sigmas([0.5, 0.5], 3)
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: sigmas: expected 3 values (one per keypoint of the data), got 2
    """
    if sigmas is None:
        if num_keypoints is not None and num_keypoints != len(COCO_SIGMAS):
            raise ParameterError(
                f"sigmas: the default COCO person sigmas are for 17 keypoints, but the data has "
                f"{num_keypoints}; pass sigmas= with {num_keypoints} values"
            )
        return COCO_SIGMAS
    try:
        array = np.array(sigmas, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"sigmas: expected a sequence of numbers, got {sigmas!r}") from exc
    if array.ndim != 1 or array.size == 0:
        raise ParameterError(f"sigmas: expected a non-empty 1-D sequence, got shape {array.shape}")
    if not np.all(np.isfinite(array) & (array > 0)):
        bad = int(np.flatnonzero(~(np.isfinite(array) & (array > 0)))[0])
        raise ParameterError(f"sigmas[{bad}]: expected a positive finite number, got {array[bad]}")
    if num_keypoints is not None and array.size != num_keypoints:
        raise ParameterError(
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
        # pycocotools and xtcocotools count any v > 0 as labelled (COCO-WholeBody stores
        # confidences there), as the file readers do
        good = np.isfinite(v) & (v >= 0)
        if not good.all():
            n, k = np.argwhere(~good)[0]
            raise DataFormatError(
                f"{name}[{n}, {k}, 2]: expected a visibility >= 0 (0 unlabelled, any v > 0 "
                f"labelled), got {v[n, k]}"
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
        np.concatenate([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]], axis=1),
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
    gt_xywh: np.ndarray,
    gt_area: np.ndarray,
    variances: np.ndarray,
    *,
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    pred_count: np.ndarray,
    pred_rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """OKS matrices ``[P_i, G_i]`` of every group, flat, and their offsets (private helper).

    Parameters
    ----------
    pred_xy : ndarray, shape (N, K, 2) or (N, K, 3)
        Prediction keypoints (x, y used).
    gt_keypoints : ndarray, shape (G, K, 3)
    gt_xywh : ndarray, shape (G, 4)
        COCO ``[x, y, w, h]`` boxes; used for ground truths without a visible keypoint.
    gt_area : ndarray, shape (G,)
        OKS scale of each ground truth (``eps`` is added here).
    variances : ndarray, shape (K,)
        ``(2 sigma) ** 2``.
    gt_start, gt_end, pred_start, pred_count : ndarray of intp, shape (n_groups,)
        Group ``i``'s ground truths are rows ``gt_start[i]:gt_end[i]``, its predictions
        ``pred_start[i]:pred_start[i] + pred_count[i]`` (already cut to ``max_dets``) of
        ``pred_rows``.
    pred_rows : ndarray of intp, shape (P,), optional
        Rows of ``pred_xy`` in group order (default: ``pred_xy``'s rows in order); the
        kernels read them in place, without a gathered copy.

    Returns
    -------
    values : ndarray of float64, shape (sum(P_i * G_i),)
    offsets : ndarray of int64, shape (n_groups,)
        Start of group ``i``'s row-major matrix in ``values``.
    """

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
    x, y, w, h = (gt_xywh[:, i] for i in range(4))
    outer_box = np.ascontiguousarray(np.stack([x - w, y - h, x + w * 2, y + h * 2], axis=1))
    area_eps = np.ascontiguousarray(gt_area + OKS_EPS, dtype=np.float64)
    pred = np.ascontiguousarray(pred_xy, dtype=np.float64)
    variances = np.ascontiguousarray(variances, dtype=np.float64)
    rows = np.arange(len(pred), dtype=np.intp) if pred_rows is None else pred_rows
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    needed = int((pred_start + pred_count).max(initial=0))
    if needed > len(rows) or (len(rows) and not 0 <= rows.min() <= rows.max() < len(pred)):
        raise ValueError("pred_rows: expected rows of pred_xy covering every group")

    # terms per group: P_i rows of S_i = sum of its ground truths' n_terms
    cum = np.zeros(len(n_terms) + 1, dtype=np.intp)
    np.cumsum(n_terms, out=cum[1:])
    group_terms = pred_count * (cum[gt_end] - cum[gt_start])
    term_offsets = np.zeros(n_groups + 1, dtype=np.intp)
    np.cumsum(group_terms, out=term_offsets[1:])
    if _fused_exp():
        # one pass per prediction row (terms in a per-thread scratch row, NumPy's exp loop)
        rows_terms = cum[gt_end] - cum[gt_start]
        threads = _threads() if int(term_offsets[-1]) >= _PARALLEL_MIN_TERMS else 1
        scratch = np.empty((threads, 2 * max(int(rows_terms.max(initial=0)), 1)))
        kernel.oks_groups(
            0, n_groups, gt_start, gt_end, pred_start, pred_count, gt, visible_index, n_terms,
            outer_box, area_eps, pred, rows, variances, offsets, values, scratch, threads > 1,
        )  # fmt: skip
        return values, offsets.astype(np.int64)
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
            n_terms, outer_box, area_eps, pred, rows, variances, terms, parallel,
        )  # fmt: skip
        np.exp(terms, out=terms)
        kernel.sum_terms(
            first, last, gt_start, gt_end, pred_count, local, n_terms, offsets, terms, values,
            parallel,
        )  # fmt: skip
        first = last
    return values, offsets.astype(np.int64)


_FUSED_EXP: list[bool] = []


def _fused_exp() -> bool:
    """Whether :func:`ioukit._kernels.oks.oks_groups` gives NumPy's exp bits here (cached).

    The kernel calls the inner loop ``numpy.exp`` uses on float64 arrays (its first
    ``'d->d'`` loop); this checks it against ``numpy.exp`` on values across the OKS range,
    whole and in rows of every length up to 40 at every offset, and that ``numpy.exp`` is +0
    below the kernel's ``UNDERFLOW`` (terms it does not pass to exp), once per process. When
    not (or the loop cannot be taken) the three-pass path with ``numpy.exp`` itself runs.
    """
    if not _FUSED_EXP:
        ok = False
        try:
            kernel.set_exp_loop(list(np.exp.types).index("d->d"))
            rng = np.random.default_rng(0)
            sample = np.concatenate(
                [
                    -np.geomspace(1e-300, 800.0, 4096),
                    rng.uniform(-40.0, 0.0, 8192),
                    rng.uniform(-800.0, 0.0, 4096),
                    [0.0, -0.0, -745.1332191019412, -745.1332191019411, -708.4, -709.8],
                ]
            )
            want = np.exp(sample)
            got = sample.copy()
            kernel.exp_inplace(got)
            ok = bool(np.array_equal(got.view(np.int64), want.view(np.int64)))
            # the kernel writes +0 for terms below UNDERFLOW without calling exp
            low = np.concatenate(
                [[kernel.UNDERFLOW, -np.inf], -np.geomspace(-kernel.UNDERFLOW, 1e308, 4096)]
            )
            ok = ok and bool(np.all(np.exp(low).view(np.int64) == 0))
            pos = 0
            for n in range(1, 41):
                for offset in range(8):
                    part = sample[pos + offset : pos + offset + n].copy()
                    kernel.exp_inplace(part)
                    ok = ok and np.array_equal(
                        part.view(np.int64), want[pos + offset : pos + offset + n].view(np.int64)
                    )
                pos += 48
        except (ValueError, RuntimeError, TypeError):
            ok = False
        _FUSED_EXP.append(ok)
    return _FUSED_EXP[0]


def _threads() -> int:
    """OpenMP threads of the OKS kernel on large inputs: the CPU count, at most 8."""
    import os

    return max(1, min(os.cpu_count() or 1, 8))


def streamed_keypoints(
    d: Mapping[str, Any], name: str, boxes_of: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keypoints, xyxy boxes and areas of one image's side of ``Evaluator.update``.

    Targets (``name`` starting with "targets") need ``boxes`` and ``(x, y, v)`` keypoints
    (``(x, y)`` pairs count as visible). Predictions without ``boxes`` take the keypoints'
    extent and its area (pycocotools' ``loadRes``); with boxes, the box area.

    Parameters
    ----------
    d : mapping
        One image's dict: ``keypoints`` (N, K, 3) or (N, K, 2), optionally ``boxes``.
    name : str
        Where ``d`` came from, for error messages (``"targets[0]"``, ``"predictions[0]"``).
    boxes_of : callable
        ``boxes_of(value, name)`` -> (N, 4) float64 xyxy boxes (the Evaluator's box reader).

    Returns
    -------
    keypoints : ndarray of float64, shape (N, K, 3)
    boxes : ndarray of float64, shape (N, 4)
        xyxy.
    area : ndarray of float64, shape (N,)

    Examples
    --------
    >>> kp, boxes, area = streamed_keypoints({"keypoints": [[[1, 2], [3, 6]]]}, "predictions[0]",
    ...                                      None)
    >>> kp[0, :, 2].tolist(), boxes.tolist(), area.tolist()
    ([1.0, 1.0], [[1.0, 2.0, 3.0, 6.0]], [8.0])
    """

    target = name.startswith("targets")
    kp = host_float64(d["keypoints"], f"{name}.keypoints")
    if kp.size == 0 and kp.ndim < 3:
        kp = kp.reshape(0, 0, 3)
    kp = _keypoint_array(kp, f"{name}.keypoints", visibility=target and kp.shape[-1:] == (3,))
    if kp.shape[2] == 2:
        kp = np.concatenate([kp, np.full((*kp.shape[:2], 1), 2.0 if target else 1.0)], axis=2)
    if "boxes" in d:
        boxes = boxes_of(d["boxes"], f"{name}.boxes")
        if len(boxes) != len(kp):
            raise DataFormatError(
                f"{name}: expected one box per instance, got {len(boxes)} boxes for "
                f"{len(kp)} keypoint sets"
            )
    elif target:
        raise DataFormatError(f"{name}.boxes: missing (the ground truth's boxes are needed)")
    else:
        lo, hi = kp[:, :, :2].min(axis=1), kp[:, :, :2].max(axis=1)
        boxes = np.concatenate([lo, hi], axis=1) if kp.shape[1] else np.zeros((len(kp), 4))
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return kp, boxes, area


def concat_keypoints(parts: list[np.ndarray], name: str) -> np.ndarray:
    """One array of the images' keypoints; every image must have the same K.

    Parameters
    ----------
    parts : list of ndarray, each of shape (N_i, K, 3)
        The keypoints of each image, as :func:`streamed_keypoints` returns them.
    name : str
        ``"targets"`` or ``"predictions"``, for the DataFormatError of a mismatched K.

    Returns
    -------
    ndarray of float64, shape (sum N_i, K, 3)
        (0, 0, 3) when there are no parts.

    Examples
    --------
    >>> concat_keypoints([np.zeros((2, 17, 3)), np.zeros((0, 0, 3))], "targets").shape
    (2, 17, 3)
    """
    ks = {p.shape[1] for p in parts if len(p)}
    if len(ks) > 1:
        first = next(i for i, p in enumerate(parts) if len(p))
        k = parts[first].shape[1]
        bad = next(i for i, p in enumerate(parts) if len(p) and p.shape[1] != k)
        raise DataFormatError(
            f"{name}[{bad}].keypoints: expected {k} keypoints per instance as in image "
            f"{first}, got {parts[bad].shape[1]}"
        )
    k = ks.pop() if ks else 0
    return (
        np.concatenate([p.reshape(len(p), k, 3) for p in parts]) if parts else np.zeros((0, 0, 3))
    )


OKS_AREAS = ("annotation", "box")


"""Scales of :class:`OKS`: the ground truth's ``area`` field, or its box ``w * h * 0.53``."""


def dataset_keypoints(gt: Dataset, pred: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The keypoints of a ground truth and a predictions dataset, checked for OKS.

    Parameters
    ----------
    gt, pred : Dataset
        Both must carry keypoints (DataFormatError otherwise), the same K per instance, and
        the ground truth at least one keypoint when it has annotations.

    Returns
    -------
    gt_keypoints : ndarray, shape (G, K, 3)
    pred_keypoints : ndarray, shape (P, K, 3)
    """
    gt_kp = gt.keypoints
    pred_kp = pred.keypoints
    if gt_kp is None:
        raise DataFormatError(
            "ground_truth.keypoints: expected (N, K, 3) keypoints for iou_type='keypoints', "
            "got none (read it with ioukit.io.coco_keypoints.read_coco_keypoints)"
        )
    if pred_kp is None:
        raise DataFormatError(
            "predictions.keypoints: expected (N, K, 3) keypoints for iou_type='keypoints', got none"
        )
    if len(gt) and gt_kp.shape[1] == 0:
        raise DataFormatError(
            "ground_truth.keypoints: no annotation has keypoints (is this a keypoint dataset?)"
        )
    if len(gt) and len(pred) and gt_kp.shape[1] != pred_kp.shape[1]:
        raise DataFormatError(
            f"predictions.keypoints: expected {gt_kp.shape[1]} keypoints per instance like the "
            f"ground truth, got {pred_kp.shape[1]}"
        )
    return gt_kp, pred_kp


def box_xywh(ds: Dataset, rows: np.ndarray) -> np.ndarray:
    """xywh boxes of ``rows``; w and h as the source gave them when the dataset has them."""
    boxes = ds.boxes[rows]
    wh = ds.box_wh[rows] if ds.box_wh is not None else boxes[:, 2:] - boxes[:, :2]
    return np.ascontiguousarray(np.concatenate([boxes[:, :2], wh], axis=1))


RANGE_AREAS = ("oks", "annotation")


"""What the keypoint area ranges compare: the OKS scale, or the ``area`` column."""


def oks_scale(gt: Dataset, rows: np.ndarray, oks_area: str) -> np.ndarray:
    """The OKS scale of the ground truths ``rows``: ``area``, or ``h * w * 0.53`` of the box.

    Parameters
    ----------
    gt : Dataset
        Ground truth.
    rows : ndarray of intp, shape (G,)
        Rows of ``gt``.
    oks_area : {"annotation", "box"}
        See :class:`OKS`.

    Returns
    -------
    ndarray of float64, shape (G,)

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["a"]),
    ...                          CategoryTable.from_lists([1], ["person"]),
    ...                          boxes=[[0, 0, 10, 20]], image_index=[0], category_id=[1],
    ...                          area=[150.0])
    >>> oks_scale(gt, np.array([0]), "box").tolist(), oks_scale(gt, np.array([0]), "annotation")
    ([106.0], array([150.]))
    """
    if oks_area != "box":
        return np.asarray(gt.area[rows], dtype=np.float64)
    xywh = box_xywh(gt, rows)
    # faster-coco-eval's / xtcocotools' gt["bbox"][3] * gt["bbox"][2] * 0.53, in that order
    # (xtcocotools' area-range test multiplies w * h first: the same double)
    scale: np.ndarray = xywh[:, 3] * xywh[:, 2] * 0.53
    return scale


@dataclass(frozen=True, slots=True)
class OKS:
    """Object keypoint similarity as a similarity of the evaluation pipeline.

    ``iou_type="keypoints"``: every group's matrix ``[P_i, G_i]`` of OKS, exactly pycocotools'
    ``computeOks`` (see the module docstring). Needs ``keypoints`` on both datasets.

    Parameters
    ----------
    sigmas : sequence of float, shape (K,), optional
        Per-keypoint sigmas; default :data:`COCO_SIGMAS` (then K must be 17).
    oks_area : {"annotation", "box"}
        The scale: the ground truth's ``area`` column (COCO: the segment's area; pycocotools),
        or ``h * w * 0.53`` of its box (CrowdPose, xtcocotools ``use_area=False``,
        faster-coco-eval ``use_area=False``, Ultralytics).

    Examples
    --------
    >>> OKS(oks_area="segment")
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: oks_area: expected 'annotation' or 'box', got 'segment'
    """

    reads: ClassVar[str] = "keypoints"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    sigmas: tuple[float, ...] | None = None
    oks_area: str = "annotation"

    def __post_init__(self) -> None:
        if self.oks_area not in OKS_AREAS:
            raise ParameterError(f"oks_area: expected 'annotation' or 'box', got {self.oks_area!r}")
        if self.sigmas is not None:
            object.__setattr__(self, "sigmas", tuple(check_sigmas(self.sigmas).tolist()))

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """OKS of every group (see the class docstring)."""

        gt_kp, pred_kp = dataset_keypoints(gt, pred)
        # K of the data: a ground truth without annotations has no K of its own
        k = gt_kp.shape[1] if len(gt_kp) else (pred_kp.shape[1] if len(pred_kp) else None)
        variances = (check_sigmas(self.sigmas, None if k is None else int(k)) * 2) ** 2
        g_rows = groups.gt_rows
        xywh = box_xywh(gt, g_rows)
        area = np.ascontiguousarray(oks_scale(gt, g_rows, self.oks_area))
        # only the kept predictions (max_dets per group) of groups with ground truth are read
        # (crowded images keep ~1/6 of the results; gathering all cost more than the OKS)
        count = np.where(groups.gt_end > groups.gt_start, groups.kept_count, 0).astype(np.intp)
        start = np.zeros(len(count), dtype=np.intp)
        np.cumsum(count[:-1], out=start[1:])
        kept = np.arange(int(count.sum()), dtype=np.intp)
        kept += np.repeat(np.asarray(groups.pred_start, dtype=np.intp) - start, count)
        values, offsets = _group_oks(
            pred_kp,
            gt_kp[g_rows],
            xywh,
            area,
            variances,
            gt_start=groups.gt_start,
            gt_end=groups.gt_end,
            pred_start=start,
            pred_count=count,
            pred_rows=groups.pred_rows[kept],  # read in place (a gathered copy cost 0.085 s)
        )
        return GroupMatrices(values, offsets)


register_similarity("keypoints", OKS)
