"""Slices and resamples against pycocotools run on the actually sliced / duplicated datasets."""

from __future__ import annotations

import contextlib
import copy
import io
import re
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.resample import ResamplePlan, image_counts, resample, slice_result, slices
from ioukit.errors import ParameterError
from ioukit.synthetic import add_masks, make_detections, make_keypoints
from tests.coco_reference import run_pycocotools

pytest.importorskip("pycocotools")
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def _data(seed: int, **kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    options: dict[str, Any] = {
        "num_images": 30,
        "num_classes": 4,
        "gt_per_image": 4.0,
        "fp_per_image": 6.0,
        "crowd_fraction": 0.1,
        "empty_gt_images": 0.15,
        "empty_pred_images": 0.15,
        "score_levels": 6,  # heavy ties, inside images too
        "seed": seed,
    }
    options.update(kw)
    return make_detections(**options)


def _duplicated(
    gt: dict[str, Any], res: list[dict[str, Any]], counts: dict[int, int]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    # image i appears counts[i] times, copies adjacent: new ids i * M + j
    m = max([*counts.values(), 1]) + 1
    images, anns, dets = [], [], []
    by_image: dict[int, list[dict[str, Any]]] = {}
    for a in gt["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    det_by_image: dict[int, list[dict[str, Any]]] = {}
    for d in res:
        det_by_image.setdefault(d["image_id"], []).append(d)
    next_id = 1
    for image in gt["images"]:
        i = image["id"]
        for j in range(counts.get(i, 0)):
            new = i * m + j
            images.append({**image, "id": new})
            for a in by_image.get(i, []):
                anns.append({**copy.deepcopy(a), "id": next_id, "image_id": new})
                next_id += 1
            for d in det_by_image.get(i, []):
                dets.append({**copy.deepcopy(d), "image_id": new})
    return {**gt, "images": images, "annotations": anns}, dets


def _assert_same(ours: ioukit.EvaluationResult, ref: Any) -> None:
    got = np.array(list(ours.stats.values())[:12])
    want = np.asarray(ref.stats[:12], dtype=float)
    assert np.array_equal(got, want), f"\n ioukit: {got.tolist()}\n pycoco: {want.tolist()}"
    for key in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(ours.result.arrays[key], ref.eval[key], err_msg=key)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_resample_equals_pycocotools_on_duplicated_dataset(seed: int) -> None:
    gt, res = _data(seed)
    r = ioukit.evaluate(gt, res)
    rng = np.random.default_rng(seed)
    counts = {
        im["id"]: int(c)
        for im, c in zip(gt["images"], rng.integers(0, 4, len(gt["images"])), strict=False)
    }
    dup_gt, dup_res = _duplicated(gt, res, counts)
    ours = resample(r, counts)
    _assert_same(ours, run_pycocotools(dup_gt, dup_res, {}))
    # the per-class table counts the copies
    num_gt = sum(c["num_gt"] for c in ours.per_class)
    assert num_gt == sum(1 for a in dup_gt["annotations"] if not a["iscrowd"])
    assert sum(c["num_pred"] for c in ours.per_class) == len(dup_res)


def test_resample_tie_blocks_interleave_copies() -> None:
    # one image, three detections of one class with one score: copies go r1 r2 r3 r1 r2 r3
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}, {"id": 2, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            },
            {
                "id": 2,
                "image_id": 2,
                "category_id": 1,
                "bbox": [0, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            },
        ],
    }
    res = [
        {"image_id": 1, "category_id": 1, "bbox": [50, 50, 10, 10], "score": 0.5},
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},
        {"image_id": 1, "category_id": 1, "bbox": [30, 30, 10, 10], "score": 0.5},
        {"image_id": 2, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},
    ]
    r = ioukit.evaluate(gt, res)
    counts = {1: 3, 2: 2}
    plan = ResamplePlan.build(r.outcome, r.ground_truth.images.ids)
    c = image_counts(r.ground_truth, counts)
    order = plan.order(c)
    # image 1's block of 3 then image 2's single record twice
    assert order.tolist() == [0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 3]
    _assert_same(resample(r, counts), run_pycocotools(*_duplicated(gt, res, counts), {}))


def test_resample_all_ones_is_the_evaluation() -> None:
    gt, res = _data(5)
    r = ioukit.evaluate(gt, res)
    same = resample(r, {im["id"]: 1 for im in gt["images"]})
    assert same.stats == r.stats
    for key in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(same.result.arrays[key], r.result.arrays[key])


@pytest.mark.parametrize("seed", [3, 4])
def test_slice_by_image_ids_equals_pycocotools_img_ids(seed: int) -> None:
    gt, res = _data(seed, image_ids=list(np.random.default_rng(seed).permutation(30) + 7))
    r = ioukit.evaluate(gt, res)
    ids = [im["id"] for im in gt["images"]][::3]
    ours = slice_result(r, image_ids=ids)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        e = COCOeval(coco, coco.loadRes(copy.deepcopy(res)), "bbox")
        e.params.imgIds = ids
        e.evaluate()
        e.accumulate()
        e.summarize()
    _assert_same(ours, e)


