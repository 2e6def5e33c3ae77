"""Boundary IoU (Cheng et al., CVPR 2021): the IoU of the masks' inner boundary bands.

The boundary of a binary mask is the mask minus its erosion by a square of side ``2d + 1``,
``d = max(1, round(dilation_ratio * image diagonal))``, every pixel outside the image counting
as 0 (so a mask cut by the image border has a boundary there). That is the definition of
``bowenc0221/boundary-iou-api`` (``boundary_utils.mask_to_boundary``: OpenCV's 3 x 3 ``erode``
repeated ``d`` times on a mask padded with one 0 pixel), computed here without OpenCV on each
mask's bounding box, from and to COCO run lengths.

Two other tools ship Boundary IoU and differ from it (``compat`` reproduces each):

``compat="faster_coco_eval"``
    ``d = round(ratio * diagonal - 1e-10)`` with C's ``round``, so a diagonal whose ratio is
    exactly ``k + 0.5`` gives ``k`` (boundary-iou-api rounds half to even: 3.5 -> 4); on images
    no taller than ``2d`` its erosion reads the square in flat column-major order and lets
    neighbours that wrap into the next column through (its ``RLE::erode_3x3``).
``compat="ultrafast"``
    ultrafast-pycocotools: ``d = round(ratio * diagonal)`` rounding half away from zero
    (2.5 -> 3, 4.5 -> 5); the erosion is boundary-iou-api's.

For evaluation, :func:`boundary_similarity` gives, per image group, the ``[P, G]`` matrix that
boundary AP matches on: ``min(mask IoU, boundary IoU)``, and the mask IoU alone (``|A & B| /
|A|``) for crowd ground truths, as boundary-iou-api's ``computeBoundaryIoU``; boundaries
computed once per mask (:func:`boundary_runs`) can be passed in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ioukit._array import Array
from ioukit._kernels import rle
from ioukit.errors import ParameterError
from ioukit.masks import RLE, RunLengths, encode_runs, mask_iou, parse_rles

__all__ = [
    "COMPATS",
    "boundary_dilation",
    "boundary_iou",
    "boundary_runs",
    "boundary_similarity",
    "check_boundary_options",
]

Compat = Literal["faster_coco_eval", "ultrafast"] | None
COMPATS = (None, "faster_coco_eval", "ultrafast")


def check_boundary_options(dilation_ratio: object, compat: object) -> float:
    """Validate the boundary options; ``dilation_ratio`` as a float.

    Raises
    ------
    ParameterError
        ``compat`` not one of :data:`COMPATS`, or ``dilation_ratio`` not a finite number >= 0.

    Examples
    --------
    >>> check_boundary_options(0.02, "ultrafast")
    0.02
    >>> check_boundary_options("0.02", None)
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: dilation_ratio: expected a number, got '0.02'
    """
    if compat not in COMPATS:
        raise ParameterError(
            f"compat: expected None, 'faster_coco_eval' or 'ultrafast', got {compat!r}"
        )
    if isinstance(dilation_ratio, bool) or not isinstance(
        dilation_ratio, (int, float, np.integer, np.floating)
    ):
        raise ParameterError(f"dilation_ratio: expected a number, got {dilation_ratio!r}")
    ratio = float(dilation_ratio)
    if not (math.isfinite(ratio) and ratio >= 0):
        raise ParameterError(f"dilation_ratio: expected a finite number >= 0, got {ratio!r}")
    return ratio


def _half_away(x: float) -> int:
    """C's ``round`` (half away from zero) of a non-negative double."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def boundary_dilation(
    height: int, width: int, /, *, dilation_ratio: float = 0.02, compat: Compat = None
) -> int:
    """The erosion radius ``d`` (pixels) of an image of ``height`` x ``width``.

    Parameters
    ----------
    height, width : int
    dilation_ratio : float
        Fraction of the image diagonal (0.02 in the paper and in every tool).
    compat : {None, "faster_coco_eval", "ultrafast"}
        Whose rounding (see the module docstring); at least 1 in all three.

    Returns
    -------
    int

    Examples
    --------
    >>> boundary_dilation(480, 640)  # 0.02 * 800
    16
    >>> [boundary_dilation(105, 140, compat=c) for c in (None, "faster_coco_eval", "ultrafast")]
    [4, 3, 4]
    >>> [boundary_dilation(75, 100, compat=c) for c in (None, "faster_coco_eval", "ultrafast")]
    [2, 2, 3]
    """
    ratio = check_boundary_options(dilation_ratio, compat)
    if compat == "faster_coco_eval":
        d = _half_away(ratio * math.sqrt(float(height * height + width * width)) - 1e-10)
    elif compat == "ultrafast":
        d = _half_away(ratio * math.sqrt(float(height * height + width * width)))
    else:  # boundary-iou-api: Python's round (half to even) of a float64
        d = round(ratio * float(np.sqrt(height**2 + width**2)))
    return max(d, 1)


