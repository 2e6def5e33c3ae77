"""Masks and COCO RLE: ioukit vs pycocotools.mask, supervision and a dense NumPy version.

Run with ``make bench`` (or ``.venv-bench/bin/python benchmarks/bench_masks.py [--quick]``).
Every tool runs in this one process on the same masks (ellipses, some with holes, on a
480 x 640 image); the script checks that the values agree before it prints times and ratios
(ratio = reference time / ioukit time, so > 1 means ioukit is faster).

pycocotools wants masks as a Fortran-ordered (H, W, N) uint8 array; most code holds
(N, H, W) arrays, so its encode is timed both with the array already in its layout and with
the conversion included.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from _timing import best_of, fmt_time, have, print_table
from ioukit import masks, synthetic

QUICK = "--quick" in sys.argv
H, W = 480, 640
COUNTS = [(20, 20), (100, 100)] if QUICK else [(20, 20), (100, 100), (300, 300)]


def make_masks(n: int, seed: int) -> np.ndarray:
    return synthetic.make_masks(n, H, W, seed=seed)


def numpy_dense_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The usual dense version: one float32 matmul of flattened masks."""
    fa = a.reshape(a.shape[0], -1).astype(np.float32)
    fb = b.reshape(b.shape[0], -1).astype(np.float32)
    inter = fa @ fb.T
    union = fa.sum(1)[:, None] + fb.sum(1)[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def ratio(reference: float | None, ours: float) -> str:
    return "-" if reference is None else f"{reference / ours:.2f}x"


def timed(fn: Callable[[], Any]) -> float:
    return best_of(fn, repeat=3 if QUICK else 5, min_time=0.1)


def bench_size(
    n: int, m: int, pm: Any, sv_iou: Any, rows_codec: list[list[str]], rows_iou: list[list[str]]
) -> None:
    """Time every operation on n predicted and m ground-truth masks; append table rows."""
    pred = make_masks(n, 1)
    gt = make_masks(m, 2)
    rles_pred = masks.encode(pred)
    rles_gt = masks.encode(gt)
    crowd = np.arange(m) % 10 == 0
    ours_iou = masks.mask_iou(rles_pred, rles_gt, crowd=crowd)
    assert np.array_equal(masks.mask_iou(pred, gt, crowd=crowd), ours_iou)

    # ---- encode / decode
    t_enc = timed(lambda: masks.encode(pred))
    t_dec = timed(lambda: masks.decode(rles_gt))
    t_pm_enc = t_pm_enc_conv = t_pm_dec = None
    if pm is not None:
        fortran = np.asfortranarray(pred.transpose(1, 2, 0).astype(np.uint8))
        assert pm.encode(fortran) == rles_pred, "encode differs from pycocotools"
        t_pm_enc = timed(lambda: pm.encode(fortran))
        t_pm_enc_conv = timed(
            lambda: pm.encode(np.asfortranarray(pred.transpose(1, 2, 0).astype(np.uint8)))
        )
        t_pm_dec = timed(lambda: pm.decode(rles_gt))
    rows_codec.append(
        [f"encode {n}", fmt_time(t_enc), fmt_time(t_pm_enc or 0), ratio(t_pm_enc, t_enc)]
    )
    rows_codec.append(
        [
            f"encode {n} (+ to Fortran)",
            fmt_time(t_enc),
            fmt_time(t_pm_enc_conv or 0),
            ratio(t_pm_enc_conv, t_enc),
        ]
    )
    rows_codec.append(
        [f"decode {m}", fmt_time(t_dec), fmt_time(t_pm_dec or 0), ratio(t_pm_dec, t_dec)]
    )

    # ---- IoU on RLEs
    t_rle = timed(lambda: masks.mask_iou(rles_pred, rles_gt, crowd=crowd))
    t_pm_iou = None
    if pm is not None:
        expected = pm.iou(rles_pred, rles_gt, crowd.astype(np.uint8))
        assert np.array_equal(expected, ours_iou), "IoU differs from pycocotools"
        t_pm_iou = timed(lambda: pm.iou(rles_pred, rles_gt, crowd.astype(np.uint8)))
    rows_iou.append(
        [
            f"{n}x{m} RLE",
            fmt_time(t_rle),
            "pycocotools.mask.iou",
            fmt_time(t_pm_iou or 0),
            ratio(t_pm_iou, t_rle),
        ]
    )

    # ---- IoU on dense masks (ioukit encodes both sets inside the call)
    plain = masks.mask_iou(pred, gt)
    t_dense = timed(lambda: masks.mask_iou(pred, gt))
    t_np = timed(lambda: numpy_dense_iou(pred, gt)) if n <= 100 else None
    if t_np is not None:
        assert np.allclose(numpy_dense_iou(pred, gt), plain, rtol=1e-6, atol=1e-7)
    rows_iou.append(
        [
            f"{n}x{m} dense",
            fmt_time(t_dense),
            "numpy float32 matmul",
            fmt_time(t_np) if t_np else "skipped",
            ratio(t_np, t_dense),
        ]
    )
    if sv_iou is not None and n <= 100:
        assert np.allclose(sv_iou(pred, gt), plain, rtol=1e-6, atol=1e-7)
        t_sv = timed(lambda: sv_iou(pred, gt))
        rows_iou.append(
            [
                f"{n}x{m} dense",
                fmt_time(t_dense),
                "supervision mask_iou_batch",
                fmt_time(t_sv),
                ratio(t_sv, t_dense),
            ]
        )


def main() -> None:
    pm: Any = None
    sv_iou: Any = None
    if have("pycocotools"):
        from pycocotools import mask as pm
    if have("supervision"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from supervision.detection.utils.iou_and_nms import mask_iou_batch as sv_iou
    warnings.simplefilter("ignore", DeprecationWarning)  # pycocotools decode under NumPy 2

    rows_codec: list[list[str]] = []
    rows_iou: list[list[str]] = []
    for n, m in COUNTS:
        bench_size(n, m, pm, sv_iou, rows_codec, rows_iou)

    # ---- polygons
    rng = np.random.default_rng(0)
    polygons = []
    for _ in range(200):
        k = int(rng.integers(6, 40))
        angles = np.sort(rng.uniform(0, 2 * np.pi, k))
        radius = rng.uniform(5, 150)
        cx, cy = rng.uniform(0, W), rng.uniform(0, H)
        polygons.append(
            np.column_stack([cx + radius * np.cos(angles), cy + radius * np.sin(angles)])
            .reshape(-1)
            .tolist()
        )
    t_poly = timed(lambda: masks.from_polygons(polygons, H, W))
    t_pm_poly = None
    if pm is not None:
        assert pm.frPyObjects(polygons, H, W) == masks.from_polygons(polygons, H, W)
        t_pm_poly = timed(lambda: pm.frPyObjects(polygons, H, W))
    rows_codec.append(
        ["200 polygons", fmt_time(t_poly), fmt_time(t_pm_poly or 0), ratio(t_pm_poly, t_poly)]
    )

    print_table(
        f"RLE codec on {H}x{W} masks (ratio = pycocotools / ioukit)",
        ["operation", "ioukit", "pycocotools", "ratio"],
        rows_codec,
    )
    print_table(
        f"pairwise mask IoU on {H}x{W} masks (ratio = reference / ioukit)",
        ["pairs", "ioukit", "reference", "ref time", "ratio"],
        rows_iou,
    )


if __name__ == "__main__":
    main()
