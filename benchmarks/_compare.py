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


# --- fresh-process comparison with the Rust evaluators (#27) ---------------------------------

PEERS = {
    "ioukit": "ioukit",
    "hotcoco": "hotcoco",
    "ultrafast": "ultrafast_pycocotools",
    "vernier": "vernier",
    "faster-coco-eval": "faster_coco_eval",
}
"""Tool name -> module that must be importable for it to run (``ultrafast`` is
ultrafast-pycocotools)."""

N_STATS = {"bbox": 12, "segm": 12, "keypoints": 10, "lvis": 13}
"""How many numbers each family prints, in pycocotools' (lvis-api's for LVIS) order."""

# One program per tool: ``python -c PROGRAM GT DT FAMILY THREADS`` prints the stats as one JSON
# line. Each is the tool's documented pycocotools-compatible route from two JSON files to the
# stats (vernier: its native entry point with ``parity_mode="strict"``, which its docs give for
# bit-exact pycocotools behaviour; its ``COCOeval`` shim needs a pycocotools ``COCO``). THREADS
# is "1" or "all"; the environment carries OMP_NUM_THREADS / RAYON_NUM_THREADS as well.
PROGRAMS = {
    "ioukit": """
import json, sys
import ioukit
gt, dt, family = sys.argv[1:4]
if family == "lvis":
    r = ioukit.evaluate(gt, dt, protocol="lvis")
else:
    r = ioukit.evaluate(gt, dt, iou_type=family)
print(json.dumps(list(r.stats.values())))
""",
    "hotcoco": """
import contextlib, io, json, sys
from hotcoco import COCO, COCOeval
gt_file, dt_file, family = sys.argv[1:4]
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(gt_file)
    dt = gt.load_res(dt_file)
    if family == "lvis":
        e = COCOeval(gt, dt, "bbox", lvis_style=True)
    else:
        e = COCOeval(gt, dt, family)
    e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats]))
""",
    "ultrafast": """
import contextlib, io, json, sys
from ultrafast_pycocotools import COCO, COCOeval
gt_file, dt_file, family = sys.argv[1:4]
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(gt_file)
    dt = gt.loadRes(dt_file)
    if family == "lvis":
        e = COCOeval(gt, dt, "bbox", lvis_style=True)
    else:
        e = COCOeval(gt, dt, family)
    e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats]))
""",
    "vernier": """
import json, os, sys
from vernier.instance import Bbox, Evaluator, Keypoints, Segm
gt_file, dt_file, family, threads = sys.argv[1:5]
with open(gt_file, "rb") as f:
    gt = f.read()
with open(dt_file, "rb") as f:
    dt = f.read()
iou = {"bbox": Bbox, "segm": Segm, "keypoints": Keypoints}[family]()
n = 1 if threads == "1" else os.cpu_count()
s = Evaluator(iou=iou, parity_mode="strict").evaluate(gt, dt, num_threads=n)
print(json.dumps([float(x) for x in s.stats]))
""",
    "faster-coco-eval": """
import contextlib, io, json, sys
from faster_coco_eval import COCO, COCOeval_faster
gt_file, dt_file, family = sys.argv[1:4]
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(gt_file)
    dt = gt.loadRes(dt_file)
    if family == "lvis":
        e = COCOeval_faster(gt, dt, "bbox", lvis_style=True)
        e.params.maxDets = [300]
    else:
        e = COCOeval_faster(gt, dt, family)
    e.evaluate(); e.accumulate(); e.summarize()
if family == "lvis":  # its stats array has another order; lvis-api's 13 numbers by name
    names = ["AP_all", "AP_50", "AP_75", "AP_small", "AP_medium", "AP_large", "APr", "APc",
             "APf", "AR_all", "AR_small", "AR_medium", "AR_large"]
    print(json.dumps([float(e.stats_as_dict[n]) for n in names]))
else:
    print(json.dumps([float(x) for x in e.stats]))
""",
}
FAMILIES = {
    "ioukit": {"bbox", "segm", "keypoints", "lvis"},
    "hotcoco": {"bbox", "segm", "keypoints", "lvis"},
    "ultrafast": {"bbox", "segm", "keypoints", "lvis"},
    "vernier": {"bbox", "segm"},
    "faster-coco-eval": {"bbox", "segm", "keypoints", "lvis"},
}
"""Which families each tool evaluates here. vernier: no LVIS route in its Python API, and its
keypoints reader requires a ``bbox`` in every result (``make_keypoints_like.py``'s results, like
pycocotools' keypoint results, have none: ``loadRes`` derives it)."""

