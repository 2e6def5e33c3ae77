"""Latency of a whole evaluation as a user runs it: one fresh process per call (#9).

For COCO-like sets of several sizes (``make_coco_like.py``, 80 classes), each round runs
``python -c "import ioukit; ioukit.evaluate(gt, dt)"`` and the same job with faster-coco-eval
(``COCO`` + ``COCOeval_faster``), alternating the two tools, and takes the median wall time of
``--rounds`` rounds (default 5), after one untimed warm-up run of each. Every process may write
and use cached bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped from its environment), as an
installed package does: with it set, an editable install compiles every module from source on
every start, which no user sees. The 12 stats of both tools are compared first (identical to
1e-12, else the script exits 1). Ratios are faster-coco-eval time / ioukit time.

Each round also times ``python -c "import json, sys, numpy"``: both tools import NumPy, which
at 20 images is most of either process (45-120 ms here, with OpenBLAS starting its threads).
The "own" columns subtract that baseline: the part of each process that is the tool's own
work (its imports, reading, evaluating), and their ratio.

    .venv-bench/bin/python benchmarks/bench_latency.py
    .venv-bench/bin/python benchmarks/bench_latency.py --sizes 20 200 --rounds 9
    .venv-bench/bin/python benchmarks/bench_latency.py --busy    # another process spins a core
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _timing import fmt_time, have, print_table

IOUKIT = """
import json, sys
import ioukit
r = ioukit.evaluate(sys.argv[1], sys.argv[2])
print(json.dumps(list(r.stats.values())))
"""

FASTER_COCO_EVAL = """
import contextlib, io, json, sys
from faster_coco_eval import COCO, COCOeval_faster
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(sys.argv[1])
    dt = gt.loadRes(sys.argv[2])
    e = COCOeval_faster(gt, dt, "bbox")
    e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats[:12]]))
"""


def dataset(num_images: int) -> Path:
    """Folder with ground_truth.json and predictions.json (generated once)."""
    from make_coco_like import make_coco_like, write

    folder = Path(tempfile.gettempdir()) / "ioukit-bench" / f"coco_like_{num_images}"
    if not (folder / "predictions.json").exists():
        gt, results = make_coco_like(num_images=num_images, num_classes=80, seed=num_images)
        write(folder, gt, results)
    return folder


BASELINE = "import json, sys, numpy"

# cached bytecode, as for an installed package
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(code: str, folder: Path, *, stats: bool = True) -> tuple[float, list[float]]:
    """Wall time of one fresh process running ``code``, and the stats it printed."""
    start = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(folder / "ground_truth.json"),
            str(folder / "predictions.json"),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    )
    elapsed = time.perf_counter() - start
    return elapsed, json.loads(out.stdout.strip().splitlines()[-1]) if stats else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 200, 1000, 5000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--busy", action="store_true", help="spin one core in another process")
    args = parser.parse_args()
    if not have("faster_coco_eval"):
        print("faster-coco-eval is not installed: nothing to compare")
        return 0
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    rows = []
    try:
        for size in args.sizes:
            folder = dataset(size)
            ours, theirs, base = [], [], []
            run(IOUKIT, folder)  # warm-up: bytecode caches, the file system cache
            run(FASTER_COCO_EVAL, folder)
            for _ in range(args.rounds):
                t, a = run(IOUKIT, folder)
                ours.append(t)
                t, b = run(FASTER_COCO_EVAL, folder)
                theirs.append(t)
                base.append(run(BASELINE, folder, stats=False)[0])
            if max(abs(x - y) for x, y in zip(a, b, strict=True)) > 1e-12:
                print(f"{size} images: stats differ\n  ioukit {a}\n  faster-coco-eval {b}")
                return 1
            mine, ref = statistics.median(ours), statistics.median(theirs)
            numpy_time = statistics.median(base)
            own, ref_own = mine - numpy_time, ref - numpy_time
            rows.append(
                [
                    str(size),
                    fmt_time(mine),
                    fmt_time(ref),
                    f"{ref / mine:.2f}x",
                    fmt_time(numpy_time),
                    fmt_time(own),
                    fmt_time(ref_own),
                    f"{ref_own / own:.2f}x" if own > 0 else "-",
                ]
            )
    finally:
        if spinner is not None:
            spinner.kill()
    title = "COCO bbox, fresh process, JSON files -> 12 stats (median of alternating rounds)"
    if args.busy:
        title += ", another process spinning on a core"
    header = ["images", "ioukit", "faster-coco-eval", "ratio", "import numpy"]
    header += ["ioukit own", "faster-coco-eval own", "own ratio"]
    print_table(title, header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
