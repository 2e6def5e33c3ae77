"""IoU of rotated (oriented) boxes: exact polygon IoU, its loss, and probiou.

Rotated boxes come in torchvision's formats (see :mod:`ioukit.boxes`): ``"cxcywhr"`` (the
default), ``"xywhr"`` and ``"xyxyxyxy"`` (any simple quadrilateral); the angle is in degrees,
counter-clockwise on the image, unless ``angle_unit="radians"`` and/or ``clockwise=True`` say
otherwise (mmcv, mmrotate and Ultralytics use radians, clockwise). Axis-aligned formats are
accepted too (angle 0).

The IoU is exact: the intersection of the two convex quadrilaterals is clipped (Sutherland-
Hodgman) and measured with the shoelace formula in float64. Identical boxes give exactly 1.0,
boxes differing in the last digits give IoU close to 1 (where detectron2 and mmcv have
returned 0.58, 0.60 or 0.33), zero-area boxes give 0, and the result is never NaN. On NumPy
arrays (and Python sequences) a compiled kernel computes it, threaded for large matrices; on
PyTorch, JAX, CuPy or any array-API array the same clipping runs as array operations in the
caller's dtype and on its device, differentiable (no data-dependent shapes); both boxes are
placed relative to the midpoint of their centres first, so float32 keeps its digits far from
the origin (about 2e-7 from the exact value at 5000 px; pass float64 for 1e-12). Results are in
the inputs' float dtype (NumPy float32 inputs are computed in float64, then rounded).

Quadrilaterals may be any simple quadrilateral: convex, or with one reflex corner (DOTA labels
have a few; the DOTA devkit's ``polyiou`` measures them as polygons, and so does the NumPy
kernel, exactly: such a quadrilateral is cut into two triangles along the diagonal through its
reflex corner). The array-API path (PyTorch, JAX, ...) clips convex quadrilaterals only and
refuses the others when it can see them on the host. A self-intersecting quadrilateral ("bow
tie") raises :class:`~ioukit.errors.BoxError` (a 1e-9 relative tolerance lets rounding
through); :func:`convex_hull_quads` is the documented way to repair such label polygons.

:func:`probiou` is *not* an IoU: it is the Bhattacharyya-distance similarity of Gaussians fitted
to the boxes (Llerena et al. 2021), as Ultralytics computes it for OBB validation and NMS.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ioukit._array import Array, compat_namespace, float_dtype_for, host_view, namespace_of
from ioukit._box_formats import as_rotated, check_angle_unit, radians, to_xyxyxyxy, xywhr_to_cxcywhr
from ioukit._kernels import rotated as kernels
from ioukit._rotated_corners import (
    CONVEXITY_TOLERANCE as CONVEXITY_TOLERANCE,  # re-exported: the documented constant
)
from ioukit._rotated_corners import (
    check_quads,
    convex_mask,
    corner_exponents,
    extreme_corners,
    host64,
    prepare_corners,
)
from ioukit.boxes import ROTATED_FORMATS, box_convert
from ioukit.errors import BoxError, ParameterError

__all__ = [
    "convex_hull_quads",
    "probiou",
    "probiou_elementwise",
    "rotated_box_iou",
    "rotated_box_iou_elementwise",
    "rotated_box_iou_loss",
]

AngleUnit = Literal["degrees", "radians"]

# ------------------------------------------------------------------------------------- inputs


def convex_hull_quads(corners: object, /) -> np.ndarray:
    """Replace quadrilaterals that are not convex by their convex hull (NumPy, float64).

    A self-intersecting quadrilateral (a "bow tie", corners out of order) gets its corners
    re-ordered around their centroid; a quadrilateral with a reflex corner (one corner inside
    the triangle of the other three) becomes that triangle, its last corner repeated. Convex
    quadrilaterals are returned unchanged. This is the rule to apply, knowingly, to label files
    with a few bad polygons; :func:`rotated_box_iou` measures a quadrilateral with a reflex
    corner as it is (as the DOTA devkit does) and refuses self-intersecting ones.

    Parameters
    ----------
    corners : array_like, shape (..., 8)

    Returns
    -------
    ndarray of float64, shape (..., 8)

    Examples
    --------
    >>> convex_hull_quads([[0, 0, 2, 2, 0, 2, 2, 0]]).tolist()  # bow tie -> square
    [[0.0, 0.0, 2.0, 0.0, 2.0, 2.0, 0.0, 2.0]]
    >>> convex_hull_quads([[0, 0, 4, 0, 1, 1, 0, 4]]).tolist()  # reflex corner -> triangle
    [[0.0, 0.0, 4.0, 0.0, 0.0, 4.0, 0.0, 4.0]]
    """
    arr = np.array(corners, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] != 8:
        raise BoxError(f"corners: expected shape (..., 8), got {arr.shape}")
    p = arr.reshape(-1, 4, 2)
    for i in np.flatnonzero(~convex_mask(p)).tolist():
        pts = p[i]
        centre = pts.mean(axis=0)
        ordered = pts[np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))]
        if not convex_mask(ordered[None])[0]:
            for k in range(4):  # the corner inside the triangle of the other three
                tri = np.delete(pts, k, axis=0)
                a, b, c = tri
                signs = [
                    (v[0] - u[0]) * (pts[k][1] - u[1]) - (v[1] - u[1]) * (pts[k][0] - u[0])
                    for u, v in ((a, b), (b, c), (c, a))
                ]
                if min(signs) >= 0 or max(signs) <= 0:
                    ordered = np.concatenate([tri, tri[-1:]])
                    break
        p[i] = ordered
    out: np.ndarray = p.reshape(arr.shape)
    return out


def _centre_offsets(
    xp: Any, arr: Array, fmt: str, unit: str, clockwise: bool
) -> tuple[Array, Array, Array]:
    """Centres ``cx, cy`` (...) and corner offsets from them (..., 8), for the generic path.

    For ``cxcywhr``/``xywhr`` the offsets come from ``w, h, r`` alone, so a small box far from
    the origin keeps its digits in float32 (as detectron2 shifts centres first).
    """

    if fmt in ("cxcywhr", "xywhr"):
        b = arr if fmt == "cxcywhr" else xywhr_to_cxcywhr(xp, arr, unit, clockwise)
        cx, cy, w, h, r = (b[..., k] for k in range(5))
        r_rad = radians(xp, r, unit, clockwise)
        cos, sin = xp.cos(r_rad), xp.sin(r_rad)
        x1 = -(w / 2 * cos) - h / 2 * sin
        y1 = -(h / 2 * cos) + w / 2 * sin
        x2, y2 = x1 + w * cos, y1 - w * sin
        x3, y3 = x2 + h * sin, y2 + h * cos
        x4, y4 = x1 + h * sin, y1 + h * cos
        return cx, cy, xp.stack((x1, y1, x2, y2, x3, y3, x4, y4), axis=-1)
    corners = to_xyxyxyxy(xp, arr, fmt, unit, clockwise)
    xs = [corners[..., 2 * k] for k in range(4)]
    ys = [corners[..., 2 * k + 1] for k in range(4)]
    cx = (xs[0] + xs[1] + xs[2] + xs[3]) / 4
    cy = (ys[0] + ys[1] + ys[2] + ys[3]) / 4
    offsets = xp.stack([v for k in range(4) for v in (xs[k] - cx, ys[k] - cy)], axis=-1)
    return cx, cy, offsets


def _generic_pair(
    boxes1: Array, boxes2: Array, fmt: str, angle_unit: str, clockwise: bool, dtype: Any
) -> tuple[tuple[Array, Array, Array], tuple[Array, Array, Array]]:
    """Centres and offsets of both (already validated) box sets for the generic path."""
    unit = check_angle_unit(angle_unit)
    xp, (a, b) = namespace_of(boxes1, boxes2, names=("boxes1", "boxes2"))
    parts = []
    for arr, name in ((a, "boxes1"), (b, "boxes2")):
        arr = as_rotated(xp, arr, name, fmt, dtype=dtype)
        parts.append(_centre_offsets(xp, arr, fmt, unit, bool(clockwise)))
    return parts[0], parts[1]


def _prepare_pair(
    boxes1: Array,
    boxes2: Array,
    fmt: str,
    angle_unit: str,
    clockwise: bool,
    ndim: int | None = None,
) -> tuple[Any, Any, tuple[Array, Array], tuple[Array, Array]]:
    unit = check_angle_unit(angle_unit)
    xp, (a, b) = namespace_of(boxes1, boxes2, names=("boxes1", "boxes2"))
    dtype = xp.result_type(float_dtype_for(xp, a), float_dtype_for(xp, b))
    # NumPy: corners in float64 too (float32 corners of a small box far from the origin lose
    # digits); the result is rounded to ``dtype`` at the end
    work = np.float64 if isinstance(a, np.ndarray) else dtype
    first = prepare_corners(a, "boxes1", fmt, unit, clockwise, xp, work, ndim)
    second = prepare_corners(b, "boxes2", fmt, unit, clockwise, xp, work, ndim)
    return xp, dtype, first, second


# --------------------------------------------------------------- extreme magnitudes (NumPy)


def _rescaled_iou(c1: np.ndarray, d1: np.ndarray, c2: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """IoU (n,) of aligned pairs (n, 8), each pair scaled by its own power of two (see
    :data:`ioukit._rotated_corners.CORNER_LIMITS`)."""

    exponent = -np.maximum(corner_exponents(c1), corner_exponents(c2))[:, None]
    with np.errstate(under="ignore", over="ignore"):
        s1, s2 = np.ldexp(c1, exponent), np.ldexp(c2, exponent)
    out: np.ndarray = kernels.elementwise(*host64(s1, d1), *host64(s2, d2))
    return out


def _fix_extreme_pairwise(
    c1: np.ndarray, d1: np.ndarray, c2: np.ndarray, d2: np.ndarray, out: np.ndarray
) -> None:
    """Recompute in place the rows and columns of ``out`` (N, M) that involve an extreme box."""
    n, m = c1.shape[0], c2.shape[0]
    for rows, cols in (
        (np.flatnonzero(extreme_corners(c1)), np.arange(m)),
        (np.arange(n), np.flatnonzero(extreme_corners(c2))),
    ):
        if rows.size and cols.size:
            r, c = np.repeat(rows, cols.size), np.tile(cols, rows.size)
            value = _rescaled_iou(c1[r], d1[r], c2[c], d2[c])
            out[rows[:, None], cols[None, :]] = value.reshape(rows.size, cols.size)


# ------------------------------------------------------------------------- generic (array API)


def _refuse_non_convex(corners: Array, name: str, fmt: str) -> None:
    """The array-API path clips convex quadrilaterals only: refuse the others it can see."""
    view = host_view(corners) if fmt == "xyxyxyxy" else None
    if view is not None:
        check_quads(
            view,
            name,
            convex_mask,
            "a quadrilateral that is not convex is computed on NumPy arrays only (pass NumPy "
            "arrays, or convex_hull_quads())",
        )


def _where(xp: Any, cond: Array, a: Array, b: Array) -> Array:
    return xp.where(cond, a, b)


def _fan_area(xs: list[Array], ys: list[Array]) -> Array:
    """Signed shoelace area as a fan from vertex 0 (as the kernel computes it)."""
    total = xs[0] * 0
    for i in range(1, len(xs) - 1):
        total = total + (
            (xs[i] - xs[0]) * (ys[i + 1] - ys[0]) - (xs[i + 1] - xs[0]) * (ys[i] - ys[0])
        )
    return total / 2


def _clip_generic(
    xp: Any,
    xs: list[Array],
    ys: list[Array],
    count: Array,
    p: tuple[Array, Array],
    q: tuple[Array, Array],
) -> tuple[list[Array], list[Array], Array]:
    """One Sutherland-Hodgman step on padded polygons (slots past ``count`` repeat the last
    vertex, so the previous vertex of slot 0 is the last slot). Returns the new padded
    polygon, with ``ceil(1.5 K)`` slots."""
    size = len(xs)
    ex, ey = q[0] - p[0], q[1] - p[1]
    d = [ex * (ys[i] - p[1]) - ey * (xs[i] - p[0]) for i in range(size)]
    cand_x: list[Array] = []
    cand_y: list[Array] = []
    flags: list[Array] = []
    for i in range(size):
        prev = (i - 1) % size
        valid = count > i
        change = valid & (((d[prev] < 0) & (d[i] > 0)) | ((d[prev] > 0) & (d[i] < 0)))
        denominator = _where(xp, change, d[prev] - d[i], xp.ones_like(d[i]))
        t = _where(xp, change, d[prev] / denominator, xp.zeros_like(d[i]))
        cand_x.append(xs[prev] + t * (xs[i] - xs[prev]))
        cand_y.append(ys[prev] + t * (ys[i] - ys[prev]))
        flags.append(change)
        cand_x.append(xs[i])
        cand_y.append(ys[i])
        flags.append(valid & (d[i] >= 0))
    positions = []
    running = xp.zeros_like(count)
    for flag in flags:
        positions.append(running)
        running = running + xp.astype(flag, count.dtype)
    last = running - 1
    out_size = (3 * size + 1) // 2
    out_x: list[Array] = []
    out_y: list[Array] = []
    zero = xp.zeros_like(xs[0])
    for k in range(out_size):
        target = _where(xp, last < k, last, xp.zeros_like(last) + k)
        x_k, y_k = zero, zero
        for flag, pos, cx, cy in zip(flags, positions, cand_x, cand_y, strict=True):
            pick = flag & (pos == target)
            x_k = x_k + _where(xp, pick, cx, zero)
            y_k = y_k + _where(xp, pick, cy, zero)
        out_x.append(x_k)
        out_y.append(y_k)
    return out_x, out_y, running


def _generic_iou(
    xp: Any,
    first: tuple[Array, Array, Array],
    second: tuple[Array, Array, Array],
    degenerate1: Array,
    degenerate2: Array,
) -> Array:
    """Exact IoU of broadcast boxes given as centres and corner offsets (array operations only).

    Both quadrilaterals are placed relative to the midpoint of their centres (``±(c1 - c2) / 2``
    plus the offsets), which keeps float32 digits for small boxes far from the origin.
    """
    c1x, c1y, o1 = first
    c2x, c2y, o2 = second
    dx, dy = (c1x - c2x) / 2, (c1y - c2y) / 2
    deg = degenerate1 | degenerate2
    ax = [dx + o1[..., 2 * k] for k in range(4)]
    ay = [dy + o1[..., 2 * k + 1] for k in range(4)]
    bx = [-dx + o2[..., 2 * k] for k in range(4)]
    by = [-dy + o2[..., 2 * k + 1] for k in range(4)]
    disjoint = (
        (_max4(xp, ax) < _min4(xp, bx))
        | (_max4(xp, bx) < _min4(xp, ax))
        | (_max4(xp, ay) < _min4(xp, by))
        | (_max4(xp, by) < _min4(xp, ay))
    )
    ax, ay = _oriented(xp, ax, ay)
    bx, by = _oriented(xp, bx, by)
    area_a = _fan_area(ax, ay)
    area_b = _fan_area(bx, by)
    xs, ys = list(ax), list(ay)
    count = xp.zeros(ax[0].shape, dtype=xp.int64, device=_device(ax[0])) + 4
    for k in range(4):
        j = (k + 1) % 4
        xs, ys, count = _clip_generic(xp, xs, ys, count, (bx[k], by[k]), (bx[j], by[j]))
    inter = _where(xp, count >= 3, _fan_area(xs, ys), xp.zeros_like(area_a))
    union = area_a + area_b - inter
    ok = (~deg) & (~disjoint) & (area_a > 0) & (area_b > 0) & (inter > 0) & (union > 0)
    value = inter / _where(xp, ok, union, xp.ones_like(union))
    value = _where(xp, ok, value, xp.zeros_like(value))
    return _where(xp, value > 1, xp.ones_like(value), value)


def _device(x: Array) -> Any:
    import array_api_compat

    return array_api_compat.device(x)


def _min4(xp: Any, v: list[Array]) -> Array:
    return xp.minimum(xp.minimum(v[0], v[1]), xp.minimum(v[2], v[3]))


def _max4(xp: Any, v: list[Array]) -> Array:
    return xp.maximum(xp.maximum(v[0], v[1]), xp.maximum(v[2], v[3]))


def _oriented(xp: Any, xs: list[Array], ys: list[Array]) -> tuple[list[Array], list[Array]]:
    """Counter-clockwise (positive area) corner order, vertex 0 first, as the kernel does."""
    flip = _fan_area(xs, ys) < 0
    nx = [xs[0], _where(xp, flip, xs[3], xs[1]), xs[2], _where(xp, flip, xs[1], xs[3])]
    ny = [ys[0], _where(xp, flip, ys[3], ys[1]), ys[2], _where(xp, flip, ys[1], ys[3])]
    return nx, ny


# --------------------------------------------------------------------------------- public API


def rotated_box_iou(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    fmt: str = "cxcywhr",
    angle_unit: AngleUnit = "degrees",
    clockwise: bool = False,
) -> Array:
    """Exact IoU matrix of two sets of rotated boxes (simple quadrilaterals).

    Parameters
    ----------
    boxes1 : array_like, shape (N, 5) or (N, 8)
    boxes2 : array_like, shape (M, 5) or (M, 8)
        Boxes in ``fmt``; NumPy, sequences, PyTorch, JAX, CuPy or any array-API array.
    fmt : {"cxcywhr", "xywhr", "xyxyxyxy", "xyxy", "xywh", "cxcywh"}
    angle_unit : {"degrees", "radians"}
    clockwise : bool
        The angle turns the box clockwise on the image (mmcv, mmrotate, Ultralytics).

    Returns
    -------
    array, shape (N, M)
        ``iou[i, j]`` in [0, 1], in the inputs' float dtype (computed in float64 on NumPy).

    Raises
    ------
    BoxError
        Wrong shape, a NaN or infinite value, a negative size, corners that overflow, a
        self-intersecting quadrilateral, or (array-API inputs) one that is not convex.

    Examples
    --------
    >>> rotated_box_iou([[0, 0, 2, 2, 0]], [[1, 0, 2, 2, 0], [0, 0, 2, 2, 45], [0, 0, 2, 2, 0]])
    array([[0.33333333, 0.70710678, 1.        ]])
    >>> rotated_box_iou([[0, 0, 4, 2, 90]], [[0, 0, 2, 4, 0]])
    array([[1.]])
    >>> rotated_box_iou([[0, 0, 0, 2, 0]], [[0, 0, 0, 2, 0]])  # zero area
    array([[0.]])
    >>> rotated_box_iou(np.zeros((0, 5)), [[0, 0, 1, 1, 0]]).shape
    (0, 1)
    """
    xp, dtype, (c1, d1), (c2, d2) = _prepare_pair(
        boxes1, boxes2, fmt, angle_unit, clockwise, ndim=2
    )
    if isinstance(c1, np.ndarray):
        out = kernels.pairwise(*host64(c1, d1), *host64(c2, d2))
        _fix_extreme_pairwise(c1, d1, c2, d2, out)
        return out.astype(dtype, copy=False)
    _refuse_non_convex(c1, "boxes1", fmt)
    _refuse_non_convex(c2, "boxes2", fmt)
    (x1, y1, o1), (x2, y2, o2) = _generic_pair(boxes1, boxes2, fmt, angle_unit, clockwise, dtype)
    return _generic_iou(
        xp,
        (x1[:, None], y1[:, None], o1[:, None, :]),
        (x2[None, :], y2[None, :], o2[None, :, :]),
        d1[:, None],
        d2[None, :],
    )


def rotated_box_iou_elementwise(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    fmt: str = "cxcywhr",
    angle_unit: AngleUnit = "degrees",
    clockwise: bool = False,
) -> Array:
    """Exact IoU of aligned pairs of rotated boxes (broadcast over leading axes).

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 5) or (..., 8), broadcastable
    fmt : {"cxcywhr", "xywhr", "xyxyxyxy", "xyxy", "xywh", "cxcywh"}
    angle_unit : {"degrees", "radians"}
    clockwise : bool

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> rotated_box_iou_elementwise([[5, 5, 10, 6, 55]], [[5, 5, 10, 6, -35]])  # 36/84
    array([0.42857143])
    """
    xp, dtype, (c1, d1), (c2, d2) = _prepare_pair(boxes1, boxes2, fmt, angle_unit, clockwise)
    try:
        shape = np.broadcast_shapes(tuple(c1.shape), tuple(c2.shape))
    except ValueError:
        raise BoxError(
            f"boxes1 and boxes2: shapes {tuple(c1.shape)} and {tuple(c2.shape)} do not broadcast"
        ) from None
    if isinstance(c1, np.ndarray):
        c1b, c2b = np.broadcast_to(c1, shape), np.broadcast_to(c2, shape)
        d1b, d2b = np.broadcast_to(d1, shape[:-1]), np.broadcast_to(d2, shape[:-1])
        c1b, c2b = c1b.reshape(-1, 8), c2b.reshape(-1, 8)
        d1b, d2b = d1b.reshape(-1), d2b.reshape(-1)
        out = kernels.elementwise(*host64(c1b, d1b), *host64(c2b, d2b))
        bad = np.flatnonzero(extreme_corners(c1b) | extreme_corners(c2b))
        if bad.size:
            out[bad] = _rescaled_iou(c1b[bad], d1b[bad], c2b[bad], d2b[bad])
        return out.reshape(shape[:-1]).astype(dtype, copy=False)
    _refuse_non_convex(c1, "boxes1", fmt)
    _refuse_non_convex(c2, "boxes2", fmt)
    first, second = _generic_pair(boxes1, boxes2, fmt, angle_unit, clockwise, dtype)
    return _generic_iou(xp, first, second, d1, d2)


def rotated_box_iou_loss(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    reduction: Literal["none", "mean", "sum"] = "none",
    fmt: str = "cxcywhr",
    angle_unit: AngleUnit = "degrees",
    clockwise: bool = False,
) -> Array:
    """Rotated IoU loss ``1 - IoU`` of aligned predicted and target boxes, differentiable.

    The IoU is :func:`rotated_box_iou_elementwise` (exact). On PyTorch and JAX the gradient flows
    through the clipped polygon's vertices to the box parameters; it is zero for disjoint boxes
    (as for any IoU loss), never NaN.

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 5) or (..., 8), broadcastable
        Predicted and target boxes.
    reduction : {"none", "mean", "sum"}
    fmt, angle_unit, clockwise
        As for :func:`rotated_box_iou`.

    Returns
    -------
    array, shape (...) or ()

    Examples
    --------
    >>> rotated_box_iou_loss([[0, 0, 2, 2, 0], [0, 0, 2, 2, 0]], [[1, 0, 2, 2, 0], [0, 0, 2, 2, 0]])
    array([0.66666667, 0.        ])
    >>> float(rotated_box_iou_loss([[0, 0, 2, 2, 0]], [[1, 0, 2, 2, 0]], reduction="mean"))
    0.6666666666666667
    """
    if reduction not in ("none", "mean", "sum"):
        raise ParameterError(f"reduction: expected 'none', 'mean' or 'sum', got {reduction!r}")
    overlap = rotated_box_iou_elementwise(
        boxes1, boxes2, fmt=fmt, angle_unit=angle_unit, clockwise=clockwise
    )
    xp, _ = namespace_of(overlap, names=("loss",))
    loss = 1 - overlap
    if reduction == "sum":
        return xp.sum(loss)
    if reduction == "mean":
        size = 1
        for n in loss.shape:
            size *= n
        return xp.mean(loss) if size > 0 else xp.sum(loss) * 0.0
    return loss


# ------------------------------------------------------------------------------------ probiou


def _covariance(xp: Any, w: Array, h: Array, theta: Array) -> tuple[Array, Array, Array]:
    a, b = w**2 / 12, h**2 / 12
    cos, sin = xp.cos(theta), xp.sin(theta)
    cos2, sin2 = cos**2, sin**2
    return a * cos2 + b * sin2, a * sin2 + b * cos2, (a - b) * cos * sin


def _probiou_columns(
    boxes: Array,
    name: str,
    fmt: str,
    angle_unit: AngleUnit,
    clockwise: bool,
    xp: Any,
    dtype: Any,
) -> tuple[Array, ...]:
    """``(cx, cy, w, h, theta)`` with theta in radians, clockwise (Ultralytics' convention)."""

    if fmt not in ROTATED_FORMATS:
        raise ParameterError(f"fmt: expected one of 'cxcywhr', 'xywhr', 'xyxyxyxy', got {fmt!r}")
    arr = as_rotated(xp, boxes, name, fmt, dtype=dtype)
    if fmt != "cxcywhr":
        arr = box_convert(arr, fmt, "cxcywhr", angle_unit=angle_unit, clockwise=clockwise)
    theta = arr[..., 4] * (np.pi / 180) if angle_unit == "degrees" else arr[..., 4]
    theta = theta if clockwise else -theta
    return arr[..., 0], arr[..., 1], arr[..., 2], arr[..., 3], theta


def _probiou(
    xp: Any,
    first: tuple[Array, ...],
    second: tuple[Array, ...],
    eps: float,
    eps4: Any = None,
) -> Array:
    """Ultralytics' formula; ``eps4`` (default ``eps``) is the eps of the two denominators in
    length⁴ units, scaled with the boxes by :func:`_safe_probiou`."""
    eps4 = eps if eps4 is None else eps4
    x1, y1, w1, h1, t1_ = first
    x2, y2, w2, h2, t2_ = second
    a1, b1, c1 = _covariance(xp, w1, h1, t1_)
    a2, b2, c2 = _covariance(xp, w2, h2, t2_)
    denominator = (a1 + a2) * (b1 + b2) - (c1 + c2) ** 2 + eps4
    t1 = ((a1 + a2) * (y1 - y2) ** 2 + (b1 + b2) * (x1 - x2) ** 2) / denominator * 0.25
    t2 = ((c1 + c2) * (x2 - x1) * (y1 - y2)) / denominator * 0.5
    det1 = xp.clip(a1 * b1 - c1**2, min=0.0)
    det2 = xp.clip(a2 * b2 - c2**2, min=0.0)
    t3 = (
        xp.log(((a1 + a2) * (b1 + b2) - (c1 + c2) ** 2) / (4 * xp.sqrt(det1 * det2) + eps4) + eps)
        * 0.5
    )
    bd = xp.clip(t1 + t2 + t3, min=eps, max=100.0)
    hd = xp.sqrt(1.0 - xp.exp(-bd) + eps)
    return 1 - hd


PROBIOU_LIMITS = {np.dtype(np.float64): 2.0**100, np.dtype(np.float32): 2.0**12}
"""Per dtype, the largest centre distance or side length that probiou computes directly.

The Bhattacharyya distance multiplies up to eight lengths (``sqrt(det1 · det2)``, each
determinant ``(w²/12)·(h²/12)``), so its terms overflow from about 1e38 in float64 (an ``inf``
that turns the similarity into a constant) and reach ``inf - inf = nan`` from 1e78; float32
overflows from about 1e4.8 (its terms from 1e9.6). Without its ``eps`` the
formula is invariant under scaling; a pair beyond the limit is recomputed with the centre
distance and sides multiplied by a power of two that brings the largest near 1 and each
``eps`` in length⁴ units (the two denominators) multiplied by that factor to the fourth, so
the formula is the one of the unscaled pair, without the overflow."""


def _safe_probiou(
    first: tuple[np.ndarray, ...], second: tuple[np.ndarray, ...], eps: float, out: np.ndarray
) -> np.ndarray:
    """``out`` with the pairs beyond :data:`PROBIOU_LIMITS` recomputed scaled (NumPy)."""
    x1, y1, w1, h1, t1 = np.broadcast_arrays(*first, *second)[:5]
    x2, y2, w2, h2, t2 = np.broadcast_arrays(*first, *second)[5:]
    limit = PROBIOU_LIMITS.get(out.dtype, 2.0**100)
    with np.errstate(over="ignore", invalid="ignore"):
        reach = np.maximum.reduce([abs(x1 - x2), abs(y1 - y2), w1, h1, w2, h2])
    bad = ~(reach <= limit)
    if not bad.any():
        return out
    x1, y1, w1, h1, t1, x2, y2, w2, h2, t2 = (
        v[bad] for v in (x1, y1, w1, h1, t1, x2, y2, w2, h2, t2)
    )
    # first bring every value to at most 1 (the differences cannot overflow), then scale the
    # centre distance and the sides so that the largest of them is near 1
    big = np.frexp(np.maximum.reduce([abs(x1), abs(x2), abs(y1), abs(y2), w1, h1, w2, h2]))[1]
    with np.errstate(under="ignore", over="ignore"):
        dx = np.ldexp(x1, -big) - np.ldexp(x2, -big)
        dy = np.ldexp(y1, -big) - np.ldexp(y2, -big)
        lengths = [np.ldexp(v, -big) for v in (w1, h1, w2, h2)]
        k = np.frexp(np.maximum.reduce([abs(dx), abs(dy), *lengths]))[1]
        total = big + k
        dx, dy = np.ldexp(dx, -k), np.ldexp(dy, -k)
        sw1, sh1, sw2, sh2 = (np.ldexp(v, -total) for v in (w1, h1, w2, h2))
        eps4 = np.ldexp(out.dtype.type(eps), -4 * total)
    zero = np.zeros_like(dx)
    # NumPy's array-API namespace (``clip(min=)`` on NumPy 1.26), taken here: importing
    # array_api_compat.numpy costs a fresh process ~150 ms, so not at import time
    value = _probiou(
        compat_namespace(np), (dx, dy, sw1, sh1, t1), (zero, zero, sw2, sh2, t2), eps, eps4
    )
    fixed = out.copy()
    fixed[bad] = value
    return fixed


def _probiou_pair(
    boxes1: Array, boxes2: Array, fmt: str, angle_unit: AngleUnit, clockwise: bool
) -> tuple[Any, tuple[Array, ...], tuple[Array, ...]]:
    """The namespace and the ``(cx, cy, w, h, angle)`` columns of both box sets."""
    unit = check_angle_unit(angle_unit)
    xp, (a, b) = namespace_of(boxes1, boxes2, names=("boxes1", "boxes2"))
    dtype = xp.result_type(float_dtype_for(xp, a), float_dtype_for(xp, b))
    first = _probiou_columns(a, "boxes1", fmt, unit, clockwise, xp, dtype)
    second = _probiou_columns(b, "boxes2", fmt, unit, clockwise, xp, dtype)
    return xp, first, second


def _checked_probiou(
    xp: Any, first: tuple[Array, ...], second: tuple[Array, ...], eps: float
) -> Array:
    """:func:`_probiou` of the columns, NumPy values out of float range redone by scaling."""
    if isinstance(first[0], np.ndarray):
        with np.errstate(over="ignore", invalid="ignore"):
            direct = np.asarray(_probiou(xp, first, second, eps))
        return _safe_probiou(first, second, eps, direct)
    return _probiou(xp, first, second, eps)


def probiou(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    fmt: str = "cxcywhr",
    angle_unit: AngleUnit = "degrees",
    clockwise: bool = False,
    eps: float = 1e-7,
) -> Array:
    """Ultralytics' probabilistic IoU matrix (a Gaussian approximation, not the IoU).

    Each box becomes a Gaussian with the box's centre and covariance ``R diag(w²/12, h²/12) Rᵀ``;
    the similarity is ``1 - sqrt(1 - exp(-B) + eps)`` with ``B`` the Bhattacharyya distance
    clamped to ``[eps, 100]`` (``ultralytics.utils.metrics.batch_probiou``, formula for
    formula). It is what Ultralytics' OBB validator matches with: identical boxes give
    ``0.999553`` (not 1), and it is well above the exact IoU for shifted boxes, so OBB mAP50
    computed with it is higher than with :func:`rotated_box_iou`. It ignores the box shape
    beyond its second moments (a square and a disc of equal moments are the same).

    Parameters
    ----------
    boxes1 : array_like, shape (N, 5) or (N, 8)
    boxes2 : array_like, shape (M, 5) or (M, 8)
    fmt : {"cxcywhr", "xywhr", "xyxyxyxy"}
        Ultralytics' ``xywhr`` is ``fmt="cxcywhr", angle_unit="radians", clockwise=True``.
    angle_unit : {"degrees", "radians"}
    clockwise : bool
    eps : float
        Ultralytics' ``eps`` (1e-7).

    Returns
    -------
    array, shape (N, M)

    Examples
    --------
    >>> probiou([[0, 0, 2, 2, 0]], [[0, 0, 2, 2, 0], [1, 0, 2, 2, 0]]).round(6)
    array([[0.999553, 0.440795]])

    The exact IoU of the second pair is 1/3.
    """
    xp, first, second = _probiou_pair(boxes1, boxes2, fmt, angle_unit, clockwise)
    for name, cols in (("boxes1", first), ("boxes2", second)):
        if cols[0].ndim != 1:
            raise BoxError(
                f"{name}: expected shape (N, 5) or (N, 8), got a {cols[0].ndim + 1}-d array"
            )
    rows, cols = tuple(c[:, None] for c in first), tuple(c[None, :] for c in second)
    return _checked_probiou(xp, rows, cols, eps)


def probiou_elementwise(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    fmt: str = "cxcywhr",
    angle_unit: AngleUnit = "degrees",
    clockwise: bool = False,
    eps: float = 1e-7,
) -> Array:
    """Ultralytics' probabilistic IoU of aligned pairs (see :func:`probiou`).

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 5) or (..., 8), broadcastable
    fmt, angle_unit, clockwise, eps
        As for :func:`probiou`.

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> probiou_elementwise([[0, 0, 2, 2, 0]], [[0, 0, 2, 2, 0]]).round(6)
    array([0.999553])
    """
    xp, first, second = _probiou_pair(boxes1, boxes2, fmt, angle_unit, clockwise)
    return _checked_probiou(xp, first, second, eps)
