"""Pairwise IoU family: ioukit vs torchvision.ops (CPU), supervision and plain NumPy.

Run with ``make bench`` (or ``.venv-bench/bin/python benchmarks/bench_iou.py [--quick]``).
Every tool runs in this one process on the same boxes; the script checks that the values agree
before it prints times and ratios. ``np.full`` of the output shape is the memory floor: no
pairwise function can write its result faster than that.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import ioukit
from _timing import best_of, fmt_time, have, print_table
from ioukit import synthetic

QUICK = "--quick" in sys.argv
SIZES = [1000, 4000] if QUICK else [1000, 4000, 10000]


def make_boxes(n: int, seed: int, dtype: type) -> np.ndarray:
    return synthetic.make_boxes(n, dtype=dtype, seed=seed)


def numpy_broadcast_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The textbook NumPy version: (N, M) temporaries for every step."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def references(dtype: type) -> dict[str, Callable[[np.ndarray, np.ndarray], Any]]:
    tools: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
        "numpy broadcast": numpy_broadcast_iou
    }
    if have("torchvision"):
        import torch
        import torchvision.ops as tv

        torch.set_num_threads(os.cpu_count() or 1)
        tools["torchvision"] = lambda a, b: tv.box_iou(torch.from_numpy(a), torch.from_numpy(b))
    if have("supervision"):
        import supervision as sv

        tools["supervision"] = sv.box_iou_batch
    return tools


def as_numpy(value: Any) -> np.ndarray:
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def bench_box_iou() -> None:
    for dtype in (np.float32, np.float64):
        rows = []
        for n in SIZES:
            a, b = make_boxes(n, 1, dtype), make_boxes(n, 2, dtype)
            repeat = 3 if n >= 10000 else 5
            ours = ioukit.box_iou(a, b)
            floor = best_of(lambda n=n, dt=dtype: np.full((n, n), 0.5, dtype=dt), repeat=repeat)
            t_ours = best_of(lambda a=a, b=b: ioukit.box_iou(a, b), repeat=repeat)
            row = [f"{n}x{n}", fmt_time(t_ours), f"{t_ours / floor:.2f}x floor"]
            for name, fn in references(dtype).items():
                if name == "supervision" and n > 4000:
                    row.append(f"{name}: skipped")
                    continue
                np.testing.assert_allclose(as_numpy(fn(a, b)), ours, atol=1e-6, rtol=1e-5)
                t_ref = best_of(lambda fn=fn, a=a, b=b: fn(a, b), repeat=repeat, min_time=0)
                row.append(f"{name} {fmt_time(t_ref)} ({t_ref / t_ours:.1f}x)")
            rows.append(row)
        print_table(
            f"box_iou {np.dtype(dtype).name} (ratio = reference time / ioukit time)",
            [
                "size",
                "ioukit",
                "vs memory floor",
                *(f"ref {i + 1}" for i in range(len(rows[0]) - 3)),
            ],
            rows,
        )


def bench_family() -> None:
    if not have("torchvision"):
        print("\n(torchvision not installed: IoU-family comparison skipped)")
        return
    import torch
    import torchvision.ops as tv

    n = 2000
    a, b = make_boxes(n, 3, np.float32), make_boxes(n, 4, np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    rows = []
    for name, ours_fn, ref_fn in [
        ("generalized_box_iou", ioukit.generalized_box_iou, tv.generalized_box_iou),
        ("distance_box_iou", ioukit.distance_box_iou, tv.distance_box_iou),
        ("complete_box_iou", ioukit.complete_box_iou, tv.complete_box_iou),
    ]:
        np.testing.assert_allclose(ours_fn(a, b), ref_fn(ta, tb).numpy(), atol=2e-6)
        t_ours = best_of(lambda f=ours_fn: f(a, b))
        t_ref = best_of(lambda f=ref_fn: f(ta, tb), min_time=0)
        rows.append([name, fmt_time(t_ours), fmt_time(t_ref), f"{t_ref / t_ours:.1f}x"])
    print_table(
        f"IoU family {n}x{n} float32", ["function", "ioukit", "torchvision", "speed-up"], rows
    )


def main() -> None:
    print(f"ioukit {ioukit.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    bench_box_iou()
    bench_family()
    print("(start-up and first-call times: benchmarks/bench_startup.py)")


if __name__ == "__main__":
    main()
