"""The evaluation pipeline (#10): validation once on every route, exact thresholds (#16 item 2),
thread-safe ``Evaluator.update`` (#16 item 5), mergeable match outcomes, registries."""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.errors import DataFormatError
from ioukit.evaluation import (
    Groups,
    MatchOutcome,
    MatchRule,
    get_similarity,
    grouping,
    make_protocol,
    match_groups,
    protocol_names,
)
from ioukit.evaluation.registry import register_similarity, similarity_names
from ioukit.evaluator import Evaluator
from tests.coco_reference import run_pycocotools

# ------------------------------------------------------------------ #16 item 2: exact thresholds


def _one_pair(gt_box: list[float], res_box: list[float]) -> tuple[dict[str, Any], list[Any]]:
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": gt_box, "area": 5.0, "iscrowd": 0}
        ],
    }
    return gt, [{"image_id": 1, "category_id": 1, "bbox": res_box, "score": 0.9}]


def test_iou_exactly_on_a_threshold_is_pycocotools_arithmetic() -> None:
    # IoU exactly 0.75 in pycocotools' bbIou (areas w*h from the source xywh); from converted
    # corners the gt area differs in the last bit and the match at 0.75 was lost
    gt, res = _one_pair([1.8, 0.5, 3.2, 1.7], [2.4, 0.5, 2.4, 1.7])
    stats = evaluate(gt, res).stats
    assert [round(stats[k], 3) for k in ("AP", "AP50", "AP75")] == [0.6, 1.0, 1.0]


def _threshold_exact(seed: int, n_images: int = 60) -> tuple[dict[str, Any], list[Any]]:
    """Predictions inside their gt horizontally with width t * w: IoU exactly t in reals."""
    rng = np.random.default_rng(seed)
    images, anns, res = [], [], []
    for i in range(1, n_images + 1):
        images.append({"id": i, "width": 640, "height": 480})
        for _ in range(int(rng.integers(1, 5))):
            w = 2.0 * int(rng.integers(1, 40)) + float(rng.integers(0, 10)) / 10 * 0
            x, y = round(float(rng.uniform(0, 300)), 1), round(float(rng.uniform(0, 300)), 1)
            h = round(float(rng.uniform(1, 50)), 1)
            a_id = len(anns) + 1
            anns.append(
                {
                    "id": a_id,
                    "image_id": i,
                    "category_id": 1,
                    "bbox": [x, y, w, h],
                    "area": w * h,
                    "iscrowd": 0,
                }
            )
            t = int(rng.integers(10, 20)) / 20  # 0.50 ... 0.95
            wp = round(t * w, 1)
            dx = round(float(rng.integers(0, round((w - wp) * 10) + 1)) / 10, 1)
            res.append(
                {
                    "image_id": i,
                    "category_id": 1,
                    "bbox": [round(x + dx, 1), y, wp, h],
                    "score": round(float(rng.random()), 4),
                }
            )
    cats = [{"id": 1, "name": "a"}]
    return {"images": images, "annotations": anns, "categories": cats}, res


@pytest.mark.parametrize("seed", range(4))
def test_threshold_exact_boxes_match_pycocotools(seed: int) -> None:
    pytest.importorskip("pycocotools")
    gt, res = _threshold_exact(seed)
    ours = evaluate(gt, res)
    ref = run_pycocotools(gt, res, {})
    np.testing.assert_array_equal(np.array(list(ours.stats.values())), np.array(ref.stats))
    np.testing.assert_array_equal(ours.precision, ref.eval["precision"])
    np.testing.assert_array_equal(ours.recall, ref.eval["recall"])


# ------------------------------------------------------------------ validation on every route


def _coco(bbox: list[float], *, ann_ids: tuple[int, int] = (1, 2)) -> dict[str, Any]:
    return {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {
                "id": ann_ids[0],
                "image_id": 1,
                "category_id": 1,
                "bbox": bbox,
                "area": 100,
                "iscrowd": 0,
            },
            {
                "id": ann_ids[1],
                "image_id": 1,
                "category_id": 1,
                "bbox": [50, 50, 10, 10],
                "area": 100,
                "iscrowd": 0,
            },
        ],
    }


RES = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]


def test_duplicate_annotation_ids_refused_on_every_route(tmp_path: Path) -> None:
    gt = _coco([0, 0, 10, 10], ann_ids=(7, 7))
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(gt))
    with pytest.raises(DataFormatError, match=r"gt\.json: annotation_id\[1\]: expected unique"):
        evaluate(str(path), RES)
    with pytest.raises(DataFormatError, match=r"annotation_id\[1\]: expected unique"):
        evaluate(gt, RES)
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1], ["a"])
    with pytest.raises(DataFormatError, match=r"annotation_id\[1\]: expected unique"):
        Dataset.from_arrays(
            images,
            cats,
            boxes=[[0, 0, 1, 1]] * 2,
            image_index=[0, 0],
            category_id=[1, 1],
            annotation_id=[7, 7],
        )


