"""COCO keypoint (OKS) evaluation end to end: ioukit vs pycocotools vs faster-coco-eval.

On the generated crowded person-keypoint set (``make_keypoints_like.py``: 8-20 persons and
about 130 results per image, 17 keypoints), each tool runs in its own fresh subprocess, from the
two JSON files to the 10 keypoint stats; the table gives wall time (import included and
excluded), peak RSS, the ratio to ioukit and the largest stat difference.

    .venv-bench/bin/python benchmarks/bench_keypoints.py                  # 5 000 images
    .venv-bench/bin/python benchmarks/bench_keypoints.py --images 500
    .venv-bench/bin/python benchmarks/bench_keypoints.py --skip pycocotools
    .venv-bench/bin/python benchmarks/bench_keypoints.py --images 1000 --repeat 3  # alternating

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

from _compare import (
    HEADER,
    TOOLS,
    comparison_rows,
    cpu_seconds,
    peak_mb,
    print_rounds,
    reference_run,
    run_tool,
)
from _timing import best_of, fmt_time, have, print_table


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
    gt_file, dt_file = str(folder / "ground_truth.json"), str(folder / "predictions.json")
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    if tool == "ioukit":
        from ioukit.engine import evaluate

        t1 = time.perf_counter()
        result = evaluate(gt_file, dt_file, iou_type="keypoints")
        stats = [float(v) for v in result.stats.values()][:10]
        run = time.perf_counter() - t1
        out["total"], out["cpu"] = time.perf_counter() - t0, cpu_seconds()
        out["peak_mb"] = peak_mb()  # first run
        out["warm"] = best_of(
            lambda: evaluate(gt_file, dt_file, iou_type="keypoints"), repeat=2, min_time=0.0
        )
    else:
        run, stats = reference_run(tool, gt_file, dt_file, "keypoints", 10)
        out["total"], out["cpu"] = time.perf_counter() - t0, cpu_seconds()
    out.setdefault("peak_mb", peak_mb())
    out.update(run=run, stats=stats)
    return out


def bench(num_images: int, skip: set[str], repeat: int = 1) -> dict[str, dict[str, Any]]:
    folder = dataset(num_images)
    tools = [t for t, module in TOOLS.items() if t not in skip and have(module)]
    for t in TOOLS:
        if t not in skip and t not in tools:
            print(f"skipping {t}: not importable")
    rounds: list[dict[str, dict[str, Any]]] = []
    for i in range(repeat):
        # alternate: ioukit, then each reference, then ioukit again in the next round
        results: dict[str, dict[str, Any]] = {}
        for tool in tools:
            print(f"round {i + 1}: running {tool} on {num_images} images ...", flush=True)
            r = run_tool(__file__, tool, folder)
            if r is not None:
                results[tool] = r
        rounds.append(results)
    results = rounds[-1]
    n_gt = (folder / "ground_truth.json").read_bytes().count(b'"num_keypoints"')
    n_dt = (folder / "predictions.json").read_bytes().count(b'"score"')
    print_table(
        f"COCO keypoints (OKS), JSON files -> 10 stats ({num_images} images, {n_gt} GT, "
        f"{n_dt} results)" + (f", round {repeat}" if repeat > 1 else ""),
        HEADER,
        comparison_rows(results),
    )
    print_rounds(rounds)
    if "ioukit" in results:
        warm = fmt_time(results["ioukit"]["warm"])
        print(f"ioukit JSON files -> 10 stats in a warm process: {warm}")
    return results


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], Path(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--skip", action="append", default=[], choices=sorted(TOOLS))
    parser.add_argument(
        "--repeat", type=int, default=1, help="alternating rounds (fresh processes each)"
    )
    args = parser.parse_args()
    bench(args.images, set(args.skip), args.repeat)


if __name__ == "__main__":
    main()
