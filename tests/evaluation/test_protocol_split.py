"""VOC and YOLO split like COCO: ``match`` (per shard of images) then ``summarize`` (once).

``summarize(gt, None, match(gt, pred))`` equals ``evaluate`` bit for bit, and so do matches of
disjoint image shards merged with :meth:`MatchedPredictions.merge`, whether each shard was
matched against the whole ground truth or only its own images' ground truth.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.evaluation.grouping import MatchedPredictions
from ioukit.evaluation.registry import make_protocol
from ioukit.evaluation.result import ProtocolResult

PROTOCOLS: list[tuple[str, dict[str, Any]]] = [
    ("voc07", {}),
    ("voc10", {}),
    ("voc10", {"pixel_inclusive": True, "strict_threshold": True}),
    ("voc07", {"exact_grid": True, "iou_threshold": 0.3}),
    ("yolo", {}),
    ("yolo", {"stable_ties": True}),
    ("yolo", {"iou_thresholds": [0.3, 0.5]}),
]


def _rows(ds: Dataset, rows: np.ndarray) -> Dataset:
    return Dataset.from_arrays(
        ds.images,
        ds.categories,
        boxes=ds.boxes[rows],
        image_index=ds.image_index[rows],
        category_id=ds.category_id[rows],
        scores=None if ds.scores is None else ds.scores[rows],
        area=ds.area[rows],
        crowd=ds.crowd[rows],
        ignore=ds.ignore[rows],
        difficult=ds.difficult[rows],
    )


def _data(seed: int, n_images: int, *, other_category: bool = False) -> tuple[Dataset, Dataset]:
    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(100, 100 + n_images))  # table order is not id order
    images = ImageTable.from_lists(ids.tolist(), [f"im{i}" for i in range(n_images)])
    cats = CategoryTable.from_lists([3, 1, 7], ["c", "a", "g"])

    def boxes(n: int) -> np.ndarray:
        xy = rng.integers(0, 12, size=(n, 2)).astype(float)
        wh = rng.integers(1, 12, size=(n, 2)).astype(float)
        return np.concatenate([xy, xy + wh], axis=1)

    m = int(rng.integers(0, 6 * n_images + 1))
    gt = Dataset.from_arrays(
        images,
        cats,
        boxes=boxes(m),
        image_index=rng.integers(0, n_images, m),
        category_id=rng.choice([1, 3, 7], m),
        crowd=rng.random(m) < 0.1,
        difficult=rng.random(m) < 0.1,
    )
    n = int(rng.integers(0, 10 * n_images + 1))
    pred_cats = (
        CategoryTable.from_lists([3, 1, 7, 9], ["c", "a", "g", "x"]) if other_category else cats
    )
    pred = Dataset.from_arrays(
        images,
        pred_cats,
        boxes=boxes(n),
        image_index=rng.integers(0, n_images, n),
        category_id=rng.choice([1, 3, 7, 9] if other_category else [1, 3, 7], n),
        scores=np.round(rng.random(n), 1),  # many tied scores
    )
    return gt, pred


def _same(a: ProtocolResult, b: ProtocolResult) -> None:
    assert a.protocol == b.protocol
    assert a.stats == b.stats
    assert a.per_class == b.per_class
    assert dict(a.params) == dict(b.params)
    assert set(a.arrays) == set(b.arrays)
    for key in a.arrays:
        x, y = np.asarray(a.arrays[key]), np.asarray(b.arrays[key])
        assert x.dtype == y.dtype and x.shape == y.shape, key
        np.testing.assert_array_equal(x, y, err_msg=key)


@pytest.mark.parametrize(("name", "options"), PROTOCOLS)
def test_summarize_of_match_is_evaluate(name: str, options: dict[str, Any]) -> None:
    gt, pred = _data(1, 12)
    protocol = make_protocol(name, **options)
    whole = protocol.evaluate(gt, pred)
    _same(protocol.summarize(gt, None, protocol.match(gt, pred)), whole)
    _same(whole, ioukit.evaluate(gt, pred, protocol=name, **options).result)


def _sharded(
    protocol: Any, gt: Dataset, pred: Dataset, labels: np.ndarray, n_shards: int, own_gt: bool
) -> tuple[ProtocolResult, ProtocolResult]:
    """(merged shards, one process on the shards' predictions concatenated in order)."""
    shards = [np.flatnonzero(labels[pred.image_index] == s) for s in range(n_shards)]
    parts, offsets = [], []
    offset = 0
    for rows in shards:
        part = _rows(pred, rows)
        images = np.unique(part.image_index)
        gt_part = _rows(gt, np.flatnonzero(np.isin(gt.image_index, images))) if own_gt else gt
        parts.append(protocol.match(gt_part, part))
        offsets.append(offset)
        offset += len(rows)
    merged = MatchedPredictions.merge(parts, pred_row_offsets=offsets)
    joined = _rows(pred, np.concatenate([np.zeros(0, np.int64), *shards]))
    return protocol.summarize(gt, None, merged), protocol.evaluate(gt, joined)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_images=st.integers(1, 9),
    n_shards=st.integers(1, 4),
    which=st.sampled_from(range(len(PROTOCOLS))),
    own_gt=st.booleans(),
    other=st.booleans(),
)
def test_merged_shards_equal_one_process(
    seed: int, n_images: int, n_shards: int, which: int, own_gt: bool, other: bool
) -> None:
    gt, pred = _data(seed, n_images, other_category=other)
    name, options = PROTOCOLS[which]
    labels = np.random.default_rng(seed + 1).integers(0, n_shards, n_images)
    merged, single = _sharded(make_protocol(name, **options), gt, pred, labels, n_shards, own_gt)
    _same(merged, single)


