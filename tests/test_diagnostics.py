"""Each diagnostic fires on its mistake and stays quiet on clean data."""

from __future__ import annotations

import numpy as np
import pytest

from ioukit.analysis.diagnostics import diagnose, greedy_match, pairwise_in_groups
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.evaluation import grouping
from ioukit.io import Unknowns
from tests.io.test_io_formats import make_pair


@pytest.fixture(scope="module")
def pair() -> tuple[Dataset, Dataset]:
    return make_pair(seed=7, n_images=30)


def _with_boxes(pred: Dataset, boxes: np.ndarray, **over: object) -> Dataset:
    # a Dataset refuses inverted boxes (x2 < x1): keep the rows a reader would accept
    ok = (boxes[:, 2] >= boxes[:, 0]) & (boxes[:, 3] >= boxes[:, 1])
    fields: dict[str, object] = {
        "boxes": boxes[ok],
        "image_index": pred.image_index[ok],
        "category_id": pred.category_id[ok],
        "scores": None if pred.scores is None else pred.scores[ok],
    }
    fields.update({k: v[ok] if isinstance(v, np.ndarray) else v for k, v in over.items()})
    return Dataset.from_arrays(pred.images, pred.categories, **fields)  # type: ignore[arg-type]


def codes(gt: Dataset, pred: Dataset, **kw: object) -> list[str]:
    return [f.code for f in diagnose(gt, pred, **kw)]  # type: ignore[arg-type]


