"""Generated COCO person-keypoint sets for the keypoint tests (ground truth + results).

Crowded images (up to ``max_people`` persons), every size range, ground truths with no visible
keypoint (``num_keypoints`` 0, all keypoints ``[0, 0, 0]`` as COCO stores them), crowd regions,
results that jitter the ground truth by a per-result noise level, false positives, more than 20
results on busy images, scores rounded to 2 decimals (ties) and any number of keypoints.
The output is a function of the arguments only.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def make_keypoint_set(
    num_images: int = 20,
    *,
    num_keypoints: int = 17,
    num_classes: int = 1,
    max_people: int = 14,
    min_people: int = 0,
    results_per_person: tuple[int, int] = (1, 3),
    max_false_positives: int = 5,
    hidden_rate: float = 0.1,
    crowd_rate: float = 0.05,
    with_bbox: bool = False,
    seed: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A COCO keypoint ground-truth dict and a list of keypoint results.

    ``with_bbox``: results carry a ``bbox`` (pycocotools' ``loadRes`` then takes their area
    from it, not from the keypoint extent).
    """
    rng = np.random.default_rng(seed)
    k = num_keypoints
    images, annotations, results = [], [], []
    categories = [
        {"id": c + 1, "name": f"person{c}", "keypoints": [f"k{j}" for j in range(k)]}
        for c in range(num_classes)
    ]
    ann_id = 1
    for image in range(num_images):
        width, height = 640, 480
        image_id = 1000 + 7 * image
        batch: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        images.append(
            {"id": image_id, "width": width, "height": height, "file_name": f"{image}.jpg"}
        )
        for _ in range(int(rng.integers(min_people, max_people + 1))):
            category = int(rng.integers(1, num_classes + 1))
            side = float(np.exp(rng.uniform(np.log(12.0), np.log(300.0))))
            w = round(side * float(rng.uniform(0.5, 1.0)), 2)
            h = round(side * float(rng.uniform(0.8, 1.6)), 2)
            x = round(float(rng.uniform(0, width - w / 2)), 2)
            y = round(float(rng.uniform(0, height - h / 2)), 2)
            kx = np.round(x + rng.uniform(0, 1, k) * w, 2)
            ky = np.round(y + rng.uniform(0, 1, k) * h, 2)
            v = rng.choice([0, 1, 2], size=k, p=[0.3, 0.2, 0.5])
            crowd = int(rng.random() < crowd_rate)
            if crowd or rng.random() < hidden_rate:
                v[:] = 0
            kx[v == 0] = 0.0
            ky[v == 0] = 0.0
            kps = np.stack([kx, ky, v.astype(float)], axis=1)
            annotations.append(
                {
                    "id": ann_id,
                    "image_id": image_id,
                    "category_id": category,
                    "bbox": [x, y, w, h],
                    "area": round(w * h * float(rng.uniform(0.3, 0.9)), 3),
                    "iscrowd": crowd,
                    "num_keypoints": int((v > 0).sum()),
                    "keypoints": [
                        int(t) if j % 3 == 2 else float(t) for j, t in enumerate(kps.reshape(-1))
                    ],
                }
            )
            ann_id += 1
            if crowd:
                continue
            # true keypoints (also where not labelled) to jitter
            tx = x + rng.uniform(0, 1, k) * w
            ty = y + rng.uniform(0, 1, k) * h
            tx[v > 0] = kx[v > 0]
            ty[v > 0] = ky[v > 0]
            copies = int(rng.integers(results_per_person[0], results_per_person[1] + 1))
            noise = rng.choice([0.02, 0.05, 0.1, 0.3], size=(copies, 1)) * np.sqrt(w * h)
            pxs = np.round(tx + rng.normal(0, 1, (copies, k)) * noise, 2)
            pys = np.round(ty + rng.normal(0, 1, (copies, k)) * noise, 2)
            batch.append((np.full(copies, category), pxs, pys))
        n_fp = int(rng.integers(0, max_false_positives + 1))  # false positives
        centre = rng.uniform(0, 1, (n_fp, 2)) * [width, height]
        spread = rng.uniform(10, 150, (n_fp, 1))
        batch.append(
            (
                rng.integers(1, num_classes + 1, n_fp),
                np.round(centre[:, :1] + rng.normal(0, 1, (n_fp, k)) * spread, 2),
                np.round(centre[:, 1:] + rng.normal(0, 1, (n_fp, k)) * spread, 2),
            )
        )
        results += _results(rng, image_id, batch, with_bbox)
    order = rng.permutation(len(results))
    return (
        {"images": images, "annotations": annotations, "categories": categories},
        [results[i] for i in order],
    )


def _results(
    rng: np.random.Generator,
    image_id: int,
    batch: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    with_bbox: bool,
) -> list[dict[str, Any]]:
    """Result records of one image from (categories (n,), x (n, K), y (n, K)) parts."""
    if not batch:
        return []
    categories = np.concatenate([b[0] for b in batch]).astype(int).tolist()
    px = np.concatenate([b[1] for b in batch])
    py = np.concatenate([b[2] for b in batch])
    if len(px) == 0:
        return []
    conf = np.round(rng.uniform(0, 1, px.shape), 3)
    missing = rng.random(px.shape) < 0.05  # some keypoints not predicted: (0, 0, 0)
    px[missing], py[missing], conf[missing] = 0.0, 0.0, 0.0
    scores = np.round(rng.uniform(0.05, 1.0, len(px)), 2).tolist()
    flat = np.stack([px, py, conf], axis=2).reshape(len(px), -1).tolist()
    out = []
    for i, (category, keypoints, score) in enumerate(zip(categories, flat, scores, strict=True)):
        record: dict[str, Any] = {
            "image_id": image_id,
            "category_id": category,
            "keypoints": keypoints,
            "score": score,
        }
        if with_bbox:
            x0, y0 = float(px[i].min()), float(py[i].min())
            w, h = round(float(px[i].max()) - x0, 2), round(float(py[i].max()) - y0, 2)
            record["bbox"] = [x0, y0, w, h]
        out.append(record)
    return out