def test_other_categories_take_part_in_ultralytics_sort() -> None:
    gt, pred = _data(5, 6, other_category=True)
    matched = make_protocol("yolo").match(gt, pred)
    others = np.flatnonzero(pred.category_id == 9)
    assert matched.other_row.tolist() == others.tolist()
    assert len(matched.outcome) == len(pred) - others.size
    np.testing.assert_array_equal(matched.other_score, pred.scores[others])  # type: ignore[index]


def test_merge_checks_offsets() -> None:
    gt, pred = _data(2, 3)
    m = make_protocol("voc10").match(gt, pred)
    with pytest.raises(ValueError, match="pred_row_offsets"):
        MatchedPredictions.merge([m, m], pred_row_offsets=[0])
    with pytest.raises(ValueError, match="parts"):
        MatchedPredictions.merge([])


def test_yolo_summarize_checks_thresholds() -> None:
    from ioukit.errors import ParameterError
    from ioukit.evaluation.protocols.yolo import match_yolo_records, summarize_yolo

    gt, pred = _data(3, 3)
    with pytest.raises(ParameterError, match="iou_thresholds"):
        summarize_yolo(gt, match_yolo_records(gt, pred), iou_thresholds=[0.5])


@pytest.mark.parametrize("name", ["voc10", "yolo"])
def test_matched_predictions_travel_by_pickle(name: str) -> None:
    """What a Dask worker or torch.distributed ships: the match survives a pickle round trip."""
    import pickle

    gt, pred = _data(4, 5, other_category=True)
    protocol = make_protocol(name)
    matched = protocol.match(gt, pred)
    back = pickle.loads(pickle.dumps(matched))
    _same(protocol.summarize(gt, None, back), protocol.evaluate(gt, pred))


@pytest.mark.parametrize(("name", "options"), PROTOCOLS)
def test_chunked_matching_gives_the_same_numbers(
    name: str, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Images matched in many small chunks (bounded memory) merge to the same result."""
    gt, pred = _data(7, 10, other_category=True)
    protocol = make_protocol(name, **options)
    whole = protocol.evaluate(gt, pred)
    monkeypatch.setattr("ioukit.evaluation.grouping.CHUNK_PAIRS", 3)
    from ioukit.evaluation import grouping

    g = np.flatnonzero(gt.category_id >= 0)
    chunks = grouping.image_chunks(
        gt.image_index[g] * 10 + gt.category_id[g], gt.image_index[g],
        pred.image_index * 10 + pred.category_id, pred.image_index, len(gt.images),
    )  # fmt: skip
    assert len(chunks) > 1
    _same(protocol.evaluate(gt, pred), whole)
