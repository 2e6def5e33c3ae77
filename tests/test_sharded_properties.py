"""Sharded evaluation without a cluster: random splits of random datasets into shards (empty
ones and one-image ones included), each shard through the worker function, merged on the
client, equal bit for bit to one process, for every protocol and for segm."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.distributed import (
    _merge,
    _nbytes,
    _shard_partial,
    concat_predictions,
    merge_order,
    pack,
    unpack,
)
from ioukit.errors import DataFormatError
from ioukit.evaluation.protocols.openimages import ImageLabels
from ioukit.evaluation.registry import make_protocol
from tests.sharded_analysis import assert_same_analysis


def _subset(pred: Dataset, rows: np.ndarray) -> Dataset:
    columns: dict[str, Any] = {}
    for f in dataclasses.fields(Dataset):
        value = getattr(pred, f.name)
        if f.name in ("images", "categories") or value is None:
            columns[f.name] = value
        elif f.name == "segmentation":
            columns[f.name] = tuple(value[i] for i in rows)
        else:
            columns[f.name] = value[rows]
    return Dataset(**columns)


def _masks_rle(rng: np.random.Generator, boxes: np.ndarray, size: int) -> list[dict[str, Any]]:
    out = []
    for x1, y1, x2, y2 in boxes.astype(int).tolist():
        mask = np.zeros((1, size, size), dtype=bool)
        mask[0, y1:y2, x1:x2] = True
        mask[0] &= rng.random((size, size)) < 0.9
        out.append(ioukit.masks.encode(mask)[0])
    return out


def _dataset(seed: int, n_images: int, *, segm: bool = False) -> tuple[Dataset, Dataset]:
    rng = np.random.default_rng(seed)
    size = 24
    images = ImageTable.from_lists(
        list(range(10, 10 + n_images)),
        [f"im{i}" for i in range(n_images)],
        [float(size)] * n_images,
        [float(size)] * n_images,
    )
    cats = CategoryTable.from_lists([1, 2, 5], ["a", "b", "c"])

    def boxes(n: int) -> np.ndarray:
        xy = rng.integers(0, size // 2, size=(n, 2)).astype(float)
        wh = rng.integers(2, size // 2, size=(n, 2)).astype(float)
        return np.concatenate([xy, xy + wh], axis=1)

    m = int(rng.integers(0, 5 * n_images + 1))
    gt_boxes = boxes(m)
    gt_kw: dict[str, Any] = {}
    if segm:
        gt_kw["segmentation"] = _masks_rle(rng, gt_boxes, size)
    gt = Dataset.from_arrays(
        images,
        cats,
        boxes=gt_boxes,
        image_index=rng.integers(0, n_images, m),
        category_id=rng.choice([1, 2, 5], m),
        crowd=rng.random(m) < 0.1,
        area=(gt_boxes[:, 2] - gt_boxes[:, 0]) * (gt_boxes[:, 3] - gt_boxes[:, 1]) * 4,
        **gt_kw,
    )
    n = int(rng.integers(0, 8 * n_images + 1))
    near = rng.random(n) < 0.6 if m else np.zeros(n, dtype=bool)
    src = rng.integers(0, max(m, 1), n)
    pred_boxes = boxes(n)
    pred_boxes[near] = np.clip(
        gt.boxes[src[near]] + rng.integers(-1, 2, size=(int(near.sum()), 4)), 0, size
    )
    pred_boxes[:, 2:] = np.maximum(pred_boxes[:, 2:], pred_boxes[:, :2] + 1)
    image_index = rng.integers(0, n_images, n)
    category_id = rng.choice([1, 2, 5], n)
    image_index[near] = gt.image_index[src[near]]
    category_id[near] = gt.category_id[src[near]]
    pred_kw: dict[str, Any] = {}
    if segm:
        pred_kw["segmentation"] = _masks_rle(rng, pred_boxes, size)
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=pred_boxes,
        image_index=image_index,
        category_id=category_id,
        scores=rng.choice([0.1, 0.3, 0.5, 0.7, 0.9, 0.95], n),  # ties across images
        **pred_kw,
    )
    return gt, pred


def _shards(pred: Dataset, seed: int, n_shards: int) -> list[Dataset]:
    rng = np.random.default_rng(seed)
    shard_of = rng.integers(0, n_shards, len(pred.images))
    return [_subset(pred, np.flatnonzero(shard_of[pred.image_index] == s)) for s in range(n_shards)]


def _sharded(
    gt: Dataset, shards: list[Dataset], protocol: str, iou_type: str, options: dict[str, Any]
) -> ioukit.EvaluationResult:
    names = [f"shards[{i}]" for i in range(len(shards))]
    results = [
        _worker(gt, s, n, protocol, iou_type, options) for s, n in zip(shards, names, strict=True)
    ]
    return _merge(_runner(protocol, iou_type, options), gt, results, names, iou_type)


def _runner(protocol: str, iou_type: str, options: dict[str, Any]) -> Any:
    return make_protocol(protocol, iou_type=iou_type, **options)


def _prepared(gt: Any, protocol: str, iou_type: str) -> tuple[Any, Any]:
    """The ground truth as :func:`ioukit.evaluate_sharded` reads it, and the protocol."""
    from ioukit.distributed import _prepare

    return _prepare(gt, _runner(protocol, iou_type, {}), protocol, iou_type, {})


def _worker(
    gt: Any, shard: Any, name: str, protocol: str, iou_type: str, options: dict[str, Any]
) -> tuple[np.ndarray, int, Any]:
    """What a Dask worker runs on one shard (the protocol object travels with the ground
    truth); its packed outcome through pickle, as Dask ships it."""
    import pickle

    shared = (gt, _runner(protocol, iou_type, options))
    return pickle.loads(pickle.dumps(_shard_partial(shared, shard, name, iou_type)))


def _assert_same(a: ioukit.EvaluationResult, b: ioukit.EvaluationResult) -> None:
    assert a.stats == b.stats
    assert a.per_class == b.per_class
    assert a.params == b.params
    assert a.result.arrays.keys() == b.result.arrays.keys()
    for key, value in a.result.arrays.items():
        np.testing.assert_array_equal(value, b.result.arrays[key], err_msg=key)


PROTOCOLS = [
    ("coco", "bbox"),
    ("voc07", "bbox"),
    ("voc10", "bbox"),
    ("yolo", "bbox"),
    ("openimages", "bbox"),
    ("openimages_challenge", "bbox"),
]


@pytest.mark.parametrize(("protocol", "iou_type"), PROTOCOLS)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(1, 8), n_shards=st.integers(1, 5))
def test_random_splits_merge_bit_for_bit(
    protocol: str, iou_type: str, seed: int, n_images: int, n_shards: int
) -> None:
    gt, pred = _dataset(seed, n_images)
    shards = _shards(pred, seed + 1, n_shards)
    options: dict[str, Any] = {}
    if protocol == "openimages_challenge":
        rng = np.random.default_rng(seed + 2)
        k = 2 * n_images
        options["image_labels"] = ImageLabels.from_arrays(
            rng.integers(0, n_images, k), rng.choice([1, 2, 5], k)
        )
    merged = _sharded(gt, shards, protocol, iou_type, options)
    # one process, on the shards concatenated in order
    single = ioukit.evaluate(
        gt, concat_predictions(shards), protocol=protocol, iou_type=iou_type, **options
    )
    _assert_same(merged, single)
    if protocol in ("coco", "yolo", "openimages", "openimages_challenge"):
        # these do not depend on how images' predictions interleave in the input
        _assert_same(merged, ioukit.evaluate(gt, pred, protocol=protocol, **options))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(1, 5), n_shards=st.integers(1, 4))
def test_random_splits_merge_bit_for_bit_segm(seed: int, n_images: int, n_shards: int) -> None:
    gt, pred = _dataset(seed, n_images, segm=True)
    shards = _shards(pred, seed + 1, n_shards)
    merged = _sharded(gt, shards, "coco", "segm", {})
    _assert_same(merged, ioukit.evaluate(gt, pred, iou_type="segm"))


def test_image_in_two_shards_names_both() -> None:
    gt, pred = _dataset(7, 4)
    rows = np.flatnonzero(pred.image_index == pred.image_index[0])
    names = ["a.json", "b.json"]
    results = [_worker(gt, _subset(pred, rows), n, "coco", "bbox", {}) for n in names]
    with pytest.raises(DataFormatError, match=r"a\.json, b\.json: image 'im\d' \(id \d+\)"):
        _merge(_runner("coco", "bbox", {}), gt, results, names, "bbox")


def test_no_shards_and_empty_shards() -> None:
    gt, pred = _dataset(11, 3)
    empty = _subset(pred, np.zeros(0, dtype=np.int64))
    for protocol in ("coco", "openimages"):
        none = _merge(_runner(protocol, "bbox", {}), gt, [], [], "bbox")
        want = ioukit.evaluate(gt, empty, protocol=protocol)
        _assert_same(none, want)
        _assert_same(_sharded(gt, [empty, empty], protocol, "bbox", {}), want)


def test_concat_predictions_checks_tables() -> None:
    gt, pred = _dataset(3, 2)
    other, _ = _dataset(4, 3)
    with pytest.raises(DataFormatError, match="at least one"):
        concat_predictions([])
    with pytest.raises(DataFormatError, match=r"parts\[1\]: expected a prediction Dataset"):
        concat_predictions([pred, gt])
    moved = Dataset.from_arrays(
        other.images,
        pred.categories,
        boxes=[[0, 0, 1, 1]],
        image_index=[0],
        category_id=[1],
        scores=[0.5],
    )
    with pytest.raises(DataFormatError, match=r"parts\[1\]: expected the image table"):
        concat_predictions([pred, moved])


def test_coco_outcome_travels_compact_and_round_trips() -> None:
    gt, pred = _dataset(21, 6)
    images, n_pred, packed = _worker(gt, pred, "shard", "coco", "bbox", {})
    assert n_pred == len(pred) and images.tolist() == np.unique(pred.image_index).tolist()
    part = unpack(packed, np.sort(gt.images.ids))
    assert len(part) > 0
    # 8 score + 1 class row + 1 category id + 1 image rank (6 images) + 1 rank + 2 x 5 status
    # bytes, and the matches: 1 matched ground-truth row (uint8/int8 here) + 2 same-match
    # bits (10 thresholds); prediction rows and IoUs stay on the worker (constant: 0 bytes)
    per_class = ("other_row", "other_gt", "gt_count", "category_ids", "thresholds", "pred_count")
    extra = sum(_nbytes(value) for name, value in packed.fields if name in per_class)
    assert packed.nbytes == 25 * len(part) + extra
    groups, outcome = make_protocol("coco").match(gt, pred)
    # rows of the ground truth given (the worker matched only its images' ground truth)
    for name in ("first_gt", "same_bits", "other_gt", "other_row", "status", "score", "rank"):
        np.testing.assert_array_equal(getattr(part, name), getattr(outcome, name), err_msg=name)
    for name in ("category_id", "image_id", "class_row", "tp_bits", "ignored_bits"):
        got, want = getattr(part, name), getattr(outcome, name)
        np.testing.assert_array_equal(got, want, err_msg=name)
        assert got.dtype == want.dtype, name
    assert (part.pred_row == -1).all() and np.isnan(part.first_iou).all()
    np.testing.assert_array_equal(part.pred_count, np.bincount(groups.pred_class, minlength=3)[:3])


def test_pack_round_trips_bit_for_bit() -> None:
    gt, pred = _dataset(5, 4)
    _, outcome = make_protocol("coco").match(gt, pred)
    ids = np.sort(gt.images.ids)
    back = unpack(pack(outcome, ids), ids)
    for f in dataclasses.fields(outcome):
        got, want = getattr(back, f.name), getattr(outcome, f.name)
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and got.shape == want.shape, f.name
            np.testing.assert_array_equal(got, want, err_msg=f.name)
        else:
            assert got == want, f.name


def _runs(seed: int, n_shards: int, ties: bool) -> tuple[np.ndarray, ...]:
    """Records of ``n_shards`` shards (disjoint images), each in accumulation order."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 200))
    cls = rng.integers(0, 4, n)
    score = rng.choice([0.1, 0.5, -0.0, 0.0, 0.9], n) if ties else rng.random(n)
    image = rng.integers(0, 12, n)
    rank = rng.integers(0, 5, n)
    shard = image % n_shards
    parts = []
    for s in range(n_shards):
        rows = np.flatnonzero(shard == s)
        rows = rows[np.lexsort((rank[rows], image[rows], -score[rows], cls[rows]))]
        parts.append(rows)
    rows = np.concatenate(parts)
    return cls[rows], score[rows], image[rows], rank[rows]


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_shards=st.integers(1, 6), ties=st.booleans())
def test_merge_order_equals_the_full_sort(seed: int, n_shards: int, ties: bool) -> None:
    cls, score, image, rank = _runs(seed, n_shards, ties)
    expected = np.lexsort((rank, image, -score, cls))
    np.testing.assert_array_equal(merge_order(cls, score, image, 12), expected)
    # keys too wide for one integer: the lexsort route gives the same order
    np.testing.assert_array_equal(merge_order(cls, score, image, 2**61), expected)


