"""COCO bbox evaluation end to end: ioukit vs pycocotools vs faster-coco-eval.

On the generated COCO-like set (``make_coco_like.py``: 5 000 images, 80 classes, ~36 000 GT,
~320 000 predictions), each tool runs in its own fresh subprocess, from the two JSON files to
the 12 stats; the table gives wall time (import included and excluded), peak RSS and ratios.
ioukit is also timed from in-memory arrays (Datasets already built, kernels warm) and from the
JSON files again in the same process (numba already initialised: a fresh process pays about
0.25 s to import numba and 0.4 s to initialise its compiler on the first kernel call, 0.26 s
of which is numba importing scipy for its BLAS check when scipy is installed).

    .venv-bench/bin/python benchmarks/bench_coco.py                # 5 000 images
    .venv-bench/bin/python benchmarks/bench_coco.py --scaling      # + 10 000 and 20 000 images
    .venv-bench/bin/python benchmarks/bench_coco.py --skip pycocotools

Data sets are generated once into ``$TMPDIR/ioukit-bench/``. A reference tool that is not
importable is skipped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _timing import best_of, fmt_time, have, print_table

TOOLS = {"ioukit": "ioukit", "faster-coco-eval": "faster_coco_eval", "pycocotools": "pycocotools"}


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
    import contextlib
    import io
    import resource

    gt_file, dt_file = str(folder / "ground_truth.json"), str(folder / "predictions.json")
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    if tool == "ioukit":
        from ioukit.engine import evaluate

        t1 = time.perf_counter()
        result = evaluate(gt_file, dt_file)
        stats = list(result.stats.values())
        t2 = time.perf_counter()
        out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # first run
        from ioukit.metrics.coco import evaluate_coco

        gt, pred = result.ground_truth, result.predictions
        out["in_memory"] = best_of(lambda: evaluate_coco(gt, pred), repeat=3, min_time=0.0)
        out["warm"] = best_of(lambda: evaluate(gt_file, dt_file), repeat=2, min_time=0.0)
    else:
        if tool == "pycocotools":
            from pycocotools.coco import COCO
            from pycocotools.cocoeval import COCOeval
        else:
            from faster_coco_eval import COCO
            from faster_coco_eval import COCOeval_faster as COCOeval
        t1 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            coco_gt = COCO(gt_file)
            coco_dt = coco_gt.loadRes(dt_file)
            e = COCOeval(coco_gt, coco_dt, "bbox")
            e.evaluate()
            e.accumulate()
            e.summarize()
        stats = [float(v) for v in e.stats[:12]]
        t2 = time.perf_counter()
    out.setdefault("peak_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    out.update(total=t2 - t0, run=t2 - t1, stats=stats)
    return out


def run_tool(tool: str, folder: Path) -> dict[str, Any] | None:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", tool, str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        print(f"{tool} failed:\n{proc.stderr[-2000:]}")
        return None
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


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
        r = run_tool(tool, folder)
        if r is not None:
            results[tool] = r
    ours = results.get("ioukit")
    rows = []
    for tool, r in results.items():
        ratio = "1.0x" if ours is None else f"{r['total'] / ours['total']:.1f}x"
        diff = (
            max(abs(a - b) for a, b in zip(r["stats"], ours["stats"], strict=True))
            if ours
            else float("nan")
        )
        rows.append(
            [tool, fmt_time(r["total"]), fmt_time(r["run"]), f"{r['peak_mb']:.0f} MB", ratio,
             f"{diff:.1e}"]
        )  # fmt: skip
    n_gt = n_dt = "?"
    with open(folder / "ground_truth.json", "rb") as f:
        n_gt = str(len(json.load(f)["annotations"]))
    n_dt = f"{(folder / 'predictions.json').stat().st_size / 1e6:.0f} MB"
    print_table(
        f"COCO bbox, JSON files -> 12 stats ({num_images} images, {n_gt} GT, predictions {n_dt})",
        ["tool", "total (fresh process)", "without import", "peak RSS", "time / ioukit",
         "max |stat diff|"],
        rows,
    )  # fmt: skip
    if ours is not None:
        print(f"ioukit from in-memory arrays (warm): {fmt_time(ours['in_memory'])}")
        warm = ours["warm"]
        ratios = ", ".join(
            f"{r['run'] / warm:.1f}x faster than {tool}"
            for tool, r in results.items()
            if tool != "ioukit"
        )
        print(
            f"ioukit JSON files -> 12 stats in a warm process (numba loaded): {fmt_time(warm)}"
            + (f" ({ratios})" if ratios else "")
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("TOOL", "FOLDER"), help=argparse.SUPPRESS)
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--scaling", action="store_true", help="also 10 000 and 20 000 images")
    parser.add_argument("--skip", action="append", default=[], choices=sorted(TOOLS))
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return
    skip = set(args.skip)
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


if __name__ == "__main__":
    main()
