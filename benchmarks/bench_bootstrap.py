"""Bootstrap and paired comparison on the 5 000-image / 80-class set (#25 goals).

ioukit's ``bootstrap(n)`` and ``compare(a, b, n)`` (a multiplicity bootstrap: each replicate
re-accumulates the one match outcome) against hotcoco's ``compare(ev_a, ev_b,
n_bootstrap=n)`` (which keeps each drawn image once: a subsample, not a bootstrap).

Usage: ``python benchmarks/bench_bootstrap.py [--n 1000] [--images 5000] [--memory]``. The
goal is ``bootstrap(n=1000)`` <= 10 s and ``compare`` 1000 paired replicates <= 20 s on 2 cores.

``--memory`` measures the other goal, peak memory <= 2x the evaluation's: the data are written
as COCO JSON files, then fresh processes read and evaluate them, alternating ``--rounds`` times,
one stopping after the evaluation and one running ``bootstrap(n)`` after it; each reports its
peak resident set (``VmHWM`` of ``/proc/self/status``) and its resident set after ``import
ioukit`` (the interpreter and the libraries, the same in both). Printed: the medians, the ratio
of the peaks and the ratio of the peaks above that import baseline.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ioukit
from ioukit.synthetic import make_detections


def _status_kib(field: str) -> int:
    """A ``/proc/self/status`` field in KiB (``VmHWM``: peak resident set, ``VmRSS``: now)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def _child(gt_path: str, pred_path: str, n: int) -> None:
    """One fresh process: evaluate the files, then ``bootstrap(n)`` unless n is 0; print the
    resident set after the imports and the peak, in KiB, as JSON."""
    baseline = _status_kib("VmRSS")
    result = ioukit.evaluate(gt_path, pred_path)
    evaluated = _status_kib("VmHWM")
    if n:
        ioukit.bootstrap(result, n=n, seed=0)
    print(json.dumps({"baseline": baseline, "evaluated": evaluated, "peak": _status_kib("VmHWM")}))


def _memory(gt: object, res: object, n: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        gt_path, pred_path = Path(tmp, "gt.json"), Path(tmp, "pred.json")
        gt_path.write_text(json.dumps(gt))
        pred_path.write_text(json.dumps(res))
        runs: dict[int, list[dict[str, int]]] = {0: [], n: []}
        for _ in range(rounds):
            for replicates in (0, n):  # alternating: the load moves both alike
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(gt_path), str(pred_path),
                     "--n", str(replicates)],
                    check=True, capture_output=True, text=True,
                )  # fmt: skip
                runs[replicates].append(json.loads(out.stdout.splitlines()[-1]))

    def median(replicates: int, key: str) -> float:
        return statistics.median(r[key] for r in runs[replicates]) / 1024

    base = median(0, "baseline")
    alone, boot = median(0, "peak"), median(n, "peak")
    print(f"peak RSS, fresh processes, median of {rounds} (MiB): after import {base:.1f}, "
          f"evaluation {alone:.1f}, evaluation + bootstrap(n={n}) {boot:.1f}")  # fmt: skip
    print(
        f"ratio (evaluation + bootstrap) / evaluation: {boot / alone:.2f}x peak, "
        f"{(boot - base) / (alone - base):.2f}x above the import baseline (goal <= 2x)"
    )
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="replicates (goal figures: 1000)")
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--memory", action="store_true", help="peak RSS, not times")
    parser.add_argument("--rounds", type=int, default=3, help="--memory: processes of each kind")
    parser.add_argument("--child", nargs=2, metavar=("GT", "PRED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1], args.n)
        return
    gt, res = make_detections(num_images=args.images, num_classes=80, seed=0)
    if args.memory:
        _memory(gt, res, args.n, args.rounds)
        return
    worse = [d for i, d in enumerate(res) if i % 5]
    a, b = ioukit.evaluate(gt, res), ioukit.evaluate(gt, worse)
    start = time.perf_counter()
    ioukit.bootstrap(a, n=args.n, seed=0)
    boot = time.perf_counter() - start
    start = time.perf_counter()
    ioukit.compare(a, b, n=args.n, seed=0)
    comp = time.perf_counter() - start
    print(f"images {args.images}, classes 80, replicates {args.n}")
    print(f"ioukit bootstrap(n={args.n}): {boot:.2f} s ({boot / args.n * 1000:.1f} ms/replicate)")
    print(f"ioukit compare(n={args.n}):   {comp:.2f} s ({comp / args.n * 1000:.1f} ms/replicate)")
    try:
        import hotcoco
    except ImportError:
        print("hotcoco not installed: no reference timing")
        return
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, data in (("gt", gt), ("a", res), ("b", worse)):
            paths[name] = Path(tmp, name + ".json")
            paths[name].write_text(json.dumps(data))
        with contextlib.redirect_stdout(io.StringIO()):
            coco = hotcoco.COCO(str(paths["gt"]))
            evs = []
            for name in ("a", "b"):
                ev = hotcoco.COCOeval(coco, coco.loadRes(str(paths[name])), "bbox")
                ev.evaluate()
                evs.append(ev)
        start = time.perf_counter()
        hotcoco.compare(evs[0], evs[1], n_bootstrap=args.n, seed=0)
        ref = time.perf_counter() - start
    print(f"hotcoco compare(n_bootstrap={args.n}): {ref:.2f} s (deduplicated draws)")
    print(f"ratio hotcoco / ioukit compare: {ref / comp:.2f}x")


if __name__ == "__main__":
    main()