@pytest.mark.parametrize(
    "options",
    [
        {"use_cats": False},
        {"max_dets": (1, 3, 5)},
        {"iou_thresholds": (0.3, 0.5), "area_ranges": {"tiny": (0, 20), "rest": (20, 1e10)}},
        {"compat": "pycocotools"},
    ],
)
def test_coco_options_merge_bit_for_bit(options: dict[str, Any]) -> None:
    for seed in range(8):
        gt, pred = _dataset(seed, 6)
        shards = _shards(pred, seed + 1, 3)
        merged = _sharded(gt, shards, "coco", "bbox", options)
        _assert_same(merged, ioukit.evaluate(gt, pred, **options))


def _rotated(gt: Dataset, pred: Dataset, seed: int) -> tuple[Dataset, Dataset]:
    """The pair with a ``rotated`` column (the boxes' centre and size, a random angle); the
    crowds become ``ignore`` (rotated IoU has no crowd regions)."""
    rng = np.random.default_rng(seed)

    def with_angle(d: Dataset) -> Dataset:
        b = d.boxes
        cxcywh = np.stack(
            [
                (b[:, 0] + b[:, 2]) / 2,
                (b[:, 1] + b[:, 3]) / 2,
                b[:, 2] - b[:, 0],
                b[:, 3] - b[:, 1],
            ],
            axis=1,
        )
        angle = rng.choice([0.0, 10.0, 45.0, -30.0], size=(len(d), 1))
        return dataclasses.replace(d, rotated=np.concatenate([cxcywh, angle], axis=1))

    gt = dataclasses.replace(gt, ignore=gt.crowd, crowd=np.zeros(len(gt), dtype=bool))
    return with_angle(gt), with_angle(pred)


