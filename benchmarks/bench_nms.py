"""NMS speed: ioukit vs torchvision (C++), supervision, ensemble-boxes and a numpy greedy loop.

Data: N clustered boxes (many overlapping boxes around N/20 centres in a 1000x1000 image),
distinct scores (no ties), 10 classes for batched NMS. Before any time is printed the kept
indices of ioukit are asserted identical to torchvision's (``nms`` and ``batched_nms``); the
other tools are checked and their agreement is printed.

Run: ``.venv-bench/bin/python benchmarks/bench_nms.py`` (reference tools that cannot be
imported are skipped). ``--quick`` runs N = 1000 and 10000 only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import ioukit.suppression as ioukit_nms
from _timing import best_of, fmt_time, have, print_table

SIZE = 1000.0
SIZES = [1000, 10000, 50000]
THRESHOLDS = [0.5, 0.7]
SUPERVISION_MAX = 10000


def clustered(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n boxes around n/20 centres (inside the image), distinct scores, 10 classes."""
    rng = np.random.default_rng(seed)
    k = max(1, n // 20)
    centres = rng.uniform(0, SIZE, (k, 2))
    wh = rng.uniform(20, 120, (k, 2))
    which = rng.integers(0, k, n)
    ctr = centres[which] + rng.normal(0, 0.1, (n, 2)) * wh[which]
    half = wh[which] * rng.uniform(0.8, 1.25, (n, 2)) / 2
    boxes = np.clip(np.concatenate([ctr - half, ctr + half], axis=1), 0.0, SIZE)
    boxes = boxes[(boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])]
    n = boxes.shape[0]
    scores = (rng.permutation(n) + 1.0) / (n + 1)
    return boxes, scores, rng.integers(0, 10, n)


def numpy_greedy(boxes: np.ndarray, scores: np.ndarray, threshold: float) -> np.ndarray:
    """The classic numpy NMS loop (one vectorised IoU row per kept box)."""
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1) * (y2 - y1)
    order = np.argsort(-scores, kind="stable")
    keep = []
    while order.size:
        i = order[0]
        keep.append(i)
        rest = order[1:]
        w = np.maximum(0.0, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]))
        h = np.maximum(0.0, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]))
        inter = w * h
        union = areas[i] + areas[rest] - inter
        iou = inter / np.where(union > 0, union, 1.0)
        order = rest[iou <= threshold]
    return np.array(keep, dtype=np.int64)


def timed(fn: Callable[[], Any]) -> float:
    """Best-of timing, with fewer rounds for calls that take seconds."""
    import time

    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    if first > 1.0:
        return min(first, best_of(fn, repeat=1, min_time=0.0))
    return best_of(fn, repeat=5 if first < 0.05 else 2, min_time=0.2)


def main() -> int:
    sizes = SIZES[:2] if "--quick" in sys.argv else SIZES
    torch = torchvision = sv = eb = None
    if have("torchvision"):
        import torch
        import torchvision

        torch.set_num_threads(1)  # torchvision's CPU nms is single-threaded; so is ioukit's
    else:
        print("torchvision not importable: skipped (no parity check!)")
    if have("supervision"):
        import supervision as sv
    if have("ensemble_boxes"):
        import ensemble_boxes as eb

    single_rows, batched_rows, notes = [], [], []
    for n in sizes:
        boxes, scores, classes = clustered(n)
        n = boxes.shape[0]
        for threshold in THRESHOLDS:
            ours = ioukit_nms.nms(boxes, scores, iou_threshold=threshold)
            t_ours = timed(partial(ioukit_nms.nms, boxes, scores, iou_threshold=threshold))
            row = [str(n), str(threshold), str(len(ours)), fmt_time(t_ours)]
            if torchvision is not None and torch is not None:
                tb, ts = torch.from_numpy(boxes), torch.from_numpy(scores)
                theirs = torchvision.ops.nms(tb, ts, threshold).numpy()
                assert np.array_equal(ours, theirs), (
                    f"nms differs from torchvision at N={n}, t={threshold}"
                )
                t_tv = timed(partial(torchvision.ops.nms, tb, ts, threshold))
                row += [fmt_time(t_tv), f"{t_tv / t_ours:.1f}x"]
            else:
                row += ["-", "-"]
            if sv is not None and n <= SUPERVISION_MAX:
                predictions = np.column_stack([boxes, scores])
                mask = sv.box_non_max_suppression(predictions, iou_threshold=threshold)
                if not np.array_equal(np.sort(ours), np.flatnonzero(mask)):
                    notes.append(f"supervision differs at N={n}, t={threshold}")
                t_sv = timed(
                    partial(sv.box_non_max_suppression, predictions, iou_threshold=threshold)
                )
                row += [fmt_time(t_sv), f"{t_sv / t_ours:.1f}x"]
            else:
                row += ["skipped", "-"]
            if eb is not None:
                unit = [boxes / SIZE]
                zeros = [np.zeros(n)]
                kept_boxes = eb.nms(unit, [scores], zeros, iou_thr=threshold)[0]
                if not np.array_equal(kept_boxes, unit[0][ours]):
                    notes.append(
                        f"ensemble-boxes differs at N={n}, t={threshold} (normalized input)"
                    )
                t_eb = timed(partial(eb.nms, unit, [scores], zeros, iou_thr=threshold))
                row += [fmt_time(t_eb), f"{t_eb / t_ours:.1f}x"]
            else:
                row += ["-", "-"]
            loop = numpy_greedy(boxes, scores, threshold)
            if not np.array_equal(loop, ours):
                notes.append(f"numpy loop differs at N={n}, t={threshold}")
            t_np = timed(partial(numpy_greedy, boxes, scores, threshold))
            row += [fmt_time(t_np), f"{t_np / t_ours:.1f}x"]
            single_rows.append(row)

            ours_b = ioukit_nms.batched_nms(boxes, scores, classes, iou_threshold=threshold)
            t_ours_b = timed(
                partial(ioukit_nms.batched_nms, boxes, scores, classes, iou_threshold=threshold)
            )
            row = [str(n), str(threshold), str(len(ours_b)), fmt_time(t_ours_b)]
            if torchvision is not None and torch is not None:
                tb, ts, tc = (
                    torch.from_numpy(boxes),
                    torch.from_numpy(scores),
                    torch.from_numpy(classes),
                )
                theirs_b = torchvision.ops.batched_nms(tb, ts, tc, threshold).numpy()
                assert np.array_equal(ours_b, theirs_b), (
                    f"batched_nms differs at N={n}, t={threshold}"
                )
                t_tv_b = timed(partial(torchvision.ops.batched_nms, tb, ts, tc, threshold))
                row += [fmt_time(t_tv_b), f"{t_tv_b / t_ours_b:.1f}x"]
            else:
                row += ["-", "-"]
            batched_rows.append(row)

    ratio = "tool/ioukit"
    print_table(
        "nms: time per call (ratio > 1: ioukit faster); kept indices identical to torchvision",
        [
            "N",
            "thr",
            "kept",
            "ioukit",
            "torchvision",
            ratio,
            "supervision",
            ratio,
            "ensemble-boxes",
            ratio,
            "numpy loop",
            ratio,
        ],
        single_rows,
    )
    print_table(
        "batched_nms, 10 classes (ratio > 1: ioukit faster); identical to torchvision",
        ["N", "thr", "kept", "ioukit", "torchvision", ratio],
        batched_rows,
    )
    for note in notes:
        print("note:", note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
