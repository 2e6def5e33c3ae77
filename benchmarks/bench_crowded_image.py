"""Peak memory of one crowded image (#23 item 16): COCO, VOC and YOLO on N objects in ONE
image of one class (N predictions), each in a fresh process.

Before, VOC and YOLO built the group's whole [P, G] float64 IoU matrix (N = 30 000: a 6.7 GiB
allocation); now a group above ``ioukit.evaluation.grouping.CHUNK_PAIRS`` pairs is matched in
blocks of its predictions. The goal: VOC/YOLO's peak at most 2x COCO's. Printed: the peak RSS
of the evaluation above the process's peak after building the data (ru_maxrss), and the time.

    python benchmarks/bench_crowded_image.py [--objects 30000] [--src DIR]

``--src`` runs another checkout's sources (e.g. the previous main) side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, resource, sys, time
import numpy as np
import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable

n, protocol = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
side = int(np.sqrt(n)) + 1
grid = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2)[:n] * 12.0
boxes = np.c_[grid, grid + 10.0]
images = ImageTable.from_lists([1], ["crowded"], [side * 12.0], [side * 12.0])
cats = CategoryTable.from_lists([1], ["thing"])
gt = Dataset.from_arrays(images, cats, boxes=boxes, image_index=np.zeros(n, np.int64),
                         category_id=np.ones(n, np.int64))
pred = Dataset.from_arrays(images, cats, boxes=boxes + rng.normal(0, 1, (n, 4)).clip(-2, 2),
                           image_index=np.zeros(n, np.int64), category_id=np.ones(n, np.int64),
                           scores=rng.random(n))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
r = ioukit.evaluate(gt, pred, protocol=protocol)
seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"mib": (peak - before) / 1024, "seconds": seconds, "stats": r.stats}))
"""


def run(n: int, protocol: str, src: str | None) -> dict[str, object]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), protocol],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else out.returncode}
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=30_000)
    parser.add_argument("--src", default=str(Path(__file__).parent.parent / "src"))
    args = parser.parse_args()
    print(f"one image, {args.objects} objects, sources {args.src}")
    print(f"{'protocol':<10} {'peak MiB':>10} {'seconds':>9}  stats")
    for protocol in ("coco", "voc10", "yolo"):
        r = run(args.objects, protocol, args.src)
        if "error" in r:
            print(f"{protocol:<10} {'-':>10} {'-':>9}  {r['error']}")
            continue
        stats = {k: round(float(v), 4) for k, v in dict(r["stats"]).items()}  # type: ignore[call-overload]
        print(f"{protocol:<10} {float(r['mib']):>10.0f} {float(r['seconds']):>9.2f}  {stats}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
