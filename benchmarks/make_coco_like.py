"""Deterministic COCO-like detection data: ground truth and the predictions of a plausible detector.

One generator serves two purposes:

* the benchmark set (``--images 5000 --classes 80``): about 36 000 ground truths with a COCO-like
  size mix (about 41 % small, 34 % medium, 25 % large) and 1 % crowds, about 318 000 predictions
  capped at 100 per image, with overlapping score distributions for true and false positives;
* the sample shipped in ``ioukit/sample_data`` (``--sample``: 200 images, 5 classes, fewer
  predictions per image, under 1 MB).

Usage::

    python benchmarks/make_coco_like.py --images 5000 --classes 80 --out /tmp/coco_like_5000
    python benchmarks/make_coco_like.py --sample --out src/ioukit/sample_data

The output is a function of the arguments only (``numpy.random.default_rng(seed)``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_CLASSES = ("person", "car", "dog", "bicycle", "traffic light")
IMAGE_SIZES = ((640, 480), (640, 427), (480, 640), (500, 375), (640, 512))


def _sizes(rng: np.random.Generator, n: int, width: int, height: int) -> np.ndarray:
    """Box (w, h) pairs with a COCO-like small/medium/large mix, shape (n, 2)."""
    kind = rng.choice(3, size=n, p=[0.41, 0.34, 0.25])
    side_max = min(width, height) * 0.95
    low = np.array([4.0, 32.0, 96.0])[kind]
    high = np.minimum(np.array([32.0, 96.0, side_max])[kind], side_max)
    side = rng.uniform(low, np.maximum(high, low + 1))
    aspect = np.exp(rng.normal(0.0, 0.45, size=n))
    w = np.clip(side * np.sqrt(aspect), 2.0, width - 1.0)
    h = np.clip(side / np.sqrt(aspect), 2.0, height - 1.0)
    return np.stack([w, h], axis=1)


def _place(rng: np.random.Generator, wh: np.ndarray, width: int, height: int) -> np.ndarray:
    """xywh boxes of the given sizes placed uniformly inside the image, shape (n, 4)."""
    x = rng.uniform(0.0, width - wh[:, 0])
    y = rng.uniform(0.0, height - wh[:, 1])
    return np.stack([x, y, wh[:, 0], wh[:, 1]], axis=1)


def _jitter(rng: np.random.Generator, boxes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Localisation noise proportional to box size; ``scale`` per box, shape (n,)."""
    noise = rng.normal(0.0, 1.0, size=boxes.shape) * scale[:, None]
    out = boxes.copy()
    out[:, 0] += noise[:, 0] * boxes[:, 2]
    out[:, 1] += noise[:, 1] * boxes[:, 3]
    out[:, 2] *= np.exp(noise[:, 2])
    out[:, 3] *= np.exp(noise[:, 3])
    out[:, 2:] = np.maximum(out[:, 2:], 1.0)
    return out


