"""``pycocotools.mask`` on ioukit's run-length kernels: same layouts, same values.

Masks are ``(H, W)`` or ``(H, W, N)`` uint8 arrays as pycocotools has them (ioukit's native
:mod:`ioukit.masks` uses ``(N, H, W)``); RLE ``counts`` are ``bytes``; ``area`` is uint32.

Examples
--------
>>> import numpy as np
>>> from ioukit.compat.pycocotools import mask
>>> m = np.asfortranarray(np.array([[0, 1], [1, 1]], dtype=np.uint8))
>>> rle = mask.encode(m)
>>> rle, int(mask.area(rle)), mask.area(rle).dtype, mask.toBbox(rle).tolist()
({'size': [2, 2], 'counts': b'13'}, 3, dtype('uint32'), [0.0, 0.0, 2.0, 2.0])
>>> mask.iou([[0, 0, 2, 2]], [[1, 0, 2, 2]], [0])
array([[0.33333333]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ioukit import masks

__all__ = ["area", "decode", "encode", "frPyObjects", "iou", "merge", "toBbox"]

RLE = dict[str, Any]


def encode(bimask: np.ndarray) -> list[RLE] | RLE:
    """Compressed RLEs of binary masks (pycocotools ``mask.encode``).

    Parameters
    ----------
    bimask : ndarray, shape (H, W, N) or (H, W)
        Binary masks (pycocotools wants uint8 in Fortran order; any layout is accepted).

    Returns
    -------
    list of dict (one per mask), or dict for an (H, W) mask

    Examples
    --------
    >>> encode(np.ones((2, 2, 1), dtype=np.uint8, order="F"))
    [{'size': [2, 2], 'counts': b'04'}]
    """
    array = np.asarray(bimask)
    if array.ndim == 3:
        return masks.encode(np.moveaxis(array, 2, 0))
    return masks.encode(array)


def decode(rleObjs: RLE | Sequence[RLE]) -> Any:
    """Binary masks from RLEs (pycocotools ``mask.decode``).

    Returns
    -------
    ndarray of uint8, shape (H, W, N) in Fortran order for a list, (H, W) for a dict; an empty
    list gives shape (0, 0, 0) (pycocotools reads uninitialised sizes there).

    Examples
    --------
    >>> decode({"size": [2, 2], "counts": b"13"})
    array([[0, 1],
           [1, 1]], dtype=uint8)
    >>> decode([{"size": [2, 2], "counts": b"13"}]).shape
    (2, 2, 1)
    """
    if type(rleObjs) is list:
        if not rleObjs:
            return np.zeros((0, 0, 0), dtype=np.uint8)
        return np.moveaxis(masks.decode(rleObjs), 0, 2)
    return masks.decode(rleObjs)


def area(rleObjs: RLE | Sequence[RLE]) -> Any:
    """Pixels set per mask, uint32 (pycocotools ``mask.area``).

    Examples
    --------
    >>> area([{"size": [2, 2], "counts": b"13"}, {"size": [1, 1], "counts": [0, 1]}])
    array([3, 1], dtype=uint32)
    """
    if type(rleObjs) is list:
        return np.asarray(masks.area(rleObjs), dtype=np.uint32)
    return np.uint32(masks.area(rleObjs))


def toBbox(rleObjs: RLE | Sequence[RLE]) -> np.ndarray:  # noqa: N802
    """Tight ``[x, y, w, h]`` boxes of masks (pycocotools ``mask.toBbox``).

    Examples
    --------
    >>> toBbox([{"size": [3, 3], "counts": [4, 1, 4]}]).tolist()
    [[1.0, 1.0, 1.0, 1.0]]
    """
    if type(rleObjs) is list:
        if not rleObjs:
            return np.zeros((0, 4))
        return masks.to_bbox(rleObjs)
    return masks.to_bbox(rleObjs)


def merge(rleObjs: Sequence[RLE], intersect: int | bool = 0) -> RLE:
    """Union (``intersect=1``: intersection) of RLEs of one size (pycocotools ``mask.merge``).

    Examples
    --------
    >>> merge([{"size": [2, 2], "counts": [1, 1, 2]}, {"size": [2, 2], "counts": [2, 2]}])
    {'size': [2, 2], 'counts': b'13'}
    >>> merge([])
    {'size': [0, 0], 'counts': b''}
    """
    if type(rleObjs) is list and not rleObjs:
        return {"size": [0, 0], "counts": b""}
    return masks.merge(rleObjs, intersect=bool(intersect))


def _box_polygon(box: Sequence[float]) -> list[float]:
    # pycocotools' rleFrBbox: the box's four corners as one polygon, in its order
    xs, ys = float(box[0]), float(box[1])
    xe, ye = xs + float(box[2]), ys + float(box[3])
    return [xs, ys, xs, ye, xe, ye, xe, ys]


def _from_boxes(boxes: Any, h: int, w: int) -> list[RLE]:
    array = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return masks.from_polygons([_box_polygon(b) for b in array.tolist()], h, w)


def _from_uncompressed(objs: Sequence[RLE]) -> list[RLE]:
    out = []
    for i, obj in enumerate(objs):
        size = obj["size"]
        counts = obj["counts"]
        if isinstance(counts, str | bytes):  # pycocotools reads counts as integers
            raise ValueError(
                f"frPyObjects: pyobj[{i}]['counts']: expected a list of run lengths "
                f"(uncompressed RLE), got {type(counts).__name__}"
            )
        out.append(masks.parse_rles([{"size": list(size), "counts": list(counts)}]).to_rles()[0])
    return out


def frPyObjects(pyobj: Any, h: int, w: int) -> list[RLE] | RLE:  # noqa: N802
    """RLEs from boxes, polygons or uncompressed RLEs (pycocotools ``mask.frPyObjects``).

    Parameters
    ----------
    pyobj : ndarray (N, 4), list of boxes, list of polygons, list of uncompressed RLE dicts,
        or one uncompressed RLE dict
        A list whose first entry has 4 numbers is read as boxes, as pycocotools does; a flat
        list of numbers raises ``TypeError``, as in pycocotools.
    h, w : int
        Image size.

    Returns
    -------
    list of dict, or dict for a single object

    Raises
    ------
    Exception
        ``input type is not supported.`` (pycocotools' message) for anything else.

    Examples
    --------
    >>> frPyObjects([[0, 0, 2, 0, 2, 2, 0, 2]], 3, 3)
    [{'size': [3, 3], 'counts': b'02103'}]
    >>> frPyObjects({"size": [3, 3], "counts": [0, 9]}, 3, 3)
    {'size': [3, 3], 'counts': b'09'}
    """
    if type(pyobj) is np.ndarray:
        return _from_boxes(pyobj, h, w)
    if type(pyobj) is list and pyobj:
        first = pyobj[0]
        if not hasattr(first, "__len__"):  # pycocotools takes len(pyobj[0]) first
            raise TypeError(
                f"frPyObjects: pyobj[0]: expected a box, a polygon or an RLE dict (pass a list "
                f"of them), got {type(first).__name__}"
            )
        if len(first) == 4 and not isinstance(first, dict):
            return _from_boxes(pyobj, h, w)
        if len(first) > 4 and not isinstance(first, dict):
            return masks.from_polygons(pyobj, h, w)
        if type(first) is dict and "counts" in first and "size" in first:
            return _from_uncompressed(pyobj)
    if type(pyobj) is dict and "counts" in pyobj and "size" in pyobj:
        return _from_uncompressed([pyobj])[0]
    raise Exception("input type is not supported.")


def _kind(objs: Any, name: str) -> tuple[str, Any]:
    # pycocotools' _preproc: boxes as an (N, 4) float array, or a list of RLE dicts
    if isinstance(objs, np.ndarray):
        array = np.asarray(objs, dtype=np.float64)
        if array.size == 0:
            return "empty", array
        if array.ndim != 2 or array.shape[1] != 4:
            raise Exception(
                f"numpy ndarray input is only for *bounding boxes* and should have Nx4 "
                f"dimension ({name}: got shape {array.shape})"
            )
        return "box", array
    if isinstance(objs, list | tuple):
        if len(objs) == 0:
            return "empty", objs
        if all(isinstance(o, list | tuple | np.ndarray) and len(o) == 4 for o in objs):
            return "box", np.asarray(objs, dtype=np.float64).reshape(-1, 4)
        if all(isinstance(o, dict) for o in objs):
            return "rle", list(objs)
        raise Exception(f"list input can be bounding box (Nx4) or RLEs ([RLE]) ({name})")
    raise Exception(
        f"unrecognized type. The following type: RLEs (rle), np.ndarray (box), and list (box) "
        f"are supported ({name}: got {type(objs).__name__})"
    )


def _box_iou(dt: np.ndarray, gt: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """pycocotools' ``bbIou`` on ``[x, y, w, h]`` boxes, operation for operation.

    Parameters
    ----------
    dt : ndarray, shape (D, 4)
    gt : ndarray, shape (G, 4)
    crowd : ndarray of bool, shape (G,)
        A crowd column divides by the detection's area.

    Returns
    -------
    ndarray of float64, shape (D, G)

    Examples
    --------
    >>> _box_iou(np.array([[0., 0, 2, 2]]), np.array([[1., 0, 2, 2]]), np.array([True]))
    array([[0.5]])
    """
    d = dt[:, None, :]  # [D, 1, 4]
    g = gt[None, :, :]  # [1, G, 4]
    w = np.minimum(d[..., 2] + d[..., 0], g[..., 2] + g[..., 0]) - np.maximum(d[..., 0], g[..., 0])
    h = np.minimum(d[..., 3] + d[..., 1], g[..., 3] + g[..., 1]) - np.maximum(d[..., 1], g[..., 1])
    d_area = d[..., 2] * d[..., 3]
    g_area = g[..., 2] * g[..., 3]
    inter = w * h
    union = np.where(crowd[None, :], d_area, d_area + g_area - inter)
    overlap = (w > 0) & (h > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(overlap, inter / np.where(overlap, union, 1.0), 0.0)
    return np.asarray(out, dtype=np.float64)


def iou(dt: Any, gt: Any, pyiscrowd: Sequence[int] | np.ndarray) -> Any:
    """IoU of every detection with every ground truth (pycocotools ``mask.iou``).

    Parameters
    ----------
    dt, gt : list of RLE dict, ndarray (N, 4) or list of ``[x, y, w, h]``
        Both boxes or both RLEs.
    pyiscrowd : sequence of int, length len(gt)
        A crowd ground truth's IoU is ``|d & g| / |d|``.

    Returns
    -------
    ndarray of float64, shape (len(dt), len(gt)); ``[]`` when either side is empty

    Raises
    ------
    AssertionError
        ``iscrowd`` does not have one flag per ground truth (pycocotools' type).
    Exception
        Mixed kinds of input (pycocotools' type and message).

    Examples
    --------
    >>> iou([[0, 0, 2, 2]], [[1, 0, 2, 2], [5, 5, 1, 1]], [0, 1])
    array([[0.33333333, 0.        ]])
    """
    dkind, dobj = _kind(dt, "dt")
    gkind, gobj = _kind(gt, "gt")
    if dkind == "empty" or gkind == "empty":
        return []
    if dkind != gkind:
        raise Exception(
            "The dt and gt should have the same data type, either RLEs, list or np.ndarray"
        )
    crowd = np.asarray(pyiscrowd, dtype=np.uint8).reshape(-1).astype(bool)
    if crowd.shape[0] != len(gobj):
        raise AssertionError(
            f"iou(iscrowd=) must have the same length as gt: {crowd.shape[0]} flags for "
            f"{len(gobj)} ground truths"
        )
    if dkind == "box":
        return _box_iou(dobj, gobj, crowd)
    return np.asarray(masks.mask_iou(dobj, gobj, crowd=crowd), dtype=np.float64)
