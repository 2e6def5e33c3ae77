"""VOC / YOLO protocols, curves and confusion matrix on the COCO-like set, against references.

Runs on the deterministic COCO-like set of ``make_coco_like.py`` (default 5 000 images, 80
classes, ~36 000 ground truths, ~318 000 predictions), read once into ioukit Datasets (reading
is not timed: it is the COCO reader's benchmark). Times, from in-memory arrays:

* ioukit ``evaluate_voc`` (11-point and all-point), ``evaluate_yolo``, ``pr_curves``,
  ``confusion_matrix``, and the COCO protocol when ``ioukit.evaluation.protocols.coco`` is present;
* reference: a straightforward NumPy/Python implementation of the VOC devkit loop
  (py-faster-rcnn ``voc_eval`` structure: per class, per prediction in score order, IoU with
  that image's ground truths), run once; its mAP is checked against ioukit's.
* ultralytics ``ap_per_class`` on ioukit's TP matrix when ultralytics is importable.

Usage: ``python benchmarks/bench_protocols.py [--images N] [--quick]`` (``--quick``: 1 000 images).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from _timing import best_of, fmt_time, have, print_table
from ioukit.analysis.confusion import confusion_matrix
from ioukit.analysis.curves import pr_curves
from ioukit.dataset import Dataset
from ioukit.evaluation.protocols.voc import evaluate_voc
from ioukit.evaluation.protocols.yolo import evaluate_yolo
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from make_coco_like import make_coco_like


def voc_devkit_reference(gt: Dataset, pred: Dataset, threshold: float = 0.5) -> float:
    """All-point VOC mAP the way py-faster-rcnn's ``voc_eval`` loops (continuous areas)."""
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    aps = []
    for c in np.unique(gt.category_id):
        g = np.flatnonzero(gt.category_id == c)
        by_image: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for i in np.unique(gt.image_index[g]).tolist():
            rows = g[gt.image_index[g] == i]
            by_image[i] = (gt.boxes[rows], np.zeros(rows.size, dtype=bool))
        npos = int((~gt.crowd[g]).sum())
        ignore_of = {i: gt.crowd[g[gt.image_index[g] == i]] for i in by_image}
        p = np.flatnonzero(pred.category_id == c)
        p = p[np.argsort(-scores[p], kind="stable")]
        tp = np.zeros(p.size)
        fp = np.zeros(p.size)
        for d, k in enumerate(p.tolist()):
            image = int(pred.image_index[k])
            if image not in by_image:
                fp[d] = 1
                continue
            boxes, taken = by_image[image]
            bb = pred.boxes[k]
            ixmin = np.maximum(boxes[:, 0], bb[0])
            iymin = np.maximum(boxes[:, 1], bb[1])
            ixmax = np.minimum(boxes[:, 2], bb[2])
            iymax = np.minimum(boxes[:, 3], bb[3])
            inter = np.maximum(ixmax - ixmin, 0.0) * np.maximum(iymax - iymin, 0.0)
            union = (
                (bb[2] - bb[0]) * (bb[3] - bb[1])
                + (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
                - inter
            )
            overlaps = inter / union
            j = int(np.argmax(overlaps))
            if overlaps[j] >= threshold:
                if ignore_of[image][j]:
                    continue
                if not taken[j]:
                    taken[j] = True
                    tp[d] = 1
                else:
                    fp[d] = 1
            else:
                fp[d] = 1
        keep = (tp + fp) > 0
        tpc, fpc = np.cumsum(tp[keep]), np.cumsum(fp[keep])
        rec = tpc / max(npos, 1)
        prec = tpc / np.maximum(tpc + fpc, np.finfo(np.float64).eps)
        mrec = np.concatenate(([0.0], rec, [1.0]))
        mpre = np.concatenate(([0.0], prec, [0.0]))
        for i in range(mpre.size - 1, 0, -1):
            mpre[i - 1] = max(mpre[i - 1], mpre[i])
        idx = np.where(mrec[1:] != mrec[:-1])[0]
        aps.append(float(np.sum((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1])))
    return float(np.mean(aps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 1000 if args.quick else args.images
    gt_dict, results = make_coco_like(num_images=n, num_classes=80)
    gt = read_coco_ground_truth(gt_dict)
    pred = read_coco_results(results, gt)
    print(f"COCO-like set: {n} images, {len(gt)} ground truths, {len(pred)} predictions")

    runs: list[tuple[str, Any]] = [
        ("evaluate_voc 11point", lambda: evaluate_voc(gt, pred)),
        ("evaluate_voc all", lambda: evaluate_voc(gt, pred, interpolation="all")),
        ("evaluate_yolo (10 thr)", lambda: evaluate_yolo(gt, pred)),
        ("pr_curves", lambda: pr_curves(gt, pred)),
        ("confusion_matrix", lambda: confusion_matrix(gt, pred)),
    ]
    if have("ioukit.evaluation.protocols.coco"):
        try:
            from ioukit.evaluation.protocols.coco import evaluate_coco

            evaluate_coco(gt, pred)
            runs.append(("COCO protocol (E1)", lambda: evaluate_coco(gt, pred)))
        except Exception as error:  # the COCO engine is another helper's, keep going
            print(f"COCO protocol skipped: {type(error).__name__}: {error}", file=sys.stderr)
    times = {}
    rows = []
    for name, fn in runs:
        times[name] = best_of(fn, repeat=3, min_time=0.0)
        rows.append([name, fmt_time(times[name])])
    print_table("ioukit, from in-memory arrays", ["call", "best time"], rows)

    start = time.perf_counter()
    reference = voc_devkit_reference(gt, pred)
    ref_time = time.perf_counter() - start
    mine = evaluate_voc(gt, pred, interpolation="all").stats["mAP"]
    ratio = ref_time / times["evaluate_voc all"]
    print_table(
        "VOC all-point mAP vs a NumPy/Python devkit loop",
        ["tool", "time", "mAP", "ratio"],
        [
            ["ioukit evaluate_voc", fmt_time(times["evaluate_voc all"]), f"{mine:.12f}", "1.0x"],
            ["devkit-style loop", fmt_time(ref_time), f"{reference:.12f}", f"{ratio:.1f}x slower"],
        ],
    )
    if abs(reference - mine) > 1e-12:
        print(f"WARNING: mAP differs by {reference - mine:.3e}", file=sys.stderr)
    if "COCO protocol (E1)" in times:
        coco = times["COCO protocol (E1)"]
        print(
            f"\nVOC all-point / COCO time: {times['evaluate_voc all'] / coco:.2f}; "
            f"YOLO / COCO: {times['evaluate_yolo (10 thr)'] / coco:.2f}"
        )
    if not have("ultralytics"):
        print("\nultralytics not importable: Ultralytics reference skipped")


if __name__ == "__main__":
    main()
