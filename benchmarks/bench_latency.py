"""A whole evaluation as a user runs it, one fresh process per call: ioukit beside the Rust
evaluators (hotcoco, ultrafast-pycocotools, vernier) and faster-coco-eval (#9, #27).

For each family and size, every tool runs from the same two JSON files to its stats in a fresh
``python -c`` process (each tool's documented pycocotools-compatible route: ``_compare.PROGRAMS``),
and so does ``python -c "import json, numpy"``, which every tool pays. The stats of every tool
are checked against ioukit's first (identical to 1e-12, else the script exits 1); then
``--rounds`` rounds (default 5) run every process once each, the order rotated every round,
and the table gives the medians: wall time, CPU time (user + system, all threads) and peak RSS
of the whole process (from ``wait4``), each tool's own part (its process minus the baseline's)
and each tool's own part and RSS over ioukit's (> 1: ioukit is faster / smaller).

Families: ``bbox`` on the COCO-like sets (``make_coco_like.py``, 80 classes) at 20 / 200 /
1 000 / 5 000 images; ``segm`` (polygon GT, RLE results: ellipses in the boxes of the same
generator) and ``keypoints`` (``make_keypoints_like.py``) at 500 images; ``lvis`` (bbox,
lvis-api's ``lvis_val_100.json`` + 250 results per image, ``bench_lvis.py``'s set) against
hotcoco, ultrafast-pycocotools and faster-coco-eval (vernier's Python API has no LVIS route).
Data sets are generated once into ``$TMPDIR/ioukit-bench/``, in a child process (Linux keeps a
parent's peak RSS across fork and exec). Processes may write and use cached bytecode.

The Objects365-scale cell (80 000 images, 365 classes, 1.24 M GT, 1.42 M predictions, about
260 MB of JSON; generating it takes a few minutes, each tool about 10 s and 1 GB) runs only on
demand: ``--objects365`` or ``IOUKIT_BENCH_OBJECTS365=1``, without faster-coco-eval.

    .venv-bench/bin/python benchmarks/bench_latency.py                    # make bench's rows
    .venv-bench/bin/python benchmarks/bench_latency.py --family bbox --sizes 20 200 --rounds 9
    .venv-bench/bin/python benchmarks/bench_latency.py --family segm keypoints --mask-sizes 5000
    .venv-bench/bin/python benchmarks/bench_latency.py --threads 1        # every pool at 1 thread
    .venv-bench/bin/python benchmarks/bench_latency.py --objects365 --family bbox --sizes
    .venv-bench/bin/python benchmarks/bench_latency.py --busy    # another process spins a core
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _compare import FAMILIES, N_STATS, PEER_HEADER, PEERS, alternating_rounds, peer_rows
from _timing import have, print_table

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = Path(tempfile.gettempdir()) / "ioukit-bench"
LVIS_GT = ROOT / "tests" / "data" / "conformance" / "lvis" / "lvis_val_100.json"


def _generate(kind: str, num_images: int, folder: Path) -> None:
    """Write ground_truth.json and predictions.json of one set (run in a child process)."""
    from make_coco_like import make_coco_like, make_objects365_like, write

    if kind == "bbox":
        gt, results = make_coco_like(num_images=num_images, num_classes=80, seed=num_images)
    elif kind == "objects365":
        gt, results = make_objects365_like()
    elif kind == "segm":
        from bench_coco import segm_dataset

        gt, results = segm_dataset(num_images)
    else:
        raise ValueError(kind)
    write(folder, gt, results)


def files(family: str, size: int) -> tuple[str, str]:
    """The ground-truth and prediction files of one cell (generated once)."""
    if family == "keypoints":
        folder = CACHE / f"keypoints_like_{size}"
        if not (folder / "predictions.json").exists():
            print(f"generating {folder} ...", flush=True)
            subprocess.run(
                [sys.executable, str(HERE / "make_keypoints_like.py"), "--images", str(size),
                 "--seed", str(size), "--out", str(folder)],
                check=True,
            )  # fmt: skip
        return str(folder / "ground_truth.json"), str(folder / "predictions.json")
    if family == "lvis":
        folder = CACHE / f"lvis_{size}"
        if not (folder / "results.json").exists():
            print(f"generating {folder} ...", flush=True)
            code = f"import bench_lvis; bench_lvis.dataset({size})"
            subprocess.run([sys.executable, "-c", code], check=True, cwd=HERE)
        return str(LVIS_GT), str(folder / "results.json")
    name = {"bbox": "coco_like", "segm": "segm_like", "objects365": "objects365_like"}[family]
    folder = CACHE / (name if family == "objects365" else f"{name}_{size}")
    if not (folder / "predictions.json").exists():
        print(f"generating {folder} ...", flush=True)
        subprocess.run(
            [sys.executable, __file__, "--generate", family, str(size), str(folder)], check=True
        )
    return str(folder / "ground_truth.json"), str(folder / "predictions.json")


def cell(family: str, size: int, args: argparse.Namespace, threads: str) -> bool:
    """Run and print one family x size cell; False when the stats differ."""
    gt, dt = files(family, size)
    iou_family = "bbox" if family == "objects365" else family
    tools = [t for t in PEERS if iou_family in FAMILIES[t] and have(PEERS[t])]
    tools = [t for t in tools if t not in args.skip]
    if family == "objects365":
        tools = [t for t in tools if t != "faster-coco-eval"]
    if "ioukit" not in tools:
        print("ioukit is not importable")
        return False
    print(f"{family} {size}: {', '.join(tools)} ...", flush=True)
    medians = alternating_rounds(tools, gt, dt, iou_family, rounds=args.rounds, threads=threads)
    if medians is None:
        return False
    what = {
        "bbox": f"COCO bbox, {size} images",
        "objects365": "COCO bbox, Objects365 scale (80 000 images, 365 classes)",
        "segm": f"COCO segm, {size} images (polygon GT, RLE results)",
        "keypoints": f"COCO keypoints, {size} crowded images",
        "lvis": f"LVIS bbox, lvis_val_100 + {size} results per image",
    }[family]
    thread_note = "one thread" if threads == "1" else f"all {os.cpu_count()} cores"
    print_table(
        f"{what}: JSON files -> {N_STATS[iou_family]} stats, fresh processes, {thread_note}, "
        f"median of {args.rounds} alternating rounds",
        PEER_HEADER,
        peer_rows(medians),
    )
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generate", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument(
        "--family", nargs="+", default=["bbox", "segm", "keypoints", "lvis"],
        choices=["bbox", "segm", "keypoints", "lvis"],
    )  # fmt: skip
    parser.add_argument("--sizes", type=int, nargs="*", default=[20, 200, 1000, 5000])
    parser.add_argument("--mask-sizes", type=int, nargs="+", default=[500], help="segm, keypoints")
    parser.add_argument("--lvis-per-image", type=int, nargs="+", default=[250])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", choices=["all", "1", "both"], default="all")
    parser.add_argument("--skip", action="append", default=[], choices=sorted(PEERS))
    parser.add_argument(
        "--objects365", action="store_true",
        help="also the 80 000-image cell (or IOUKIT_BENCH_OBJECTS365=1; minutes)",
    )  # fmt: skip
    parser.add_argument("--busy", action="store_true", help="spin one core in another process")
    args = parser.parse_args()
    if args.generate:
        kind, size, folder = args.generate
        _generate(kind, int(size), Path(folder))
        return 0
    cells = []
    for family in args.family:
        sizes = {"bbox": args.sizes, "lvis": args.lvis_per_image}.get(family, args.mask_sizes)
        cells += [(family, size) for size in sizes]
    if args.objects365 or os.environ.get("IOUKIT_BENCH_OBJECTS365") == "1":
        cells.append(("objects365", 80_000))
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    ok = True
    try:
        for threads in ["all", "1"] if args.threads == "both" else [args.threads]:
            for family, size in cells:
                ok = cell(family, size, args, threads) and ok
    finally:
        if spinner is not None:
            spinner.kill()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