BASELINE_PROGRAM = "import json, numpy"
"""What every tool pays: the interpreter, json and NumPy; a tool's own part is its process
minus this one."""


def thread_env(threads: str) -> dict[str, str]:
    """This environment with cached bytecode allowed and, for ``threads == "1"``, every
    thread pool (OpenMP, rayon, OpenBLAS) at one thread."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if threads == "1":
        for name in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[name] = "1"
    return env


def fresh_process(program: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run ``python -c program *args`` once; wall seconds, CPU seconds (user + system, all
    threads), peak RSS in MB (the child's own, from ``wait4``) and the JSON it printed last."""
    import os
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", program, *args], stdout=out, stderr=err, env=env
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, error = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"{program.strip().splitlines()[1]!r} failed:\n{error[-2000:]}")
    lines = text.strip().splitlines()
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,
        "stats": json.loads(lines[-1]) if lines else [],
    }


def alternating_rounds(
    tools: list[str], gt: str, dt: str, family: str, *, rounds: int, threads: str
) -> dict[str, dict[str, float]] | None:
    """Median wall, CPU and peak RSS of each tool and of the baseline over ``rounds`` rounds.

    One untimed run of each first (bytecode and file caches); each round runs every tool once
    and the baseline, the order rotated by one each round. The stats of every tool are checked
    against ioukit's (identical to 1e-12) before anything is kept; on a mismatch this prints
    both and returns None.
    """
    env = thread_env(threads)
    args = [gt, dt, family, threads]
    names = [*tools, "import json, numpy"]
    programs = {t: PROGRAMS[t] for t in tools} | {"import json, numpy": BASELINE_PROGRAM}
    first = {t: fresh_process(programs[t], args, env) for t in names}
    ref = first[tools[0]]["stats"]
    for t in tools[1:]:
        stats = first[t]["stats"][: len(ref)]
        if (
            len(stats) != len(ref)
            or max(abs(a - b) for a, b in zip(stats, ref, strict=True)) > 1e-12
        ):
            print(f"{family}: stats differ\n  {tools[0]} {ref}\n  {t} {first[t]['stats']}")
            return None
    samples: dict[str, list[dict[str, Any]]] = {t: [] for t in names}
    for i in range(rounds):
        order = names[i % len(names) :] + names[: i % len(names)]
        for t in order:
            samples[t].append(fresh_process(programs[t], args, env))
    return {
        t: {k: statistics.median(s[k] for s in runs) for k in ("wall", "cpu", "rss")}
        for t, runs in samples.items()
    }


PEER_HEADER = ["tool", "wall", "own wall", "CPU", "own CPU", "peak RSS",
               "own wall / ioukit's", "own CPU / ioukit's", "RSS / ioukit's"]  # fmt: skip


def peer_rows(medians: dict[str, dict[str, float]]) -> list[list[str]]:
    """Table rows for :func:`alternating_rounds`' medians: whole process and own part (minus
    the baseline) of each tool, and each tool's own part and RSS over ioukit's."""
    base = medians["import json, numpy"]
    ours = medians.get("ioukit")

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}x" if b > 0 else "-"

    rows = []
    for tool, m in medians.items():
        own_wall, own_cpu = m["wall"] - base["wall"], m["cpu"] - base["cpu"]
        row = [tool, fmt_time(m["wall"]), fmt_time(own_wall), fmt_time(m["cpu"]),
               fmt_time(own_cpu), f"{m['rss']:.1f} MB"]  # fmt: skip
        if ours is None or tool == "import json, numpy":
            row += ["", "", ""]
        else:
            row += [
                ratio(own_wall, ours["wall"] - base["wall"]),
                ratio(own_cpu, ours["cpu"] - base["cpu"]),
                ratio(m["rss"], ours["rss"]),
            ]
        rows.append(row)
    return rows
