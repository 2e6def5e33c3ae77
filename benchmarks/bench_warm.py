"""Warm in-process evaluation time per protocol (#17, #10, #9): Datasets already in memory.

Reads a COCO-like set (``make_coco_like.py``, 80 classes) once with
``ioukit.io.coco.read_coco_ground_truth`` / ``read_coco_results``, then for each protocol one
warm-up ``ioukit.evaluate(gt, pred, protocol=P)`` and the best of ``--repeat`` (default 5) timed
calls (wall time, and CPU time of the process, all threads, which a busy shared machine
disturbs less). Each (code, size) runs in its own process.

``--compare SRC`` also times another checkout's ``src`` folder (with its compiled kernels, e.g.
``git archive main src | tar -x -C /tmp/main`` plus the ``.so`` files) in the same minute:
the two alternate, ``--rounds`` times, and the table shows the best of each and the ratio
other / this (> 1: this code is faster). The stats of both must be identical, else exit 1.

    .venv/bin/python benchmarks/bench_warm.py
    .venv/bin/python benchmarks/bench_warm.py --sizes 5000 --compare /tmp/main/src --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _timing import print_table

PROTOCOLS = ("coco", "voc07", "voc10", "yolo")

CHILD = """
import gc, json, sys, time
import ioukit
from ioukit.io.coco import read_coco_ground_truth, read_coco_results

folder, repeat, protocols = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
gt = read_coco_ground_truth(folder + "/ground_truth.json")
pred = read_coco_results(folder + "/predictions.json", gt)
out = {"file": ioukit.__file__, "n_pred": len(pred), "n_gt": len(gt)}
for p in protocols:
    r = ioukit.evaluate(gt, pred, protocol=p)  # warm-up
    best = cpu = float("inf")
    for _ in range(repeat):
        gc.collect()
        t, c = time.perf_counter(), time.process_time()
        ioukit.evaluate(gt, pred, protocol=p)
        best = min(best, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    out[p] = {"time": best, "cpu": cpu, "stats": list(r.stats.values())}
print(json.dumps(out))
"""


def dataset(num_images: int) -> Path:
    """Folder with ground_truth.json and predictions.json (generated once)."""
    from make_coco_like import make_coco_like, write

    folder = Path(tempfile.gettempdir()) / "ioukit-bench" / f"coco_like_{num_images}"
    if not (folder / "predictions.json").exists():
        gt, results = make_coco_like(num_images=num_images, num_classes=80, seed=num_images)
        write(folder, gt, results)
    return folder


def measure(folder: Path, repeat: int, protocols: list[str], src: str | None) -> dict:  # type: ignore[type-arg]
    """One child process: times of every protocol on ``folder`` (``src`` on PYTHONPATH)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(repeat), ",".join(protocols)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict = json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[type-arg]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--protocols", nargs="+", default=list(PROTOCOLS))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--compare", default=None, help="another checkout's src folder")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    status = 0
    for size in args.sizes:
        folder = dataset(size)
        this: dict[str, float] = {}
        other: dict[str, float] = {}
        info = {}
        for _ in range(args.rounds):
            runs = [(None, this)] + ([(args.compare, other)] if args.compare else [])
            for src, into in runs:
                res = measure(folder, args.repeat, args.protocols, src)
                info = res
                for p in args.protocols:
                    into[p] = min(into.get(p, float("inf")), res[p]["time"])
                    into[p + ".cpu"] = min(into.get(p + ".cpu", float("inf")), res[p]["cpu"])
                    into[p + ".stats"] = res[p]["stats"]
        rows = []
        for p in args.protocols:
            row = [p, f"{this[p] * 1000:.0f} ms", f"{this[p + '.cpu'] * 1000:.0f} ms"]
            if args.compare:
                same = this[p + ".stats"] == other[p + ".stats"]
                status |= 0 if same else 1
                row += [
                    f"{other[p] * 1000:.0f} ms",
                    f"{other[p + '.cpu'] * 1000:.0f} ms",
                    f"{other[p] / this[p]:.2f}x",
                    f"{other[p + '.cpu'] / this[p + '.cpu']:.2f}x",
                    str(same),
                ]
            rows.append(row)
        header = ["protocol", "this wall", "this cpu"]
        if args.compare:
            header += ["other wall", "other cpu", "wall other/this", "cpu other/this", "same"]
        title = f"coco_like {size} images, {info['n_pred']} predictions, best of {args.repeat}"
        print_table(title, header, rows)
    return status


if __name__ == "__main__":
    sys.exit(main())
