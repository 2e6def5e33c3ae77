"""evaluate_sharded on a real local Dask cluster (two worker processes): published COCO and
Open Images numbers through shard files, and the errors that name shards."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.distributed import evaluate_sharded
from ioukit.errors import DataFormatError
from ioukit.io.openimages import read_openimages_ground_truth
from tests.sharded_analysis import assert_same_analysis

distributed = pytest.importorskip("dask.distributed")

DATA = Path(__file__).parent / "data" / "conformance"
COCO = DATA / "coco" / "val2014_100"
OI = DATA / "openimages"


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _write_shards(tmp: Path, dets: list[dict[str, Any]], n: int) -> list[Path]:
    ids = sorted({d["image_id"] for d in dets})
    rng = np.random.default_rng(0)
    shard_of = dict(zip(ids, rng.integers(0, n, len(ids)).tolist(), strict=True))
    paths = []
    for k in range(n):
        path = tmp / f"shard{k}.json"
        path.write_text(json.dumps([d for d in dets if shard_of[d["image_id"]] == k]))
        paths.append(path)
    return paths


def test_coco_published_numbers_through_shards(client: Any, tmp_path: Path) -> None:
    dets = json.loads((COCO / "instances_val2014_fakebbox100_results.json").read_text())
    shards = _write_shards(tmp_path, dets, 4)
    r = evaluate_sharded(COCO / "instances_val2014_100.json", shards, client=client)
    single = ioukit.evaluate(COCO / "instances_val2014_100.json", dets)
    assert r.stats == single.stats
    assert r.precision is not None and single.precision is not None
    np.testing.assert_array_equal(r.precision, single.precision)
    assert r.stats["AP"] == 0.5045806987249628  # faster-coco-eval's published full precision


def test_sharded_result_slices_and_resamples_as_one_process(client: Any, tmp_path: Path) -> None:
    # the merged outcome keeps the ground-truth records and the matched ground-truth rows:
    # resample, slice, bootstrap and compare give evaluate's numbers bit for bit
    dets = json.loads((COCO / "instances_val2014_fakebbox100_results.json").read_text())
    shards = _write_shards(tmp_path, dets, 3)
    r = evaluate_sharded(COCO / "instances_val2014_100.json", shards, client=client)
    single = ioukit.evaluate(COCO / "instances_val2014_100.json", dets)
    assert r.stats == single.stats
    assert_same_analysis(r, single, 7)


def test_cli_workers_result_slices_and_resamples_as_one_process(tmp_path: Path) -> None:
    import argparse

    from ioukit.cli.eval_command import evaluate_shards

    dets = json.loads((COCO / "instances_val2014_fakebbox100_results.json").read_text())
    _write_shards(tmp_path, dets, 2)
    args = argparse.Namespace(
        gt=str(COCO / "instances_val2014_100.json"),
        pred=str(tmp_path / "shard*.json"),
        workers=2,
        protocol="coco",
        iou_type="bbox",
        plots=None,
        per_image=None,
        errors=False,
    )
    r = evaluate_shards(args, {})  # what `ioukit eval --workers 2` evaluates
    single = ioukit.evaluate(COCO / "instances_val2014_100.json", dets)
    assert r.stats == single.stats
    assert_same_analysis(r, single, 8)


def test_openimages_challenge_through_shards(client: Any, tmp_path: Path) -> None:
    gt = read_openimages_ground_truth(
        OI / "challenge_boxes.csv",
        image_labels=OI / "challenge_image_labels.csv",
        categories=["cat", "dog", "elephant"],
    )
    lines = (OI / "challenge_predictions.csv").read_text().splitlines()
    shards = []
    for image in ("img3", "img1", "img2"):
        path = tmp_path / f"{image}.csv"
        path.write_text("\n".join([lines[0], *(x for x in lines[1:] if x.startswith(image))]))
        shards.append(path)
    r = evaluate_sharded(
        gt, shards, client=client, protocol="openimages_challenge", group_of_weight=0.5
    )
    assert r.stats["mAP"] == pytest.approx(17 / 63, abs=1e-15)
    assert r.stats["mAP"] == pytest.approx(0.269841269, abs=1e-7)  # TF's published value


def test_overlapping_shards_are_named(client: Any, tmp_path: Path) -> None:
    dets = json.loads((COCO / "instances_val2014_fakebbox100_results.json").read_text())
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(dets[:10]))
    b.write_text(json.dumps(dets[5:20]))
    with pytest.raises(DataFormatError, match=r"a\.json, .*b\.json: image .* appears in both"):
        evaluate_sharded(COCO / "instances_val2014_100.json", [a, b], client=client)


def test_unknown_image_names_the_shard(client: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad_shard.json"
    bad.write_text(
        json.dumps([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1}])
    )
    with pytest.raises(DataFormatError, match=r"bad_shard\.json"):
        evaluate_sharded(COCO / "instances_val2014_100.json", [bad], client=client)


def test_argument_errors() -> None:
    with pytest.raises(ValueError, match="protocol"):
        evaluate_sharded(COCO / "instances_val2014_100.json", [], protocol="nope")
    with pytest.raises(ValueError, match="segm"):
        evaluate_sharded(COCO / "instances_val2014_100.json", [], protocol="voc10", iou_type="segm")
    with pytest.raises(ValueError, match="evaluate_sharded supports"):
        evaluate_sharded(COCO / "instances_val2014_100.json", [], protocol="crowdpose")
    with pytest.raises(ValueError, match="evaluate_sharded supports"):
        evaluate_sharded(
            COCO / "instances_val2014_100.json", [], protocol="dota", iou_type="rotated"
        )
    with pytest.raises(TypeError, match="list of paths"):
        evaluate_sharded(COCO / "instances_val2014_100.json", "shard.json")


def test_default_local_cluster(tmp_path: Path) -> None:
    dets = json.loads((COCO / "instances_val2014_fakebbox100_results.json").read_text())
    shards = _write_shards(tmp_path, dets, 2)
    r = evaluate_sharded(COCO / "instances_val2014_100.json", shards)  # makes and closes one
    assert r.stats["AP"] == 0.5045806987249628


def test_local_cluster_keeps_glibc_malloc_defaults() -> None:
    import dask

    from ioukit.distributed import LOCAL_CLUSTER_CONFIG

    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        env = dask.config.get("distributed.nanny.pre-spawn-environ")
        assert env.get("MALLOC_TRIM_THRESHOLD_") is None  # unset: dynamic mmap threshold


def test_lvis_through_shards(client: Any, tmp_path: Path) -> None:
    from tests.lvis_reference import generate

    gt, results = generate(11, n_images=20, n_cats=15, dets_per_image=(200, 380), score_levels=9)
    gt_path = tmp_path / "lvis.json"
    gt_path.write_text(json.dumps(gt))
    shards = _write_shards(tmp_path, results, 3)
    r = evaluate_sharded(gt_path, shards, client=client, protocol="lvis")
    single = ioukit.evaluate(gt_path, results, protocol="lvis")
    assert r.stats == single.stats and r.stats["AP"] > 0
    assert r.per_class == single.per_class
    assert r.summary() == single.summary()


class _KillingPath(os.PathLike[str]):
    """A shard path whose first read on a worker SIGKILLs every worker process (its own
    last): the scattered ground truth is lost with them while the shards are being matched,
    and the nannies restart the workers, as after an OOM kill or a preemption."""

    def __init__(self, path: Path, marker: Path, pids: Path) -> None:
        self.path, self.marker, self.pids = path, marker, pids

    def __fspath__(self) -> str:
        pids = [int(p) for p in self.pids.read_text().split()]
        if os.getpid() in pids and not self.marker.exists():
            self.marker.touch()
            for pid in sorted(pids, key=lambda p: p == os.getpid()):
                os.kill(pid, signal.SIGKILL)
        return str(self.path)


def test_workers_killed_mid_run_are_restarted_and_the_run_finishes(tmp_path: Path) -> None:
    # #23 item 3: the nannies restart the killed workers; the ground truth is scattered again
    # and the lost shards resubmitted, so the result is still that of one process
    dets = json.loads((COCO / "instances_val2014_fakebbox100_results.json").read_text())
    paths = _write_shards(tmp_path, dets, 4)
    marker, pids = tmp_path / "killed", tmp_path / "pids"
    shards = [_KillingPath(p, marker, pids) for p in paths]
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        pids.write_text(" ".join(str(p) for p in c.run(os.getpid).values()))
        r = evaluate_sharded(COCO / "instances_val2014_100.json", shards, client=c)
        assert marker.exists()  # the workers were killed
        assert set(c.run(os.getpid).values()).isdisjoint(map(int, pids.read_text().split()))
    single = ioukit.evaluate(COCO / "instances_val2014_100.json", dets)
    assert r.stats == single.stats
    assert r.precision is not None and single.precision is not None
    np.testing.assert_array_equal(r.precision, single.precision)
