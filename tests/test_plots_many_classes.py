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


def test_large_confusion_matrix_keeps_every_cell(tmp_path: Path) -> None:
    """Past 60 classes: block maxima, so a lone off-diagonal cell still colours a pixel."""
    from types import SimpleNamespace

    from matplotlib import colormaps
    from PIL import Image

    from ioukit.plots import plot_confusion_matrix

    n = 1204
    counts = np.zeros((n, n))
    counts[777, 3] = 5.0  # one confusion, far from the diagonal
    matrix = SimpleNamespace(
        matrix=counts, labels=[f"c{i}" for i in range(n)], iou_threshold=0.45, score_threshold=0.25
    )
    path = plot_confusion_matrix(matrix, tmp_path / "cm.png")
    pixels = np.asarray(Image.open(path).convert("RGB")).astype(int)
    darkest = np.array(colormaps["Blues"](1.0, bytes=True)[:3])
    assert (np.abs(pixels - darkest).sum(axis=2) < 30).any()


def test_per_class_figures_redraw_only_their_class(tmp_path: Path) -> None:
    """The blitted per-class figures: one PNG per class, each with its own curve."""
    from PIL import Image

    from ioukit.plots import write_plots

    gt, pred = _pair(2 * PER_CLASS_FIGURES + 2)
    result = evaluate(gt, pred, protocol="coco")
    files = [p for p in write_plots(result, tmp_path / "p") if p.parent.name == "pr_curves"]
    images = [np.asarray(Image.open(p).convert("RGB")) for p in files]
    assert len({im.shape for im in images}) == 1
    assert len({im.tobytes() for im in images}) == len(images)
    # the blank background is shared: the top-left corner (outside the axes) is identical
    assert all(np.array_equal(im[:20, :20], images[0][:20, :20]) for im in images)
