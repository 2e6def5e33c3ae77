"""What every rank runs around the two all_gathers of a synced ``Evaluator.compute`` (the
ranks' ground truths, then their packed outcomes), without processes: ranks in a scrambled
order, empty ranks, image_id; COCO (bbox, segm, rotated), VOC and YOLO."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.distributed import (
    _merge_ranks,
    _merged_ground_truth,
    _rank_part,
    _rank_state,
    _renumbered,
)
from ioukit.evaluation.registry import make_protocol


def _synced(
    pairs: list[tuple[ioukit.Dataset, ioukit.Dataset]],
    image_id: bool,
    protocol: str,
    iou_type: str,
    options: dict[str, Any],
) -> ioukit.EvaluationResult:
    """``synced_evaluate`` of every rank's (gt, pred), rank by rank, without processes."""
    runner = make_protocol(protocol, iou_type=iou_type, **options)
    states = [_rank_state(gt, pred, image_id) for gt, pred in pairs]  # first all_gather
    merged, by_id = _merged_ground_truth(states)
    parts = [  # second all_gather
        _rank_part(runner, merged, by_id, states, rank, pred, iou_type)
        for rank, (_, pred) in enumerate(pairs)
    ]
    return _merge_ranks(runner, merged, states, parts, iou_type)


def _image(
    rng: np.random.Generator, image_id: int | None, segm: bool, rotated: bool = False
) -> tuple[dict, dict]:
    m, k = int(rng.integers(0, 4)), int(rng.integers(0, 5))
    xy = rng.integers(0, 20, size=(m, 2)).astype(float)
    gt = np.concatenate([xy, xy + rng.integers(2, 10, size=(m, 2))], axis=1)
    src = rng.integers(0, max(m, 1), k)
    pred = gt[src] if m else np.zeros((k, 4))
    pred = pred + rng.integers(-1, 2, size=(k, 4))
    pred[:, 2:] = np.maximum(pred[:, 2:], pred[:, :2] + 1)
    p: dict[str, Any] = {
        "scores": rng.choice([0.25, 0.5, 0.75], k),
        "labels": rng.integers(1, 5, k),
    }
    t: dict[str, Any] = {"labels": rng.integers(1, 4, m), "iscrowd": rng.random(m) < 0.15}
    if segm:
        t["masks"] = rng.random((m, 8, 9)) < 0.5
        p["masks"] = (t["masks"][src] if m else np.zeros((k, 8, 9), bool)) ^ (
            rng.random((k, 8, 9)) < 0.1
        )
    elif rotated:  # cx, cy, w, h, angle; no crowd regions for rotated IoU
        p["boxes"], t["boxes"] = _oriented(rng, pred), _oriented(rng, gt)
        t["iscrowd"] = np.zeros(m, dtype=bool)
    else:
        p["boxes"], t["boxes"] = pred, gt
    if image_id is not None:
        t["image_id"] = image_id
    return p, t


def _oriented(rng: np.random.Generator, xyxy: np.ndarray) -> np.ndarray:
    centre = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    angle = rng.choice([0.0, 15.0, 45.0], size=(len(xyxy), 1))
    return np.concatenate([centre, xyxy[:, 2:] - xyxy[:, :2], angle], axis=1)


def _check(iou_type: str, image_id: bool, **options: Any) -> None:
    rng = np.random.default_rng(7)
    n = 14
    ids = (rng.permutation(n) * 3 + 50).tolist()
    images = [
        _image(rng, ids[i] if image_id else None, iou_type == "segm", iou_type == "rotated")
        for i in range(n)
    ]
    order = rng.permutation(n)
    dealt = [order[:5], order[5:5], order[5:6], order[6:]]  # an empty rank, a one-image rank
    pairs, single = [], ioukit.Evaluator(iou_type=iou_type, sync=False, **options)
    for rows in dealt if not image_id else [np.arange(n)]:
        for r in rows:
            single.update([images[r][0]], [images[r][1]])
    for rows in dealt:
        ev = ioukit.Evaluator(iou_type=iou_type, sync=False, **options)
        for r in rows:
            ev.update([images[r][0]], [images[r][1]])
        pairs.append(ev.datasets())
    got = _synced(pairs, image_id, "coco", iou_type, options)
    want = single.compute()
    assert want.stats["AP"] > 0
    assert got.stats == want.stats
    assert got.precision is not None and want.precision is not None
    np.testing.assert_array_equal(got.precision, want.precision)
    np.testing.assert_array_equal(got.recall, want.recall)
    np.testing.assert_array_equal(got.scores, want.scores)
    assert got.per_class == want.per_class


