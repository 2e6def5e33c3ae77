"""Sharded evaluation at scale: ``ioukit.evaluate_sharded`` on a local Dask cluster against one
process, on generated data (not part of the tests).

Generates ``--images`` images with about ``--gt-per-image`` ground truths and
``--preds-per-image`` predictions each (the issue's scale is 200 000 images and about 14 M
predictions), written as ``--shards`` prediction files (COCO results JSON, or Open Images
predictions CSV with ``--protocol openimages*``), each holding whole images. Then:

1. one process (a fresh child process): read every shard, concatenate, ``ioukit.evaluate``;
2. ``evaluate_sharded`` on ``LocalCluster(n_workers=--workers, threads_per_worker=1)``;

and prints wall times, the peak resident memory of the single process and of each worker,
whether the stats are identical, and the partial-result bytes per detection.

Usage::

    python benchmarks/bench_sharded.py --images 200000 --shards 16 --workers 2 \\
        --protocol openimages_challenge
    python benchmarks/bench_sharded.py --images 20000 --protocol coco

On a real cluster start a scheduler and workers (``dask scheduler``;
``dask worker tcp://HOST:8786 --nworkers 8 --nthreads 1`` on each machine, with ioukit
installed and the shard files on a path every worker can read), then pass
``--scheduler tcp://HOST:8786`` (and ``--data DIR`` on the shared path).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def _generate(args: argparse.Namespace, out: Path) -> tuple[Path, list[Path], int]:
    """Ground truth and shard files; returns (gt path, shard paths, number of predictions)."""
    rng = np.random.default_rng(0)
    n_img, classes = args.images, args.classes
    gt_count = 1 + rng.poisson(max(args.gt_per_image - 1, 0), n_img)  # every image listed
    m = int(gt_count.sum())
    gt_img = np.repeat(np.arange(n_img), gt_count)
    gt_cls = rng.integers(1, classes + 1, m)
    wh = rng.uniform(0.05, 0.5, (m, 2))
    xy = rng.uniform(0, 1, (m, 2)) * (1 - wh)
    gt_box = np.concatenate([xy, xy + wh], axis=1)  # normalized xyxy
    group = rng.random(m) < 0.05
    pred_count = rng.poisson(args.preds_per_image, n_img)
    n = int(pred_count.sum())
    pred_img = np.repeat(np.arange(n_img), pred_count)
    # a third of the predictions near a ground truth of their image, the rest anywhere
    first = np.concatenate([[0], np.cumsum(gt_count)[:-1]])
    has_gt = gt_count[pred_img] > 0
    near = (rng.random(n) < 0.33) & has_gt
    src = first[pred_img] + (rng.random(n) * np.maximum(gt_count[pred_img], 1)).astype(np.int64)
    src = np.minimum(src, max(m - 1, 0))
    pwh = rng.uniform(0.05, 0.5, (n, 2))
    pxy = rng.uniform(0, 1, (n, 2)) * (1 - pwh)
    pred_box = np.concatenate([pxy, pxy + pwh], axis=1)
    if m:
        jitter = rng.normal(0, 0.02, (int(near.sum()), 4))
        pred_box[near] = np.clip(gt_box[src[near]] + jitter, 0, 1)
        pred_box[:, 2:] = np.maximum(pred_box[:, 2:], pred_box[:, :2] + 1e-3)
    pred_cls = np.where(near, gt_cls[src] if m else 1, rng.integers(1, classes + 1, n))
    score = np.round(np.where(near, rng.beta(5, 2, n), rng.beta(2, 5, n)), 3)
    shard_of = rng.integers(0, args.shards, n_img)
    names = [f"img{i:07d}" for i in range(n_img)]
    openimages = args.protocol.startswith("openimages")
    if openimages:
        gt_path = out / "boxes.csv"
        with gt_path.open("w") as f:
            f.write("ImageID,LabelName,XMin,XMax,YMin,YMax,IsGroupOf\n")
            for i, c, b, g in zip(
                gt_img.tolist(), gt_cls.tolist(), gt_box.tolist(), group.tolist(), strict=True
            ):
                f.write(f"{names[i]},/m/c{c},{b[0]!r},{b[2]!r},{b[1]!r},{b[3]!r},{int(g)}\n")
    else:
        size = 640.0
        gt_path = out / "gt.json"
        xywh = np.concatenate([gt_box[:, :2], gt_box[:, 2:] - gt_box[:, :2]], axis=1) * size
        gt_path.write_text(
            json.dumps(
                {
                    "images": [{"id": i + 1, "width": 640, "height": 640} for i in range(n_img)],
                    "categories": [{"id": c} for c in range(1, classes + 1)],
                    "annotations": [
                        {
                            "id": k + 1,
                            "image_id": i + 1,
                            "category_id": c,
                            "bbox": b,
                            "area": b[2] * b[3],
                            "iscrowd": int(g),
                        }
                        for k, (i, c, b, g) in enumerate(
                            zip(
                                gt_img.tolist(),
                                gt_cls.tolist(),
                                xywh.tolist(),
                                group.tolist(),
                                strict=True,
                            )
                        )
                    ],
                }
            )
        )
    shards = []
    for s in range(args.shards):
        rows = np.flatnonzero(shard_of[pred_img] == s)
        if openimages:
            path = out / f"shard{s:03d}.csv"
            with path.open("w") as f:
                f.write("ImageID,LabelName,Score,XMin,XMax,YMin,YMax\n")
                for i, c, sc, b in zip(
                    pred_img[rows].tolist(),
                    pred_cls[rows].tolist(),
                    score[rows].tolist(),
                    pred_box[rows].tolist(),
                    strict=True,
                ):
                    f.write(f"{names[i]},/m/c{c},{sc!r},{b[0]!r},{b[2]!r},{b[1]!r},{b[3]!r}\n")
        else:
            path = out / f"shard{s:03d}.json"
            b = pred_box[rows] * 640.0
            xywh = np.concatenate([b[:, :2], b[:, 2:] - b[:, :2]], axis=1)
            path.write_text(
                json.dumps(
                    [
                        {"image_id": i + 1, "category_id": c, "bbox": bb, "score": sc}
                        for i, c, bb, sc in zip(
                            pred_img[rows].tolist(),
                            pred_cls[rows].tolist(),
                            xywh.tolist(),
                            score[rows].tolist(),
                            strict=True,
                        )
                    ]
                )
            )
        shards.append(path)
    return gt_path, shards, n


def _existing(args: argparse.Namespace, out: Path) -> tuple[Path, list[Path], int]:
    """The files of an earlier run in ``out`` (``--reuse``)."""
    openimages = args.protocol.startswith("openimages")
    gt_path = out / ("boxes.csv" if openimages else "gt.json")
    shards = [out / f"shard{s:03d}.{'csv' if openimages else 'json'}" for s in range(args.shards)]
    missing = [str(p) for p in (gt_path, *shards) if not p.is_file()]
    if missing:
        raise SystemExit(f"--reuse: missing {', '.join(missing[:3])} (run once without --reuse)")
    return gt_path, shards, -1


def _ground_truth(protocol: str, gt_path: Path) -> Any:
    if protocol.startswith("openimages"):
        from ioukit.io.openimages import read_openimages_ground_truth

        return read_openimages_ground_truth(gt_path)
    return gt_path


def _single(protocol: str, gt_path: str, shards: list[str], queue: Any) -> None:
    """Child process: one-process evaluation; puts (seconds, CPU seconds, peak RSS, stats)."""
    _evaluate_all(protocol, gt_path, shards[:1])  # warm-up: imports, kernel loading
    start, cpu = time.perf_counter(), time.process_time()
    stats = _evaluate_all(protocol, gt_path, shards)
    seconds = time.perf_counter() - start
    queue.put((seconds, time.process_time() - cpu, _peak_rss(), stats))


def _evaluate_all(protocol: str, gt_path: str, shards: list[str]) -> dict[str, float]:
    import ioukit
    from ioukit.distributed import concat_predictions

    gt = _ground_truth(protocol, Path(gt_path))
    if protocol.startswith("openimages"):
        from ioukit.io.openimages import read_openimages_predictions

        gt_ds = gt.dataset
        parts = [read_openimages_predictions(s, gt_ds) for s in shards]
        opts = {"image_labels": gt.image_labels} if gt.image_labels is not None else {}
    else:
        from ioukit.io.coco import read_coco_ground_truth, read_coco_results

        gt_ds = read_coco_ground_truth(gt)
        parts = [read_coco_results(s, gt_ds) for s in shards]
        opts = {}
    r = ioukit.evaluate(gt_ds, concat_predictions(parts), protocol=protocol, **opts)
    return r.stats


def _records(packed: Any) -> int:
    """Records in a packed part (its ``score`` column; VOC / YOLO: the outcome's)."""
    fields = dict(packed.fields)
    if "outcome" in fields:
        return _records(fields["outcome"])
    score = fields["score"]
    return int(score.shape[0])


def _peak_rss() -> int:
    try:  # peak resident set size of this process (Linux)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=200_000)
    parser.add_argument("--gt-per-image", type=float, default=7.0)
    parser.add_argument("--preds-per-image", type=float, default=70.0)
    parser.add_argument("--classes", type=int, default=80)
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--protocol", default="openimages_challenge")
    parser.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    parser.add_argument("--data", default=None, help="folder for the generated files")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="use the files already in --data (written by an earlier run with the same sizes)",
    )
    parser.add_argument(
        "--dask-defaults",
        action="store_true",
        help="start the local workers with Dask's default environment (MALLOC_TRIM_THRESHOLD_)",
    )
    args = parser.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    import ioukit

    out = Path(args.data or tempfile.mkdtemp(prefix="ioukit_sharded_"))
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if args.reuse:
        gt_path, shards, n_pred = _existing(args, out)
        print(f"reusing {len(shards)} shards in {out}")
    else:
        gt_path, shards, n_pred = _generate(args, out)
        print(
            f"generated {args.images} images, {n_pred} predictions, {args.shards} shards "
            f"in {time.perf_counter() - t0:.1f} s ({out})"
        )

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(
        target=_single, args=(args.protocol, str(gt_path), [str(s) for s in shards], queue)
    )
    child.start()
    while True:
        try:
            single_s, single_cpu, single_rss, single_stats = queue.get(timeout=1)
            break
        except Exception:
            if not child.is_alive():
                raise SystemExit("the single-process run failed (see above)") from None
    child.join()

    if args.scheduler:
        client = Client(args.scheduler)
        cluster = None
    else:
        import dask

        from ioukit.distributed import LOCAL_CLUSTER_CONFIG

        with dask.config.set(LOCAL_CLUSTER_CONFIG if not args.dask_defaults else {}):
            cluster = LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                memory_limit=0,
            )
        client = Client(cluster)
    try:
        gt = _ground_truth(args.protocol, gt_path)
        ioukit.evaluate_sharded(gt, shards[:1], client=client, protocol=args.protocol)  # warm-up
        worker_cpu = client.run(time.process_time)
        start, cpu = time.perf_counter(), time.process_time()
        r = ioukit.evaluate_sharded(gt, shards, client=client, protocol=args.protocol)
        sharded_s = time.perf_counter() - start
        client_cpu = time.process_time() - cpu
        client_rss = _peak_rss()  # before this script reads shard 0 below for the byte count
        after = client.run(time.process_time)
        workers_cpu = sum(after[w] - worker_cpu[w] for w in after if w in worker_cpu)
        worker_rss = client.run(_peak_rss)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    from ioukit.distributed import _prepare, _shard_partial
    from ioukit.evaluation.registry import make_protocol

    # what shard 0 ships: its packed match outcome (the protocol's shard_match on a worker)
    runner = make_protocol(args.protocol)
    shared = _prepare(gt, runner, args.protocol, "bbox", {})
    images, _, part = _shard_partial(shared, shards[0], str(shards[0]), "bbox")
    n_records = _records(part)
    bytes_ = part.nbytes
    print(f"single process : {single_s:8.2f} s, peak RSS {single_rss / 2**30:.2f} GiB")
    print(
        f"sharded        : {sharded_s:8.2f} s ({sharded_s / single_s:.2f}x), peak RSS per worker "
        + ", ".join(f"{v / 2**30:.2f} GiB" for v in worker_rss.values())
        + f", client {client_rss / 2**30:.2f} GiB"
    )
    print(
        f"CPU seconds    : single {single_cpu:.2f}; sharded {client_cpu + workers_cpu:.2f} "
        f"(client {client_cpu:.2f}, workers {workers_cpu:.2f})"
    )
    print(f"identical stats: {r.stats == single_stats}  {r.stats}")
    print(
        f"partial result : {bytes_ / max(n_records, 1):.1f} bytes per record "
        f"({n_records} records from shard 0, {images.size} images)"
    )


if __name__ == "__main__":
    sys.exit(main())
