"""Panoptic quality end to end: ioukit vs panopticapi (single process), vernier and hotcoco.

On a generated COCO panoptic set (``--images``, default 500 images of 640 x 480: stuff bands,
~15 thing ellipses of 8 categories, some crowd, VOID rectangles; predictions that shift, drop,
relabel and add segments), each tool runs in its own fresh subprocess from the two JSON files
and the PNG folders to PQ / SQ / RQ:

* panopticapi's ``pq_compute`` with its worker pool replaced by its own
  ``pq_compute_single_core`` (one process);
* ioukit on one thread (``workers=1``) and on two, with its default PNG decoder (pyspng when
  installed) and with Pillow's (``decoder="pillow"``, the fallback);
* vernier 0.5 (``vernier.panoptic``, ``parity_mode="strict"``): it reads no COCO panoptic
  files, so the PNGs go through its ``decode_label_map_png`` (Pillow) into
  ``Dataset.from_arrays`` / ``Predictions.from_arrays``; its kernel runs on its own threads;
* hotcoco 1.3 (``hotcoco.panoptic.pq_compute``, panopticapi's call; its own compiled PNG
  decoder, on its own threads: rayon's default pool, and one thread with
  ``RAYON_NUM_THREADS=1``).

Every per-class PQ / SQ / RQ is compared with panopticapi's (with ioukit's when panopticapi
is not importable; printed: the largest difference), then times and ratios are printed
(peer time / ioukit time, > 1 means ioukit is faster; CPU ratios are the ones to trust on a
loaded machine, and the multi-threaded peers' wall time depends on idle cores).

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/bench_panoptic.py --rounds 3 \
        --panopticapi-python /tmp/pqvenv/bin/python
    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/bench_panoptic.py --images 100

panopticapi-lite pins NumPy < 2 (and vernier's pyarrow needs NumPy 2), so panopticapi may run
from an interpreter of its own (``--panopticapi-python``: a venv made with ``pip install
--group panopticapi``); it is skipped when not importable. Data sets are generated once into
``$TMPDIR/ioukit-bench/``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np

from _compare import cpu_seconds, peak_mb
from _timing import fmt_time, have, print_table

H, W = 480, 640
THINGS = list(range(1, 9))
STUFF = list(range(20, 26))
# tool -> (module it needs, ioukit's options or the environment of the peer's process)
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "ioukit": ("ioukit", {"workers": 1}),
    "ioukit (2 threads)": ("ioukit", {"workers": 2}),
    "ioukit (Pillow)": ("ioukit", {"workers": 1, "decoder": "pillow"}),
    "ioukit (Pillow, 2 threads)": ("ioukit", {"workers": 2, "decoder": "pillow"}),
    "panopticapi": ("panopticapi", {}),
    "vernier": ("vernier", {}),
    "hotcoco": ("hotcoco", {}),
    "hotcoco (1 thread)": ("hotcoco", {"RAYON_NUM_THREADS": "1"}),
}


def _encode(ids: np.ndarray) -> np.ndarray:
    return np.stack([ids & 255, (ids >> 8) & 255, (ids >> 16) & 255], axis=-1).astype(np.uint8)


def _ellipse(rng: np.random.Generator) -> tuple[slice, slice, np.ndarray]:
    """A random ellipse as (rows, cols, mask of its bounding box)."""
    ry, rx = rng.uniform(8, 90), rng.uniform(8, 90)
    cy, cx = rng.uniform(0, H), rng.uniform(0, W)
    y0, y1 = int(max(0, cy - ry)), int(min(H, cy + ry + 1))
    x0, x1 = int(max(0, cx - rx)), int(min(W, cx + rx + 1))
    yy, xx = np.mgrid[y0:y1, x0:x1]
    return slice(y0, y1), slice(x0, x1), ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1


def _image(rng: np.random.Generator, next_id: list[int]) -> tuple[Any, ...]:
    def new() -> int:  # ids spread over the 24 bits, unique within the image
        next_id[0] += int(rng.integers(1, 200_000))
        return next_id[0]

    gt = np.zeros((H, W), dtype=np.int64)
    gt_seg: dict[int, tuple[int, int]] = {}
    cuts = np.sort(rng.integers(0, H, 3))
    for rows in np.split(np.arange(H), cuts):
        if rows.size:
            sid = new()
            gt_seg[sid] = (int(rng.choice(STUFF)), 0)
            gt[rows] = sid
    for _ in range(rng.integers(8, 22)):
        sid = new()
        gt_seg[sid] = (int(rng.choice(THINGS)), int(rng.random() < 0.1))
        ys, xs, m = _ellipse(rng)
        gt[ys, xs][m] = sid
    for _ in range(rng.integers(0, 4)):
        y, x = rng.integers(0, H), rng.integers(0, W)
        gt[y : y + rng.integers(5, 60), x : x + rng.integers(5, 60)] = 0
    pred = gt.copy()
    pred_seg: dict[int, int] = {}
    relabel = {}
    for sid, (cat, _) in gt_seg.items():
        pid = new()
        relabel[sid] = pid
        pred_seg[pid] = cat if rng.random() < 0.9 else int(rng.choice(THINGS + STUFF))
    lut_keys = np.array(list(relabel), dtype=np.int64)
    order = np.argsort(lut_keys)
    values = np.array(list(relabel.values()), dtype=np.int64)[order]
    nz = pred > 0
    pred[nz] = values[np.searchsorted(lut_keys[order], pred[nz])]
    for sid, (cat, _) in gt_seg.items():  # things move by a few pixels, some vanish
        if cat in THINGS:
            m = gt == sid
            dy, dx = rng.integers(-6, 7, size=2)
            pred[np.roll(m, (dy, dx), axis=(0, 1))] = relabel[sid] if rng.random() > 0.1 else 0
    for _ in range(rng.integers(0, 4)):
        pid = new()
        pred_seg[pid] = int(rng.choice(THINGS))
        ys, xs, m = _ellipse(rng)
        pred[ys, xs][m] = pid
    gt_present, pred_present = set(np.unique(gt).tolist()), set(np.unique(pred).tolist())
    return (
        gt,
        {k: v for k, v in gt_seg.items() if k in gt_present},
        pred,
        {k: v for k, v in pred_seg.items() if k in pred_present},
    )


def dataset(num_images: int) -> Path:
    """Folder with gt.json, gt/, pred.json, pred/ (generated once)."""
    from PIL import Image

    folder = Path(tempfile.gettempdir()) / "ioukit-bench" / f"panoptic_v2_{num_images}"
    if (folder / "pred.json").exists():
        return folder
    print(f"generating {folder} ...", flush=True)
    (folder / "gt").mkdir(parents=True, exist_ok=True)
    (folder / "pred").mkdir(exist_ok=True)
    rng = np.random.default_rng(num_images)
    images, gt_anns, pred_anns = [], [], []
    next_id = [0]
    for i in range(num_images):
        next_id[0] = 0
        gt, gt_seg, pred, pred_seg = _image(rng, next_id)
        name = f"{i:012d}.png"
        Image.fromarray(_encode(gt)).save(folder / "gt" / name)
        Image.fromarray(_encode(pred)).save(folder / "pred" / name)
        images.append({"id": i, "file_name": name[:-3] + "jpg", "width": W, "height": H})
        gt_info = [
            {"id": s, "category_id": c, "iscrowd": crowd, "area": int((gt == s).sum())}
            for s, (c, crowd) in gt_seg.items()
        ]
        gt_anns.append({"image_id": i, "file_name": name, "segments_info": gt_info})
        pred_info = [{"id": s, "category_id": c} for s, c in pred_seg.items()]
        pred_anns.append({"image_id": i, "file_name": name, "segments_info": pred_info})
    categories = [{"id": c, "name": f"thing{c}", "isthing": 1} for c in THINGS]
    categories += [{"id": c, "name": f"stuff{c}", "isthing": 0} for c in STUFF]
    (folder / "gt.json").write_text(
        json.dumps({"images": images, "annotations": gt_anns, "categories": categories})
    )
    (folder / "pred.json").write_text(json.dumps({"annotations": pred_anns}))
    return folder


def _values(results: dict[str, Any]) -> list[float]:
    """All / Things / Stuff and per-class PQ, SQ, RQ as one list (category order)."""
    out = [results[g][k] for g in ("All", "Things", "Stuff") for k in ("pq", "sq", "rq")]
    for cat in sorted(results["per_class"], key=int):
        out += [results["per_class"][cat][k] for k in ("pq", "sq", "rq")]
    return [float(v) for v in out]


def _vernier(folder: Path) -> dict[str, Any]:
    """vernier 0.5: decode every PNG with its ``decode_label_map_png``, build its datasets from
    the arrays (it reads no COCO panoptic files itself), evaluate with ``parity_mode="strict"``
    (bit-exact panopticapi) and return panopticapi's dict shape."""
    from vernier import panoptic

    gt_doc = json.loads((folder / "gt.json").read_bytes())
    pred_doc = json.loads((folder / "pred.json").read_bytes())

    def side(doc: dict[str, Any], png: Path) -> tuple[dict[int, Any], bytes]:
        maps = {a["image_id"]: panoptic.decode_label_map_png(png / a["file_name"])
                for a in doc["annotations"]}  # fmt: skip
        infos = {str(a["image_id"]): a["segments_info"] for a in doc["annotations"]}
        return maps, json.dumps(infos).encode()

    gt_maps, gt_infos = side(gt_doc, folder / "gt")
    pred_maps, pred_infos = side(pred_doc, folder / "pred")
    data = panoptic.Dataset.from_arrays(
        gt_maps, gt_infos, json.dumps(gt_doc["categories"]).encode()
    )
    preds = panoptic.Predictions.from_arrays(pred_maps, pred_infos)
    summary = panoptic.Evaluator(parity_mode="strict").evaluate(data, preds)
    out: dict[str, Any] = summary.to_dict()
    return out


