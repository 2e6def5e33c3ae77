"""Deterministic crowded person-keypoint data (COCO keypoints format) for the benchmarks.

Wraps :func:`ioukit.synthetic.make_keypoints` (also the keypoint tests' generator): 8 to 20
persons per image in every size range, 17 keypoints with COCO-like visibility, persons without
a visible keypoint, crowd regions, 4-12 results per person plus up to 30 false positives (about 130
results per image, most groups cut to 20), scores rounded to 2 decimals. About 7 000 ground
truths and 65 000 results per 500 images, the size of the measurement quoted in issue #11.

Usage::

    python benchmarks/make_keypoints_like.py --images 5000 --out /tmp/keypoints_5000

The output is a function of the arguments only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ioukit.synthetic import make_keypoints


def make_keypoints_like(
    num_images: int, *, seed: int = 0
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Ground-truth dict and results list of ``num_images`` crowded images."""
    return make_keypoints(
        num_images,
        min_people=8,
        max_people=20,
        results_per_person=(4, 12),
        max_false_positives=30,
        hidden_rate=0.05,
        seed=seed,
    )


def write(folder: Path, gt: dict[str, Any], results: list[dict[str, Any]]) -> None:
    """Write ``ground_truth.json`` and ``predictions.json`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ground_truth.json").write_text(json.dumps(gt))
    (folder / "predictions.json").write_text(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    gt, results = make_keypoints_like(args.images, seed=args.seed)
    write(args.out, gt, results)
    print(f"{args.out}: {len(gt['annotations'])} ground truths, {len(results)} results")


if __name__ == "__main__":
    main()
