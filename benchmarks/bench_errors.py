"""TIDE error analysis: ioukit vs tidecv 1.0.1, each in a fresh process, from the JSON files.

On the generated COCO-like set (``make_coco_like.py``, 2 000 images, 80 classes), each run
starts a new interpreter, imports the tool, reads the two JSON files (tidecv: ``json`` and its
``Data``; ioukit: its COCO readers) and computes AP50 and the main and special dAP; the table
gives each part and the whole process. ioukit runs twice: the default (pycocotools' match) and
``compat="tidecv"``, whose numbers are checked equal to tidecv's (1e-9 on AP x 100).
``--cli`` adds the whole ``ioukit eval`` against ``ioukit eval --errors --per-image`` on
5 000 images.

    .venv-bench/bin/python benchmarks/bench_errors.py
    .venv-bench/bin/python benchmarks/bench_errors.py --images 500 --cli

tidecv needs ``np.float`` (removed from NumPy): the worker sets it before importing tidecv.
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

from _timing import fmt_time, have, print_table


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
    """Run one tool in this (fresh) process: times and the numbers in percent."""
    start = time.perf_counter()
    gt_path, pred_path = folder / "ground_truth.json", folder / "predictions.json"
    if tool == "tidecv":
        import contextlib
        import io

        import numpy as np

        for name, value in (("float", float), ("int", int), ("bool", bool)):
            if name not in np.__dict__:
                setattr(np, name, value)
        import tidecv
        from tidecv.data import Data

        imported = time.perf_counter()
        gt = json.loads(gt_path.read_text())
        res = json.loads(pred_path.read_text())
        gt_data = Data("gt", max_dets=100)
        for image in gt["images"]:
            gt_data.add_image(image["id"], image.get("file_name", str(image["id"])))
        for cat in gt["categories"]:
            gt_data.add_class(cat["id"], cat["name"])
        for ann in gt["annotations"]:
            add = gt_data.add_ignore_region if ann.get("iscrowd") else gt_data.add_ground_truth
            add(ann["image_id"], ann["category_id"], ann["bbox"], None)
        pred_data = Data("pred")
        for d in res:
            pred_data.add_detection(d["image_id"], d["category_id"], d["score"], d["bbox"])
        read = time.perf_counter()
        tide = tidecv.TIDE()
        with contextlib.redirect_stdout(io.StringIO()):
            run = tide.evaluate(gt_data, pred_data, mode=tidecv.TIDE.BOX, name="run")
            errors = tide.get_all_errors()
        numbers = {"AP": run.ap, **errors["main"]["run"], **errors["special"]["run"]}
    else:
        import ioukit
        from ioukit.io.coco import read_coco_ground_truth, read_coco_results

        imported = time.perf_counter()
        gt_ds = read_coco_ground_truth(gt_path)
        pred_ds = read_coco_results(pred_path, gt_ds)
        read = time.perf_counter()
        r = ioukit.error_analysis(
            gt_ds, pred_ds, compat="tidecv" if tool == "ioukit-tidecv" else None
        )
        numbers = {"AP": r.ap * 100}
        numbers.update({k: v * 100 for k, v in r.main.items()})
        numbers.update({k: v * 100 for k, v in r.special.items()})
    done = time.perf_counter()
    return {
        "import": imported - start,
        "read": read - imported,
        "analyse": done - read,
        "numbers": numbers,
    }


def fresh(tool: str, folder: Path) -> dict[str, Any]:
    """``worker`` in a new interpreter; wall time of the whole process added."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--worker", tool, "--folder", str(folder)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["process"] = time.perf_counter() - start
    return result


def cli_runs(folder: Path) -> None:
    """``ioukit eval`` with and without ``--errors --per-image``, fresh processes, best of 3."""
    base = [
        sys.executable,
        "-m",
        "ioukit",
        "eval",
        "--gt",
        str(folder / "ground_truth.json"),
        "--pred",
        str(folder / "predictions.json"),
    ]
    extra = ["--errors", "--per-image", str(Path(tempfile.gettempdir()) / "per_image.csv")]
    rows = []
    times = {}
    for name, cmd in (("ioukit eval", base), ("ioukit eval --errors --per-image", base + extra)):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            best = min(best, time.perf_counter() - start)
        times[name] = best
        rows.append([name, fmt_time(best)])
    ratio = times["ioukit eval --errors --per-image"] / times["ioukit eval"]
    rows.append(["ratio (goal <= 2x)", f"{ratio:.2f}x"])
    print_table(f"CLI on {folder.name}, fresh processes, best of 3", ["command", "wall"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--cli", action="store_true", help="also time ioukit eval on 5 000 images")
    parser.add_argument("--worker")
    parser.add_argument("--folder")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, Path(args.folder))))
        return
    folder = dataset(args.images)
    tools = ["ioukit", "ioukit-tidecv"] + (["tidecv"] if have("tidecv") else [])
    results = {tool: fresh(tool, folder) for tool in tools}
    rows = []
    ref = results.get("tidecv")
    for tool, r in results.items():
        rows.append(
            [
                tool,
                fmt_time(r["import"]),
                fmt_time(r["read"]),
                fmt_time(r["analyse"]),
                f"{ref['analyse'] / r['analyse']:.1f}x" if ref else "-",
                fmt_time(r["process"]),
                f"{ref['process'] / r['process']:.1f}x" if ref else "-",
                f"{r['numbers']['AP']:.2f}",
            ]
        )
    print_table(
        f"TIDE on {args.images} images (fresh process each; ratios = tidecv / tool)",
        [
            "tool",
            "import",
            "read files",
            "analyse",
            "ratio",
            "whole process",
            "ratio",
            "AP50 %",
        ],
        rows,
    )
    if "tidecv" in results:
        mine, theirs = results["ioukit-tidecv"]["numbers"], results["tidecv"]["numbers"]
        worst = max(abs(mine[k] - theirs[k]) for k in theirs)
        print(f"\nioukit compat='tidecv' vs tidecv: max |difference| {worst:.1e} (percent units)")
        if worst > 1e-9:
            print("MISMATCH", mine, theirs, file=sys.stderr)
            sys.exit(1)
    if args.cli:
        cli_runs(dataset(5000))


if __name__ == "__main__":
    main()
