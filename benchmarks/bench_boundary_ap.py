"""Boundary AP end to end (``iou_type="boundary"``): ioukit vs faster-coco-eval, vernier and
ultrafast-pycocotools, each in fresh processes from two JSON files to the 12 stats (#26).

Run with ``python benchmarks/bench_boundary_ap.py [--quick] [--rounds N]``. Two sets: the COCO
API's 100-image val2014 segm fixture (tests/data/conformance/coco/val2014_100) and a generated
500-image set (``synthetic.make_detections`` + ``add_masks``: polygon ground truth, RLE results,
640 x 480). Before timing, each tool's stats are compared with ioukit's under the matching
``compat`` (faster-coco-eval: ``"faster_coco_eval"``, ultrafast: ``"ultrafast"``; vernier: the
default) and the largest difference is printed. Rounds alternate the tools; the table gives
medians of wall, CPU (user + system, all threads) and peak RSS, and each tool's own part
(minus a ``python -c "import json, numpy"`` baseline) over ioukit's. faster-coco-eval computes
boundaries in up to 4 processes (its ``boundary_cpu_count``); CPU time counts them all only if
they are children that were waited for, so its CPU figure is a lower bound.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

from _compare import BASELINE_PROGRAM, PEER_HEADER, fresh_process, peer_rows, thread_env
from _timing import have, print_table

QUICK = "--quick" in sys.argv
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "tests" / "data" / "conformance" / "coco" / "val2014_100"

PROGRAMS = {
    "ioukit": """
import json, sys
import ioukit
gt, dt, compat = sys.argv[1:4]
r = ioukit.evaluate(gt, dt, iou_type="boundary", compat=None if compat == "-" else compat)
print(json.dumps(list(r.stats.values())))
""",
    "faster-coco-eval": """
import contextlib, io, json, sys
from faster_coco_eval import COCO, COCOeval_faster
gt_file, dt_file = sys.argv[1:3]
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(gt_file)
    dt = gt.loadRes(dt_file)
    e = COCOeval_faster(gt, dt, "boundary")
    e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats]))
""",
    "ultrafast": """
import contextlib, io, json, sys
from ultrafast_pycocotools import COCO, COCOeval
gt_file, dt_file = sys.argv[1:3]
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(gt_file)
    dt = gt.loadRes(dt_file)
    e = COCOeval(gt, dt, "boundary")
    e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats]))
""",
    "vernier": """
import json, sys
from vernier.instance import Boundary, Evaluator
gt_file, dt_file = sys.argv[1:3]
with open(gt_file, "rb") as f:
    gt = f.read()
with open(dt_file, "rb") as f:
    dt = f.read()
s = Evaluator(iou=Boundary(), parity_mode="strict").evaluate(gt, dt)
print(json.dumps([float(x) for x in s.stats]))
""",
}
MODULES = {"faster-coco-eval": "faster_coco_eval", "ultrafast": "ultrafast_pycocotools"}
MODULES["vernier"] = "vernier"
COMPAT = {"faster-coco-eval": "faster_coco_eval", "ultrafast": "ultrafast", "vernier": "-"}


def generated_set(folder: Path, n_images: int) -> tuple[str, str]:
    """A COCO-like segm set of ``n_images`` 640 x 480 images, written to ``folder``."""
    from ioukit import synthetic

    gt, res = synthetic.make_detections(n_images, seed=3, fp_per_image=20.0)
    for im in gt["images"]:
        im.setdefault("height", 480)
        im.setdefault("width", 640)
    gt, res = synthetic.add_masks(gt, res)
    gt_file, dt_file = folder / "gt.json", folder / "res.json"
    gt_file.write_text(json.dumps(gt))
    dt_file.write_text(json.dumps(res))
    return str(gt_file), str(dt_file)


def with_boxes(dt: str, folder: Path) -> str:
    """``dt`` with each result's ``bbox`` (from its RLE): vernier's reader needs one, the others
    recompute it."""
    from ioukit import masks

    res = json.loads(Path(dt).read_text())
    boxes = masks.to_bbox([r["segmentation"] for r in res]) if res else []
    for r, b in zip(res, boxes, strict=True):
        r["bbox"] = [float(v) for v in b]
    out = folder / "res_boxes.json"
    out.write_text(json.dumps(res))
    return str(out)


def compare(name: str, gt: str, dt: str, tools: list[str]) -> None:
    env = thread_env("all")
    diffs = []
    for tool in tools:
        ours = fresh_process(PROGRAMS["ioukit"], [gt, dt, COMPAT[tool]], env)["stats"]
        theirs = fresh_process(PROGRAMS[tool], [gt, dt], env)["stats"][:12]
        diffs.append(
            [
                tool,
                f"compat={COMPAT[tool]}",
                f"{max(abs(a - b) for a, b in zip(ours, theirs, strict=True)):.1e}",
            ]
        )
    print_table(f"{name}: max |stat difference| to ioukit", ["tool", "ioukit", "max diff"], diffs)
    programs = {"ioukit": PROGRAMS["ioukit"], **{t: PROGRAMS[t] for t in tools}}
    programs["import json, numpy"] = BASELINE_PROGRAM
    names = list(programs)
    samples: dict[str, list[dict[str, float]]] = {t: [] for t in names}
    for i in range(ROUNDS):
        for t in names[i % len(names) :] + names[: i % len(names)]:
            args = [gt, dt, "faster_coco_eval"] if t == "ioukit" else [gt, dt]
            samples[t].append(fresh_process(programs[t], args, env))
    medians = {
        t: {k: statistics.median(s[k] for s in runs) for k in ("wall", "cpu", "rss")}
        for t, runs in samples.items()
    }
    print_table(f"{name}: {ROUNDS} alternating rounds, medians", PEER_HEADER, peer_rows(medians))


def main() -> None:
    tools = [t for t in ("faster-coco-eval", "vernier", "ultrafast") if have(MODULES[t])]
    with tempfile.TemporaryDirectory() as folder:
        compare(
            "COCO val2014 100-image segm fixture",
            str(FIXTURE / "instances_val2014_100.json"),
            with_boxes(str(FIXTURE / "instances_val2014_fakesegm100_results.json"), Path(folder)),
            tools,
        )
    with tempfile.TemporaryDirectory() as folder:
        n = 100 if QUICK else 500
        gt, dt = generated_set(Path(folder), n)
        compare(f"generated {n}-image segm set", gt, with_boxes(dt, Path(folder)), tools)


if __name__ == "__main__":
    main()
