"""COCO keypoint (OKS) evaluation end to end: ioukit vs pycocotools vs faster-coco-eval.

On the generated crowded person-keypoint set (``make_keypoints_like.py``: 8-20 persons and
about 130 results per image, 17 keypoints), each tool runs in its own fresh subprocess, from the
two JSON files to the 10 keypoint stats; the table gives wall time (import included and
excluded), peak RSS, the ratio to ioukit and the largest stat difference.

    .venv-bench/bin/python benchmarks/bench_keypoints.py                  # 5 000 images
    .venv-bench/bin/python benchmarks/bench_keypoints.py --images 500
    .venv-bench/bin/python benchmarks/bench_keypoints.py --skip pycocotools

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
    """Folder with ground_truth.json and predictions.json (generated once).

    Generated in a child process: Linux keeps a parent's peak RSS across fork and exec, so a
    generator in this process would inflate every tool's peak RSS.
    """
    folder = Path(tempfile.gettempdir()) / "ioukit-bench" / f"keypoints_like_{num_images}"
    if not (folder / "predictions.json").exists():
        print(f"generating {folder} ...", flush=True)
        script = Path(__file__).parent / "make_keypoints_like.py"
        subprocess.run(
            [sys.executable, str(script), "--images", str(num_images), "--seed", str(num_images),
             "--out", str(folder)],
            check=True,
        )  # fmt: skip
    return folder


def worker(tool: str, folder: Path) -> dict[str, Any]:
    """Run one tool (in this fresh process); return timings, peak RSS and the 10 stats."""
    import contextlib
    import io
    import resource

    gt_file, dt_file = str(folder / "ground_truth.json"), str(folder / "predictions.json")
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    if tool == "ioukit":
        from ioukit.engine import evaluate

        t1 = time.perf_counter()
        result = evaluate(gt_file, dt_file, iou_type="keypoints")
        stats = [float(v) for v in result.stats.values()][:10]
        t2 = time.perf_counter()
        out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # first run
        out["warm"] = best_of(
            lambda: evaluate(gt_file, dt_file, iou_type="keypoints"), repeat=2, min_time=0.0
        )
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
            e = COCOeval(coco_gt, coco_dt, "keypoints")
            e.evaluate()
            e.accumulate()
            e.summarize()
        stats = [float(v) for v in e.stats[:10]]
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
    n_gt = (folder / "ground_truth.json").read_bytes().count(b'"num_keypoints"')
    n_dt = (folder / "predictions.json").read_bytes().count(b'"score"')
    print_table(
        f"COCO keypoints (OKS), JSON files -> 10 stats ({num_images} images, {n_gt} GT, "
        f"{n_dt} results)",
        ["tool", "total (fresh process)", "without import", "peak RSS", "time / ioukit",
         "max |stat diff|"],
        rows,
    )  # fmt: skip
    if ours is not None:
        print(f"ioukit JSON files -> 10 stats in a warm process: {fmt_time(ours['warm'])}")
    return results


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], Path(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--skip", action="append", default=[], choices=sorted(TOOLS))
    args = parser.parse_args()
    bench(args.images, set(args.skip))


if __name__ == "__main__":
    main()
