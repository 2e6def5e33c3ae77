"""``--plots`` with many classes (issue #16 item 19): per-class figures only for the worst and
the most frequent classes by default, every class on request; figures written together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.plots import PER_CLASS_FIGURES, select_classes

pytest.importorskip("matplotlib")


def _pair(n_classes: int) -> tuple[Dataset, Dataset]:
    rng = np.random.default_rng(0)
    n_images, per = 20, 6
    images = ImageTable.from_lists(
        list(range(1, n_images + 1)),
        [f"im{i}" for i in range(n_images)],
        [64] * n_images,
        [48] * n_images,
    )
    cats = CategoryTable.from_lists(
        list(range(1, n_classes + 1)), [f"c{k}" for k in range(n_classes)]
    )
    n = n_images * per
    xy = rng.uniform(0, 40, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(4, 20, (n, 2))], 1)
    image_index = np.repeat(np.arange(n_images), per)
    category = rng.integers(1, n_classes + 1, n)
    gt = Dataset.from_arrays(
        images, cats, boxes=boxes, image_index=image_index, category_id=category
    )
    shifted = boxes + rng.normal(0, 2, boxes.shape)
    shifted[:, 2:] = np.maximum(shifted[:, 2:], shifted[:, :2] + 1)
    pred = Dataset.from_arrays(
        images, cats, boxes=shifted, image_index=image_index, category_id=category,
        scores=rng.uniform(0, 1, n),
    )  # fmt: skip
    return gt, pred


def test_default_figures_are_bounded_and_all_on_request(tmp_path: Path) -> None:
    from ioukit.plots import write_plots

    gt, pred = _pair(2 * PER_CLASS_FIGURES + 2)
    result = evaluate(gt, pred, protocol="coco")
    few = write_plots(result, tmp_path / "few")
    per_class = [p for p in few if p.parent.name == "pr_curves"]
    assert 0 < len(per_class) <= 2 * PER_CLASS_FIGURES
    everything = write_plots(result, tmp_path / "all", all_classes=True)
    with_gt = len(np.unique(gt.category_id))
    assert len([p for p in everything if p.parent.name == "pr_curves"]) == with_gt


def test_selection_takes_the_worst_and_the_most_frequent() -> None:
    class Curves:
        names = tuple(f"c{k}" for k in range(30))
        precision = np.tile(np.linspace(0.0, 0.9, 30)[:, None], (1, 101))

    counts = np.arange(30)[::-1]  # class 0 most frequent... and also the worst
    counts[15] = 1000
    chosen = select_classes(Curves(), counts, n=3)
    assert chosen == sorted({0, 1, 2, 15})