@pytest.mark.parametrize("iou_type", ["rotated", "probiou", "bbox-float32"])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(1, 8), n_shards=st.integers(1, 5))
def test_other_similarities_merge_bit_for_bit(
    iou_type: str, seed: int, n_images: int, n_shards: int
) -> None:
    gt, pred = _rotated(*_dataset(seed, n_images), seed)
    shards = _shards(pred, seed + 1, n_shards)
    merged = _sharded(gt, shards, "coco", iou_type, {})
    _assert_same(merged, ioukit.evaluate(gt, pred, iou_type=iou_type))


@pytest.mark.parametrize(
    "options", [{}, {"compat": "pycocotools"}, {"sigmas": [0.05] * 5, "max_dets": (5, 20)}]
)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(1, 10), n_shards=st.integers(1, 5))
def test_keypoints_merge_bit_for_bit(
    options: dict[str, Any], seed: int, n_images: int, n_shards: int
) -> None:
    from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
    from tests.keypoints_data import make_keypoint_set

    k = len(options.get("sigmas", [0] * 17))
    gt_dict, results = make_keypoint_set(
        n_images, num_keypoints=k, num_classes=2, min_people=1, max_people=4, seed=seed % 2**31
    )
    gt = read_coco_keypoints(gt_dict)
    pred = read_coco_keypoint_results(results, gt) if results else None
    if pred is None:
        return
    shards = _shards(pred, seed + 1, n_shards)
    merged = _sharded(gt, shards, "coco", "keypoints", options)
    single = ioukit.evaluate(gt, pred, iou_type="keypoints", **options)
    _assert_same(merged, single)
    assert merged.summary() == single.summary()


