"""Deterministic COCO-like detection data: ground truth and the predictions of a plausible detector.

One generator serves two purposes:

* the benchmark set (``--images 5000 --classes 80``): about 36 000 ground truths with a COCO-like
  size mix (about 41 % small, 34 % medium, 25 % large) and 1 % crowds, about 318 000 predictions
  capped at 100 per image, with overlapping score distributions for true and false positives;
* the Objects365-scale cell (``--objects365``: 80 000 images, 365 classes, about 1.24 M GT and
  1.42 M predictions, about 260 MB of JSON; generated on demand, never committed);
* the sample shipped in ``ioukit/sample_data`` (``--sample``: 200 images, 5 classes, fewer
  predictions per image, under 1 MB).

Usage::

    python benchmarks/make_coco_like.py --images 5000 --classes 80 --out /tmp/coco_like_5000
    python benchmarks/make_coco_like.py --objects365 --out /tmp/objects365_like
    python benchmarks/make_coco_like.py --sample --out src/ioukit/sample_data

The generator is :func:`ioukit.synthetic.make_detections` (the tests use it too); the output
is a function of the arguments only (``numpy.random.default_rng(seed)``), the same as before
the generator moved into the package.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ioukit.synthetic import make_detections

SAMPLE_CLASSES = ("person", "car", "dog", "bicycle", "traffic light")


make_coco_like = make_detections  # the benchmark set's generator, moved into the package


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


def make_objects365_like(seed: int = 365) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The Objects365-scale cell of #27: Objects365 v2 val's size (80 000 images, 365 classes,
    about 15.5 ground truths per image: about 1.24 M) with about 1.42 M predictions."""
    return make_coco_like(
        num_images=80_000, num_classes=365, gt_per_image=15.5, fp_per_image=0.15, seed=seed
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
    parser.add_argument("--objects365", action="store_true", help="the 80 000-image cell")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.sample:
        gt, results = make_sample()
    elif args.objects365:
        gt, results = make_objects365_like()
    else:
        gt, results = make_coco_like(
            num_images=args.images, num_classes=args.classes, seed=args.seed
        )
    write(args.out, gt, results)
    print(f"{args.out}: {len(gt['images'])} images, {len(gt['annotations'])} gt, {len(results)} dt")


if __name__ == "__main__":
    main()