def worker(tool: str, folder: Path) -> dict[str, Any]:
    """Run one tool (in this fresh process); timings, peak RSS and the values."""
    gt, pred = str(folder / "gt.json"), str(folder / "pred.json")
    t0 = time.perf_counter()
    if tool.startswith("ioukit"):
        from ioukit.panoptic import panoptic_quality

        t1 = time.perf_counter()
        result = panoptic_quality(gt, pred, **TOOLS[tool][1]).to_dict()
    elif tool == "vernier":
        result = _vernier(folder)
        t1 = t0  # its import is part of the run (decoding goes through vernier.panoptic)
    elif tool.startswith("hotcoco"):
        from hotcoco import panoptic

        t1 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            result = panoptic.pq_compute(gt, pred)
    else:
        from panopticapi import evaluation

        def single(matched: list[Any], gt_dir: str, pred_dir: str, cats: dict[int, Any]) -> Any:
            return evaluation.pq_compute_single_core(0, matched, gt_dir, pred_dir, cats)

        evaluation.pq_compute_multi_core = single  # one process, as ioukit
        t1 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            result = evaluation.pq_compute(gt, pred)
    t2 = time.perf_counter()
    return {
        "total": t2 - t0,
        "run": t2 - t1,
        "cpu": cpu_seconds(),
        "peak_mb": peak_mb(),
        "values": _values(result),
    }


