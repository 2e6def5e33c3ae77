"""Generated COCO-style sets for the error-analysis, per-image, threshold and LRP tests.

Thin names over :func:`ioukit.synthetic.make_grid_detections` and
:func:`ioukit.synthetic.add_masks` (same random stream as before they moved there).
"""

from __future__ import annotations

from typing import Any

from ioukit.synthetic import add_masks, make_grid_detections


def random_coco(
    seed: int, n_images: int = 20, n_cats: int = 4, crowd: float = 0.1, crowded: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A ground-truth dict and a results list; ``crowded`` adds an image with 150 predictions."""
    return make_grid_detections(
        n_images, n_cats, crowd_fraction=crowd, crowded_image=crowded, seed=seed
    )


def with_masks(
    gt: dict[str, Any], res: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Copies with masks: ground truth as polygons (each box with a corner cut, so the mask
    IoU differs from the box IoU), results as compressed RLE of the same shape."""
    return add_masks(gt, res)