def test_keypoint_shard_files(tmp_path: Any) -> None:
    import json

    from tests.keypoints_data import make_keypoint_set

    gt_dict, results = make_keypoint_set(12, num_classes=2, min_people=1, max_people=5, seed=3)
    gt_path = tmp_path / "gt.json"
    gt_path.write_text(json.dumps(gt_dict))
    paths = []
    for s in range(3):
        path = tmp_path / f"shard{s}.json"
        mine = [r for r in results if (r["image_id"] // 7) % 3 == s]
        path.write_text(json.dumps(mine))
        paths.append(str(path))
    gt, runner = _prepared(gt_path, "coco", "keypoints")
    partials = [_shard_partial((gt, runner), p, p, "keypoints") for p in paths]
    merged = _merge(runner, gt, partials, paths, "keypoints")
    single = ioukit.evaluate(gt_path, results, iou_type="keypoints")
    _assert_same(merged, single)
    assert merged.stats["AP"] > 0


@pytest.mark.parametrize(
    ("kw", "options"),
    [
        ({}, {}),
        ({"dets_per_image": (250, 420), "score_levels": 7}, {}),  # the per-image cap, ties
        ({"score_levels": 5, "ignore": 0.1}, {"max_dets": 40}),
    ],
)
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_shards=st.integers(1, 5))
def test_lvis_merge_bit_for_bit(
    kw: dict[str, Any], options: dict[str, Any], seed: int, n_shards: int
) -> None:
    from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results
    from tests.lvis_reference import generate

    gt_dict, results = generate(seed, n_images=10, n_cats=12, **kw)
    gt = read_lvis_ground_truth(gt_dict)
    pred = read_lvis_results(results, gt)
    shards = _shards(pred, seed + 1, n_shards)
    names = [f"shards[{i}]" for i in range(n_shards)]
    partials = [
        _worker(gt, s, n, "lvis", "bbox", options) for s, n in zip(shards, names, strict=True)
    ]
    merged = _merge(_runner("lvis", "bbox", options), gt, partials, names, "bbox")
    single = ioukit.evaluate(gt, pred, protocol="lvis", **options)
    _assert_same(merged, single)
    assert merged.summary() == single.summary()


def test_lvis_fixed_ap_is_refused() -> None:
    with pytest.raises(ValueError, match="fixed_ap: Fixed AP keeps the top results"):
        ioukit.evaluate_sharded({"images": []}, [], protocol="lvis", fixed_ap=True)


def test_lvis_segm_shard_files(tmp_path: Any) -> None:
    import json

    mask_utils = pytest.importorskip("pycocotools.mask")
    from tests.evaluation.protocols.test_lvis_api import _ellipse
    from tests.lvis_reference import generate

    gt_dict, results = generate(5, n_images=8, n_cats=8, dets_per_image=(5, 30), zero_area=0.0)
    h, w = 480, 640
    for a in gt_dict["annotations"]:
        a["segmentation"] = [_ellipse(a["bbox"])]
    for r in results:
        m = mask_utils.merge(mask_utils.frPyObjects([_ellipse(r.pop("bbox"))], h, w))
        r["segmentation"] = {"size": [h, w], "counts": m["counts"].decode("ascii")}
    for im in gt_dict["images"]:
        im["height"], im["width"] = h, w
    gt_path = tmp_path / "gt.json"
    gt_path.write_text(json.dumps(gt_dict))
    paths = []
    for s in range(3):
        path = tmp_path / f"shard{s}.json"
        path.write_text(json.dumps([r for r in results if r["image_id"] % 3 == s]))
        paths.append(str(path))
    gt, runner = _prepared(gt_path, "lvis", "segm")
    partials = [_shard_partial((gt, runner), p, p, "segm") for p in paths]
    merged = _merge(runner, gt, partials, paths, "segm")
    single = ioukit.evaluate(str(gt_path), results, protocol="lvis", iou_type="segm")
    assert single.stats["AP"] > 0
    _assert_same(merged, single)


def _other_category(pred: Dataset, seed: int) -> Dataset:
    """``pred`` over a category table with one class the ground truth lacks (some rows)."""
    rng = np.random.default_rng(seed)
    cats = CategoryTable.from_lists([1, 2, 5, 9], ["a", "b", "c", "x"])
    category_id = np.where(rng.random(len(pred)) < 0.15, 9, pred.category_id)
    return dataclasses.replace(pred, categories=cats, category_id=category_id)


@pytest.mark.parametrize(
    ("protocol", "options"),
    [
        ("voc10", {"pixel_inclusive": True, "strict_threshold": True}),
        ("voc07", {"exact_grid": True, "iou_threshold": 0.3}),
        ("yolo", {"stable_ties": True}),
        ("yolo", {"iou_thresholds": [0.3, 0.5]}),
    ],
)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(1, 8), n_shards=st.integers(1, 5))
def test_voc_yolo_options_merge_bit_for_bit(
    protocol: str, options: dict[str, Any], seed: int, n_images: int, n_shards: int
) -> None:
    gt, pred = _dataset(seed, n_images)
    pred = _other_category(pred, seed + 3)
    shards = _shards(pred, seed + 1, n_shards)
    merged = _sharded(gt, shards, protocol, "bbox", options)
    single = ioukit.evaluate(gt, concat_predictions(shards), protocol=protocol, **options)
    _assert_same(merged, single)