def test_slice_where_drops_objects_and_ignores_their_matches() -> None:
    gt, res = _data(6, score_levels=0)
    r = ioukit.evaluate(gt, res)
    keep = r.ground_truth.area > 500.0
    s = slice_result(r, where=keep)
    regular = ~(r.ground_truth.crowd | r.ground_truth.ignore)
    assert sum(c["num_gt"] for c in s.per_class) == int((keep & regular).sum())
    # every prediction matched at IoU 0.5 to a dropped object is ignored there
    o, so = r.outcome, s.outcome
    m = o.matched_gt_at(0)
    dropped = (m >= 0) & ~keep[np.maximum(m, 0)]
    assert dropped.any()
    assert np.all(so.status_at(0, 0)[dropped] == 2)
    assert np.array_equal(so.status_at(0, 0)[~dropped], o.status_at(0, 0)[~dropped])
    # keeping everything changes nothing; a callable works the same
    assert slice_result(r, where=lambda g: np.ones(len(g), bool)).stats == r.stats
    assert slice_result(r, where=lambda g: g.area > 500.0).stats == s.stats


def test_slice_where_all_area_range_equals_pycocotools_marking_dropped_as_ignored() -> None:
    # a dropped object with no other object nearby: pycocotools with that object marked
    # ignore gives the same "all"-range numbers (the match is the same, it then is ignored)
    gt, res = _data(7, score_levels=0, crowd_fraction=0.0)
    r = ioukit.evaluate(gt, res)
    keep = np.ones(len(r.ground_truth), bool)
    keep[::5] = False
    s = slice_result(r, where=keep)
    marked = copy.deepcopy(gt)
    for i, a in enumerate(marked["annotations"]):
        a["ignore"] = 0 if keep[i] else 1
    ref = ioukit.evaluate(marked, res)
    assert s.stats["AP50"] == pytest.approx(ref.stats["AP50"], abs=0.02)


def test_slices_table_has_deltas_to_the_whole() -> None:
    gt, res = _data(8)
    r = ioukit.evaluate(gt, res)
    ids = [im["id"] for im in gt["images"]]
    t = slices(r, {"all": ids, "half": {"image_ids": ids[:15]}})
    rows = {row["slice"]: row for row in t.rows()}
    assert rows["all"]["delta_AP"] == 0.0
    assert rows["half"]["delta_AP"] == pytest.approx(rows["half"]["AP"] - r.stats["AP"])
    assert "half" in t.to_text()
    assert r.slices({"half": ids[:15]}).rows()[0]["AP"] == rows["half"]["AP"]
    assert r.slice(image_ids=ids[:15]).stats == t.results["half"].stats
    assert r.resample({ids[0]: 2}).stats == resample(r, {ids[0]: 2}).stats


def test_bad_counts_name_the_image() -> None:
    gt, res = _data(9)
    r = ioukit.evaluate(gt, res)
    with pytest.raises(ParameterError, match="image id 99999 is not an image"):
        resample(r, {99999: 1})
    first = gt["images"][0]["id"]
    with pytest.raises(ParameterError, match=rf"counts\[{first}\]: expected a non-negative"):
        resample(r, {first: -1})
    with pytest.raises(ParameterError, match=rf"counts\[{first}\]: expected a non-negative"):
        resample(r, {first: 1.5})
    with pytest.raises(ParameterError, match="counts: expected a mapping"):
        resample(r, [1, 2])
    with pytest.raises(ParameterError, match="image id 123456 is not an image"):
        slice_result(r, image_ids=[123456])
    with pytest.raises(ParameterError, match="where: expected"):
        slice_result(r, where=np.ones(3, bool))


def test_other_protocols_are_refused_by_name() -> None:
    gt, res = _data(10)
    r = ioukit.evaluate(gt, res, protocol="voc10")
    with pytest.raises(ParameterError, match="protocol 'voc10'"):
        resample(r, {gt["images"][0]["id"]: 1})


def _pycocotools_on(
    gt: dict[str, Any],
    res: list[dict[str, Any]],
    iou_type: str = "bbox",
    img_ids: list[int] | None = None,
) -> Any:
    # pycocotools on the filtered data itself (an independent rerun, not our slice)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        e = COCOeval(coco, coco.loadRes(copy.deepcopy(res)), iou_type)
        if img_ids is not None:
            e.params.imgIds = img_ids
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def _assert_same_all(ours: ioukit.EvaluationResult, ref: Any) -> None:
    # every stat (10 for keypoints, 12 otherwise) and the arrays, bit for bit
    n = len(ref.stats)
    got = np.array(list(ours.stats.values())[:n])
    want = np.asarray(ref.stats, dtype=float)
    assert np.array_equal(got, want), f"\n ioukit: {got.tolist()}\n pycoco: {want.tolist()}"
    for key in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(ours.result.arrays[key], ref.eval[key], err_msg=key)