def make_coco_like(
    *,
    num_images: int = 5000,
    num_classes: int = 80,
    gt_per_image: float = 7.2,
    fp_per_image: float = 56.0,
    max_dets: int = 100,
    crowd_fraction: float = 0.01,
    seed: int = 0,
    class_names: tuple[str, ...] | None = None,
    decimals: int = 2,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return ``(ground_truth_dict, results_list)`` in COCO format.

    Classes follow a Zipf-like frequency; about 88 % of the ground truths are detected (some
    twice, some with the wrong class), false positives are scattered boxes and score lower on
    average, but the two score distributions overlap. Each image keeps its top ``max_dets``
    predictions. Scores have 3 decimals, so ties occur as in real result files.
    """
    rng = np.random.default_rng(seed)
    names = class_names or tuple(f"class_{i + 1}" for i in range(num_classes))
    cat_ids = np.arange(1, num_classes + 1)
    freq = 1.0 / np.arange(1, num_classes + 1) ** 0.8
    freq /= freq.sum()
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    ann_id = 1
    for img in range(num_images):
        image_id = img + 1
        width, height = IMAGE_SIZES[rng.integers(len(IMAGE_SIZES))]
        images.append(
            {"id": image_id, "file_name": f"{image_id:012d}.jpg", "width": width, "height": height}
        )
        n_gt = int(rng.poisson(gt_per_image))
        gt = _place(rng, _sizes(rng, n_gt, width, height), width, height)
        gt_cls = rng.choice(cat_ids, size=n_gt, p=freq)
        crowd = rng.random(n_gt) < crowd_fraction
        fill = rng.uniform(0.45, 0.9, size=n_gt)  # segment area / box area
        for j in range(n_gt):
            x, y, w, h = (round(float(v), decimals) for v in gt[j])
            annotations.append(
                {
                    "id": ann_id,
                    "image_id": image_id,
                    "category_id": int(gt_cls[j]),
                    "bbox": [x, y, w, h],
                    "area": round(w * h * float(fill[j]), decimals),
                    "iscrowd": int(crowd[j]),
                }
            )
            ann_id += 1
        # true-positive-like predictions: detected GTs, some twice, some with the wrong class
        detected = rng.random(n_gt) < 0.88
        dup = detected & (rng.random(n_gt) < 0.3)
        src = np.concatenate([np.flatnonzero(detected), np.flatnonzero(dup)])
        tp_boxes = _jitter(rng, gt[src], rng.uniform(0.02, 0.15, size=len(src)))
        tp_cls = gt_cls[src].copy()
        wrong = rng.random(len(src)) < 0.08
        tp_cls[wrong] = rng.choice(cat_ids, size=int(wrong.sum()), p=freq)
        tp_score = rng.beta(4.0, 2.0, size=len(src))
        tp_score[len(np.flatnonzero(detected)) :] *= 0.6
        # false positives: scattered boxes
        n_fp = int(rng.poisson(fp_per_image))
        fp_boxes = _place(rng, _sizes(rng, n_fp, width, height), width, height)
        fp_cls = rng.choice(cat_ids, size=n_fp, p=freq)
        fp_score = rng.beta(1.5, 5.0, size=n_fp)
        boxes = np.concatenate([tp_boxes, fp_boxes])
        cls = np.concatenate([tp_cls, fp_cls])
        score = np.round(np.concatenate([tp_score, fp_score]), 3)
        keep = np.argsort(-score, kind="stable")[:max_dets]
        keep = keep[rng.permutation(len(keep))]  # file order is not score order
        for j in keep:
            x, y, w, h = (round(float(v), decimals) for v in boxes[j])
            results.append(
                {
                    "image_id": image_id,
                    "category_id": int(cls[j]),
                    "bbox": [x, y, w, h],
                    "score": float(score[j]),
                }
            )
    categories = [{"id": int(i), "name": n} for i, n in zip(cat_ids, names, strict=True)]
    return {"images": images, "annotations": annotations, "categories": categories}, results


def make_sample() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The sample shipped in ``ioukit/sample_data``: 200 images, 5 classes, seed 2024."""
    return make_coco_like(
        num_images=200,
        num_classes=len(SAMPLE_CLASSES),
        gt_per_image=6.0,
        fp_per_image=5.0,
        seed=2024,
        class_names=SAMPLE_CLASSES,
        crowd_fraction=0.02,
        decimals=1,
    )


def write(out: Path, gt: dict[str, Any], results: list[dict[str, Any]]) -> None:
    """Write ``ground_truth.json`` and ``predictions.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "ground_truth.json", "w", encoding="utf-8") as f:
        json.dump(gt, f, separators=(",", ":"))
    with open(out / "predictions.json", "w", encoding="utf-8") as f:
        json.dump(results, f, separators=(",", ":"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--classes", type=int, default=80)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", action="store_true", help="the packaged sample data set")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.sample:
        gt, results = make_sample()
    else:
        gt, results = make_coco_like(
            num_images=args.images, num_classes=args.classes, seed=args.seed
        )
    write(args.out, gt, results)
    print(f"{args.out}: {len(gt['images'])} images, {len(gt['annotations'])} gt, {len(results)} dt")


if __name__ == "__main__":
    main()