def _runs(masks: object, name: str) -> RunLengths:
    if isinstance(masks, RunLengths):
        return masks
    if isinstance(masks, dict):
        return parse_rles([masks], name=name)
    if isinstance(masks, (list, tuple)) and (len(masks) == 0 or isinstance(masks[0], dict)):
        return parse_rles(masks, name=name)
    return encode_runs(masks, name=name)


def boundary_runs(
    masks: Array | Sequence[RLE] | RunLengths,
    /,
    *,
    dilation_ratio: float = 0.02,
    compat: Compat = None,
) -> RunLengths:
    """The boundary of every mask, as run lengths (``.to_rles()`` gives COCO dicts).

    Parameters
    ----------
    masks : array_like, shape (N, H, W), list of RLE dict, or RunLengths
        Binary masks (any array library; dense masks are encoded first).
    dilation_ratio : float
    compat : {None, "faster_coco_eval", "ultrafast"}

    Returns
    -------
    RunLengths
        N encodings of ``mask & ~erode(mask)``, each the size of its mask.

    Raises
    ------
    MaskError, DataFormatError
        Masks that are not binary or malformed RLEs.
    ParameterError
        A bad ``dilation_ratio`` or ``compat``.

    Examples
    --------
    >>> import numpy as np
    >>> from ioukit.masks import decode
    >>> square = np.zeros((1, 7, 7), dtype=np.uint8); square[0, 1:6, 1:6] = 1
    >>> decode(boundary_runs(square).to_rles()[0])  # d = 1: the outer ring of the square
    array([[0, 0, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 1, 1, 0],
           [0, 1, 0, 0, 0, 1, 0],
           [0, 1, 0, 0, 0, 1, 0],
           [0, 1, 0, 0, 0, 1, 0],
           [0, 1, 1, 1, 1, 1, 0],
           [0, 0, 0, 0, 0, 0, 0]], dtype=uint8)
    >>> len(boundary_runs([]))
    0
    """

    ratio = check_boundary_options(dilation_ratio, compat)
    runs = _runs(masks, "masks")
    sizes = {(int(h), int(w)) for h, w in zip(runs.heights, runs.widths, strict=True)}
    radius = {size: boundary_dilation(*size, dilation_ratio=ratio, compat=compat) for size in sizes}
    dilations = np.array(
        [radius[int(h), int(w)] for h, w in zip(runs.heights, runs.widths, strict=True)],
        dtype=np.int64,
    )
    counts, offsets = rle.boundaries(
        runs.counts,
        runs.offsets,
        runs.heights,
        runs.widths,
        dilations,
        compat == "faster_coco_eval",
    )
    return RunLengths(counts, offsets, runs.heights.copy(), runs.widths.copy())


