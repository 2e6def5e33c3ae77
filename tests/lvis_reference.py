"""Run lvis-api (the reference) side by side with ioukit, and generate LVIS-like data.

lvis-api 0.5.3 (the last PyPI release) uses ``np.float``, removed in NumPy 1.24: the aliases
are put back here, in the tests only, before lvis is imported. Fixed AP (lvis-api branch
``lvis_challenge_2021``) is reproduced with the released package: that branch's
``LVISResults.limit_dets_per_cat`` (re-stated below from its description: each class keeps
its top scores, Python's stable ``sorted(..., reverse=True)``) then ``LVISResults`` with no
per-image cap, which is what the branch does for ``max_dets_per_im=-1``.
"""

from __future__ import annotations

import copy
import logging
from collections import defaultdict
from typing import Any

import numpy as np

STAT_KEYS = (
    "AP",
    "AP50",
    "AP75",
    "APs",
    "APm",
    "APl",
    "APr",
    "APc",
    "APf",
    "AR@300",
    "ARs@300",
    "ARm@300",
    "ARl@300",
)


def import_lvis() -> Any:
    """The ``lvis`` package, with the NumPy aliases it needs restored (tests only)."""
    import warnings

    import pytest

    for name, value in (("float", float), ("int", int), ("bool", bool)):
        if name not in vars(np):  # hasattr would warn (filterwarnings=error)
            setattr(np, name, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lvis = pytest.importorskip("lvis")
    logging.getLogger("lvis").setLevel(logging.ERROR)
    return lvis


def _limit_per_category(results: list[dict[str, Any]], max_dets: int) -> list[dict[str, Any]]:
    by_cat: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_cat[r["category_id"]].append(r)
    out: list[dict[str, Any]] = []
    for anns in by_cat.values():
        out.extend(sorted(anns, key=lambda a: a["score"], reverse=True)[:max_dets])
    return out


def run_lvis_api(
    gt: dict[str, Any],
    results: list[dict[str, Any]],
    *,
    iou_type: str = "bbox",
    fixed_ap: bool = False,
) -> tuple[dict[str, float], Any]:
    """lvis-api's ``get_results()`` (13 numbers) and the ``LVISEval`` object."""
    import warnings

    lvis = import_lvis()
    gt_api = lvis.LVIS.__new__(lvis.LVIS)
    gt_api.logger = logging.getLogger("lvis")
    gt_api.dataset = copy.deepcopy(gt)
    gt_api._create_index()
    res = copy.deepcopy(results)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fixed_ap:
            dt_api = lvis.LVISResults(gt_api, _limit_per_category(res, 10_000), max_dets=-1)
        else:
            dt_api = lvis.LVISResults(gt_api, res)
        ev = lvis.LVISEval(gt_api, dt_api, iou_type=iou_type)
        ev.run()
    stats = dict(ev.get_results())
    if fixed_ap:
        stats = {k.replace("@300", "@10000/cat"): v for k, v in stats.items()}
    return {k: float(v) for k, v in stats.items()}, ev


def compare(ours: dict[str, float], ref: dict[str, float], *, tol: float = 1e-12) -> None:
    """Assert the same keys in the same order and values within ``tol``; print both."""
    assert list(ours) == list(ref), f"keys differ:\nours {list(ours)}\nref  {list(ref)}"
    bad = {k: (ours[k], ref[k], ours[k] - ref[k]) for k in ref if abs(ours[k] - ref[k]) > tol}
    assert not bad, "stats differ (ours, lvis-api, difference):\n" + "\n".join(
        f"  {k:>8} {a!r:>22} {b!r:>22} {d:+.3e}" for k, (a, b, d) in bad.items()
    )


def generate(
    seed: int,
    *,
    n_images: int = 30,
    n_cats: int = 40,
    dets_per_image: tuple[int, int] = (20, 120),
    score_levels: int = 0,
    zero_area: float = 0.01,
    ignore: float = 0.0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An LVIS-like ground truth and results.

    Categories have non-contiguous ids and r/c/f frequencies (some classes never have ground
    truth); each image has positive classes (with boxes), negative classes (verified absent)
    and not-exhaustive classes (mostly positive ones, sometimes others). Results mix true
    detections, false ones on positive/negative classes and results on classes the image
    says nothing about (dropped by the federated filter); ``dets_per_image`` bounds the
    count per image (> 300 exercises the cap). ``score_levels`` > 0 quantizes scores (ties).
    """
    rng = np.random.default_rng(seed)
    cat_ids = [int(3 * c + 1) for c in range(n_cats)]
    freq = rng.choice(["r", "c", "f"], size=n_cats, p=[0.3, 0.4, 0.3])
    categories = [
        {"id": c, "name": f"class{c}", "frequency": str(f), "synset": f"s{c}"}
        for c, f in zip(cat_ids, freq, strict=True)
    ]
    with_gt = [c for c in cat_ids if rng.random() < 0.85]
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for i in range(n_images):
        image_id = 1000 - 7 * i if i % 2 else 5000 + i  # not sorted in file order
        n_pos = int(rng.integers(0, 6))
        pos = [int(c) for c in rng.choice(with_gt, size=min(n_pos, len(with_gt)), replace=False)]
        rest = [c for c in cat_ids if c not in pos]
        neg = [
            int(c)
            for c in rng.choice(rest, size=min(int(rng.integers(0, 8)), len(rest)), replace=False)
        ]
        not_ex = [c for c in pos if rng.random() < 0.3]
        if rest and rng.random() < 0.2:
            not_ex.append(int(rng.choice(rest)))  # lvis-api does not require a positive one
        images.append(
            {
                "id": image_id,
                "file_name": f"{image_id:012d}.jpg",
                "width": 640,
                "height": 480,
                "neg_category_ids": neg,
                "not_exhaustive_category_ids": not_ex,
            }
        )
        gt_boxes = []
        for c in pos:
            for _ in range(int(rng.integers(1, 5))):
                side = rng.choice([rng.uniform(4, 32), rng.uniform(32, 96), rng.uniform(96, 300)])
                w, h = side * rng.uniform(0.6, 1.4, 2)
                x, y = rng.uniform(0, 320, 2)
                box = [round(float(v), 2) for v in (x, y, w, h)]
                area = box[2] * box[3] * float(rng.uniform(0.4, 1.0))
                if rng.random() < zero_area:
                    area = 0.0
                ann = {
                    "id": len(anns) + 1,
                    "image_id": image_id,
                    "category_id": c,
                    "bbox": box,
                    "area": area,
                }
                if ignore and rng.random() < ignore:
                    ann["ignore"] = 1
                anns.append(ann)
                gt_boxes.append((c, box))
        n_dets = int(rng.integers(dets_per_image[0], dets_per_image[1] + 1))
        for _ in range(n_dets):
            kind = rng.random()
            if gt_boxes and kind < 0.5:
                c, b = gt_boxes[int(rng.integers(len(gt_boxes)))]
                jitter = rng.normal(0, 0.08, 4) * (b[2] + b[3]) / 2
                box = [
                    b[0] + jitter[0],
                    b[1] + jitter[1],
                    max(b[2] + jitter[2], 0.5),
                    max(b[3] + jitter[3], 0.5),
                ]
            else:
                pool = pos + neg if kind < 0.85 or not rest else rest
                c = int(rng.choice(pool)) if pool else int(rng.choice(cat_ids))
                w, h = rng.uniform(4, 200, 2)
                box = [float(rng.uniform(0, 400)), float(rng.uniform(0, 300)), float(w), float(h)]
            if rng.random() < zero_area:
                box[2] = 0.0
            score = float(rng.random())
            if score_levels:
                score = round(score * score_levels) / score_levels
            results.append(
                {
                    "image_id": image_id,
                    "category_id": int(c),
                    "bbox": [round(float(v), 2) for v in box],
                    "score": score,
                }
            )
    order = rng.permutation(len(results))  # results not grouped by image
    results = [results[k] for k in order]
    gt = {"images": images, "annotations": anns, "categories": categories}
    return gt, results
