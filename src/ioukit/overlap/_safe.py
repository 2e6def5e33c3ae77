"""The IoU family for boxes whose arithmetic would overflow or underflow (private).

The formulas of :mod:`ioukit.overlap._formulas` multiply coordinate differences, so boxes of
``1e200`` overflow to ``inf`` (an IoU of ``inf`` or ``nan``), float32 boxes of ``2e19`` do the
same, and boxes near ``1e-320`` underflow to an area of 0 (an IoU of 0 for identical boxes).
Every metric of the family is invariant when all coordinates are multiplied by one factor,
except for ``eps`` in the DIoU/CIoU diagonal, which scales with the squared coordinates. So
each pair is recomputed with its coordinates multiplied by a power of two that brings the
largest of them near 1 (``ldexp``: exact, no rounding) and the diagonal's ``eps`` multiplied
by its square. Where the direct arithmetic does not overflow or underflow, this gives the
same bits as the direct formula (every step is the direct one scaled by a power of two);
where it does, the result is the correctly scaled one, so IoU and Dice stay in ``[0, 1]``
and GIoU in ``[-1, 1]`` for every finite input.

Only boxes with a non-zero coordinate outside ``[LIMITS[dtype][0], LIMITS[dtype][1]]`` take
this path (the bounds keep every product of two coordinate differences, and their sums, far
from overflow and from subnormals); other boxes never pay for it. NumPy arrays only.
"""

from __future__ import annotations

import numpy as np

from ioukit._array import compat_namespace
from ioukit.overlap import _formulas

LIMITS = {
    np.dtype(np.float64): (2.0**-400, 2.0**500),
    np.dtype(np.float32): (2.0**-30, 2.0**60),
}
"""Per dtype, the smallest and largest non-zero coordinate magnitude computed directly."""


def extreme(boxes: np.ndarray) -> np.ndarray:
    """Boolean (...,): boxes (..., 4) with a non-zero coordinate outside the safe range."""
    lo, hi = LIMITS[boxes.dtype]
    magnitude = np.abs(boxes)
    return np.asarray(((magnitude > hi) | ((magnitude < lo) & (magnitude > 0))).any(axis=-1))


def _exponent(boxes: np.ndarray) -> np.ndarray:
    # per box, the binary exponent of its largest |coordinate| (0 for an all-zero box)
    return np.asarray(np.frexp(np.abs(boxes).max(axis=-1))[1])


def rescaled(metric: str, a: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """``metric`` of the broadcast pairs of boxes ``a`` and ``b`` (..., 4), each pair scaled
    by a power of two (see the module docstring); the dtype of the boxes."""
    # NumPy's array-API namespace (NumPy 1.26 lacks clip(min=)), taken here and not at import:
    # importing array_api_compat.numpy costs a fresh process ~150 ms (numpy.testing and more)
    _NP = compat_namespace(np)
    exponent = -np.maximum(_exponent(a), _exponent(b))
    with np.errstate(under="ignore", over="ignore"):
        ca = tuple(np.ldexp(a[..., k], exponent) for k in range(4))
        cb = tuple(np.ldexp(b[..., k], exponent) for k in range(4))
        eps_scaled = np.ldexp(a.dtype.type(eps), 2 * exponent)
        if metric in ("iou", "dice", "giou"):
            return np.asarray(_formulas.FORMULAS[metric](_NP, ca, cb, eps))
        overlap = _formulas.iou(_NP, ca, cb, eps)
        penalty = _formulas.distance_penalty(_NP, ca, cb, eps_scaled)
        if metric == "diou":
            return np.asarray(overlap - penalty)
        v = _formulas.aspect_penalty(_NP, ca, cb)
        alpha = _formulas.ciou_alpha(_NP, overlap, v, eps)  # unitless: eps unscaled
        return np.asarray(overlap - penalty - alpha * v)


def fix_pairwise(metric: str, a: np.ndarray, b: np.ndarray, eps: float, out: np.ndarray) -> None:
    """Recompute in place the rows and columns of ``out`` (N, M) that involve an extreme box."""
    rows = np.flatnonzero(extreme(a))
    cols = np.flatnonzero(extreme(b))
    if rows.size:
        out[rows] = rescaled(metric, a[rows][:, None, :], b[None, :, :], eps)
    if cols.size:
        out[:, cols] = rescaled(metric, a[:, None, :], b[cols][None, :, :], eps)
