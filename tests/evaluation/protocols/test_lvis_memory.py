"""LVIS peak memory (#13): evaluate_lvis's own allocations (tracemalloc) stay within 2x the
parsed result arrays, and the outcome is the lean MatchOutcome (about 70 bytes per result).

The results (300 per image on 40 classes) are generated with NumPy; the 300 k case of the
benchmark (``python benchmarks/bench_lvis.py --memory``) measures 1.5x.
"""

from __future__ import annotations

import dataclasses
import tracemalloc
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.evaluation.protocols.lvis import evaluate_lvis
from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results


def lvis_like(
    seed: int, n_images: int, n_cats: int, per_image: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An LVIS-like ground truth (positive, negative, not-exhaustive classes per image) and
    ``per_image`` results per image: jittered true boxes and boxes on known and unknown
    classes (the federated filter drops the latter)."""
    rng = np.random.default_rng(seed)
    cats = [{"id": 2 * c + 1, "name": f"c{c}", "frequency": "rcf"[c % 3]} for c in range(n_cats)]
    ids = np.array([c["id"] for c in cats])
    images, anns = [], []
    img_of, cat_of, boxes = [], [], []
    for i in range(n_images):
        pos, neg = np.split(rng.choice(ids, 6, replace=False), [3])
        images.append({"id": i + 1, "width": 640, "height": 480,
                       "neg_category_ids": neg.tolist(),
                       "not_exhaustive_category_ids": pos[:1].tolist()})  # fmt: skip
        for c in pos.tolist():
            for _ in range(2):
                x, y, w, h = (*rng.uniform(0, 400, 2), *rng.uniform(8, 200, 2))
                anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": c,
                             "bbox": [x, y, w, h], "area": w * h})  # fmt: skip
        true = rng.random(per_image) < 0.4
        gt_rows = rng.integers(len(anns) - 6, len(anns), per_image)
        known = rng.choice(np.concatenate([pos, neg]), per_image)
        unknown = rng.choice(ids, per_image)
        cat_of.append(np.where(true, [anns[g]["category_id"] for g in gt_rows],
                               np.where(rng.random(per_image) < 0.8, known, unknown)))  # fmt: skip
        jitter = rng.normal(0, 5, (per_image, 4))
        true_boxes = np.array([anns[g]["bbox"] for g in gt_rows]) + jitter
        other = np.column_stack([rng.uniform(0, 400, (per_image, 2)),
                                 rng.uniform(8, 200, (per_image, 2))])  # fmt: skip
        b = np.where(true[:, None], true_boxes, other)
        b[:, 2:] = np.maximum(b[:, 2:], 1.0)
        boxes.append(b)
        img_of.append(np.full(per_image, i + 1))
    gt = {"images": images, "categories": cats, "annotations": anns}
    image_id, category_id = np.concatenate(img_of), np.concatenate(cat_of)
    box, score = np.concatenate(boxes), rng.random(n_images * per_image)
    results = [
        {"image_id": int(i), "category_id": int(c), "bbox": b, "score": float(s)}
        for i, c, b, s in zip(image_id, category_id, box.tolist(), score, strict=True)
    ]
    return gt, results


def nbytes(ds: Dataset) -> int:
    """The parsed per-row arrays of a Dataset."""
    return sum(
        v.nbytes
        for f in dataclasses.fields(ds)
        if isinstance(v := getattr(ds, f.name), np.ndarray) and v.ndim and v.shape[0] == len(ds)
    )


def test_peak_memory_within_twice_the_parsed_results() -> None:
    gt_json, results = lvis_like(0, n_images=300, n_cats=40, per_image=300)
    gt = read_lvis_ground_truth(gt_json)
    pred = read_lvis_results(results, gt)
    del results
    parsed = nbytes(pred)
    tracemalloc.start()
    try:
        r = evaluate_lvis(gt, pred)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(pred) == 90_000 and r.outcome is not None and len(r.outcome) > 60_000
    assert peak <= 2.0 * parsed, f"peak {peak / parsed:.2f}x the parsed results"
    assert r.outcome.nbytes / len(r.outcome) < 80
    # the outcome's rows are the caller's rows (no subset copies): every evaluated result is
    # a row of ``pred`` of its own category
    np.testing.assert_array_equal(pred.category_id[r.outcome.pred_row], r.outcome.category_id)
