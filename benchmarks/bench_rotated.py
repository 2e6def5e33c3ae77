"""Rotated IoU and rotated NMS speed: ioukit vs shapely 2 (vectorised) and a greedy loop.

``rotated_box_iou`` on 1000 x 1000 boxes (cxcywhr, degrees) against shapely 2's vectorised
``intersection`` + ``area`` on the same polygons (goal: >= 50x); the values are asserted equal
to 1e-9 first. Then ``rotated_nms`` on 10 000 clustered boxes, with the kept indices asserted
identical to the quadratic greedy loop over the same exact IoU (run once, it is slow). Last,
what matching with Ultralytics' probiou instead of the exact IoU does to COCO-style mAP on a
generated OBB set (jittered ground truth as predictions, plus false positives).

Run: ``.venv-bench/bin/python benchmarks/bench_rotated.py`` (``--quick``: 300 x 300, 2 000
boxes for NMS). Reference tools that cannot be imported are skipped.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import ioukit
from _timing import best_of, fmt_time, have, print_table
from ioukit.synthetic import make_rotated_boxes


def random_boxes(n: int, seed: int, spread: float = 1000.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return make_rotated_boxes(n, centre=(0, spread), size=(10, 120), seed=rng)


def clustered(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    k = max(1, n // 20)
    centres = rng.uniform(0, 4000, (k, 2))
    which = rng.integers(0, k, n)
    boxes = np.concatenate(
        [
            centres[which] + rng.normal(0, 6, (n, 2)),
            rng.uniform(20, 80, (n, 2)),
            rng.normal(0, 15, (n, 1)),
        ],
        axis=1,
    )
    return boxes, (rng.permutation(n) + 1.0) / (n + 1)


def main() -> int:
    quick = "--quick" in sys.argv
    n = 300 if quick else 1000
    b1, b2 = random_boxes(n, 0), random_boxes(n, 1)
    ours = ioukit.rotated_box_iou(b1, b2)
    base = best_of(lambda: ioukit.rotated_box_iou(b1, b2), repeat=3)
    rows = [["ioukit rotated_box_iou", fmt_time(base), "1.0x"]]
    if have("shapely"):
        import shapely

        c1 = ioukit.box_convert(b1, "cxcywhr", "xyxyxyxy").reshape(n, 4, 2)
        c2 = ioukit.box_convert(b2, "cxcywhr", "xyxyxyxy").reshape(n, 4, 2)

        def shapely_iou() -> np.ndarray:
            p1, p2 = shapely.polygons(c1), shapely.polygons(c2)
            inter = shapely.area(shapely.intersection(p1[:, None], p2[None, :]))
            union = shapely.area(p1)[:, None] + shapely.area(p2)[None, :] - inter
            return inter / union

        want = shapely_iou()
        assert np.abs(want - ours).max() < 1e-9, np.abs(want - ours).max()
        t = best_of(shapely_iou, repeat=1, min_time=0)
        rows.append(["shapely 2 intersection", fmt_time(t), f"{t / base:.0f}x slower"])
    print_table(
        f"rotated_box_iou {n} x {n} (density {(ours > 0).mean():.1%})",
        ["tool", "time", "ratio"],
        rows,
    )

    m = 2000 if quick else 10000
    boxes, scores = clustered(m)
    kept = ioukit.rotated_nms(boxes, scores, iou_threshold=0.5)
    t_nms = best_of(lambda: ioukit.rotated_nms(boxes, scores, iou_threshold=0.5), repeat=3)
    start = time.perf_counter()
    c = ioukit.box_convert(boxes, "cxcywhr", "xyxyxyxy")
    order = np.argsort(-scores, kind="stable")
    removed = np.zeros(m, dtype=bool)
    reference = []
    for p, k in enumerate(order):
        if removed[k]:
            continue
        reference.append(int(k))
        rest = order[p + 1 :]
        rest = rest[~removed[rest]]
        iou = ioukit.rotated_box_iou(c[k : k + 1], c[rest], fmt="xyxyxyxy")[0]
        removed[rest[iou > 0.5]] = True
    t_ref = time.perf_counter() - start
    assert kept.tolist() == reference, "rotated_nms differs from the greedy reference"
    print_table(
        f"rotated_nms {m} clustered boxes, IoU > 0.5 ({len(kept)} kept, identical to reference)",
        ["tool", "time", "ratio"],
        [
            ["ioukit rotated_nms", fmt_time(t_nms), "1.0x"],
            [
                "greedy loop, one IoU row per kept box",
                fmt_time(t_ref),
                f"{t_ref / t_nms:.0f}x slower",
            ],
        ],
    )
    probiou_vs_exact(n_images=60 if quick else 300)
    return 0


def generated_obb(n_images: int, seed: int = 0) -> tuple[list, list]:
    """Per image: (gt boxes, gt classes) and (pred boxes, pred classes, scores)."""
    rng = np.random.default_rng(seed)
    gts, preds = [], []
    for _ in range(n_images):
        n = int(rng.integers(1, 15))
        gt = make_rotated_boxes(n, centre=(0, 1000), size=(20, 120), seed=rng)
        cls = rng.integers(0, 3, n)
        size = gt[:, 2:4]
        jitter = gt.copy()
        jitter[:, :2] += rng.normal(0, 0.15, (n, 2)) * size
        jitter[:, 2:4] *= np.exp(rng.normal(0, 0.2, (n, 2)))
        jitter[:, 4] += np.degrees(rng.normal(0, 0.2, n))
        m = int(rng.integers(0, 5))
        fp = make_rotated_boxes(m, centre=(0, 1000), size=(20, 120), seed=rng)
        boxes = np.concatenate([jitter, fp])
        classes = np.concatenate([cls, rng.integers(0, 3, m)])
        scores = np.concatenate([rng.uniform(0.3, 1, n), rng.uniform(0, 0.7, m)])
        gts.append((gt, cls))
        preds.append((boxes, classes, scores))
    return gts, preds


def coco_map(gts: list, preds: list, similarity: str) -> tuple[float, float]:
    """(AP50, AP50:95) averaged over classes, pycocotools' matching and 101-point AP."""
    from ioukit.evaluation.ap import coco_interpolated_ap
    from ioukit.matching import match_predictions

    thresholds = np.linspace(0.5, 0.95, 10)
    per_class: dict[int, list] = {c: [] for c in range(3)}
    n_gt = dict.fromkeys(range(3), 0)
    for (gt, gcls), (boxes, pcls, scores) in zip(gts, preds, strict=True):
        for c in range(3):
            g, p, s = gt[gcls == c], boxes[pcls == c], scores[pcls == c]
            n_gt[c] += len(g)
            if len(p) == 0:
                continue
            sim = ioukit.rotated_box_iou(p, g) if similarity == "exact" else ioukit.probiou(p, g)
            m = match_predictions(sim, s, iou_thresholds=thresholds)
            per_class[c].append((s, m.tp))
    ap = np.zeros((3, len(thresholds)))
    for c, parts in per_class.items():
        scores = np.concatenate([s for s, _ in parts])
        tp = np.concatenate([t for _, t in parts], axis=1)
        order = np.argsort(-scores, kind="stable")
        for t in range(len(thresholds)):
            hits = np.cumsum(tp[t, order])
            recall = hits / n_gt[c]
            precision = hits / np.arange(1, len(order) + 1)
            ap[c, t] = coco_interpolated_ap(recall, precision)
    return float(ap[:, 0].mean()), float(ap.mean())


def probiou_vs_exact(n_images: int) -> None:
    gts, preds = generated_obb(n_images)
    exact = coco_map(gts, preds, "exact")
    prob = coco_map(gts, preds, "probiou")
    print_table(
        f"OBB mAP on {n_images} generated images: matching with probiou vs the exact IoU",
        ["similarity", "mAP50", "mAP50:95"],
        [
            ["exact rotated IoU", f"{exact[0]:.4f}", f"{exact[1]:.4f}"],
            ["probiou (Ultralytics)", f"{prob[0]:.4f}", f"{prob[1]:.4f}"],
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