def run_tool(tool: str, folder: Path, python: str) -> dict[str, Any] | None:
    env = None if tool.startswith("ioukit") else {**os.environ, **TOOLS[tool][1]}
    proc = subprocess.run(
        [python, __file__, "--worker", tool, str(folder)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        print(f"{tool} failed:\n{proc.stderr[-2000:]}")
        return None
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _importable(module: str, python: str) -> bool:
    if python == sys.executable:
        return have(module)
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", probe], check=False).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds (medians)")
    parser.add_argument(
        "--panopticapi-python",
        metavar="PYTHON",
        help="interpreter that runs panopticapi (panopticapi-lite pins NumPy < 2, vernier's "
        "pyarrow needs NumPy 2: e.g. a venv made with `pip install --group panopticapi`); "
        "default: this one",
    )
    parser.add_argument(
        "--tools",
        help=f"comma-separated subset of the tools (default: all of {', '.join(TOOLS)})",
    )
    parser.add_argument("--worker", nargs=2, metavar=("TOOL", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return
    if not have("PIL"):
        print("Pillow is not installed: nothing to read the PNGs with")
        return
    folder = dataset(args.images)
    pythons = {t: sys.executable for t in TOOLS}
    if args.panopticapi_python:
        pythons["panopticapi"] = args.panopticapi_python
    wanted = list(TOOLS) if not args.tools else [t.strip() for t in args.tools.split(",")]
    unknown = [t for t in wanted if t not in TOOLS]
    if unknown:
        parser.error(f"--tools: unknown {unknown}; expected some of {list(TOOLS)}")
    tools = [t for t in wanted if _importable(TOOLS[t][0], pythons[t])]
    if not have("pyspng"):
        print("pyspng is not installed: ioukit's default decoder is Pillow here")
    if "panopticapi" not in tools:
        print("skipping panopticapi: not importable (pip install panopticapi-lite)")
    rounds: list[dict[str, dict[str, Any]]] = []
    for _ in range(args.rounds):
        results = {}
        for tool in tools:
            print(f"running {tool} on {args.images} images ...", flush=True)
            r = run_tool(tool, folder, pythons[tool])
            if r is not None:
                results[tool] = r
        rounds.append(results)
    last = rounds[-1]
    ref = last.get("panopticapi")
    check = ref or last.get("ioukit")  # the values are checked against panopticapi, else ioukit
    rows = []
    for tool, r in last.items():
        ratio = "-" if ref is None else f"{ref['total'] / r['total']:.1f}x"
        cpu_ratio = "-" if ref is None else f"{ref['cpu'] / r['cpu']:.1f}x"
        diff = (
            max(abs(a - b) for a, b in zip(r["values"], check["values"], strict=True))
            if check
            else float("nan")
        )
        rows.append(
            [tool, fmt_time(r["total"]), fmt_time(r["run"]), fmt_time(r["cpu"]),
             f"{r['peak_mb']:.0f} MB", ratio, cpu_ratio, f"{diff:.1e}"]
        )  # fmt: skip
    print_table(
        f"COCO panoptic PQ, JSON + PNG folders -> PQ/SQ/RQ ({args.images} images {W}x{H})",
        ["tool", "total (fresh process)", "without import", "CPU", "peak RSS",
         "panopticapi / tool", "CPU ratio",
         f"max |value diff| vs {'panopticapi' if ref else 'ioukit'}"],
        rows,
    )  # fmt: skip
    _medians(rounds, tools)


def _medians(rounds: list[dict[str, dict[str, Any]]], tools: list[str]) -> None:
    """Median ratios over the alternating rounds: each peer's time / ioukit's (wall and CPU),
    for ioukit on one thread and on its threads."""
    if len(rounds) < 2:
        return

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    for mine in (t for t in tools if t.startswith("ioukit")):
        for peer in (t for t in tools if not t.startswith("ioukit")):
            both = [r for r in rounds if mine in r and peer in r]
            if not both:
                continue
            wall = median([r[peer]["total"] / r[mine]["total"] for r in both])
            cpu = median([r[peer]["cpu"] / r[mine]["cpu"] for r in both])
            print(f"{peer} / {mine}: median over {len(both)} rounds: wall {wall:.2f}x, "
                  f"CPU {cpu:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
