"""The pycocotools call pattern (``COCO(gt)``, ``loadRes(path)``, ``evaluate / accumulate /
summarize``) through pycocotools, faster-coco-eval and ``ioukit.compat.pycocotools`` (#24).

Each figure is the median wall time over ``--runs`` fresh interpreter processes, measured
inside the process from before the first import to after ``summarize()``, on the same files:
the COCO API's 100-image val2014 fixture and a generated COCO-like set (``--images``, default
5 000, :func:`ioukit.synthetic.make_detections`). Prints the times and the ratios to ioukit.

Run: ``python benchmarks/bench_dropin.py [--runs N] [--images N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import have, print_table

ROOT = Path(__file__).resolve().parent.parent
VAL100 = ROOT / "tests" / "data" / "conformance" / "coco" / "val2014_100"

CODE = """
import contextlib, io, sys, time
t0 = time.perf_counter()
{imports}
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO({gt!r})
    dt = gt.loadRes({res!r})
    ev = COCOeval(gt, dt, "bbox")
    ev.evaluate(); ev.accumulate(); ev.summarize()
print(time.perf_counter() - t0)
"""

PACKAGES = {
    "pycocotools": "from pycocotools.coco import COCO\nfrom pycocotools.cocoeval import COCOeval",
    "faster-coco-eval": (
        "from faster_coco_eval import COCO\n"
        "from faster_coco_eval import COCOeval_faster as COCOeval"
    ),
    "ioukit.compat": (
        "from ioukit.compat.pycocotools.coco import COCO\n"
        "from ioukit.compat.pycocotools.cocoeval import COCOeval"
    ),
}
MODULES = {"pycocotools": "pycocotools", "faster-coco-eval": "faster_coco_eval"}


def _time(imports: str, gt: Path, res: Path, runs: int) -> float:
    code = CODE.format(imports=imports, gt=str(gt), res=str(res))
    env_path = str(ROOT / "src")
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {env_path!r})\n{code}"],
            check=True,
            capture_output=True,
            text=True,
        )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--images", type=int, default=5000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from ioukit import synthetic

    with tempfile.TemporaryDirectory() as tmp:
        gt, res = synthetic.make_detections(args.images, seed=0)
        gen_gt, gen_res = Path(tmp) / "gt.json", Path(tmp) / "res.json"
        gen_gt.write_text(json.dumps(gt))
        gen_res.write_text(json.dumps(res))
        sets = {
            "val2014 100 images": (
                VAL100 / "instances_val2014_100.json",
                VAL100 / "instances_val2014_fakebbox100_results.json",
            ),
            f"generated {args.images} images": (gen_gt, gen_res),
        }
        rows = []
        for name, (g, r) in sets.items():
            ours = _time(PACKAGES["ioukit.compat"], g, r, args.runs)
            for package, imports in PACKAGES.items():
                if package in MODULES and not have(MODULES[package]):
                    continue
                t = ours if package == "ioukit.compat" else _time(imports, g, r, args.runs)
                rows.append([name, package, f"{t:.3f} s", f"{t / ours:.1f}x"])
    print_table("pycocotools call pattern, fresh processes", ["set", "package", "time",
                "vs ioukit"], rows)  # fmt: skip


if __name__ == "__main__":
    main()