@pytest.mark.parametrize("box_format", ["xyxy", "xywh", "cxcywh"])
@pytest.mark.parametrize(
    ("box", "problem"),
    [([np.nan, 0, 1, 1], "expected finite numbers"), ([0, 0, np.inf, 1], "expected finite")],
)
def test_evaluator_refuses_non_finite_boxes_in_every_format(
    box_format: str, box: list[float], problem: str
) -> None:
    ev = Evaluator(fmt=box_format)
    good = {"boxes": [[0, 0, 10, 10]], "labels": [1]}
    with pytest.raises(DataFormatError, match=rf"predictions\[0\]\.boxes\[0\]: {problem}"):
        ev.update([{"boxes": [box], "scores": [0.9], "labels": [1]}], [good])
    with pytest.raises(DataFormatError, match=rf"targets\[0\]\.boxes\[0\]: {problem}"):
        ev.update(
            [{"boxes": [[0, 0, 1, 1]], "scores": [0.9], "labels": [1]}],
            [{"boxes": [box], "labels": [1]}],
        )
    assert len(ev) == 0


def test_evaluator_refuses_inverted_boxes_nan_scores_and_areas() -> None:
    ev = Evaluator()
    target = {"boxes": [[0, 0, 10, 10]], "labels": [1]}
    with pytest.raises(DataFormatError, match=r"predictions\[0\]\.boxes\[0\]: expected x2 >= x1"):
        ev.update([{"boxes": [[10, 10, 0, 0]], "scores": [0.9], "labels": [1]}], [target])
    with pytest.raises(DataFormatError, match=r"targets\[0\]\.boxes\[0\]: expected x2 >= x1"):
        ev.update(
            [{"boxes": [], "scores": [], "labels": []}],
            [{"boxes": [[10, 10, 0, 0]], "labels": [1]}],
        )
    with pytest.raises(DataFormatError, match=r"predictions\[0\]\.scores\[0\]: expected a finite"):
        ev.update([{"boxes": [[0, 0, 1, 1]], "scores": [np.nan], "labels": [1]}], [target])
    with pytest.raises(DataFormatError, match=r"targets\[0\]\.area\[0\]: expected a finite"):
        ev.update([{"boxes": [], "scores": [], "labels": []}], [{**target, "area": [np.nan]}])
    with pytest.raises(DataFormatError, match=r"predictions\[0\]\.boxes\[0\]: expected a width"):
        Evaluator(fmt="xywh").update(
            [{"boxes": [[0, 0, -1, 1]], "scores": [0.9], "labels": [1]}], [target]
        )
    assert len(ev) == 0


def test_dataset_refuses_nan_inverted_unknown_category() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1], ["a"])
    kw: dict[str, Any] = {"image_index": [0], "category_id": [1]}
    with pytest.raises(DataFormatError, match=r"boxes\[0\]: expected finite"):
        Dataset.from_arrays(images, cats, boxes=[[np.nan] * 4], **kw)
    with pytest.raises(DataFormatError, match=r"boxes\[0\]: expected x2 >= x1"):
        Dataset.from_arrays(images, cats, boxes=[[5, 0, 1, 1]], **kw)
    with pytest.raises(DataFormatError, match=r"scores\[0\]: expected a finite"):
        Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], scores=[np.nan], **kw)
    with pytest.raises(DataFormatError, match=r"area\[0\]: expected a finite"):
        Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], area=[np.inf], **kw)
    with pytest.raises(DataFormatError, match=r"category_id\[0\]: expected an id"):
        Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], image_index=[0], category_id=[9])
    with pytest.raises(DataFormatError, match=r"rotated\[0\]: expected finite"):
        Dataset.from_arrays(
            images, cats, boxes=[[0, 0, 1, 1]], rotated=[[0, 0, 1, np.nan, 0]], **kw
        )
    with pytest.raises(DataFormatError, match=r"keypoints: expected shape \(1, K, 3\)"):
        Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], keypoints=[[1, 2]], **kw)
    ok = Dataset.from_arrays(
        images,
        cats,
        boxes=[[0, 0, 1, 1]],
        keypoints=np.zeros((1, 17, 3)),
        rotated=[[1, 1, 2, 2, 30]],
        group_of=[True],
        **kw,
    )
    assert ok.keypoints is not None and ok.keypoints.shape == (1, 17, 3)


