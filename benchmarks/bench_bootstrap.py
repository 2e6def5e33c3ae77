"""Bootstrap and paired comparison on the 5 000-image / 80-class set (#25 goals).

ioukit's ``bootstrap(n)`` and ``compare(a, b, n)`` (a multiplicity bootstrap: each replicate
re-accumulates the one match outcome) against hotcoco's ``compare(ev_a, ev_b,
n_bootstrap=n)`` (which keeps each drawn image once: a subsample, not a bootstrap).

Usage: ``python benchmarks/bench_bootstrap.py [--n 1000] [--images 5000]``. The goal is
``bootstrap(n=1000)`` <= 10 s and ``compare`` 1000 paired replicates <= 20 s on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import ioukit
from ioukit.synthetic import make_detections


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="replicates (goal figures: 1000)")
    parser.add_argument("--images", type=int, default=5000)
    args = parser.parse_args()
    gt, res = make_detections(num_images=args.images, num_classes=80, seed=0)
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
