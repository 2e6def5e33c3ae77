"""Evaluator.compute() under torch.distributed: two gloo processes, each with its own images,
both return the result of one Evaluator that saw rank 0's images and then rank 1's."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")


def _images(seed: int, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    preds, targets = [], []
    for _ in range(n):
        m = int(rng.integers(0, 5))
        xy = rng.integers(0, 50, size=(m, 2)).astype(float)
        gt = np.concatenate([xy, xy + rng.integers(5, 30, size=(m, 2))], axis=1)
        k = int(rng.integers(0, 6))
        src = rng.integers(0, max(m, 1), k)
        pred = gt[src] + rng.normal(0, 2, size=(k, 4)) if m else np.zeros((k, 4))
        pred[:, 2:] = np.maximum(pred[:, 2:], pred[:, :2] + 1)
        labels = rng.integers(0, 3, m)
        preds.append(
            {
                "boxes": torch.tensor(pred),
                "scores": torch.tensor(rng.choice([0.3, 0.6, 0.9], k)),
                "labels": torch.tensor(labels[src] if m else rng.integers(0, 3, k)),
            }
        )
        targets.append({"boxes": torch.tensor(gt), "labels": torch.tensor(labels)})
    return preds, targets


def _worker(rank: int, world: int, port: int, out: str) -> None:
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    try:
        results = {}
        for sync in (True, False):
            ev = ioukit.Evaluator(sync=sync)
            preds, targets = _images(rank, 4 + 3 * rank)
            ev.update(preds[:2], targets[:2])
            ev.update(preds[2:], targets[2:])
            r = ev.compute()
            assert r.precision is not None
            results[str(sync)] = {"stats": r.stats, "precision": r.precision.tolist()}
        Path(out, f"rank{rank}.json").write_text(json.dumps(results))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Both ranks' results with sync=True and sync=False (one spawn of two processes)."""
    import torch.multiprocessing as mp

    tmp_path = tmp_path_factory.mktemp("gloo")
    mp.start_processes(
        _worker,
        args=(2, _free_port(), str(tmp_path)),
        nprocs=2,
        join=True,
        start_method="spawn",
    )
    return [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]


def test_two_gloo_ranks_gather_and_agree(ranks: list[dict[str, Any]]) -> None:
    single = ioukit.Evaluator()
    for rank in range(2):
        preds, targets = _images(rank, 4 + 3 * rank)
        single.update(preds, targets)
    want = single.compute()
    assert want.precision is not None
    for both in ranks:
        got = both["True"]
        assert got["stats"] == want.stats
        np.testing.assert_array_equal(np.array(got["precision"]), want.precision)


def test_sync_false_keeps_each_rank_to_itself(ranks: list[dict[str, Any]]) -> None:
    for rank, both in enumerate(ranks):
        ev = ioukit.Evaluator()
        ev.update(*_images(rank, 4 + 3 * rank))
        assert both["False"]["stats"] == ev.compute().stats


def test_without_process_group_compute_is_local() -> None:
    assert not dist.is_initialized()
    ev = ioukit.Evaluator()
    ev.update(*_images(5, 3))
    assert ev.compute().stats == ioukit.Evaluator(sync=False).merge(ev).compute().stats


def test_rank_concatenation_equals_one_evaluator_segm() -> None:
    """What every rank does after the all_gather, without processes: masks, sizes, labels."""
    from ioukit.distributed import _renumbered

    rng = np.random.default_rng(3)

    def image(k: int) -> tuple[dict[str, Any], dict[str, Any]]:
        masks = rng.random((k, 6, 7)) < 0.4
        pred = masks.copy()
        pred[:, 0, :] = True
        return (
            {"masks": pred, "scores": rng.random(k), "labels": rng.integers(0, 3, k)},
            {"masks": masks, "labels": rng.integers(0, 3, k)},
        )

    ranks = [[image(2), image(0), image(3)], [image(1)], [image(4), image(2)]]
    single = ioukit.Evaluator(iou_type="segm")
    pairs = []
    for images in ranks:
        ev = ioukit.Evaluator(iou_type="segm", sync=False)
        for p, t in images:
            ev.update([p], [t])
            single.update([p], [t])
        pairs.append(ev.datasets())
    gt, pred = _renumbered(pairs)
    got = ioukit.evaluate(gt, pred, iou_type="segm")
    want = single.compute()
    assert got.stats == want.stats
    assert got.precision is not None and want.precision is not None
    np.testing.assert_array_equal(got.precision, want.precision)
