"""Threads when another process holds a core (#9): threaded vs single-thread time.

For ``box_iou`` 4000 x 4000 float32 and the COCO evaluation of coco_like 5 000 images (Datasets
in memory), each measured in a fresh process with the default threads and with
``OMP_NUM_THREADS=1``, first on an idle machine, then with another process spinning on a core.
The goal: threaded time within 1.3x of the single-thread time even when a core is busy.

    .venv-bench/bin/python benchmarks/bench_busy.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_latency import dataset

IOU = """
import time, numpy as np, ioukit
rng = np.random.default_rng(0)
a = rng.random((4000, 4)) * 100
a[:, 2:] += a[:, :2]
a = a.astype(np.float32)
ioukit.box_iou(a, a)
times = []
for _ in range(15):
    t = time.perf_counter(); ioukit.box_iou(a, a); times.append(time.perf_counter() - t)
print(min(times))
"""

COCO = """
import sys, time, ioukit
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
gt = read_coco_ground_truth(sys.argv[1] + "/ground_truth.json")
pred = read_coco_results(sys.argv[1] + "/predictions.json", gt)
ioukit.evaluate(gt, pred)
times = []
for _ in range(7):
    t = time.perf_counter(); ioukit.evaluate(gt, pred); times.append(time.perf_counter() - t)
print(min(times))
"""


def best(code: str, folder: Path, threads: str | None) -> float:
    """Best time printed by ``code`` in a fresh process (``threads``: OMP_NUM_THREADS)."""
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = threads
    out = subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    folder = dataset(5000)
    print(f"load average: {os.getloadavg()}")
    print(f"{'case':<40}{'threads':>10}{'1 thread':>10}{'ratio':>8}")
    for busy in (False, True):
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
        try:
            for name, code in (("box_iou 4000x4000 float32", IOU), ("COCO 5 000 images", COCO)):
                threaded, serial = best(code, folder, None), best(code, folder, "1")
                label = f"{name}{' (busy core)' if busy else ''}"
                print(
                    f"{label:<40}{threaded * 1e3:>8.1f}ms{serial * 1e3:>8.1f}ms"
                    f"{threaded / serial:>7.2f}x"
                )
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
