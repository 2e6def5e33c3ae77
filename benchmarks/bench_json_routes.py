"""Do the JSON reading routes pay for themselves? (#22 item 8)

Measures, on generated COCO-style files:

* the compiled results scanner's throughput on a ~30 MB results file (the memory map route);
* ``number_rows`` (the compiled column copy from parsed records) against the general path
  it short-cuts (``np.fromiter`` after a type check), on a parsed ground truth and on an
  in-memory results list;
* the chunked route (~1 MB pieces parsed one at a time, for files the scanner leaves to the
  strict parser: segm results, a shape it does not take) against one whole parse: time and
  peak memory, each in a fresh process.

Usage: ``python benchmarks/bench_json_routes.py [records]`` (default 200 000).
"""

from __future__ import annotations

import json
import mmap
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ioukit._kernels.coco_json import scan_results
from ioukit.io import coco


def _make(folder: Path, n: int) -> None:
    rng = random.Random(0)
    images = [{"id": i, "width": 640, "height": 480} for i in range(1, 5001)]
    categories = [{"id": c, "name": f"c{c}"} for c in range(1, 81)]

    def box() -> list[float]:
        return [rng.uniform(0, 500), rng.uniform(0, 400), rng.uniform(1, 100), rng.uniform(1, 80)]

    annotations = [
        {"id": k + 1, "image_id": rng.randint(1, 5000), "category_id": rng.randint(1, 80),
         "bbox": (b := box()), "area": b[2] * b[3], "iscrowd": 0}
        for k in range(n)
    ]  # fmt: skip
    doc = {"images": images, "categories": categories, "annotations": annotations}
    (folder / "gt.json").write_text(json.dumps(doc))
    doc["annotations"] = []
    (folder / "gt_empty.json").write_text(json.dumps(doc))
    results = [
        {"image_id": rng.randint(1, 5000), "category_id": rng.randint(1, 80), "bbox": box(),
         "score": rng.random()}
        for _ in range(n)
    ]  # fmt: skip
    (folder / "bbox.json").write_text(json.dumps(results))
    # an escaped key: valid JSON the scanner leaves to the strict parser (the chunked route)
    text = json.dumps(results).replace('"score"', '"sc\\u006fre"', 1)
    (folder / "bbox_fallback.json").write_text(text)
    for r in results:
        r["segmentation"] = {"size": [480, 640], "counts": "PPYo0" + "a1" * rng.randint(5, 40)}
    (folder / "segm.json").write_text(json.dumps(results))


def _best(fn: Any, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _scan_seconds(data: Any) -> float:
    buf = np.frombuffer(data, np.uint8)
    cap = len(buf) // 57 + 1
    out = [np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty((cap, 4)), np.empty(cap)]
    return _best(lambda: scan_results(buf, *out), 15)


def _scanner(folder: Path) -> None:
    path = folder / "bbox.json"
    size = path.stat().st_size
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        seconds = _scan_seconds(m)
    rate = size / seconds / 1e9
    print(f"scanner: {size / 1e6:.0f} MB in {seconds * 1e3:.1f} ms ({rate:.2f} GB/s)")


def _number_rows(folder: Path) -> None:
    doc = json.loads((folder / "gt.json").read_text())
    records = json.loads((folder / "bbox.json").read_text())
    gt = coco.read_coco_ground_truth(doc)
    fast_gt = _best(lambda: coco.read_coco_ground_truth(doc))
    fast_res = _best(lambda: coco.read_coco_results(records, gt))
    rows, column = coco._number_rows, coco._number_column
    coco._number_rows = lambda *a, **k: None  # type: ignore[assignment]
    coco._number_column = lambda *a, **k: None  # type: ignore[assignment]
    try:
        slow_gt = _best(lambda: coco.read_coco_ground_truth(doc))
        slow_res = _best(lambda: coco.read_coco_results(records, gt))
    finally:
        coco._number_rows, coco._number_column = rows, column
    n = len(records)
    print(
        f"number_rows: parsed ground truth ({n} annotations) {fast_gt * 1e3:.0f} ms vs "
        f"{slow_gt * 1e3:.0f} ms without ({slow_gt / fast_gt:.1f}x); results list "
        f"{fast_res * 1e3:.0f} ms vs {slow_res * 1e3:.0f} ms ({slow_res / fast_res:.1f}x)"
    )


_CHILD = """
import sys, time
from ioukit.io import coco


def peak_mib():  # this process's own peak (ru_maxrss would carry the parent's across exec)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


if sys.argv[1] == "whole":
    coco._array_chunks = lambda data: None
gt = coco.read_coco_ground_truth(sys.argv[2])
before = peak_mib()
start = time.perf_counter()
coco.read_coco_results(sys.argv[3], gt, iou_type=sys.argv[4])
seconds = time.perf_counter() - start
print(seconds, before, peak_mib())
"""


def _chunks(folder: Path) -> None:
    for name, iou_type in [("segm.json", "segm"), ("bbox_fallback.json", "bbox")]:
        figures = {}
        for route in ("chunked", "whole"):
            runs = []
            for _ in range(3):
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, route, str(folder / "gt_empty.json"),
                     str(folder / name), iou_type],
                    capture_output=True, text=True, check=True,
                ).stdout.split()  # fmt: skip
                runs.append((float(out[0]), float(out[1]), float(out[2])))
            figures[route] = tuple(min(r[k] for r in runs) for k in range(3))
        size = (folder / name).stat().st_size / 1e6
        (tc, base, mc), (tw, _, mw) = figures["chunked"], figures["whole"]
        print(
            f"chunked route, {name} ({size:.0f} MB): {tc * 1e3:.0f} ms, peak RSS {mc:.0f} MB; "
            f"one whole parse: {tw * 1e3:.0f} ms, peak RSS {mw:.0f} MB ({base:.0f} MB before "
            "the read)"
        )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _make(folder, n)
        _scanner(folder)
        _number_rows(folder)
        _chunks(folder)


if __name__ == "__main__":
    main()
