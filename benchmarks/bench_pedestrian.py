"""MR⁻² (``protocol="citypersons"``, its 4 setups) on 5 000 generated images: ioukit vs the
Python reference script (Pedestron's ``eval_MR_multisetup.py`` as transcribed in
tests/pedestron_reference.py, run as its ``eval_demo.py`` does: one evaluation per setup).

Run with ``python benchmarks/bench_pedestrian.py [--quick] [--rounds N]``. Both start from the
same parsed ground-truth dict and result list (the reference's own COCO loading included, as
ioukit's reading is); the MR⁻² of every setup is checked equal (1e-12) before timing. Rounds
alternate the two, each in this process after a warm-up run; the table gives the medians of
wall and CPU time (``time.process_time``) and the ratios reference / ioukit.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from _timing import print_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' reference script

from tests.pedestron_reference import pedestron_mr

import ioukit

QUICK = "--quick" in sys.argv
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
N_IMAGES = 500 if QUICK else 5000


def generate(n_images: int, seed: int = 0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """CityPersons-like: about 7 people per image (a quarter flagged ignore), ignore regions,
    2 048 x 1 024 images, ~2 detections per person plus false positives, 3-decimal scores."""
    rng = np.random.default_rng(seed)
    images, anns, dets = [], [], []
    for img in range(1, n_images + 1):
        images.append({"id": img, "height": 1024, "width": 2048})
        for _ in range(int(rng.poisson(7))):
            h = float(round(rng.uniform(15, 250)))
            x, y, w = (
                float(round(rng.uniform(0, 1900))),
                float(round(rng.uniform(0, 800))),
                round(h * 0.41),
            )
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": img,
                    "category_id": 1,
                    "iscrowd": 0,
                    "ignore": int(rng.random() < 0.25),
                    "bbox": [x, y, float(w), h],
                    "height": h,
                    "vis_ratio": float(rng.uniform(0, 1)),
                }
            )
            for _ in range(int(rng.integers(0, 3))):
                j = rng.normal(0, 0.08 * h, 4)
                box = [x + j[0], y + j[1], max(w + j[2], 1.0), max(h + j[3], 1.0)]
                dets.append(
                    {
                        "image_id": img,
                        "category_id": 1,
                        "bbox": [float(v) for v in box],
                        "score": float(np.round(rng.uniform(0, 1), 3)),
                    }
                )
        for _ in range(int(rng.poisson(5))):
            h = rng.uniform(20, 200)
            box = [rng.uniform(0, 1900), rng.uniform(0, 800), h * 0.41, h]
            dets.append(
                {
                    "image_id": img,
                    "category_id": 1,
                    "bbox": [float(v) for v in box],
                    "score": float(np.round(rng.uniform(0, 1), 3)),
                }
            )
    gt = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "pedestrian"}]}
    return gt, dets  # fmt: skip


def timed(fn: Any) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> None:
    gt, dets = generate(N_IMAGES)

    def ours() -> list[float]:
        return list(ioukit.evaluate(gt, dets, protocol="citypersons").stats.values())

    def reference() -> list[float]:
        return [pedestron_mr(gt, dets, k) for k in range(4)]

    a, b = ours(), reference()
    worst = max(abs(x - y) for x, y in zip(a, b, strict=True))
    assert worst <= 1e-12, f"MR⁻² differ: {a} vs {b}"
    runs: dict[str, list[tuple[float, float]]] = {"ioukit": [], "reference script": []}
    for i in range(ROUNDS):
        order = [("ioukit", ours), ("reference script", reference)]
        for name, fn in order if i % 2 == 0 else order[::-1]:
            wall, cpu, _ = timed(fn)
            runs[name].append((wall, cpu))
    med = {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for k, v in runs.items()
    }
    rows = [
        [
            name,
            f"{w:.3f} s",
            f"{c:.3f} s",
            f"{w / med['ioukit'][0]:.1f}x",
            f"{c / med['ioukit'][1]:.1f}x",
        ]
        for name, (w, c) in med.items()
    ]
    print_table(
        f"MR⁻² of 4 CityPersons setups, {N_IMAGES} images, {len(gt['annotations'])} boxes, "
        f"{len(dets)} detections (medians of {ROUNDS} rounds; max |MR diff| {worst:.1e})",
        ["tool", "wall", "CPU", "wall / ioukit", "CPU / ioukit"],
        rows,
    )


if __name__ == "__main__":
    main()