def test_evaluate_datasets_with_other_image_order_is_refused() -> None:
    cats = CategoryTable.from_lists([1], ["a"])
    a = ImageTable.from_lists([1, 2], ["a", "b"])
    b = ImageTable.from_lists([2, 1], ["b", "a"])
    gt = Dataset.from_arrays(a, cats, boxes=[[0, 0, 1, 1]], image_index=[0], category_id=[1])
    pred = Dataset.from_arrays(
        b, cats, boxes=[[0, 0, 1, 1]], image_index=[1], category_id=[1], scores=[0.5]
    )
    with pytest.raises(DataFormatError, match="other ids or order"):
        evaluate(gt, pred)


def test_segm_results_with_numpy_bbox() -> None:
    rle = {"size": [4, 4], "counts": "448"}
    gt = {
        "images": [{"id": 1, "height": 4, "width": 4}],
        "categories": [{"id": 1}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "iscrowd": 0,
                "bbox": [1, 0, 1, 4],
                "area": 4,
                "segmentation": rle,
            }
        ],
    }
    dets = [
        {
            "image_id": 1,
            "category_id": 1,
            "segmentation": rle,
            "score": 0.9,
            "bbox": np.array([1.0, 0.0, 1.0, 4.0]),
        }
    ]
    assert round(evaluate(gt, dets, iou_type="segm").stats["AP"], 12) == 1.0


# ------------------------------------------------------------------ #16 item 5: threads


def test_evaluator_update_is_atomic_under_threads() -> None:
    rng = np.random.default_rng(0)
    ev = Evaluator()
    images = []
    for _ in range(400):
        xy = rng.uniform(0, 100, (3, 2))
        boxes = np.c_[xy, xy + rng.uniform(5, 50, (3, 2))]
        images.append(
            (
                {"boxes": boxes, "scores": [0.9, 0.8, 0.7], "labels": [1, 2, 1]},
                {"boxes": boxes.copy(), "labels": [1, 2, 1]},
            )
        )

    def work(part: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        for p, t in part:
            ev.update([p], [t])

    threads = [threading.Thread(target=work, args=(images[k::8],)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ev) == 400
    assert round(ev.compute().stats["AP"], 12) == 1.0


# ------------------------------------------------------------------ outcome, registries


def _pair(seed: int) -> tuple[Dataset, Dataset]:
    from tests.io.test_io_formats import make_pair

    return make_pair(seed=seed, n_images=30)


def test_outcome_of_disjoint_shards_merges_to_the_whole() -> None:
    gt, pred = _pair(3)
    rule = MatchRule()
    thr = np.linspace(0.5, 0.95, 10)
    ranges = (("all", 0.0, 1e10), ("small", 0.0, 1024.0))

    def outcome(g: Dataset, p: Dataset) -> MatchOutcome:
        groups = Groups.build(g, p, max_det=100)
        m = get_similarity("bbox").matrices(g, p, groups)
        return match_groups(g, p, groups, m, thresholds=thr, rule=rule, area_ranges=ranges)

    whole = outcome(gt, pred)
    parts = []
    for keep_images in (np.arange(len(gt.images)) % 2 == 0, np.arange(len(gt.images)) % 2 == 1):
        g_rows = np.flatnonzero(keep_images[gt.image_index])
        p_rows = np.flatnonzero(keep_images[pred.image_index])
        g = Dataset.from_arrays(
            gt.images,
            gt.categories,
            boxes=gt.boxes[g_rows],
            image_index=gt.image_index[g_rows],
            category_id=gt.category_id[g_rows],
            area=gt.area[g_rows],
            crowd=gt.crowd[g_rows],
            annotation_id=gt.annotation_id[g_rows],
        )
        p = Dataset.from_arrays(
            gt.images,
            gt.categories,
            boxes=pred.boxes[p_rows],
            image_index=pred.image_index[p_rows],
            category_id=pred.category_id[p_rows],
            scores=pred.scores[p_rows] if pred.scores is not None else None,
            area=pred.area[p_rows],
        )
        o = outcome(g, p)
        parts.append((o, p_rows, g_rows))

    def remap(o: MatchOutcome, pr: np.ndarray, gr: np.ndarray) -> MatchOutcome:
        def g(rows: np.ndarray) -> np.ndarray:
            return np.where(rows >= 0, gr[np.maximum(rows, 0)], -1)

        moved = dataclasses.replace(
            o, pred_row=pr[o.pred_row], first_gt=g(o.first_gt), other_gt=g(o.other_gt)
        )
        return moved.take(np.arange(len(o)))

    mapped = [remap(o, pr, gr) for o, pr, gr in parts]
    merged = MatchOutcome.merge(mapped)
    names = ("pred_row", "score", "class_row", "image_id", "rank", "status", "matched_gt")
    compact = ("tp_bits", "ignored_bits", "first_gt", "first_iou", "same_bits", "other_row")
    for name in names + compact + ("other_gt", "other_iou"):
        np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name), err_msg=name)
    np.testing.assert_array_equal(merged.iou, whole.iou)
    np.testing.assert_array_equal(merged.gt_count, whole.gt_count)