@pytest.mark.parametrize("iou_type", ["bbox", "segm", "rotated"])
@pytest.mark.parametrize("image_id", [True, False])
def test_merged_ranks_equal_one_process(iou_type: str, image_id: bool) -> None:
    _check(iou_type, image_id)


def test_merged_ranks_equal_one_process_without_classes() -> None:
    _check("bbox", True, use_cats=False)


def _one(image_id: object) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return (
        [{"boxes": [[0, 0, 2, 2]], "scores": [0.5], "labels": [1]}],
        [{"boxes": [[0, 0, 2, 2]], "labels": [1], "image_id": image_id}],
    )


def test_same_image_id_twice_names_both_places() -> None:
    ev = ioukit.Evaluator()
    ev.update(*_one(4))
    with pytest.raises(ioukit.DataFormatError, match=r"update call 1, targets\[0\].image_id: "
                       r"image_id 4 was already given by update call 0, targets\[0\]"):  # fmt: skip
        ev.update(*_one(np.int64(4)))
    assert len(ev) == 1
    other = ioukit.Evaluator()
    other.update(*_one(4))
    with pytest.raises(ioukit.DataFormatError, match=r"other's image 0\.image_id: image_id 4"):
        ev.merge(other)


def test_image_id_on_some_images_only_is_an_error() -> None:
    ev = ioukit.Evaluator()
    ev.update(*_one(4))
    p, t = _one(5)
    del t[0]["image_id"]
    with pytest.raises(ioukit.DataFormatError, match="missing here but given on images added"):
        ev.update(p, t)


@pytest.mark.parametrize("bad", [1.5, [1, 2], "x", True])
def test_image_id_must_be_one_integer(bad: object) -> None:
    with pytest.raises(ioukit.DataFormatError, match=r"targets\[0\].image_id"):
        ioukit.Evaluator().update(*_one(bad))


def test_image_id_sets_the_image_table() -> None:
    ev = ioukit.Evaluator()
    ev.update(*_one(np.int32(42)))
    gt, _ = ev.datasets()
    assert gt.images.ids.tolist() == [42]


@pytest.mark.parametrize("protocol", ["voc07", "voc10", "yolo"])
@pytest.mark.parametrize("image_id", [True, False])
def test_matched_ranks_equal_the_gathered_datasets(protocol: str, image_id: bool) -> None:
    """VOC / YOLO ranks ship their packed match; the result is that of the old route (every
    rank's datasets gathered, renumbered, evaluated), ties in input order included."""

    rng = np.random.default_rng(11)
    n = 14
    ids = (rng.permutation(n) * 3 + 50).tolist()
    images = [_image(rng, ids[i] if image_id else None, False) for i in range(n)]
    order = rng.permutation(n)
    dealt = [order[:5], order[5:5], order[5:6], order[6:]]  # an empty rank, a one-image rank
    pairs = []
    for rows in dealt:
        ev = ioukit.Evaluator(protocol=protocol, sync=False)
        for r in rows:
            ev.update([images[r][0]], [images[r][1]])
        pairs.append(ev.datasets())
    got = _synced(pairs, image_id, protocol, "bbox", {})
    want = ioukit.evaluate(*_renumbered(pairs, by_image_id=image_id), protocol=protocol)
    assert max(want.stats.values()) > 0
    assert got.stats == want.stats
    assert got.per_class == want.per_class
    assert got.result.arrays.keys() == want.result.arrays.keys()
    for key, value in got.result.arrays.items():
        np.testing.assert_array_equal(value, want.result.arrays[key], err_msg=key)
