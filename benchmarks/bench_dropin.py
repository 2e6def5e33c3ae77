"""The call patterns frameworks use, through pycocotools and the drop-ins that replace it (#24).

Three patterns, each in fresh interpreter processes on the same files (a COCO-like set from
:func:`ioukit.synthetic.make_detections`, the generator of ``benchmarks/make_coco_like.py``):

* ``plain``: ``COCO(gt)``, ``loadRes(path)``, ``COCOeval(gt, dt, "bbox")``,
  ``evaluate / accumulate / summarize``, through each package's pycocotools-compatible module
  (``init_as_pycocotools()`` of hotcoco, ultrafast-pycocotools and ioukit; faster-coco-eval's
  ``COCO`` / ``COCOeval_faster``; pycocotools itself);
* ``merge``: torchvision's ``references/detection/coco_eval.py`` (and DETR's copy):
  ``--procs`` ranks each evaluate their interleaved share of the images in batches of
  ``--batch`` (``loadRes``, ``params.imgIds``, ``evaluate()``, ``np.asarray(evalImgs)``
  reshaped), the per-rank arrays are pickled and unpickled (``all_gather``), merged with
  ``np.unique``, assigned to ``evalImgs`` / ``_paramsEval``, then ``accumulate / summarize``;
* ``torchmetrics``: ``MeanAveragePrecision`` update in batches of ``--batch`` images, then
  compute, with ``class_metrics`` off and on: torchmetrics 1.9 with its fastest backend
  (``backend="faster_coco_eval"``) against ``ioukit.compat.torchmetrics``; timed from the
  metric's construction to ``compute()``'s result (torch, torchmetrics and the inputs are
  ready before, as in a training loop; ioukit's pipeline modules load inside). torchvision
  is not installed here: torchmetrics needs it for ``box_convert`` only, which the benchmark
  supplies (torchvision's formula, as the tests do).

Each figure is the median over ``--runs`` rounds, packages alternating within a round. Wall
and CPU are measured inside the process from before the first import of the package to the
last result (so the import is included; torchmetrics: see above), peak RSS is the process'
``VmHWM`` (``ru_maxrss`` would keep the forking parent's peak). The ratios
are to ioukit (``>1``: ioukit is that many times faster); the machine load (``uptime``) is
printed with each table.

Run::

    python benchmarks/bench_dropin.py                      # every pattern, default sizes
    python benchmarks/bench_dropin.py --pattern plain --images 500 5000
    python benchmarks/bench_dropin.py --pattern merge --images 300 5000
    python benchmarks/bench_dropin.py --pattern torchmetrics --images 1000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import have, print_table

ROOT = Path(__file__).resolve().parent.parent

_HEAD = """
import contextlib, io, json, sys, time
sys.path.insert(0, {src!r})
t0, c0 = time.perf_counter(), time.process_time()
"""
_TAIL = """
with open("/proc/self/status") as f:  # VmHWM: this program's peak (ru_maxrss keeps the
    rss = [int(l.split()[1]) for l in f if l.startswith("VmHWM")][0]  # parent's, forked)
