"""Parity of the COCO protocol with pycocotools and faster-coco-eval, run side by side on
generated datasets of several sizes and shapes. A failure prints both stat vectors and their
difference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ioukit.engine import evaluate
from ioukit.synthetic import make_detections
from tests.coco_reference import compare, run_faster_coco_eval, run_pycocotools

pytest.importorskip("pycocotools")


def generate(
    seed: int,
    *,
    n_images: int = 40,
    n_cats: int = 4,
    crowd: float = 0.05,
    score_levels: int = 0,
    empty_gt_images: float = 0.1,
    empty_pred_images: float = 0.1,
    extra_cats: bool = False,
    unused_cats: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A small COCO-like set (:func:`ioukit.synthetic.make_detections`): non-contiguous class
    ids, image ids not in sorted order; ``score_levels`` > 0 quantizes scores (heavy ties)."""
    rng = np.random.default_rng(seed)
    gt, res = make_detections(
        n_images,
        n_cats,
        gt_per_image=4.5,
        fp_per_image=4.0,
        crowd_fraction=crowd,
        category_ids=[1 + 2 * c for c in range(n_cats)],  # non-contiguous ids
        image_ids=(rng.permutation(n_images) * 3 + 5).tolist(),  # not in table order
        empty_gt_images=empty_gt_images,
        empty_pred_images=empty_pred_images,
        score_levels=score_levels,
        seed=seed,
    )
    cats, anns = gt["categories"], gt["annotations"]
    if extra_cats:  # a class without GT (with predictions) and one without predictions
        cats += [{"id": 100, "name": "no_gt"}, {"id": 101, "name": "no_pred"}]
        for r in res[::7]:
            r["category_id"] = 100
        if anns:
            anns[0]["category_id"] = 101
            res[:] = [r for r in res if r["category_id"] != 101]
    # declared categories without any data, interleaved with the used ids
    cats += [{"id": 2 + 2 * c, "name": f"unused{c}"} for c in range(unused_cats)]
    cats.sort(key=lambda c: c["id"])
    rng.shuffle(res)
    return gt, res


CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("small", {"n_images": 15, "n_cats": 2}, {}),
    ("medium", {"n_images": 120, "n_cats": 6}, {}),
    ("heavy_ties", {"n_images": 60, "score_levels": 4}, {}),
    ("crowds", {"n_images": 50, "crowd": 0.25}, {}),
    ("empty_images", {"n_images": 50, "empty_gt_images": 0.4, "empty_pred_images": 0.3}, {}),
    ("absent_classes", {"n_images": 40, "extra_cats": True}, {}),
    ("declared_without_data", {"n_images": 40, "extra_cats": True, "unused_cats": 30}, {}),
    ("use_cats_false", {"n_images": 40, "score_levels": 5}, {"use_cats": False}),
    (
        "custom_thresholds",
        {"n_images": 40},
        {
            "iou_thresholds": [0.3, 0.5, 0.7],
            "recall_thresholds": np.linspace(0, 1, 11).tolist(),
            "max_dets": [1, 5, 100],
        },
    ),
    (
        "custom_area_ranges",
        {"n_images": 40},
        {"area_ranges": {"tiny": [0, 256], "mid": [256, 4096], "huge": [4096, 1e10]}},
    ),
]


@pytest.mark.parametrize(("name", "shape", "options"), CASES, ids=[c[0] for c in CASES])
def test_parity_with_pycocotools_and_faster_coco_eval(
    name: str, shape: dict[str, Any], options: dict[str, Any]
) -> None:
    gt, res = generate(len(name), **shape)
    ours = evaluate(gt, res, **options)
    compat = evaluate(gt, res, compat="pycocotools", **options)
    default_layout = "area_ranges" not in options
    compare("pycocotools", ours, run_pycocotools(gt, res, options), stats=default_layout)
    compare("pycocotools", compat, run_pycocotools(gt, res, options), stats=default_layout)
    compare("faster-coco-eval", ours, run_faster_coco_eval(gt, res, options), stats=default_layout)


def test_parity_max_dets_without_100() -> None:
    gt, res = generate(7, n_images=30)
    options = {"max_dets": [1, 3, 10]}
    ref = run_pycocotools(gt, res, options)
    compare("pycocotools", evaluate(gt, res, compat="pycocotools", **options), ref)
    ours = evaluate(gt, res, **options)
    assert ref.stats[0] == -1.0 and ours.stats["AP"] > 0
    compare("pycocotools", ours, ref, stats=False)


@pytest.mark.parametrize(("name", "shape", "options"), CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_per_class_values_read_from_pycocotools_arrays(
    name: str, shape: dict[str, Any], options: dict[str, Any]
) -> None:
    """Per-class AP / AP50 / AP75 / AR100 equal what users compute from pycocotools' own
    ``eval['precision']`` / ``eval['recall']`` (``np.mean(p[p > -1])`` of one class, the
    detectron2 table's idiom), bit for bit."""
    gt, res = generate(len(name) + 3, **shape)
    ours = evaluate(gt, res, **options)
    ref = run_pycocotools(gt, res, options)
    precision, recall = ref.eval["precision"], ref.eval["recall"]
    t50, t75 = (int(np.flatnonzero(np.isclose(ref.params.iouThrs, t))[0]) for t in (0.5, 0.75))
    assert [row["category_id"] for row in ours.per_class] == list(ref.params.catIds)
    for k, row in enumerate(ours.per_class):
        for key, cells in (
            ("AP", precision[:, :, k, 0, -1]),
            ("AP50", precision[t50, :, k, 0, -1]),
            ("AP75", precision[t75, :, k, 0, -1]),
            ("AR100", recall[:, k, 0, -1]),
        ):
            valid = cells[cells > -1]
            want = float(np.mean(valid)) if valid.size else -1.0
            assert row[key] == want, (name, row["category_id"], key, row[key], want)
