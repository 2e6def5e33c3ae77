"""Check ``protocol="yolo"`` and the confusion matrix against the real Ultralytics code.

Feeds the same boxes to Ultralytics' own ``yolo val`` code path — ``DetectionValidator
._process_batch`` (``utils.metrics.box_iou`` + ``BaseValidator.match_predictions``), then
``DetMetrics.update_stats``/``process`` (``ap_per_class``, ``Metric``) — and to
``ioukit.evaluation.protocols.yolo.evaluate_yolo``; then Ultralytics'
``ConfusionMatrix.process_batch`` against ``ioukit.analysis.confusion.confusion_matrix`` in both
``matching`` modes.

As ``yolo val`` does, each image's predictions reach Ultralytics in descending confidence (NMS
output order), ground truths in file order, classes as indices 0..K-1 of the sorted category
ids. Scores are tie-free except in the tied-scores case, where Ultralytics' unstable
``np.argsort(-conf)`` decides and ioukit calls the same sort on the same layout; the float32
case holds the three float32 edge cases of #17. Ground-truth crowds are dropped on the
Ultralytics side (its COCO converter skips them), as ioukit does.

Usage: ``.venv-bench/bin/python benchmarks/check_ultralytics.py [--quick]``.
Exit status 1 on a difference above 1e-9 (or any confusion-matrix cell difference with the
matching mode that reproduces the installed Ultralytics).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

import numpy as np

from ioukit.analysis.confusion import confusion_matrix
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.evaluation.protocols.yolo import evaluate_yolo

TOLERANCE = 1e-9


# --------------------------------------------------------------------------- datasets
def random_case(
    seed: int,
    *,
    num_images: int = 60,
    num_classes: int = 6,
    integer_boxes: bool = False,
    grid: float = 0.0,
    tied_scores: bool = False,
) -> tuple[Dataset, Dataset]:
    """A random detection set: some images without gt / without predictions, one class with
    no ground truth, one with no predictions, wrong-class and duplicate predictions.

    ``integer_boxes`` rounds coordinates (exact IoUs such as 0.5 or 0.55 occur); ``grid > 0``
    snaps them to multiples of ``grid`` and duplicates some ground truths under another class
    (many exact IoU ties between ground truths). ``tied_scores`` puts the scores on a 1/32 grid
    (Ultralytics' unstable ``np.argsort(-conf)`` then decides the order of ties).
    """
    rng = np.random.default_rng(seed)
    images = ImageTable.from_lists(
        list(range(100, 100 + num_images)), [f"im{i}" for i in range(num_images)]
    )
    cat_ids = rng.permutation(np.arange(1, 3 * num_classes, 3))[:num_classes]
    cats = CategoryTable.from_lists(cat_ids.tolist(), [f"c{c}" for c in cat_ids.tolist()])
    no_gt_class, no_pred_class = cat_ids[0], cat_ids[1]
    gt_classes = cat_ids[cat_ids != no_gt_class]
    n_gt = int(num_images * 4)
    gt_img = rng.integers(0, num_images - 5, n_gt)  # last 5 images: no ground truth
    xy = rng.uniform(0, 400, (n_gt, 2))
    gt_boxes = np.hstack((xy, xy + rng.uniform(8, 120, (n_gt, 2))))
    gt_cls = rng.choice(gt_classes, n_gt)
    # predictions: jittered copies of ground truths (some twice, some with a wrong class) + noise
    picks = rng.integers(0, n_gt, int(n_gt * 1.6))
    scale = (gt_boxes[picks, 2:] - gt_boxes[picks, :2]).repeat(2, axis=1)
    pred_boxes = gt_boxes[picks] + rng.normal(0, 0.12, (picks.size, 4)) * scale
    pred_cls = np.where(
        rng.random(picks.size) < 0.8, gt_cls[picks], rng.choice(cat_ids, picks.size)
    )
    pred_img = gt_img[picks]
    n_noise = num_images * 3
    nxy = rng.uniform(0, 400, (n_noise, 2))
    noise = np.hstack((nxy, nxy + rng.uniform(5, 100, (n_noise, 2))))
    pred_boxes = np.vstack((pred_boxes, noise))
    pred_cls = np.concatenate((pred_cls, rng.choice(cat_ids, n_noise)))
    pred_img = np.concatenate((pred_img, rng.integers(0, num_images, n_noise)))
    keep = (pred_cls != no_pred_class) & (pred_img % 11 != 3)  # some images without predictions
    pred_boxes, pred_cls, pred_img = pred_boxes[keep], pred_cls[keep], pred_img[keep]
    pred_boxes[:, 2:] = np.maximum(pred_boxes[:, 2:], pred_boxes[:, :2] + 1.0)
    if integer_boxes:
        gt_boxes, pred_boxes = np.round(gt_boxes), np.round(pred_boxes)
    if grid > 0:
        gt_boxes, pred_boxes = np.round(gt_boxes / grid) * grid, np.round(pred_boxes / grid) * grid
        pred_boxes[:, 2:] = np.maximum(pred_boxes[:, 2:], pred_boxes[:, :2] + grid)
        gt_boxes[:, 2:] = np.maximum(gt_boxes[:, 2:], gt_boxes[:, :2] + grid)
        dup = rng.random(n_gt) < 0.2
        gt_boxes = np.vstack((gt_boxes, gt_boxes[dup]))
        gt_img = np.concatenate((gt_img, gt_img[dup]))
        gt_cls = np.concatenate((gt_cls, rng.choice(gt_classes, int(dup.sum()))))
    true_score = rng.beta(4, 2, pred_cls.size)
    noise_score = rng.beta(2, 4, pred_cls.size)
    is_tp_like = np.arange(pred_cls.size) < int(keep[: picks.size].sum())
    scores = np.where(is_tp_like, true_score, noise_score)
    scores = np.ceil(np.clip(scores, 1e-3, 1.0) * 32) / 32 if tied_scores else _untie(scores, rng)
    gt = Dataset.from_arrays(images, cats, boxes=gt_boxes, image_index=gt_img, category_id=gt_cls)
    pred = Dataset.from_arrays(
        images, cats, boxes=pred_boxes, image_index=pred_img, category_id=pred_cls, scores=scores
    )
    return gt, pred


def float32_case(seed: int, num_images: int = 80) -> tuple[Dataset, Dataset]:
    """The three float32 edge cases of #17 among ordinary boxes: tiny boxes whose ``+ 1e-7``
    vanishes (IoU exactly 0.5), two ground truths equal only in float32, and an IoU that float32
    rounds from 0.4999999999999998 to 0.50000006; boxes shifted by integers (exact in float32)."""
    rng = np.random.default_rng(seed)
    images = ImageTable.from_lists(
        list(range(1, num_images + 1)), [f"im{i}" for i in range(num_images)]
    )
    cats = CategoryTable.from_lists([1, 2], ["a", "b"])
    gt_b: list[list[float]] = []
    gt_i: list[int] = []
    pr_b: list[list[float]] = []
    pr_i: list[int] = []
    for i in range(num_images):
        kind = i % 4
        if kind == 0:
            x, y = float(rng.integers(0, 500)), float(rng.integers(0, 500))
            gt_b.append([x, y, x + 1, y + int(rng.integers(2, 6))])
            pr_b.append([x, y, x + 1, y + 1])
        elif kind == 1:
            gt_b += [[196, 171, 621, 459], [262, 188, 651, 524]]
            pr_b += [[214, 182, 672, 487], [262, 188, 651, 524]]
            gt_i.append(i)
            pr_i.append(i)
        elif kind == 2:
            gt_b.append([236.11, 241.9, 477.91, 448.0])
            pr_b.append([236.11, 241.9, 357.01, 448.0])
        else:
            xy = rng.uniform(0, 300, 2)
            box = [*xy.tolist(), *(xy + rng.uniform(20, 80, 2)).tolist()]
            gt_b.append(box)
            pr_b += [box, [box[0] + 2, box[1], box[2] + 2, box[3]]]
            pr_i.append(i)
        gt_i.append(i)
        pr_i.append(i)
    pr_c = np.where(rng.random(len(pr_b)) < 0.85, 1, 2)
    scores = _untie(rng.random(len(pr_b)), rng)
    gt = Dataset.from_arrays(
        images, cats, boxes=gt_b, image_index=gt_i, category_id=[1] * len(gt_b)
    )
    pred = Dataset.from_arrays(
        images, cats, boxes=pr_b, image_index=pr_i, category_id=pr_c, scores=scores
    )
    return gt, pred


def _untie(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Distinct scores in (0, 1): add a tiny distinct offset to each."""
    offsets = rng.permutation(scores.size) * (1e-6 / max(scores.size, 1))
    out = np.clip(scores, 0.0, 1.0) * 0.998 + 0.001 + offsets
    if np.unique(out).size != out.size:
        raise RuntimeError("score ties left")
    return out


def coco_like_case(num_images: int, seed: int) -> tuple[Dataset, Dataset]:
    """``make_coco_like`` set (crowds, Zipf classes), scores made tie-free."""
    from ioukit.io.coco import read_coco_ground_truth, read_coco_results
    from make_coco_like import make_coco_like

    gt_dict, results = make_coco_like(num_images=num_images, num_classes=12, seed=seed)
    rng = np.random.default_rng(seed)
    scores = _untie(np.array([r["score"] for r in results]), rng)
    for r, s in zip(results, scores.tolist(), strict=True):
        r["score"] = s
    gt = read_coco_ground_truth(gt_dict)
    return gt, read_coco_results(results, gt)


# --------------------------------------------------------------------------- ultralytics side
def _per_image(gt: Dataset, pred: Dataset) -> list[dict[str, Any]]:
    """Per image: gt boxes/classes (file order, crowds dropped), predictions by descending conf."""
    import torch

    ids = np.sort(gt.categories.ids)
    gt_cls = np.searchsorted(ids, gt.category_id)
    pred_known = np.isin(pred.category_id, ids)
    pred_cls = np.searchsorted(ids, pred.category_id)
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    out = []
    for i in range(len(gt.images)):
        g = np.flatnonzero((gt.image_index == i) & ~gt.crowd)
        p = np.flatnonzero((pred.image_index == i) & pred_known)
        p = p[np.argsort(-scores[p], kind="stable")]
        out.append(
            {
                "batch": {
                    "bboxes": torch.tensor(gt.boxes[g], dtype=torch.float32).reshape(-1, 4),
                    "cls": torch.tensor(gt_cls[g], dtype=torch.float32),
                    "im_file": f"{gt.images.ids[i]}.jpg",
                },
                "pred": {
                    "bboxes": torch.tensor(pred.boxes[p], dtype=torch.float32).reshape(-1, 4),
                    "conf": torch.tensor(scores[p], dtype=torch.float32),
                    "cls": torch.tensor(pred_cls[p], dtype=torch.float32),
                },
                "conf64": scores[p],
            }
        )
    return out


def ultralytics_val(gt: Dataset, pred: Dataset) -> dict[str, Any]:
    """``yolo val`` metrics from Ultralytics' own code (validator matching + DetMetrics)."""
    import torch
    from ultralytics.models.yolo.detect.val import DetectionValidator
    from ultralytics.utils.metrics import DetMetrics

    names = {k: str(k) for k in range(len(gt.categories))}
    validator = DetectionValidator.__new__(DetectionValidator)  # only iouv/niou are used
    validator.iouv = torch.linspace(0.5, 0.95, 10)
    validator.niou = validator.iouv.numel()
    metrics = DetMetrics(names=names)
    for item in _per_image(gt, pred):
        predn, pbatch = item["pred"], item["batch"]
        cls = pbatch["cls"].cpu().numpy()
        no_pred = predn["cls"].shape[0] == 0
        metrics.update_stats(
            {
                **validator._process_batch(predn, pbatch),
                "target_cls": cls,
                "target_img": np.unique(cls),
                # float32 confidences, as yolo val's (ioukit's yolo protocol takes them so)
                "conf": np.zeros(0, np.float32) if no_pred else predn["conf"].cpu().numpy(),
                "pred_cls": np.zeros(0) if no_pred else predn["cls"].cpu().numpy(),
                "im_name": pbatch["im_file"],
            }
        )
    metrics.process()
    box = metrics.box
    return {
        "stats": {
            "precision": float(box.mp),
            "recall": float(box.mr),
            "mAP50": float(box.map50),
            "mAP50-95": float(box.map),
            "fitness": float(metrics.fitness),
        },
        "class_index": np.asarray(box.ap_class_index, dtype=np.int64),
        "AP": np.asarray(box.all_ap),
        "p": np.asarray(box.p),
        "r": np.asarray(box.r),
        "f1": np.asarray(box.f1),
        "p_curve": np.asarray(box.p_curve),
        "r_curve": np.asarray(box.r_curve),
        "prec_values": np.asarray(box.prec_values),
    }


def ultralytics_confusion(gt: Dataset, pred: Dataset, *, conf: float, iou: float) -> np.ndarray:
    """``ConfusionMatrix.process_batch`` summed over images."""
    import torch
    from ultralytics.utils.metrics import ConfusionMatrix

    cm = ConfusionMatrix(names={k: str(k) for k in range(len(gt.categories))})
    for item in _per_image(gt, pred):
        detections = dict(item["pred"])
        # conf as float64 so the threshold test sees the caller's scores (as ioukit does)
        detections["conf"] = torch.tensor(item["conf64"], dtype=torch.float64)
        cm.process_batch(detections, item["batch"], conf=conf, iou_thres=iou)
    return np.asarray(cm.matrix, dtype=np.int64)


# --------------------------------------------------------------------------- comparison
def compare_val(name: str, gt: Dataset, pred: Dataset) -> float:
    """Print ioukit vs Ultralytics ``yolo val`` numbers; return the max abs difference."""
    ul = ultralytics_val(gt, pred)
    ik = evaluate_yolo(gt, pred)
    has = np.array([row["num_gt"] > 0 for row in ik.per_class])
    rows = np.flatnonzero(has)
    worst = 0.0
    print(f"\n== {name}: {len(gt)} gt, {len(pred)} predictions, {len(gt.images)} images")
    print(f"{'stat':<10} {'ultralytics':>14} {'ioukit':>14} {'diff':>10}")
    for key, value in ul["stats"].items():
        mine = float(ik.stats[key])
        diff = abs(mine - value)
        worst = max(worst, diff)
        print(f"{key:<10} {value:14.10f} {mine:14.10f} {diff:10.2e}")
    if not np.array_equal(rows, ul["class_index"]):
        print(
            f"  class sets differ: ioukit {rows.tolist()} ultralytics {ul['class_index'].tolist()}"
        )
        return float("inf")
    checks = {
        "AP[K,T]": (ik.arrays["AP"][rows], ul["AP"]),
        "p": (np.array([ik.per_class[k]["precision"] for k in rows]), ul["p"]),
        "r": (np.array([ik.per_class[k]["recall"] for k in rows]), ul["r"]),
        "f1": (np.array([ik.per_class[k]["F1"] for k in rows]), ul["f1"]),
        "p_curve": (ik.arrays["p_curve"][rows], ul["p_curve"]),
        "r_curve": (ik.arrays["r_curve"][rows], ul["r_curve"]),
        "pr_precision": (ik.arrays["pr_precision"][rows], ul["prec_values"]),
    }
    for key, (mine, theirs) in checks.items():
        diff = float(np.max(np.abs(mine - theirs))) if mine.size else 0.0
        worst = max(worst, diff)
        print(f"  per-class {key:<13} max |diff| {diff:.2e}")
    ap50 = ik.arrays["AP"][rows, 0]
    print(f"  per-class AP50 ultralytics {np.round(ul['AP'][:, 0], 6).tolist()}")
    print(f"  per-class AP50 ioukit      {np.round(ap50, 6).tolist()}")
    return worst


def compare_confusion(
    name: str, gt: Dataset, pred: Dataset, *, conf: float, iou: float
) -> dict[str, int]:
    """Cells that differ between Ultralytics and each ioukit matching mode."""
    ul = ultralytics_confusion(gt, pred, conf=conf, iou=iou)
    out = {}
    for matching in ("confidence", "iou"):
        mine = confusion_matrix(
            gt, pred, iou_threshold=iou, score_threshold=conf, matching=matching
        ).matrix
        out[matching] = int(np.abs(mine - ul).sum())
    print(
        f"  confusion {name} conf>{conf} iou>{iou}: total {int(ul.sum())}, "
        f"|ioukit - ultralytics| summed over cells: "
        + ", ".join(f"matching={m!r}: {v}" for m, v in out.items())
    )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer and smaller datasets")
    args = parser.parse_args()
    try:
        import ultralytics
    except ImportError:
        print("ultralytics is not importable: nothing to check")
        return 0
    print(f"ultralytics {ultralytics.__version__}, numpy {np.__version__}")
    cases: list[tuple[str, Any]] = [
        ("random seed 0", lambda: random_case(0)),
        ("random seed 1 (3 classes)", lambda: random_case(1, num_classes=3, num_images=40)),
        ("random seed 2 (12 classes)", lambda: random_case(2, num_classes=12, num_images=150)),
        ("integer boxes seed 3", lambda: random_case(3, integer_boxes=True, num_images=150)),
        ("grid-snapped boxes, IoU ties, seed 5", lambda: random_case(5, grid=10.0)),
        ("tied scores (1/32 grid), seed 6", lambda: random_case(6, tied_scores=True)),
        ("float32 edge cases, seed 8", lambda: float32_case(8)),
    ]
    if not args.quick:
        cases += [
            ("random seed 4 (20 classes)", lambda: random_case(4, num_classes=20, num_images=400)),
            ("make_coco_like 300 images", lambda: coco_like_case(300, 7)),
        ]
    failures = []
    worst_val = 0.0
    confusion_totals = {"confidence": 0, "iou": 0}
    for name, build in cases:
        gt, pred = build()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            worst = compare_val(name, gt, pred)
        worst_val = max(worst_val, worst)
        if worst > TOLERANCE:
            failures.append(f"{name}: yolo val max |diff| {worst:.3e}")
        for conf, iou in ((0.25, 0.45), (0.001, 0.5), (0.5, 0.7), (0.1, 0.6)):
            cells = compare_confusion(name, gt, pred, conf=conf, iou=iou)
            for matching, value in cells.items():
                confusion_totals[matching] += value
            if cells["confidence"]:
                failures.append(f"{name}: confusion conf={conf} iou={iou} differs")
    print(f"\nyolo val: max |ioukit - ultralytics| over all cases {worst_val:.3e}")
    for matching, value in confusion_totals.items():
        verdict = "EQUALS" if value == 0 else "differs from"
        print(f"confusion matching={matching!r} {verdict} ultralytics (cells off: {value})")
    if failures:
        print("\nMISMATCH:\n  " + "\n  ".join(failures))
        return 1
    print("OK: ioukit reproduces ultralytics within 1e-9")
    return 0


if __name__ == "__main__":
    sys.exit(main())