def test_clean_data_has_no_warnings(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    assert [f for f in diagnose(gt, pred) if f.severity != "info"] == []


@pytest.mark.parametrize(
    ("transform", "expected"),
    [
        (lambda b: np.c_[b[:, :2], b[:, 2:] - b[:, :2]], "x y w h boxes read as x1 y1 x2 y2"),
        (lambda b: np.c_[b[:, :2], b[:, :2] + b[:, 2:]], "x1 y1 x2 y2 boxes read as x y w h"),
        # centre boxes (cx, cy, w, h) read as x y w h: canonical = (cx, cy, cx + w, cy + h)
        (
            lambda b: np.c_[
                (b[:, :2] + b[:, 2:]) / 2, (b[:, :2] + b[:, 2:]) / 2 + (b[:, 2:] - b[:, :2])
            ],
            "centre cx cy w h boxes read as x y w h",
        ),
        (lambda b: b[:, [1, 0, 3, 2]], "x and y swapped"),
    ],
)
def test_box_format_mistakes(
    pair: tuple[Dataset, Dataset], transform: object, expected: str
) -> None:
    gt, pred = pair
    wrong = transform(pred.boxes)  # type: ignore[operator]
    findings = [f for f in diagnose(gt, _with_boxes(pred, wrong)) if f.code == "box-format"]
    assert len(findings) == 1
    assert expected in findings[0].message
    assert findings[0].severity == "error"


def test_normalized_predictions(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    size = np.c_[gt.images.widths, gt.images.heights, gt.images.widths, gt.images.heights][
        pred.image_index
    ]
    assert "normalized-vs-pixels" in codes(gt, _with_boxes(pred, pred.boxes / size))


def test_outside_image_and_scale(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    found = codes(gt, _with_boxes(pred, pred.boxes * 5))
    assert "outside-image" in found and "scale-mismatch" in found


def test_near_duplicates_and_matched_twice(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    assert pred.scores is not None
    doubled = Dataset.from_arrays(
        pred.images,
        pred.categories,
        boxes=np.r_[pred.boxes, pred.boxes + 0.1],
        image_index=np.r_[pred.image_index, pred.image_index],
        category_id=np.r_[pred.category_id, pred.category_id],
        scores=np.r_[pred.scores, pred.scores * 0.9],
    )
    findings = {f.code: f for f in diagnose(gt, doubled)}
    count = int(findings["near-duplicates"].message.split()[0])
    assert 0.9 * len(pred) <= count <= len(pred)  # 1-pixel boxes shifted by 0.1 fall below 0.95
    assert "gt-matched-twice" in findings


def test_duplicate_ground_truth(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    twice = Dataset.from_arrays(
        gt.images,
        gt.categories,
        boxes=np.r_[gt.boxes, gt.boxes[:3]],
        image_index=np.r_[gt.image_index, gt.image_index[:3]],
        category_id=np.r_[gt.category_id, gt.category_id[:3]],
    )
    assert (
        "3 ground-truth boxes"
        in {f.code: f for f in diagnose(twice, pred)}["duplicate-ground-truth"].message
    )


def test_unknowns_empty_and_ties(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    unknowns = Unknowns()
    unknowns.add_image("ghost")
    unknowns.add_class("17")
    assert {"unknown-images", "unknown-classes"} <= set(codes(gt, pred, unknowns=unknowns))
    tied = _with_boxes(pred, pred.boxes, scores=np.full(len(pred), 0.5))
    assert "tied-scores" in codes(gt, tied)
    empty = Dataset.from_arrays(
        gt.images, gt.categories, boxes=np.zeros((0, 4)), image_index=[], category_id=[], scores=[]
    )
    assert codes(gt, empty) == ["empty"]


def test_greedy_match_against_loop(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    matched, ious, _ = greedy_match(gt, pred)
    assert pred.scores is not None
    taken: set[int] = set()
    for p in np.argsort(-pred.scores, kind="stable").tolist():
        best, best_g = 0.5, -1
        for g in range(len(gt)):
            if (
                g in taken
                or gt.image_index[g] != pred.image_index[p]
                or gt.category_id[g] != pred.category_id[p]
            ):
                continue
            a, b = pred.boxes[p], gt.boxes[g]
            iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
            ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
            inter = iw * ih
            iou = inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)
            if iou >= best:
                best, best_g = iou, g
        if best_g >= 0:
            taken.add(best_g)
        assert matched[p] == best_g
        if best_g >= 0:
            assert ious[p] == pytest.approx(best)


def test_pairwise_in_groups_limits() -> None:
    with pytest.raises(MemoryError):
        pairwise_in_groups(np.zeros(10, dtype=np.int64), np.zeros(10, dtype=np.int64), max_pairs=50)


# ------------------------------------------------------------------ #16 items 9 and 18


def test_mistakes_that_gave_ap_zero_with_no_finding(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    # predictions made at half the resolution and not scaled back
    assert "resolution-mismatch" in codes(gt, _with_boxes(pred, pred.boxes * 0.5))
    # image ids shifted by one: every prediction sits on the neighbouring image
    ids = gt.images.ids
    by_id = np.argsort(ids, kind="stable")
    rank = np.empty(len(ids), dtype=np.int64)
    rank[by_id] = np.arange(len(ids))
    nxt = rank[pred.image_index] + 1
    ok = nxt < len(ids)
    shifted = Dataset.from_arrays(
        pred.images,
        pred.categories,
        boxes=pred.boxes[ok],
        image_index=by_id[nxt[ok]],
        category_id=pred.category_id[ok],
        scores=None if pred.scores is None else pred.scores[ok],
    )
    assert "image-mismatch" in codes(gt, shifted)
    # category ids permuted
    cats = np.sort(gt.categories.ids)
    perm = dict(zip(cats.tolist(), np.roll(cats, 1).tolist(), strict=True))
    relabelled = _with_boxes(
        pred, pred.boxes, category_id=np.array([perm[int(c)] for c in pred.category_id])
    )
    assert "category-mismatch" in codes(gt, relabelled)
    # and clean data stays quiet
    assert not {"resolution-mismatch", "image-mismatch", "category-mismatch"} & set(codes(gt, pred))


def test_diagnostics_work_in_bounded_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    import ioukit.analysis.diagnostics as diagnostics

    rng = np.random.default_rng(5)
    images = ImageTable.from_lists([1, 2], ["a", "b"], [800, 800], [800, 800])
    cats = CategoryTable.from_lists([1], ["x"])
    xy = rng.uniform(0, 700, (400, 2))
    boxes = np.c_[xy, xy + rng.uniform(5, 100, (400, 2))]
    gt = Dataset.from_arrays(images, cats, boxes=boxes, image_index=np.arange(400) % 2,
                             category_id=np.ones(400, dtype=np.int64))  # fmt: skip
    noisy = boxes + rng.normal(0, 3, boxes.shape)
    noisy[:, 2:] = np.maximum(noisy[:, 2:], noisy[:, :2])
    pred = Dataset.from_arrays(images, cats, boxes=np.r_[noisy, noisy],
                               image_index=np.r_[np.arange(400) % 2, np.arange(400) % 2],
                               category_id=np.ones(800, dtype=np.int64),
                               scores=rng.random(800))  # fmt: skip
    whole = diagnose(gt, pred)
    matched = greedy_match(gt, pred)
    monkeypatch.setattr(diagnostics, "_CHUNK_PAIRS", 1000)
    monkeypatch.setattr(grouping, "CHUNK_PAIRS", 5000)
    assert diagnose(gt, pred) == whole
    for a, b in zip(greedy_match(gt, pred), matched, strict=True):
        np.testing.assert_array_equal(a, b)
    assert "near-duplicates" in [f.code for f in whole]


def test_diagnose_reads_the_evaluation_match(
    pair: tuple[Dataset, Dataset], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ioukit.analysis.diagnostics as diagnostics
    from ioukit.engine import evaluate

    gt, pred = pair
    dup = Dataset.from_arrays(
        pred.images,
        pred.categories,
        boxes=np.r_[pred.boxes, pred.boxes + 0.5],
        image_index=np.r_[pred.image_index, pred.image_index],
        category_id=np.r_[pred.category_id, pred.category_id],
        scores=np.r_[pred.scores, np.asarray(pred.scores) * 0.5],
    )
    fresh = diagnose(gt, dup)
    outcome = evaluate(gt, dup).outcome

    def no_rematch(*args: object, **kwargs: object) -> object:
        raise AssertionError("matched again")

    monkeypatch.setattr(diagnostics, "_greedy", no_rematch)
    reused = diagnose(gt, dup, outcome=outcome)
    assert "gt-matched-twice" in [f.code for f in reused]
    assert [f.code for f in reused] == [f.code for f in fresh]


def test_near_duplicates_compare_a_bounded_number_per_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ioukit.analysis.diagnostics as diagnostics

    images = ImageTable.from_lists([1], ["a"], [100], [100])
    cats = CategoryTable.from_lists([1], ["x"])
    boxes = np.array([[10, 10, 50, 50]] * 40, dtype=float)
    scores = np.linspace(1, 0.1, 40)
    ds = Dataset.from_arrays(images, cats, boxes=boxes, image_index=np.zeros(40, np.int64),
                             category_id=np.ones(40, np.int64), scores=scores)  # fmt: skip
    key = {1: 0}
    flags, pairs = diagnostics._within_duplicates(ds, key, 0.95)
    assert flags.sum() == 39 and pairs == 40 * 39 // 2
    monkeypatch.setattr(diagnostics, "_PER_GROUP", 5)
    flags, pairs = diagnostics._within_duplicates(ds, key, 0.95)
    assert flags.sum() == 4 and pairs == 10 and flags[1:5].all()  # the 5 best-scoring only