def boundary_iou(
    masks1: Array | Sequence[RLE] | RunLengths,
    masks2: Array | Sequence[RLE] | RunLengths,
    /,
    *,
    dilation_ratio: float = 0.02,
    compat: Compat = None,
) -> np.ndarray:
    """Boundary IoU of every pair of masks: the IoU of their boundaries.

    Parameters
    ----------
    masks1 : array_like, shape (N, H, W), list of RLE dict, or RunLengths
        Usually the predictions.
    masks2 : array_like, shape (M, H, W), list of RLE dict, or RunLengths
        Usually the ground truth; every mask of both sets has one size.
    dilation_ratio : float
        The boundary's width as a fraction of the image diagonal (0.02).
    compat : {None, "faster_coco_eval", "ultrafast"}
        None: boundary-iou-api's definition; the others reproduce those packages.

    Returns
    -------
    numpy.ndarray of float64, shape (N, M)
        0 where the boundaries do not overlap (two empty masks included).

    Raises
    ------
    MaskError, DataFormatError
        Non-binary masks, malformed RLEs, masks of different sizes.
    ParameterError
        A bad ``dilation_ratio`` or ``compat``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((1, 20, 20), dtype=np.uint8); a[0, 2:12, 2:12] = 1
    >>> b = np.zeros((2, 20, 20), dtype=np.uint8); b[0, 2:12, 2:12] = 1; b[1, 3:13, 2:12] = 1
    >>> boundary_iou(a, b).round(4)  # d = 1: rings of 36 pixels sharing 18
    array([[1.    , 0.3333]])
    >>> boundary_iou(a, b[:0]).shape
    (1, 0)
    """
    ratio = check_boundary_options(dilation_ratio, compat)
    first = boundary_runs(masks1, dilation_ratio=ratio, compat=compat)
    second = boundary_runs(masks2, dilation_ratio=ratio, compat=compat)
    out: np.ndarray = mask_iou(first, second)
    return out


def boundary_similarity(
    pred: Sequence[RLE] | RunLengths,
    gt: Sequence[RLE] | RunLengths,
    /,
    *,
    crowd: object = None,
    dilation_ratio: float = 0.02,
    compat: Compat = None,
    pred_boundaries: RunLengths | None = None,
    gt_boundaries: RunLengths | None = None,
) -> np.ndarray:
    """The ``[P, G]`` similarity of boundary AP: ``min(mask IoU, boundary IoU)`` per pair.

    For a crowd ground truth the value is the mask IoU alone, ``|A & B| / |A|``
    (boundary-iou-api's and faster-coco-eval's ``computeIoU`` for ``iouType="boundary"``).
    Pass boundaries computed once per mask with :func:`boundary_runs` to avoid recomputing
    them for every group that holds the mask.

    Parameters
    ----------
    pred : list of RLE dict, or RunLengths, length P
    gt : list of RLE dict, or RunLengths, length G
        One image's masks (one size).
    crowd : array_like of bool, shape (G,), optional
    dilation_ratio : float
    compat : {None, "faster_coco_eval", "ultrafast"}
    pred_boundaries, gt_boundaries : RunLengths, optional
        :func:`boundary_runs` of ``pred`` / ``gt`` with the same options.

    Returns
    -------
    numpy.ndarray of float64, shape (P, G)

    Examples
    --------
    >>> import numpy as np
    >>> from ioukit.masks import encode
    >>> a = np.zeros((20, 20, 1), dtype=np.uint8); a[2:12, 2:12] = 1
    >>> b = np.zeros((20, 20, 1), dtype=np.uint8); b[3:13, 2:12] = 1
    >>> pred, gt = [encode(a[..., 0])], [encode(b[..., 0])]
    >>> boundary_similarity(pred, gt).round(4)  # mask IoU 0.8182, boundary IoU 0.3333
    array([[0.3333]])
    >>> boundary_similarity(pred, gt, crowd=[True]).round(4)  # crowd: 90 / 100
    array([[0.9]])
    """
    ratio = check_boundary_options(dilation_ratio, compat)
    p_runs, g_runs = _runs(pred, "pred"), _runs(gt, "gt")
    masks_iou = np.asarray(mask_iou(p_runs, g_runs, crowd=crowd))
    if masks_iou.size == 0:
        return masks_iou
    for name, given, runs in (
        ("pred_boundaries", pred_boundaries, p_runs),
        ("gt_boundaries", gt_boundaries, g_runs),
    ):
        if given is not None and len(given) != len(runs):
            raise ParameterError(
                f"{name}: expected {len(runs)} boundaries (one per mask), got {len(given)}"
            )
    pb = pred_boundaries
    if pb is None:
        pb = boundary_runs(p_runs, dilation_ratio=ratio, compat=compat)
    gb = gt_boundaries
    if gb is None:
        gb = boundary_runs(g_runs, dilation_ratio=ratio, compat=compat)
    bounds = np.asarray(mask_iou(pb, gb))
    out: np.ndarray = np.minimum(masks_iou, bounds)
    flags: Any = None if crowd is None else np.asarray(crowd, dtype=bool).reshape(-1)
    if flags is not None and flags.any():
        out[:, flags] = masks_iou[:, flags]
    return out
