"""Generated COCO-style sets for the error-analysis, per-image, threshold and LRP tests.

Integer boxes and scores on a coarse grid, so IoU ties, IoU exactly at a threshold and equal
scores all occur; wrong-class, duplicate, badly localised and background predictions; images
without ground truth or without predictions; crowd regions; a class with predictions only.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def random_coco(
    seed: int, n_images: int = 20, n_cats: int = 4, crowd: float = 0.1, crowded: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A ground-truth dict and a results list; ``crowded`` adds an image with 150 predictions."""
    rng = np.random.default_rng(seed)
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    res: list[dict[str, Any]] = []
    ids = rng.permutation(np.arange(1, n_images + 1) * 7)  # image ids not in table order
    for img in ids.tolist():
        images.append({"id": img, "file_name": f"im{img}.jpg", "width": 120, "height": 120})
        n_gt = int(rng.integers(0, 6))
        boxes = np.c_[rng.integers(0, 80, (n_gt, 2)), rng.integers(4, 40, (n_gt, 2))].astype(float)
        for b in boxes:
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": img,
                    # the last class never has ground truth
                    "category_id": int(rng.integers(1, n_cats)),
                    "bbox": b.tolist(),
                    "area": float(b[2] * b[3]),
                    "iscrowd": int(rng.random() < crowd),
                }
            )
        for b in boxes:
            for _ in range(int(rng.integers(0, 3))):
                jit = b + rng.integers(-6, 7, 4)
                jit[2:] = np.maximum(jit[2:], 1)
                same = rng.random() < 0.75
                cat = anns[-1]["category_id"] if same else int(rng.integers(1, n_cats + 1))
                res.append(
                    {
                        "image_id": img,
                        "category_id": cat,
                        "bbox": jit.tolist(),
                        "score": float(rng.integers(1, 11) / 10),
                    }
                )
        for _ in range(int(rng.integers(0, 4))):
            b = np.r_[rng.integers(0, 90, 2), rng.integers(3, 30, 2)].astype(float)
            res.append(
                {
                    "image_id": img,
                    "category_id": int(rng.integers(1, n_cats + 1)),
                    "bbox": b.tolist(),
                    "score": float(rng.integers(1, 11) / 10),
                }
            )
    if crowded:
        img = int(ids[0])
        for _ in range(150):
            b = np.r_[rng.integers(0, 90, 2), rng.integers(3, 30, 2)].astype(float)
            res.append(
                {
                    "image_id": img,
                    "category_id": int(rng.integers(1, n_cats + 1)),
                    "bbox": b.tolist(),
                    "score": float(rng.integers(1, 101) / 100),
                }
            )
    order = rng.permutation(len(res))
    res = [res[i] for i in order]
    cats = [{"id": c, "name": f"c{c}"} for c in range(1, n_cats + 1)]
    return {"images": images, "annotations": anns, "categories": cats}, res


def with_masks(
    gt: dict[str, Any], res: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Copies with masks: ground truth as polygons (each box with a corner cut, so the mask
    IoU differs from the box IoU), results as compressed RLE of the same shape."""
    from ioukit import masks

    sizes = {im["id"]: (im["height"], im["width"]) for im in gt["images"]}

    def polygon(b: list[float]) -> list[list[float]]:
        x, y, w, h = b
        return [[x, y, x + w, y, x + w, y + 0.7 * h, x + 0.7 * w, y + h, x, y + h]]

    anns = []
    for a in gt["annotations"]:
        seg = polygon(a["bbox"])
        h, w = sizes[a["image_id"]]
        area = float(masks.area(masks.from_annotation(seg, h, w)))
        anns.append({**a, "segmentation": seg, "area": area})
    out = []
    for d in res:
        h, w = sizes[d["image_id"]]
        rle = masks.from_annotation(polygon(d["bbox"]), h, w)
        counts = rle["counts"]
        rle = {
            "size": rle["size"],
            "counts": counts.decode() if isinstance(counts, bytes) else counts,
        }
        out.append({k: v for k, v in d.items() if k != "bbox"} | {"segmentation": rle})
    return {**gt, "annotations": anns}, out
