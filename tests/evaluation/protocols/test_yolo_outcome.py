"""protocol="yolo" keeps its match (``result.outcome``) and carries precision/recall arrays;
curves read that match instead of matching again, with the same numbers (#10)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ioukit
from ioukit.analysis.curves import pr_curves
from ioukit.dataset import CategoryTable, Dataset, ImageTable


def _data(seed: int) -> tuple[Dataset, Dataset]:
    rng = np.random.default_rng(seed)
    n_images = 8
    images = ImageTable.from_lists(
        rng.permutation(np.arange(1, n_images + 1)).tolist(), [f"im{i}" for i in range(n_images)]
    )
    cats = CategoryTable.from_lists([2, 4, 6, 8], ["a", "b", "c", "unlabelled"])

    def boxes(n: int) -> np.ndarray:
        xy = rng.integers(0, 12, size=(n, 2)).astype(float)
        wh = rng.integers(1, 12, size=(n, 2)).astype(float)
        return np.concatenate([xy, xy + wh], axis=1)

    m, n = 40, 90
    gt = Dataset.from_arrays(
        images,
        cats,
        boxes=boxes(m),
        image_index=rng.integers(0, n_images, m),
        category_id=rng.choice([2, 4, 6], m),
        crowd=rng.random(m) < 0.15,
        difficult=rng.random(m) < 0.15,
    )
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=boxes(n),
        image_index=rng.integers(0, n_images, n),
        category_id=rng.choice([2, 4, 6, 8], n),
        scores=np.round(rng.random(n), 1),  # tied confidences
    )
    return gt, pred


def _same_curves(a: object, b: object) -> None:
    for f in dataclasses.fields(a):  # type: ignore[arg-type]
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        else:
            assert x == y, f.name


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold", [0.5, 0.75])
def test_yolo_curves_read_the_outcome(
    seed: int, threshold: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    gt, pred = _data(seed)
    result = ioukit.evaluate(gt, pred, protocol="yolo")
    assert result.outcome is not None
    want = pr_curves(gt, pred, iou_threshold=threshold, protocol="yolo")

    def no_rematch(*args: object, **kwargs: object) -> None:
        raise AssertionError("matched again")

    monkeypatch.setattr("ioukit.evaluation.protocols.yolo.match_yolo", no_rematch)
    _same_curves(result.curves(iou_threshold=threshold), want)


def test_yolo_outcome_holds_every_prediction_of_a_known_class() -> None:
    gt, pred = _data(1)
    result = ioukit.evaluate(gt, pred, protocol="yolo")
    outcome = result.outcome
    assert outcome is not None
    assert len(outcome) == len(pred)
    assert outcome.status.shape == (len(pred), 1, 10)


@pytest.mark.parametrize("seed", range(4))
def test_yolo_precision_recall_arrays(seed: int) -> None:
    gt, pred = _data(seed)
    r = ioukit.evaluate(gt, pred, protocol="yolo")
    precision, recall, ap = r.precision, r.recall, r.result.arrays["AP"]
    assert precision is not None and recall is not None
    k = len(r.per_class)
    assert precision.shape == (10, k, 101) and recall.shape == (10, k)
    x = r.result.arrays["recall_thresholds"]
    np.testing.assert_array_equal(x, np.linspace(0, 1, 101))
    for c, row in enumerate(r.per_class):
        if row["num_gt"] == 0:  # the unlabelled class
            assert (precision[:, c] == -1).all() and (recall[:, c] == -1).all()
            continue
        for t in range(10):
            y = precision[t, c]
            # AP is the trapezoid area under the envelope (Ultralytics' compute_ap)
            assert float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0)) == ap[c, t]
        outcome = r.outcome
        assert outcome is not None
        mine = outcome.class_row == c
        tp = (outcome.status[mine, 0, :] == 1).sum(axis=0)
        np.testing.assert_allclose(recall[:, c], tp / row["num_gt"], rtol=1e-12)