def test_matched_outcome_travels_compact() -> None:
    gt, pred = _dataset(21, 6)
    for protocol, bits in (("voc10", 1), ("yolo", 2)):
        _, _, packed = _worker(gt, pred, "shard", protocol, "bbox", {})
        outcome = dict(packed.fields)["outcome"]
        n = len(pred)
        assert len(unpack(outcome, np.sort(gt.images.ids))) == n > 0  # every prediction
        # score; class row, category id, image rank, row and rank in the shard (1 byte each
        # here); the TRUE_POSITIVE plane of 1 (VOC: one threshold) or 2 bytes (YOLO: ten), the
        # IGNORED one costs nothing (constant: no difficult ground truth); no matches or IoUs
        per_record_arrays = sum(
            _nbytes(v)
            for name, v in outcome.fields
            if name not in ("gt_count", "category_ids", "thresholds", "other_row", "other_gt")
        )
        assert per_record_arrays == (8 + 5 + bits) * n


@pytest.mark.parametrize("iou_type", ["rotated", "probiou"])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(1, 8), n_shards=st.integers(1, 5))
def test_yolo_obb_merge_bit_for_bit(iou_type: str, seed: int, n_images: int, n_shards: int) -> None:
    gt, pred = _rotated(*_dataset(seed, n_images), seed)
    shards = _shards(pred, seed + 1, n_shards)
    merged = _sharded(gt, shards, "yolo", iou_type, {})
    _assert_same(merged, ioukit.evaluate(gt, pred, protocol="yolo", iou_type=iou_type))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_images=st.integers(1, 10), n_shards=st.integers(1, 5))
