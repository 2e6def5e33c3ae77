"""Parity of the LVIS protocol with lvis-api 0.5.3, run side by side: the 13 numbers within
1e-12 on generated LVIS-like sets (<= 300 and > 300 results per image, negative and
not-exhaustive classes, classes without ground truth, score ties, zero areas, ``ignore``) and
on lvis-api's own ``lvis_val_100.json`` with generated results; Fixed AP likewise. A failure
prints both stat vectors and their difference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.evaluation.protocols.lvis import evaluate_lvis
from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results
from tests.lvis_reference import STAT_KEYS, compare, generate, import_lvis, run_lvis_api

CONFORMANCE = Path(__file__).parents[2] / "data" / "conformance" / "lvis"


def ours(gt: dict[str, Any], results: list[dict[str, Any]], **options: Any) -> dict[str, float]:
    lvis_gt = read_lvis_ground_truth(gt)
    return dict(evaluate_lvis(lvis_gt, read_lvis_results(results, lvis_gt), **options).stats)


def results_on(gt: dict[str, Any], seed: int, per_image: tuple[int, int]) -> list[dict[str, Any]]:
    """Generated results on a real LVIS ground truth: jittered true boxes, false ones on the
    image's positive and negative classes, and some on classes the image says nothing of."""
    rng = np.random.default_rng(seed)
    by_image: dict[int, list[dict[str, Any]]] = {im["id"]: [] for im in gt["images"]}
    for a in gt["annotations"]:
        by_image[a["image_id"]].append(a)
    cat_ids = [c["id"] for c in gt["categories"]]
    out: list[dict[str, Any]] = []
    for im in gt["images"]:
        anns = by_image[im["id"]]
        known = sorted({a["category_id"] for a in anns} | set(im["neg_category_ids"]))
        for _ in range(int(rng.integers(per_image[0], per_image[1] + 1))):
            kind = rng.random()
            if anns and kind < 0.4:
                a = anns[int(rng.integers(len(anns)))]
                x, y, w, h = a["bbox"]
                j = rng.normal(0, 0.1, 4) * (w + h) / 2
                box = [x + j[0], y + j[1], max(w + j[2], 1.0), max(h + j[3], 1.0)]
                c = a["category_id"]
            else:
                c = int(rng.choice(known)) if known and kind < 0.8 else int(rng.choice(cat_ids))
                w, h = rng.uniform(2, 250, 2)
                box = [rng.uniform(0, im["width"] - 2), rng.uniform(0, im["height"] - 2), w, h]
            out.append(
                {
                    "image_id": im["id"],
                    "category_id": int(c),
                    "bbox": [round(float(v), 2) for v in box],
                    "score": round(float(rng.random()), 3),
                }
            )
    return out


CASES = {
    "small": {"n_images": 25, "n_cats": 30, "dets_per_image": (0, 60)},
    "ties": {"n_images": 25, "n_cats": 12, "dets_per_image": (10, 80), "score_levels": 20},
    "over300": {"n_images": 12, "n_cats": 60, "dets_per_image": (250, 480)},
    "over300_ties": {"n_images": 8, "n_cats": 30, "dets_per_image": (290, 420), "score_levels": 50},
    "ignore_and_zero_area": {"n_images": 30, "n_cats": 20, "zero_area": 0.05, "ignore": 0.1},
    "one_image": {"n_images": 1, "n_cats": 5, "dets_per_image": (0, 10)},
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_generated(case: str, seed: int) -> None:
    gt, results = generate(seed, **CASES[case])
    if not results:  # lvis-api cannot read an empty results list (IndexError)
        got = ours(gt, results)
        has_gt = bool(gt["annotations"])
        assert got["AP"] == (0.0 if has_gt else -1.0)
        return
    ref, _ = run_lvis_api(gt, results)
    compare(ours(gt, results), ref)


@pytest.mark.parametrize("seed", [0])
def test_fixed_ap_generated(seed: int) -> None:
    # more than 10 000 results of one class, so the per-class cap bites
    gt, results = generate(seed, n_images=70, n_cats=2, dets_per_image=(300, 420))
    counts = np.unique([r["category_id"] for r in results], return_counts=True)[1]
    assert counts.max() > 10_000
    ref, _ = run_lvis_api(gt, results, fixed_ap=True)
    got = ours(gt, results, fixed_ap=True)
    assert list(got)[-4:] == ["AR@10000/cat", "ARs@10000/cat", "ARm@10000/cat", "ARl@10000/cat"]
    compare(got, ref)
    # and it is not the 300-per-image number
    assert got["AP"] != ours(gt, results)["AP"]


MEASURED = json.loads((CONFORMANCE / "lvis_api_measured.json").read_text())


@pytest.mark.parametrize("per_image", [(150, 300), (380, 460)])
def test_conformance_lvis_val_100(per_image: tuple[int, int]) -> None:
    """lvis-api's numbers, measured on these generated results (lvis_api_measured.json)."""
    gt = json.loads((CONFORMANCE / "lvis_val_100.json").read_text())
    results = results_on(gt, 13, per_image)
    case = MEASURED["cases"][f"{per_image[0]}-{per_image[1]}"]
    assert len(results) == case["num_results"]
    got = ours(gt, results)
    compare(got, case["stats"])
    # faster-coco-eval lvis_style agrees up to 300 per image and not above (no per-image cap)
    fce = case["faster_coco_eval_1.8.0_lvis_style_maxDets_300"]
    gap = max(abs(got[k] - fce[k]) for k in got)
    assert gap < 1e-15 if per_image[1] <= 300 else gap > 1e-3


def test_conformance_over_300_side_by_side() -> None:
    gt = json.loads((CONFORMANCE / "lvis_val_100.json").read_text())
    results = results_on(gt, 13, (380, 460))
    ref, _ = run_lvis_api(gt, results)
    compare(ours(gt, results), ref)


def test_precision_and_recall_arrays_equal_lvis_api() -> None:
    gt, results = generate(3, n_images=20, n_cats=15, dets_per_image=(20, 350))
    _, ev = run_lvis_api(gt, results)
    lvis_gt = read_lvis_ground_truth(gt)
    r = evaluate_lvis(lvis_gt, read_lvis_results(results, lvis_gt))
    np.testing.assert_array_equal(r.arrays["precision"], ev.eval["precision"])
    np.testing.assert_array_equal(r.arrays["recall"], ev.eval["recall"])
    assert list(r.stats) == list(STAT_KEYS)


def test_summary_equals_print_results(capsys: pytest.CaptureFixture[str]) -> None:
    from ioukit.evaluation.protocols.lvis import format_summary

    gt, results = generate(4, n_images=10, n_cats=10)
    _, ev = run_lvis_api(gt, results)
    capsys.readouterr()
    ev.print_results()
    printed = capsys.readouterr().out.rstrip("\n")
    lvis_gt = read_lvis_ground_truth(gt)
    assert format_summary(evaluate_lvis(lvis_gt, read_lvis_results(results, lvis_gt))) == printed


def test_reference_is_importable() -> None:
    assert hasattr(import_lvis(), "LVISEval")


def test_file_order_does_not_matter() -> None:
    """Categories, images and annotations in any order (lvis-api sorts ids)."""
    import random

    gt, results = generate(11, n_images=20, n_cats=25, dets_per_image=(100, 350))
    for seed, key in enumerate(("categories", "images", "annotations")):
        random.Random(seed).shuffle(gt[key])
    ref, _ = run_lvis_api(gt, results)
    compare(ours(gt, results), ref)