def test_result_exposes_outcome_and_registries() -> None:
    gt, pred = _pair(5)
    r = evaluate(gt, pred)
    assert r.outcome is not None and r.outcome.status.shape[1:] == (4, 10)
    tp = r.outcome.true_positive(0)
    assert tp.any() and np.all(r.outcome.iou[tp, 0] >= 0.5)
    assert {"coco", "voc07", "voc10", "yolo"} <= set(protocol_names())
    assert {"bbox", "segm"} <= set(similarity_names())
    with pytest.raises(ValueError, match="protocol: expected one of"):
        make_protocol("nope")
    with pytest.raises(ValueError, match="options of protocol 'coco'"):
        make_protocol("coco", max_det=3)
    with pytest.raises(ValueError, match="already registered"):
        register_similarity("bbox", type(get_similarity("bbox")))


def test_a_registered_similarity_plugs_in() -> None:
    from ioukit.evaluation.registry import _SIMILARITIES
    from ioukit.evaluation.similarity.box import BoxIoU

    register_similarity("test-bbox", BoxIoU)
    try:
        gt, pred = _pair(2)
        a = evaluate(gt, pred, iou_type="test-bbox").stats
        assert a == evaluate(gt, pred).stats
    finally:
        del _SIMILARITIES["test-bbox"]


def test_inputs_are_not_mutated() -> None:
    gt, res = _threshold_exact(1, n_images=5)
    before = (copy.deepcopy(gt), copy.deepcopy(res))
    evaluate(gt, res)
    assert (gt, res) == before


def test_curves_and_histogram_reuse_the_evaluation_match(monkeypatch: pytest.MonkeyPatch) -> None:
    from ioukit.analysis.curves import pr_curves

    gt, pred = _pair(4)
    r = evaluate(gt, pred)
    fresh = pr_curves(gt, pred, iou_threshold=0.5)

    def no_rematch(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("matched again")

    monkeypatch.setattr(grouping, "match_dataset", no_rematch)
    reused = r.curves(iou_threshold=0.5)
    for name in ("precision", "precision_at_confidence", "recall_at_confidence", "mean_f1"):
        np.testing.assert_array_equal(getattr(reused, name), getattr(fresh, name), err_msg=name)
    ious = r.matched_ious(iou_threshold=0.5)
    assert len(ious) == int(r.outcome.true_positive(0).sum()) and np.all(ious >= 0.5)


def test_stat_spec_to_dict_is_asdict() -> None:
    """The explicit ``to_dict`` lists every field (a named tuple's ``_asdict``)."""
    from ioukit.evaluation.protocols.coco import COCOProtocol

    for spec in COCOProtocol().stat_specs():
        assert spec.to_dict() == spec._asdict()
        assert list(spec.to_dict()) == list(type(spec)._fields)


@pytest.mark.parametrize("seed", range(3))
def test_per_class_values_are_the_pycocotools_idiom(seed: int) -> None:
    """Per-class AP / AP50 / AR are ``np.mean(p[p > -1])`` of that class's cells of the
    precision / recall arrays (the way per-class AP is read from pycocotools), bit for bit."""
    from ioukit.synthetic import make_detections

    gt, results = make_detections(num_images=30, num_classes=7, seed=seed)
    r = evaluate(gt, results)
    assert r.precision is not None and r.recall is not None
    for k, row in enumerate(r.per_class):
        p = r.precision[:, :, k, 0, -1]
        p50 = r.precision[0, :, k, 0, -1]
        rc = r.recall[:, k, 0, -1]
        for key, cells in (("AP", p), ("AP50", p50), ("AR100", rc)):
            valid = cells[cells > -1]
            assert row[key] == (float(np.mean(valid)) if valid.size else -1.0), (k, key)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_keypoint_names_its_row(bad: float) -> None:
    """The first row holding a NaN or an infinity is named, wherever it is."""
    cats = CategoryTable.from_lists([1], ["a"])
    images = ImageTable.from_lists([1], ["a"])
    kw: dict[str, Any] = {"image_index": [0] * 4, "category_id": [1] * 4}
    keypoints = np.ones((4, 3, 3))
    keypoints[2, 1, 0] = bad
    keypoints[3, 0, 1] = bad
    with pytest.raises(DataFormatError, match=r"keypoints\[2\]: expected finite numbers"):
        Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]] * 4, keypoints=keypoints, **kw)