def test_yolo_pose_merge_bit_for_bit(seed: int, n_images: int, n_shards: int) -> None:
    from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
    from tests.keypoints_data import make_keypoint_set

    gt_dict, results = make_keypoint_set(n_images, min_people=1, max_people=4, seed=seed)
    if not results:
        return
    gt = read_coco_keypoints(gt_dict)
    pred = read_coco_keypoint_results(results, gt)
    shards = _shards(pred, seed + 1, n_shards)
    merged = _sharded(gt, shards, "yolo", "keypoints", {})
    _assert_same(merged, ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints"))


@pytest.mark.parametrize("iou_type", ["bbox", "segm"])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(1, 8), n_shards=st.integers(1, 5))
def test_slices_resampling_bootstrap_of_sharded_coco_equal_one_process(
    iou_type: str, seed: int, n_images: int, n_shards: int
) -> None:
    gt, pred = _dataset(seed, n_images, segm=iou_type == "segm")
    shards = _shards(pred, seed + 1, n_shards)
    merged = _sharded(gt, shards, "coco", iou_type, {})
    assert_same_analysis(merged, ioukit.evaluate(gt, pred, iou_type=iou_type), seed)


@pytest.mark.parametrize(
    "options",
    [
        {"use_cats": False},
        {"compat": "pycocotools"},
        {"max_dets": [1, 2]},  # predictions cut by max_dets stay on the workers
        {"use_cats": False, "max_dets": [1, 3]},
    ],
)
def test_slices_resampling_of_sharded_coco_options(options: dict[str, Any]) -> None:
    for seed in range(4):
        gt, pred = _dataset(seed, 7)
        shards = _shards(pred, seed + 1, 3)
        merged = _sharded(gt, shards, "coco", "bbox", options)
        assert_same_analysis(merged, ioukit.evaluate(gt, pred, **options), seed)


def test_keypoint_sharded_slices_equal_one_process() -> None:
    from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
    from tests.keypoints_data import make_keypoint_set

    gt_dict, results = make_keypoint_set(8, min_people=1, max_people=4, seed=3)
    gt = read_coco_keypoints(gt_dict)
    pred = read_coco_keypoint_results(results, gt)
    merged = _sharded(gt, _shards(pred, 4, 3), "coco", "keypoints", {})
    assert_same_analysis(merged, ioukit.evaluate(gt, pred, iou_type="keypoints"), 3)


