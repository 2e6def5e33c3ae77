"""``Evaluator(protocol="lvis")``: per-image targets with federated labels give exactly (the 13
numbers bit for bit, the precision and recall arrays) what ``ioukit.evaluate(gt.json, results,
protocol="lvis")`` gives on the same data written as LVIS JSON; bad inputs are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit import Evaluator
from ioukit.errors import DataFormatError
from tests.lvis_reference import STAT_KEYS, generate


def renumbered(seed: int, **kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A generated LVIS set whose image ids are the images' file order (the Evaluator numbers
    images in arrival order)."""
    gt, results = generate(seed, **kw)
    new = {im["id"]: i for i, im in enumerate(gt["images"])}
    gt["images"] = [{**im, "id": new[im["id"]]} for im in gt["images"]]
    gt["annotations"] = [{**a, "image_id": new[a["image_id"]]} for a in gt["annotations"]]
    results = [{**r, "image_id": new[r["image_id"]]} for r in results]
    return gt, results


def per_image(
    gt: dict[str, Any], results: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The JSON set as the Evaluator's per-image xywh predictions and targets (file order)."""
    preds: list[dict[str, Any]] = []
    targets: list[dict[str, Any]] = []
    for im in gt["images"]:
        anns = [a for a in gt["annotations"] if a["image_id"] == im["id"]]
        dets = [r for r in results if r["image_id"] == im["id"]]
        preds.append(
            {
                "boxes": np.array([r["bbox"] for r in dets], dtype=np.float64).reshape(-1, 4),
                "scores": [r["score"] for r in dets],
                "labels": [r["category_id"] for r in dets],
            }
        )
        targets.append(
            {
                "boxes": np.array([a["bbox"] for a in anns], dtype=np.float64).reshape(-1, 4),
                "labels": [a["category_id"] for a in anns],
                "area": [a["area"] for a in anns],
                "neg_category_ids": im["neg_category_ids"],
                "not_exhaustive_category_ids": im["not_exhaustive_category_ids"],
            }
        )
    return preds, targets


def frequencies(gt: dict[str, Any]) -> dict[int, str]:
    return {c["id"]: c["frequency"] for c in gt["categories"]}


CASES = {
    "small": {"n_images": 20, "n_cats": 25, "dets_per_image": (0, 60)},
    "ties": {"n_images": 20, "n_cats": 12, "dets_per_image": (10, 80), "score_levels": 20},
    "over300": {"n_images": 6, "n_cats": 40, "dets_per_image": (250, 420)},
    "zero_area": {"n_images": 20, "n_cats": 15, "zero_area": 0.05},
}


@pytest.mark.parametrize("fixed_ap", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_equals_evaluate_on_json(case: str, fixed_ap: bool, tmp_path: Path) -> None:
    gt, results = renumbered(3, **CASES[case])
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "results.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    ref = ioukit.evaluate(str(gt_path), str(res_path), protocol="lvis", fixed_ap=fixed_ap)
    ev = Evaluator(protocol="lvis", fmt="xywh", frequencies=frequencies(gt), fixed_ap=fixed_ap)
    preds, targets = per_image(gt, results)
    half = len(preds) // 2
    ev.update(preds[:half], targets[:half])
    ev.update(preds[half:], targets[half:])
    got = ev.compute()
    assert list(got.stats) == list(ref.stats)
    assert len(got.stats) == 13 and (fixed_ap or list(got.stats) == list(STAT_KEYS))
    for key in ref.stats:
        assert got.stats[key] == ref.stats[key] or (
            np.isnan(got.stats[key]) and np.isnan(ref.stats[key])
        ), (key, got.stats[key], ref.stats[key])
    np.testing.assert_array_equal(got.precision, ref.precision)
    np.testing.assert_array_equal(got.recall, ref.recall)
    assert got.summary() == ref.summary()


def test_merge_equals_one_evaluator() -> None:
    gt, results = renumbered(5, n_images=10, n_cats=10)
    preds, targets = per_image(gt, results)
    one = Evaluator(protocol="lvis", fmt="xywh", frequencies=frequencies(gt))
    one.update(preds, targets)
    a = Evaluator(protocol="lvis", fmt="xywh", frequencies=frequencies(gt), sync=False)
    b = Evaluator(protocol="lvis", fmt="xywh", frequencies=frequencies(gt), sync=False)
    a.update(preds[:4], targets[:4])
    b.update(preds[4:], targets[4:])
    assert a.merge(b).compute().stats == one.compute().stats


def test_federated_labels_default_empty_and_xyxy() -> None:
    ev = Evaluator(protocol="lvis", frequencies={1: "c", 2: "r"})
    ev.update(
        [{"boxes": [[0, 0, 10, 9]], "scores": [0.9], "labels": [1]}],
        [{"boxes": [[0, 0, 10, 10]], "labels": [1]}],
    )
    r = ev.compute()
    assert r.stats["APc"] == pytest.approx(0.9) and r.stats["APr"] == -1.0  # no rare gt
    assert [row["frequency"] for row in r.per_class] == ["c", "r"]


def test_input_not_mutated() -> None:
    target = {"boxes": [[0, 0, 10, 10]], "labels": [1], "neg_category_ids": [2]}
    before = json.dumps(target)
    Evaluator(protocol="lvis", frequencies={1: "f", 2: "r"}).update(
        [{"boxes": np.zeros((0, 4)), "scores": [], "labels": []}], [target]
    )
    assert json.dumps(target) == before


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ValueError, "frequencies: Evaluator\\(protocol='lvis'\\) needs"),
        ({"frequencies": [1, 2]}, TypeError, "frequencies: expected a mapping"),
        ({"frequencies": {1: "x"}}, ValueError, "frequencies\\[1\\]: expected 'r', 'c' or 'f'"),
        ({"frequencies": {"a": "r"}}, TypeError, "integer category ids"),
        ({"frequencies": {1: "r"}, "iou_type": "keypoints"}, ValueError, "supports 'bbox' and"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        Evaluator(protocol="lvis", **kwargs)


@pytest.mark.parametrize(
    ("pred_labels", "target", "match"),
    [
        ([7], {"labels": [1]}, "predictions\\[0\\].labels: label 7 has no LVIS frequency"),
        ([1], {"labels": [9]}, "targets\\[0\\].labels: label 9 has no LVIS frequency"),
        (
            [1],
            {"labels": [1], "neg_category_ids": [4]},
            "targets\\[0\\].neg_category_ids: label 4 has no LVIS frequency",
        ),
        (
            [1],
            {"labels": [1], "not_exhaustive_category_ids": [5]},
            "targets\\[0\\].not_exhaustive_category_ids: label 5 has no LVIS frequency",
        ),
        (
            [1],
            {"labels": [1], "neg_category_ids": [[1, 2]]},
            "targets\\[0\\].neg_category_ids: expected a list of integer category ids",
        ),
        (
            [1],
            {"labels": [1], "neg_category_ids": [1.5]},
            "targets\\[0\\].neg_category_ids: expected a list of integer category ids",
        ),
    ],
)
def test_bad_images(pred_labels: list[int], target: dict[str, Any], match: str) -> None:
    ev = Evaluator(protocol="lvis", frequencies={1: "f", 2: "r"})
    with pytest.raises(DataFormatError, match=match):
        ev.update(
            [{"boxes": [[0, 0, 5, 5]], "scores": [0.5], "labels": pred_labels}],
            [{"boxes": [[0, 0, 5, 5]], **target}],
        )
    assert len(ev) == 0  # nothing added


def test_merge_refuses_other_frequencies() -> None:
    a = Evaluator(protocol="lvis", frequencies={1: "f"})
    with pytest.raises(ValueError, match="same protocol"):
        a.merge(Evaluator(protocol="lvis", frequencies={1: "r"}))


def test_segm_equals_evaluate_on_json(tmp_path: Path) -> None:
    mask_utils = pytest.importorskip("pycocotools.mask")
    from ioukit.masks import decode
    from tests.evaluation.protocols.test_lvis_api import _ellipse

    gt, results = renumbered(5, n_images=6, n_cats=8, dets_per_image=(5, 30), zero_area=0.0)
    h, w = 480, 640

    def rle(box: list[float]) -> dict[str, Any]:
        r = mask_utils.merge(mask_utils.frPyObjects([_ellipse(box)], h, w))
        return {"size": [h, w], "counts": r["counts"].decode("ascii")}

    for a in gt["annotations"]:
        a["segmentation"] = [_ellipse(a["bbox"])]
    for r in results:
        r["segmentation"] = rle(r.pop("bbox"))
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "results.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    ref = ioukit.evaluate(str(gt_path), str(res_path), protocol="lvis", iou_type="segm")

    def masks(rles: list[dict[str, Any]]) -> np.ndarray:
        if not rles:
            return np.zeros((0, h, w), dtype=bool)
        return np.ascontiguousarray(decode(rles)).astype(bool)

    ev = Evaluator(protocol="lvis", iou_type="segm", frequencies=frequencies(gt))
    for im in gt["images"]:
        anns = [a for a in gt["annotations"] if a["image_id"] == im["id"]]
        dets = [r for r in results if r["image_id"] == im["id"]]
        ev.update(
            [
                {
                    "masks": masks([r["segmentation"] for r in dets]),
                    "scores": [r["score"] for r in dets],
                    "labels": [r["category_id"] for r in dets],
                }
            ],
            [
                {
                    "masks": masks([rle(a["bbox"]) for a in anns]),
                    "labels": [a["category_id"] for a in anns],
                    "area": [a["area"] for a in anns],
                    "neg_category_ids": im["neg_category_ids"],
                    "not_exhaustive_category_ids": im["not_exhaustive_category_ids"],
                }
            ],
        )
    got = ev.compute()
    assert ref.stats["AP"] > 0
    assert got.stats == ref.stats
    np.testing.assert_array_equal(got.precision, ref.precision)


def test_image_ids_from_targets(tmp_path: Path) -> None:
    gt, results = generate(4, n_images=12, n_cats=10)  # image ids not in file order
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "results.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(results))
    ref = ioukit.evaluate(str(gt_path), str(res_path), protocol="lvis")
    preds, targets = per_image(gt, results)
    for t, im in zip(targets, gt["images"], strict=True):
        t["image_id"] = im["id"]
    ev = Evaluator(protocol="lvis", fmt="xywh", frequencies=frequencies(gt))
    ev.update(preds, targets)
    got = ev.compute()
    assert got.stats == ref.stats
    np.testing.assert_array_equal(got.precision, ref.precision)