def _without_category(gt: dict[str, Any], category_id: int) -> dict[str, Any]:
    kept = [a for a in gt["annotations"] if a["category_id"] != category_id]
    return {**gt, "annotations": kept}


def test_slice_where_drops_a_whole_class_equals_pycocotools_without_its_objects() -> None:
    # a class left with predictions and no ground truth: AP -1 for that class, as pycocotools
    # gives on the data with its objects removed (matches are per class: no re-match differs)
    gt, res = _data(11)
    r = ioukit.evaluate(gt, res)
    first = gt["categories"][0]["id"]
    s = r.slice(where=r.ground_truth.category_id != first)
    _assert_same_all(s, _pycocotools_on(_without_category(gt, first), res))
    row = next(c for c in s.per_class if c["category_id"] == first)
    assert row["AP"] == -1.0 and row["num_gt"] == 0 and row["num_pred"] > 0


def test_slice_without_any_ground_truth_equals_pycocotools() -> None:
    # no object kept at all, no object in the data at all, and images with predictions only:
    # no IndexError, pycocotools' -1 everywhere
    gt, res = _data(12)
    r = ioukit.evaluate(gt, res)
    empty = {**gt, "annotations": []}
    none_kept = np.zeros(len(r.ground_truth), bool)
    _assert_same_all(r.slice(where=none_kept), _pycocotools_on(empty, res))
    bare = ioukit.evaluate(empty, res)
    _assert_same_all(bare.slice(where=np.zeros(0, bool)), _pycocotools_on(empty, res))
    _assert_same_all(bare.slice(where=lambda g: g.area > 0), _pycocotools_on(empty, res))
    with_gt = {a["image_id"] for a in gt["annotations"]}
    pred_only = sorted({d["image_id"] for d in res} - with_gt)
    assert pred_only
    _assert_same_all(r.slice(image_ids=pred_only), _pycocotools_on(gt, res, img_ids=pred_only))
    # no image at all: pycocotools with params.imgIds = [] accumulates nothing (-1)
    _assert_same_all(r.slice(image_ids=[]), _pycocotools_on(gt, res, img_ids=[]))


@pytest.mark.parametrize("seed", [0, 1])
def test_segm_slices_equal_pycocotools_reruns(seed: int) -> None:
    gt, res = add_masks(*_data(20 + seed, num_images=16))
    r = ioukit.evaluate(gt, res, iou_type="segm")
    ids = [im["id"] for im in gt["images"]][seed::2]
    _assert_same_all(r.slice(image_ids=ids), _pycocotools_on(gt, res, "segm", img_ids=ids))
    last = gt["categories"][-1]["id"]
    s = r.slice(image_ids=ids, where=r.ground_truth.category_id != last)
    _assert_same_all(s, _pycocotools_on(_without_category(gt, last), res, "segm", img_ids=ids))


@pytest.mark.parametrize("seed", [0, 1])
def test_keypoint_slices_equal_pycocotools_reruns(seed: int) -> None:
    gt, res = make_keypoints(14, num_classes=2, crowd_rate=0.15, seed=seed)
    r = ioukit.evaluate(gt, res, iou_type="keypoints")
    ids = [im["id"] for im in gt["images"]][::3]
    ref = _pycocotools_on(gt, res, "keypoints", img_ids=ids)
    _assert_same_all(r.slice(image_ids=ids), ref)
    one = gt["categories"][0]["id"]
    s = r.slice(where=r.ground_truth.category_id != one)
    _assert_same_all(s, _pycocotools_on(_without_category(gt, one), res, "keypoints"))


@pytest.mark.parametrize(
    ("where", "got"),
    [
        (lambda g: np.ones(len(g) - 1, bool), "dtype bool and shape ({n1},)"),
        (lambda g: np.ones(len(g), np.int64), "dtype int64 and shape ({n},)"),
        (lambda g: np.ones((len(g), 1), bool), "dtype bool and shape ({n}, 1)"),
        (lambda g: [1.0] * len(g), "dtype float64 and shape ({n},)"),
    ],
)
def test_slice_where_of_the_wrong_length_or_dtype_names_it(where: Any, got: str) -> None:
    gt, res = _data(13)
    r = ioukit.evaluate(gt, res)
    n = len(r.ground_truth)
    message = (
        f"where: expected {n} booleans (one per ground-truth row) or a callable returning "
        "them, got " + got.format(n=n, n1=n - 1)
    )
    with pytest.raises(ParameterError, match="^" + re.escape(message) + "$"):
        r.slice(where=where(r.ground_truth))  # the array itself
    with pytest.raises(ParameterError, match="^" + re.escape(message) + "$"):
        r.slice(where=where)  # a callable returning it
    with pytest.raises(ParameterError, match=r"^image_ids: expected a sequence of integer"):
        r.slice(image_ids=[1.5, 2.0])
