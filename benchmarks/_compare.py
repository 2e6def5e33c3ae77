"""Shared parts of the end-to-end COCO comparisons (``bench_coco.py``, ``bench_keypoints.py``).

Each tool runs in its own fresh subprocess (the calling script re-run with ``--worker TOOL
FOLDER``) from two JSON files to its stats; the parent collects one JSON line per run and
prints a table of times, peak RSS, ratios to ioukit and the largest stat difference.
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _timing import fmt_time, print_table

TOOLS = {"ioukit": "ioukit", "faster-coco-eval": "faster_coco_eval", "pycocotools": "pycocotools"}
"""Tool name -> module that must be importable for it to run."""


def peak_mb() -> float:
    """Peak RSS of this process in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    """User + system CPU time of this process so far (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def reference_run(tool: str, gt_file: str, dt_file: str, iou_type: str, n_stats: int) -> Any:
    """pycocotools or faster-coco-eval from the two files to ``e.stats[:n_stats]``.

    Returns ``(seconds without import, stats)``; the import is timed by the caller.
    """
    if tool == "pycocotools":
        from pycocotools.coco import COCO
        from pycocotools.cocoeval import COCOeval
    else:
        from faster_coco_eval import COCO
        from faster_coco_eval import COCOeval_faster as COCOeval
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(gt_file)
        coco_dt = coco_gt.loadRes(dt_file)
        e = COCOeval(coco_gt, coco_dt, iou_type)
        e.evaluate()
        e.accumulate()
        e.summarize()
    return time.perf_counter() - start, [float(v) for v in e.stats[:n_stats]]


def run_tool(script: str, tool: str, folder: Path) -> dict[str, Any] | None:
    """Run ``script --worker tool folder`` in a fresh interpreter; its last stdout line (JSON)."""
    proc = subprocess.run(
        [sys.executable, script, "--worker", tool, str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        print(f"{tool} failed:\n{proc.stderr[-2000:]}")
        return None
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def comparison_rows(results: dict[str, dict[str, Any]]) -> list[list[str]]:
    """Table rows: tool, total, without import, CPU, peak RSS, time / ioukit, CPU / ioukit,
    max |stat diff|."""
    ours = results.get("ioukit")
    rows = []
    for tool, r in results.items():
        ratio = "1.0x" if ours is None else f"{r['total'] / ours['total']:.1f}x"
        cpu = r.get("cpu", float("nan"))
        cpu_ratio = "-" if ours is None else f"{cpu / ours.get('cpu', float('nan')):.1f}x"
        diff = (
            max(abs(a - b) for a, b in zip(r["stats"], ours["stats"], strict=True))
            if ours
            else float("nan")
        )
        rows.append(
            [tool, fmt_time(r["total"]), fmt_time(r["run"]), fmt_time(cpu),
             f"{r['peak_mb']:.0f} MB", ratio, cpu_ratio, f"{diff:.1e}"]
        )  # fmt: skip
    return rows


HEADER = ["tool", "total (fresh process)", "without import", "CPU (all threads)", "peak RSS",
          "time / ioukit", "CPU / ioukit", "max |stat diff|"]  # fmt: skip
"""CPU time is less sensitive than wall time to other work on a shared machine; ioukit's
kernels use up to 8 threads, so on an idle machine its wall time is below its CPU time."""


def print_rounds(rounds: list[dict[str, dict[str, Any]]]) -> None:
    """With several alternating rounds: each round's ratios (wall, CPU), then the medians."""
    if len(rounds) < 2:
        return
    tools = [t for t in rounds[0] if t != "ioukit"]

    def ratio(r: dict[str, dict[str, Any]], tool: str, key: str) -> float | None:
        if tool not in r or "ioukit" not in r or key not in r[tool] or key not in r["ioukit"]:
            return None
        return float(r[tool][key] / r["ioukit"][key])

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}x"

    rows = []
    for i, r in enumerate(rounds, 1):
        if "ioukit" in r:
            ours = r["ioukit"]
            row = [str(i), f"{fmt_time(ours['total'])} / {fmt_time(ours.get('cpu', 0.0))}"]
            row += [f"{cell(ratio(r, t, 'total'))} / {cell(ratio(r, t, 'cpu'))}" for t in tools]
            rows.append(row)
    medians = []
    for t in tools:
        wall = [v for r in rounds if (v := ratio(r, t, "total")) is not None]
        cpu = [v for r in rounds if (v := ratio(r, t, "cpu")) is not None]
        medians.append(
            f"{cell(statistics.median(wall) if wall else None)} / "
            f"{cell(statistics.median(cpu) if cpu else None)}"
        )
    rows.append(["median", "", *medians])
    print_table(
        "alternating rounds (fresh processes): time / ioukit (wall / CPU)",
        ["round", "ioukit (wall / CPU)", *tools],
        rows,
    )
