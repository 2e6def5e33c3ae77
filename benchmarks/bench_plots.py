"""``--plots`` cost against the evaluation on an LVIS-sized class count (issue #16 item 19).

Synthetic: 1 203 classes, 5 000 images of 640 x 480 with 10 boxes each, predictions jittered
copies. Prints the evaluation time, the plotting time and their ratio (the goal: plots within
5x the evaluation), in wall and in CPU time; the plotting time includes matplotlib's import.
Usage: ``python benchmarks/bench_plots.py [--all-plots]``.

``--cli [--repeat N]``: the same data as COCO JSON files, ``ioukit eval`` in fresh processes
with and without ``--plots``, alternating; prints the extra time of ``--plots`` against the
run without it (import, reading, evaluation, report), wall and CPU.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.plots import write_plots


def _data() -> tuple[Dataset, Dataset]:
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
    return gt, pred


def _write_json(folder: Path) -> tuple[Path, Path]:
    """The data set as COCO ground truth and results files (written once)."""
    gt_file, dt_file = folder / "ground_truth.json", folder / "predictions.json"
    if dt_file.exists():
        return gt_file, dt_file
    gt, pred = _data()
    folder.mkdir(parents=True, exist_ok=True)
    images = [
        {"id": int(i), "file_name": f"{stem}.jpg", "width": 640, "height": 480}
        for i, stem in zip(gt.images.ids.tolist(), gt.images.stems, strict=True)
    ]
    cats = [
        {"id": int(c), "name": name}
        for c, name in zip(gt.categories.ids.tolist(), gt.categories.names, strict=True)
    ]
    image_ids = gt.images.ids

    def xywh(b: np.ndarray) -> list[float]:
        return [round(float(b[0]), 2), round(float(b[1]), 2), round(float(b[2] - b[0]), 2),
                round(float(b[3] - b[1]), 2)]  # fmt: skip

    anns = [
        {"id": k + 1, "image_id": int(image_ids[i]), "category_id": int(c), "bbox": xywh(b),
         "area": float((b[2] - b[0]) * (b[3] - b[1])), "iscrowd": 0}
        for k, (i, c, b) in enumerate(zip(gt.image_index, gt.category_id, gt.boxes, strict=True))
    ]  # fmt: skip
    results = [
        {"image_id": int(image_ids[i]), "category_id": int(c), "bbox": xywh(b),
         "score": round(float(sc), 4)}
        for i, c, b, sc in zip(pred.image_index, pred.category_id, pred.boxes, pred.scores,
                               strict=True)
    ]  # fmt: skip
    gt_file.write_text(json.dumps({"images": images, "categories": cats, "annotations": anns}))
    dt_file.write_text(json.dumps(results))
    return gt_file, dt_file


def _cli(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one ``ioukit`` run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ioukit", *args], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"ioukit {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def cli(repeat: int) -> None:
    """``ioukit eval`` with and without ``--plots``, alternating, fresh processes."""
    gt_file, dt_file = _write_json(Path(tempfile.gettempdir()) / "ioukit-bench" / "plots_1203")
    base = ["eval", "--gt", str(gt_file), "--pred", str(dt_file), "--quiet"]
    runs: list[dict[str, Any]] = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            plain = _cli(base)
            plots = _cli([*base, "--plots", str(Path(tmp) / "plots")])
        runs.append({"plain": plain, "plots": plots})
        extra = [plots[i] - plain[i] for i in (0, 1)]
        print(
            f"eval {plain[0]:.2f} s (CPU {plain[1]:.2f} s), with --plots {plots[0]:.2f} s "
            f"(CPU {plots[1]:.2f} s): --plots adds {extra[0] / plain[0]:.1f}x wall, "
            f"{extra[1] / plain[1]:.1f}x CPU"
        )


def main() -> None:
    if "--cli" in sys.argv:
        repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
        cli(repeat)
        return
    gt, pred = _data()
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
