"""``--plots`` cost against the evaluation on an LVIS-sized class count (issue #16 item 19).

Synthetic: 1 203 classes, 5 000 images of 640 x 480 with 10 boxes each, predictions jittered
copies. Prints the evaluation time, the plotting time and their ratio (the goal: plots within
5x the evaluation), in wall and in CPU time; the plotting time includes matplotlib's import.
Usage: ``python benchmarks/bench_plots.py [--all-plots]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.plots import write_plots


def main() -> None:
    rng = np.random.default_rng(0)
    n_classes, n_images, per = 1203, 5000, 10
    images = ImageTable.from_lists(
        list(range(1, n_images + 1)),
        [f"im{i}" for i in range(n_images)],
        [640] * n_images,
        [480] * n_images,
    )
    cats = CategoryTable.from_lists(
        list(range(1, n_classes + 1)), [f"class{k}" for k in range(n_classes)]
    )
    n = n_images * per
    xy = rng.uniform(0, 500, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(10, 100, (n, 2))], 1)
    image_index = np.repeat(np.arange(n_images), per)
    category = rng.integers(1, n_classes + 1, n)
    gt = Dataset.from_arrays(
        images, cats, boxes=boxes, image_index=image_index, category_id=category
    )
    jitter = boxes + rng.normal(0, 5, boxes.shape)
    jitter[:, 2:] = np.maximum(jitter[:, 2:], jitter[:, :2] + 1)
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=jitter,
        image_index=image_index,
        category_id=category,
        scores=rng.uniform(0, 1, n),
    )
    start, cpu = time.perf_counter(), time.process_time()
    result = evaluate(gt, pred, protocol="coco")
    evaluation = time.perf_counter() - start
    evaluation_cpu = time.process_time() - cpu
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), time.process_time()
        files = write_plots(result, Path(tmp) / "plots", all_classes="--all-plots" in sys.argv)
        plotting = time.perf_counter() - start
        plotting_cpu = time.process_time() - cpu
    # CPU time (all threads) is steadier than wall time on a shared machine
    print(
        f"evaluation {evaluation:.2f} s, plots {plotting:.2f} s ({len(files)} figures), "
        f"ratio {plotting / evaluation:.1f}x; CPU: evaluation {evaluation_cpu:.2f} s, plots "
        f"{plotting_cpu:.2f} s, ratio {plotting_cpu / evaluation_cpu:.1f}x"
    )


if __name__ == "__main__":
    main()