@pytest.mark.parametrize("options", [{}, {"dilation_ratio": 0.1, "compat": "faster_coco_eval"}])
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(1, 6), n_shards=st.integers(1, 4))
def test_boundary_merges_bit_for_bit(
    options: dict[str, Any], seed: int, n_images: int, n_shards: int
) -> None:
    """Boundary AP (iou_type="boundary", a COCO variant registered by its similarity) shards
    as COCO does; its ``dilation_ratio`` is in the merged params as in one process's."""
    gt, pred = _dataset(seed, n_images, segm=True)
    shards = _shards(pred, seed + 1, n_shards)
    merged = _sharded(gt, shards, "coco", "boundary", options)
    single = ioukit.evaluate(gt, pred, iou_type="boundary", **options)
    _assert_same(merged, single)
    assert merged.params["dilation_ratio"] == options.get("dilation_ratio", 0.02)
    assert merged.summary() == single.summary()
    assert_same_analysis(merged, single, seed)  # slices, resampling, bootstrap, compare


def test_boundary_shard_files(tmp_path: Any) -> None:
    import json

    gt, pred = _dataset(3, 9)

    def rle(box: np.ndarray) -> dict[str, Any]:  # the box's rectangle as a mask
        mask = np.zeros((1, 24, 24), dtype=bool)
        x1, y1, x2, y2 = box.astype(int).tolist()
        mask[0, y1:y2, x1:x2] = True
        m = ioukit.masks.encode(mask)[0]
        counts = m["counts"]
        return {"size": [24, 24], "counts": counts if isinstance(counts, str) else counts.decode()}

    ids = gt.images.ids.tolist()
    gt_dict = {
        "images": [{"id": i, "width": 24, "height": 24, "file_name": f"{i}.png"} for i in ids],
        "categories": [{"id": c, "name": str(c)} for c in gt.categories.ids.tolist()],
        "annotations": [
            {
                "id": j + 1,
                "image_id": ids[int(gt.image_index[j])],
                "category_id": int(gt.category_id[j]),
                "bbox": np.concatenate(
                    [gt.boxes[j, :2], gt.boxes[j, 2:] - gt.boxes[j, :2]]
                ).tolist(),
                "area": float(gt.area[j]),
                "iscrowd": int(gt.crowd[j]),
                "segmentation": rle(gt.boxes[j]),
            }
            for j in range(len(gt))
        ],
    }
    results = [
        {
            "image_id": ids[int(pred.image_index[j])],
            "category_id": int(pred.category_id[j]),
            "segmentation": rle(pred.boxes[j]),
            "score": float(pred.scores[j]),
        }
        for j in range(len(pred))
    ]
    gt_path = tmp_path / "gt.json"
    gt_path.write_text(json.dumps(gt_dict))
    paths = []
    for s in range(3):
        path = tmp_path / f"shard{s}.json"
        path.write_text(json.dumps([r for r in results if r["image_id"] % 3 == s]))
        paths.append(str(path))
    read, runner = _prepared(gt_path, "coco", "boundary")
    partials = [_shard_partial((read, runner), p, p, "boundary") for p in paths]
    merged = _merge(runner, read, partials, paths, "boundary")
    single = ioukit.evaluate(str(gt_path), results, iou_type="boundary")
    assert single.stats["AP"] > 0
    _assert_same(merged, single)


@pytest.mark.parametrize(
    ("protocol", "iou_type"),
    [("citypersons", "bbox"), ("crowdhuman", "bbox"), ("caltech", "bbox"), ("panoptic", "segm")],
)
def test_protocols_that_do_not_shard_are_refused_naming_the_protocol(
    protocol: str, iou_type: str
) -> None:
    """The pedestrian miss-rate protocols and panoptic quality do not shard: refused before any
    work (no cluster is started), naming the protocol; ``sharded_pairs`` does not list them."""
    from ioukit.distributed import sharded_pairs

    assert not any(p == protocol for p, _ in sharded_pairs())
    with pytest.raises(ValueError, match="evaluate_sharded supports") as info:
        ioukit.evaluate_sharded({"images": []}, [], protocol=protocol)
    message = str(info.value)
    assert message.startswith("protocol, iou_type: evaluate_sharded supports coco/bbox, ")
    assert message.endswith(
        f"got {protocol}/{iou_type} (protocol {protocol!r} with iou_type {iou_type!r} evaluates "
        "in one process: ioukit.evaluate)"
    )
    assert ("coco", "boundary") in sharded_pairs()
