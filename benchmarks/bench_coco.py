"""COCO bbox evaluation end to end: ioukit vs pycocotools vs faster-coco-eval.

On the generated COCO-like set (``make_coco_like.py``: 5 000 images, 80 classes, ~36 000 GT,
~320 000 predictions), each tool runs in its own fresh subprocess, from the two JSON files to
the 12 stats; the table gives wall time (import included and excluded), peak RSS and ratios.
ioukit is also timed from in-memory arrays (Datasets already built: the evaluation pipeline
alone, ``ioukit.evaluation`` with its compiled kernels) and from the JSON files again in the
same process (imports and file caches warm).

    .venv-bench/bin/python benchmarks/bench_coco.py                # 5 000 images
    .venv-bench/bin/python benchmarks/bench_coco.py --scaling      # + 10 000 and 20 000 images
    .venv-bench/bin/python benchmarks/bench_coco.py --skip pycocotools
    .venv-bench/bin/python benchmarks/bench_coco.py --segm-only --segm-images 500

A short segm table follows (``--segm-images``, default 500 images of the same generator):
ground-truth polygons and RLE results (ellipses inscribed in the boxes, rasterised by
pycocotools), all three tools in this process from the parsed JSON to the 12 stats.

Data sets are generated once into ``$TMPDIR/ioukit-bench/``. A reference tool that is not
importable is skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np

from _compare import (
    HEADER,
    TOOLS,
    comparison_rows,
    cpu_seconds,
    peak_mb,
    reference_run,
    run_tool,
)
from _timing import best_of, fmt_time, have, print_table


def dataset(num_images: int) -> Path:
    """Folder with ground_truth.json and predictions.json (generated once)."""
    from make_coco_like import make_coco_like, write

    folder = Path(tempfile.gettempdir()) / "ioukit-bench" / f"coco_like_{num_images}"
    if not (folder / "predictions.json").exists():
        print(f"generating {folder} ...", flush=True)
        gt, results = make_coco_like(num_images=num_images, num_classes=80, seed=num_images)
        write(folder, gt, results)
    return folder


def worker(tool: str, folder: Path) -> dict[str, Any]:
    """Run one tool (in this fresh process); return timings, peak RSS and the 12 stats."""
    gt_file, dt_file = str(folder / "ground_truth.json"), str(folder / "predictions.json")
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    if tool == "ioukit":
        from ioukit.engine import evaluate

        t1 = time.perf_counter()
        result = evaluate(gt_file, dt_file)
        stats = list(result.stats.values())
        t2 = time.perf_counter()
        out.update(total=t2 - t0, run=t2 - t1, cpu=cpu_seconds())
        out["peak_mb"] = peak_mb()  # first run
        from ioukit.evaluation.protocols.coco import evaluate_coco

        gt, pred = result.ground_truth, result.predictions
        out["in_memory"] = best_of(lambda: evaluate_coco(gt, pred), repeat=3, min_time=0.0)
        out["warm"] = best_of(lambda: evaluate(gt_file, dt_file), repeat=2, min_time=0.0)
    else:
        run, stats = reference_run(tool, gt_file, dt_file, "bbox", 12)
        out.update(total=time.perf_counter() - t0, run=run, cpu=cpu_seconds())
    out.setdefault("peak_mb", peak_mb())
    out["stats"] = stats
    return out


def bench(num_images: int, skip: set[str]) -> dict[str, dict[str, Any]]:
    folder = dataset(num_images)
    results: dict[str, dict[str, Any]] = {}
    for tool, module in TOOLS.items():
        if tool in skip:
            continue
        if not have(module):
            print(f"skipping {tool}: not importable")
            continue
        print(f"running {tool} on {num_images} images ...", flush=True)
        r = run_tool(__file__, tool, folder)
        if r is not None:
            results[tool] = r
    ours = results.get("ioukit")
    rows = comparison_rows(results)
    n_gt = n_dt = "?"
    with open(folder / "ground_truth.json", "rb") as f:
        n_gt = str(len(json.load(f)["annotations"]))
    n_dt = f"{(folder / 'predictions.json').stat().st_size / 1e6:.0f} MB"
    print_table(
        f"COCO bbox, JSON files -> 12 stats ({num_images} images, {n_gt} GT, predictions {n_dt})",
        HEADER,
        rows,
    )
    if ours is not None:
        print(f"ioukit from in-memory arrays (warm): {fmt_time(ours['in_memory'])}")
        warm = ours["warm"]
        ratios = ", ".join(
            f"{r['run'] / warm:.1f}x faster than {tool}"
            for tool, r in results.items()
            if tool != "ioukit"
        )
        print(
            f"ioukit JSON files -> 12 stats in a warm process: {fmt_time(warm)}"
            + (f" ({ratios})" if ratios else "")
        )
    return results


def _ellipse(box: list[float], n: int = 16) -> list[float]:
    x, y, w, h = box
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return (
        np.round(np.c_[x + w / 2 * (1 + np.cos(t)), y + h / 2 * (1 + np.sin(t))], 2)
        .ravel()
        .tolist()
    )


def segm_dataset(num_images: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """COCO-like segm set: GT polygons, compressed-RLE results (needs pycocotools)."""
    from pycocotools import mask as mask_utils

    from make_coco_like import make_coco_like

    gt, results = make_coco_like(num_images=num_images, num_classes=80, seed=num_images + 1)
    sizes = {im["id"]: (im["height"], im["width"]) for im in gt["images"]}
    for ann in gt["annotations"]:
        ann["segmentation"] = [_ellipse(ann["bbox"])]
    for r in results:
        h, w = sizes[r["image_id"]]
        rle = mask_utils.frPyObjects([_ellipse(r["bbox"])], h, w)[0]
        r["segmentation"] = {"size": [h, w], "counts": rle["counts"].decode("ascii")}
    return gt, results


def bench_segm(num_images: int, skip: set[str]) -> None:
    """ioukit vs pycocotools vs faster-coco-eval on segm, in this process, best of 1-3 runs."""
    import contextlib
    import copy
    import io

    if not have("pycocotools"):
        print("skipping the segm benchmark: pycocotools (used to generate masks) not importable")
        return
    print(f"generating the segm set ({num_images} images) ...", flush=True)
    gt, results = segm_dataset(num_images)
    from ioukit.engine import evaluate

    def run_ioukit() -> list[float]:
        return list(evaluate(gt, results, iou_type="segm").stats.values())

    def reference(module: str) -> Any:
        def run() -> list[float]:
            if module == "pycocotools":
                from pycocotools.coco import COCO
                from pycocotools.cocoeval import COCOeval
            else:
                from faster_coco_eval import COCO
                from faster_coco_eval import COCOeval_faster as COCOeval
            with contextlib.redirect_stdout(io.StringIO()):
                coco = COCO()
                coco.dataset = copy.deepcopy(gt)
                coco.createIndex()
                e = COCOeval(coco, coco.loadRes(copy.deepcopy(results)), "segm")
                e.evaluate()
                e.accumulate()
                e.summarize()
            return [float(v) for v in e.stats[:12]]

        return run

    runs = {"ioukit": run_ioukit}
    for tool, module in TOOLS.items():
        if tool != "ioukit" and tool not in skip and have(module):
            runs[tool] = reference(module)
    run_ioukit()  # compile / load the kernels
    times, stats = {}, {}
    for tool, fn in runs.items():
        stats[tool] = fn()
        times[tool] = best_of(fn, repeat=3 if tool == "ioukit" else 1, min_time=0.0)
    base = times["ioukit"]
    rows = [
        [tool, fmt_time(t), f"{t / base:.1f}x",
         f"{max(abs(a - b) for a, b in zip(stats[tool], stats['ioukit'], strict=True)):.1e}"]
        for tool, t in times.items()
    ]  # fmt: skip
    print_table(
        f"COCO segm, parsed JSON -> 12 stats ({num_images} images, "
        f"{len(gt['annotations'])} GT polygons, {len(results)} RLE results)",
        ["tool", "time", "time / ioukit", "max |stat diff|"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("TOOL", "FOLDER"), help=argparse.SUPPRESS)
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--scaling", action="store_true", help="also 10 000 and 20 000 images")
    parser.add_argument("--skip", action="append", default=[], choices=sorted(TOOLS))
    parser.add_argument("--segm-images", type=int, default=500, help="0: no segm table")
    parser.add_argument("--segm-only", action="store_true", help="only the segm table")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return
    skip = set(args.skip)
    if args.segm_only:
        bench_segm(args.segm_images, skip)
        return
    results = {args.images: bench(args.images, skip)}
    if args.scaling:
        for n in (10_000, 20_000):
            # the references take minutes here: compare ioukit with itself
            results[n] = bench(n, skip | {"pycocotools"})
        base = results[args.images].get("ioukit")
        if base:
            rows = [
                [str(n), fmt_time(r["ioukit"]["total"]), fmt_time(r["ioukit"]["in_memory"]),
                 f"{r['ioukit']['in_memory'] / base['in_memory'] / (n / args.images):.2f}"]
                for n, r in results.items()
                if "ioukit" in r
            ]  # fmt: skip
            print_table(
                "ioukit scaling",
                ["images", "JSON -> stats", "in-memory", "in-memory time per image vs base"],
                rows,
            )
    if args.segm_images > 0:
        bench_segm(args.segm_images, skip)


if __name__ == "__main__":
    main()