print(json.dumps({{"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                   "rss": rss / 1024}}))
"""

PLAIN = """
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO({gt!r})
    dt = gt.loadRes({res!r})
    ev = COCOeval(gt, dt, "bbox")
    ev.evaluate(); ev.accumulate(); ev.summarize()
"""

MERGE = """
import copy, pickle
import numpy as np
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO({gt!r})
with open({res!r}) as f:
    by_image = {{}}
    for r in json.load(f):
        by_image.setdefault(r["image_id"], []).append(r)
ids = sorted(gt.getImgIds())
sent = []
for rank in range({procs}):
    mine = ids[rank::{procs}]  # DistributedSampler's interleaved shares
    ev = COCOeval(gt, iouType="bbox")
    rank_eval = ev if rank == 0 else None
    seen, parts = [], []
    for b in range(0, len(mine), {batch}):
        batch = mine[b : b + {batch}]
        results = [r for i in batch for r in by_image.get(i, ())]
        with contextlib.redirect_stdout(io.StringIO()):
            ev.cocoDt = COCO.loadRes(gt, results) if results else COCO()
            ev.params.imgIds = list(batch)
            ev.evaluate()
        seen.extend(ev.params.imgIds)
        parts.append(
            np.asarray(ev.evalImgs).reshape(-1, len(ev.params.areaRng), len(ev.params.imgIds))
        )
    if rank == 0:
        final = ev
    sent.append(pickle.dumps((seen, np.concatenate(parts, 2))))  # all_gather
received = [pickle.loads(s) for s in sent]
merged_ids = np.array([i for seen, _ in received for i in seen])
merged = np.concatenate([p for _, p in received], 2)
merged_ids, first = np.unique(merged_ids, return_index=True)
merged = merged[..., first]
final.evalImgs = list(merged.flatten())
final.params.imgIds = list(merged_ids)
final._paramsEval = copy.deepcopy(final.params)
with contextlib.redirect_stdout(io.StringIO()):
    final.accumulate()
    final.summarize()
"""

TORCHMETRICS = """
import torch
with open({gt!r}) as f:
    gt_json = json.load(f)
with open({res!r}) as f:
    res_json = json.load(f)
gts, dts = {{}}, {{}}
for a in gt_json["annotations"]:
    gts.setdefault(a["image_id"], []).append(a)
for r in res_json:
    dts.setdefault(r["image_id"], []).append(r)
def boxes(rows):
    b = torch.tensor([r["bbox"] for r in rows], dtype=torch.float32).reshape(-1, 4)
    return torch.cat([b[:, :2], b[:, :2] + b[:, 2:]], 1)
preds, target = [], []
for img in gt_json["images"]:
    g, d = gts.get(img["id"], []), dts.get(img["id"], [])
    preds.append({{"boxes": boxes(d), "scores": torch.tensor([r["score"] for r in d]),
                  "labels": torch.tensor([r["category_id"] for r in d], dtype=torch.long)}})
    target.append({{"boxes": boxes(g),
                   "labels": torch.tensor([r["category_id"] for r in g], dtype=torch.long),
                   "iscrowd": torch.tensor([r["iscrowd"] for r in g], dtype=torch.long),
                   "area": torch.tensor([r["area"] for r in g], dtype=torch.float32)}})
{imports}
import torchmetrics  # the training loop has imported it: from here on, timed
t0, c0 = time.perf_counter(), time.process_time()
metric = MeanAveragePrecision({kwargs})
for b in range(0, len(preds), {batch}):
    metric.update(preds[b : b + {batch}], target[b : b + {batch}])
out = metric.compute()
"""

_SHIM = """
import types
from torchmetrics.detection import mean_ap  # imported first: it sees no torchvision
MeanAveragePrecision = mean_ap.MeanAveragePrecision
def _box_convert(boxes, in_fmt, out_fmt):  # torchvision.ops.box_convert, xyxy -> xywh
    if in_fmt == out_fmt:
        return boxes.clone()
    x1, y1, x2, y2 = boxes.unbind(-1)
    return torch.stack((x1, y1, x2 - x1, y2 - y1), dim=-1)
tv, ops = types.ModuleType("torchvision"), types.ModuleType("torchvision.ops")
ops.box_convert = _box_convert
tv.ops = ops
sys.modules["torchvision"], sys.modules["torchvision.ops"] = tv, ops
mean_ap._TORCHVISION_AVAILABLE = True
"""

_PYCOCO = "from pycocotools.coco import COCO\nfrom pycocotools.cocoeval import COCOeval\n"
PACKAGES = {
    "ioukit.compat": ("ioukit", "from ioukit.compat import init_as_pycocotools\n"
                      "init_as_pycocotools()\n" + _PYCOCO),
    "hotcoco": ("hotcoco", "from hotcoco import init_as_pycocotools\ninit_as_pycocotools()\n"
                + _PYCOCO),
    "ultrafast-pycocotools": ("ultrafast_pycocotools",
                              "from ultrafast_pycocotools import init_as_pycocotools\n"
                              "init_as_pycocotools()\n" + _PYCOCO),
    "faster-coco-eval": ("faster_coco_eval", "from faster_coco_eval import COCO\n"
                         "from faster_coco_eval import COCOeval_faster as COCOeval\n"),
    "pycocotools": ("pycocotools", _PYCOCO),
}  # fmt: skip
MERGE_PACKAGES = ("ioukit.compat", "pycocotools")
TM_PACKAGES = {
    "ioukit.compat": "from ioukit.compat.torchmetrics import MeanAveragePrecision\n",
    "torchmetrics (faster_coco_eval)": _SHIM,
}


def _run(code: str) -> dict[str, float]:
    # byte-code caching on, as installed packages have it (for every package alike)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT,
        env=env,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def _program(pattern: str, package: str, gt: Path, res: Path, args: argparse.Namespace) -> str:
    head = _HEAD.format(src=str(ROOT / "src"))
    tail = _TAIL.format()
    if pattern == "torchmetrics":
        backend = "" if package == "ioukit.compat" else ', backend="faster_coco_eval"'
        kwargs = f"class_metrics={args.class_metrics}{backend}"
        body = TORCHMETRICS.format(
            gt=str(gt), res=str(res), imports=TM_PACKAGES[package], kwargs=kwargs,
            batch=args.batch,
        )  # fmt: skip
        return head + body + tail
    imports = PACKAGES[package][1]
    if pattern == "plain":
        body = PLAIN.format(gt=str(gt), res=str(res))
    else:
        body = MERGE.format(gt=str(gt), res=str(res), procs=args.procs, batch=args.batch)
    return head + imports + body + tail


def _load() -> str:
    return os.popen("uptime").read().strip().split("load average:")[-1].strip()


def _table(pattern: str, images: int, args: argparse.Namespace, tmp: Path) -> None:
    from ioukit import synthetic

    gt_json, res_json = synthetic.make_detections(images, seed=0)
    gt, res = tmp / f"gt_{images}.json", tmp / f"res_{images}.json"
    gt.write_text(json.dumps(gt_json, separators=(",", ":")))
    res.write_text(json.dumps(res_json, separators=(",", ":")))
    if pattern == "plain":
        names = [p for p, (module, _) in PACKAGES.items() if have(module)]
    elif pattern == "merge":
        names = [p for p in MERGE_PACKAGES if have(PACKAGES[p][0])]
    else:
        names = list(TM_PACKAGES) if have("torchmetrics") and have("faster_coco_eval") else []
    loads = [_load()]
    times: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    for _ in range(args.runs):  # packages alternate within each round
        for name in names:
            times[name].append(_run(_program(pattern, name, gt, res, args)))
    loads.append(_load())
    med = {n: {k: statistics.median(t[k] for t in times[n]) for k in ("wall", "cpu", "rss")}
           for n in names}  # fmt: skip
    ours = med["ioukit.compat"]
    rows = [
        [
            name,
            f"{m['wall']:.3f} s",
            f"{m['cpu']:.3f} s",
            f"{m['rss']:.0f} MB",
            f"{m['wall'] / ours['wall']:.1f}x",
            f"{m['cpu'] / ours['cpu']:.1f}x",
        ]
        for name, m in med.items()
    ]
    extra = {
        "plain": "",
        "merge": f", {args.procs} ranks, batches of {args.batch}",
        "torchmetrics": f", batches of {args.batch}, class_metrics={args.class_metrics}",
    }[pattern]
    print_table(
        f"{pattern} pattern, {images} images{extra}, median of {args.runs} fresh processes "
        f"(load before / after: {loads[0]} / {loads[1]})",
        ["package", "wall", "cpu", "peak RSS", "wall vs ioukit", "cpu vs ioukit"],
        rows,
    )


DEFAULTS = {"plain": [500, 5000], "merge": [300, 5000], "torchmetrics": [1000]}
BATCH = {"plain": 0, "merge": 2, "torchmetrics": 16}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pattern", choices=[*DEFAULTS, "all"], default="all")
    parser.add_argument("--images", type=int, nargs="+", default=None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--procs", type=int, default=2, help="merge: ranks")
    parser.add_argument("--batch", type=int, default=None, help="merge / torchmetrics")
    parser.add_argument(
        "--class-metrics", choices=["False", "True", "both"], default="both", help="torchmetrics"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    patterns = list(DEFAULTS) if args.pattern == "all" else [args.pattern]
    with tempfile.TemporaryDirectory() as tmp:
        for pattern in patterns:
            one = argparse.Namespace(**vars(args))
            one.batch = BATCH[pattern] if args.batch is None else args.batch
            for images in args.images or DEFAULTS[pattern]:
                if pattern == "torchmetrics":
                    choices = ["False", "True"] if args.class_metrics == "both" else None
                    for cm in choices or [args.class_metrics]:
                        one.class_metrics = cm
                        _table(pattern, images, one, Path(tmp))
                else:
                    _table(pattern, images, one, Path(tmp))


if __name__ == "__main__":
    main()
