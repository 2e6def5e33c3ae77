"""Open Images protocols: the TensorFlow API's published test values, a plain per-image oracle on
random data, exact merging of partial results, readers and hierarchy expansion."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.protocols.openimages import (
    ImageLabels,
    accumulate_openimages,
    evaluate_openimages,
    match_openimages,
)
from ioukit.io.openimages import (
    read_openimages_ground_truth,
    read_openimages_hierarchy,
    read_openimages_predictions,
)

DATA = Path(__file__).parents[2] / "data" / "conformance" / "openimages"
NAMES = ["cat", "dog", "elephant"]


def _published() -> dict[str, float]:
    return dict(json.loads((DATA / "expected.json").read_text())["published"])


def test_oiv2_published_values() -> None:
    gt = read_openimages_ground_truth(DATA / "oiv2_boxes.csv", categories=NAMES)
    pred = read_openimages_predictions(DATA / "oiv2_predictions.csv", gt.dataset)
    r = ioukit.evaluate(gt.dataset, pred, protocol="openimages")
    ap = {row["name"]: row["AP"] for row in r.per_class}
    assert ap["cat"] == pytest.approx(0.16666666, abs=1e-7)
    assert ap["dog"] == 0.0 and ap["elephant"] == 0.0
    want = _published()["OpenImagesV2 (OpenImagesDetectionEvaluator) mAP"]
    assert r.stats["mAP"] == pytest.approx(want, abs=1e-7)
    assert r.stats["mAP"] == 1 / 18


def test_challenge_published_values() -> None:
    gt = read_openimages_ground_truth(
        DATA / "challenge_boxes.csv",
        image_labels=DATA / "challenge_image_labels.csv",
        categories=NAMES,
    )
    pred = read_openimages_predictions(DATA / "challenge_predictions.csv", gt.dataset)
    r = ioukit.evaluate(
        gt.dataset,
        pred,
        protocol="openimages_challenge",
        group_of_weight=0.5,
        image_labels=gt.image_labels,
    )
    ap = {row["name"]: row["AP"] for row in r.per_class}
    assert ap["dog"] == pytest.approx(0.3333333333, abs=1e-7)
    assert ap["elephant"] == pytest.approx(0.333333333333, abs=1e-7)
    assert ap["cat"] == pytest.approx(0.142857142857, abs=1e-7)
    want = _published()["OpenImagesChallengeEvaluator mAP"]
    assert r.stats["mAP"] == pytest.approx(want, abs=1e-7)
    assert r.stats["mAP"] == pytest.approx(17 / 63, abs=1e-15)
    # without the image-level labels dog is evaluated only where boxed: img1's dog
    # predictions are dropped, so dog's AP becomes 1
    r2 = ioukit.evaluate(gt.dataset, pred, protocol="openimages_challenge", group_of_weight=0.5)
    assert {row["name"]: row["AP"] for row in r2.per_class}["dog"] == 1.0


# ---------------------------------------------------------------- oracle on random data


def _reference(
    gt: Dataset,
    pred: Dataset,
    *,
    challenge: bool,
    weight: float,
    verified: dict[int, set[int]],
    thr: float = 0.5,
) -> tuple[float, list[float]]:
    """Plain per-image, per-class loops in the reference's structure and order."""
    cats = sorted(gt.categories.ids.tolist())
    scores_per: dict[int, list[float]] = {c: [] for c in cats}
    labels_per: dict[int, list[float]] = {c: [] for c in cats}
    num_gt = dict.fromkeys(cats, 0.0)
    assert pred.scores is not None
    for img in range(len(gt.images)):
        g_rows = [i for i in range(len(gt)) if gt.image_index[i] == img]
        for c in cats:
            n = sum(1 for i in g_rows if gt.category_id[i] == c and not gt.group_of[i])
            q = sum(1 for i in g_rows if gt.category_id[i] == c and gt.group_of[i])
            num_gt[c] += n + weight * q
        allowed = {int(gt.category_id[i]) for i in g_rows} | verified.get(img, set())
        p_rows = [
            i
            for i in range(len(pred))
            if pred.image_index[i] == img
            and pred.boxes[i, 0] < pred.boxes[i, 2]
            and pred.boxes[i, 1] < pred.boxes[i, 3]
            and (not challenge or int(pred.category_id[i]) in allowed)
        ]
        for c in cats:
            rows = [i for i in p_rows if pred.category_id[i] == c]
            order = np.argsort(np.array([pred.scores[i] for i in rows]), kind="stable")[::-1]
            rows = [rows[k] for k in order]
            gts = [i for i in g_rows if gt.category_id[i] == c and not gt.group_of[i]]
            groups = [i for i in g_rows if gt.category_id[i] == c and gt.group_of[i]]
            status = ["fp"] * len(rows)
            taken: set[int] = set()
            for k, i in enumerate(rows):
                a = pred.boxes[i]
                area = (a[3] - a[1]) * (a[2] - a[0])
                best, best_v = -1, 0.0
                for j in gts:
                    b = gt.boxes[j]
                    inter = max(min(a[3], b[3]) - max(a[1], b[1]), 0.0) * max(
                        min(a[2], b[2]) - max(a[0], b[0]), 0.0
                    )
                    v = inter / ((area + (b[3] - b[1]) * (b[2] - b[0])) - inter)
                    if best < 0 or v > best_v:
                        best, best_v = j, v
                if best >= 0 and best_v >= thr and best not in taken:
                    status[k] = "tp"
                    taken.add(best)
            group_score = dict.fromkeys(groups, 0.0)
            for k, i in enumerate(rows):
                if status[k] != "fp" or not groups:
                    continue
                a = pred.boxes[i]
                area = (a[3] - a[1]) * (a[2] - a[0])
                best, best_v = -1, 0.0
                for j in groups:
                    b = gt.boxes[j]
                    inter = max(min(a[3], b[3]) - max(a[1], b[1]), 0.0) * max(
                        min(a[2], b[2]) - max(a[0], b[0]), 0.0
                    )
                    if best < 0 or inter / area > best_v:
                        best, best_v = j, inter / area
                if best_v >= thr:
                    status[k] = "group"
                    group_score[best] = max(group_score[best], float(pred.scores[i]))
            for k, i in enumerate(rows):
                if status[k] in ("tp", "fp"):
                    scores_per[c].append(float(pred.scores[i]))
                    labels_per[c].append(1.0 if status[k] == "tp" else 0.0)
            for j in groups:
                if group_score[j] > 0 and weight > 0:
                    scores_per[c].append(group_score[j])
                    labels_per[c].append(weight)
    aps = []
    for c in cats:
        if num_gt[c] == 0:
            aps.append(float("nan"))
            continue
        s = np.array(scores_per[c], dtype=float)
        lab = np.array(labels_per[c], dtype=float)
        order = np.argsort(s, kind="stable")[::-1]
        tp = np.cumsum(lab[order])
        fp = np.cumsum((lab[order] <= 0).astype(float))
        aps.append(ioukit.voc10_ap(tp / num_gt[c], tp / (tp + fp)))
    valid = [a for a in aps if not np.isnan(a)]
    return (float(np.nanmean(aps)) if valid else -1.0), aps


def _random(seed: int, n_images: int) -> tuple[Dataset, Dataset, ImageLabels]:
    rng = np.random.default_rng(seed)
    images = ImageTable.from_lists(list(range(1, n_images + 1)), [f"i{k}" for k in range(n_images)])
    cats = CategoryTable.from_lists([1, 2, 3], NAMES)

    def boxes(n: int) -> np.ndarray:
        xy = rng.integers(0, 8, size=(n, 2)).astype(float)
        wh = rng.integers(0, 6, size=(n, 2)).astype(float)  # some empty predictions
        return np.concatenate([xy, xy + wh], axis=1)

    m = int(rng.integers(0, 4 * n_images + 1))
    gt_boxes = boxes(m)
    gt_boxes[:, 2:] += 1  # ground truth never empty
    gt = Dataset.from_arrays(
        images,
        cats,
        boxes=gt_boxes,
        image_index=rng.integers(0, n_images, m),
        category_id=rng.integers(1, 4, m),
        group_of=rng.random(m) < 0.3,
    )
    n = int(rng.integers(0, 6 * n_images + 1))
    # half the predictions sit on (or next to) a ground-truth box of their image and class
    near = rng.random(n) < 0.5 if m else np.zeros(n, dtype=bool)
    src = rng.integers(0, max(m, 1), n)
    pred_boxes = boxes(n)
    pred_boxes[near] = gt.boxes[src[near]] + rng.integers(-1, 2, size=(int(near.sum()), 4))
    pred_boxes[:, 2:] = np.maximum(
        pred_boxes[:, 2:], pred_boxes[:, :2]
    )  # some empty, none inverted
    image_index = rng.integers(0, n_images, n)
    category_id = rng.integers(1, 4, n)
    image_index[near] = gt.image_index[src[near]]
    category_id[near] = gt.category_id[src[near]]
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=pred_boxes,
        image_index=image_index,
        category_id=category_id,
        scores=rng.choice([0.0, 0.2, 0.5, 0.7, 0.9], size=n),  # many ties, some zero
    )
    k = int(rng.integers(0, 2 * n_images + 1))
    labels = ImageLabels.from_arrays(
        rng.integers(0, n_images, k), rng.integers(1, 4, k), rng.random(k) < 0.5
    )
    return gt, pred, labels


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_images=st.integers(1, 6),
    challenge=st.booleans(),
    weight=st.sampled_from([0.0, 0.3, 0.5, 1.0]),
)
def test_equals_plain_oracle(seed: int, n_images: int, challenge: bool, weight: float) -> None:
    gt, pred, labels = _random(seed, n_images)
    verified: dict[int, set[int]] = {}
    for i, c in zip(labels.image_index.tolist(), labels.category_id.tolist(), strict=True):
        verified.setdefault(i, set()).add(c)
    r = evaluate_openimages(
        gt, pred, challenge=challenge, group_of_weight=weight, image_labels=labels
    )
    want_map, want_aps = _reference(gt, pred, challenge=challenge, weight=weight, verified=verified)
    got = [row["AP"] for row in r.per_class]
    assert got == [-1.0 if np.isnan(a) else a for a in want_aps]
    assert r.stats["mAP"] == want_map


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_images=st.integers(1, 7),
    n_shards=st.integers(1, 4),
    challenge=st.booleans(),
)
def test_partials_merge_bit_for_bit(
    seed: int, n_images: int, n_shards: int, challenge: bool
) -> None:
    gt, pred, labels = _random(seed, n_images)
    options = {"challenge": challenge, "group_of_weight": 0.5, "image_labels": labels}
    whole = evaluate_openimages(gt, pred, **options)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed + 1)
    shard_of = rng.integers(0, n_shards, n_images)  # some shards empty, some one image
    parts = []
    for s in rng.permutation(n_shards).tolist():
        rows = np.flatnonzero(shard_of[pred.image_index] == s)
        sub = Dataset.from_arrays(
            pred.images,
            pred.categories,
            boxes=pred.boxes[rows],
            image_index=pred.image_index[rows],
            category_id=pred.category_id[rows],
            scores=pred.scores[rows] if pred.scores is not None else None,
        )
        parts.append(match_openimages(gt, sub, images=np.flatnonzero(shard_of == s), **options))  # type: ignore[arg-type]
    merged = accumulate_openimages(gt, parts)
    assert merged.stats == whole.stats
    assert merged.per_class == whole.per_class
    for key, value in whole.arrays.items():
        np.testing.assert_array_equal(merged.arrays[key], value)


def test_overlapping_or_mismatched_partials_are_refused() -> None:
    gt, pred, _ = _random(3, 4)
    a = match_openimages(gt, pred, images=np.array([0, 1]))
    b = match_openimages(gt, pred, images=np.array([1, 2]))
    with pytest.raises(DataFormatError, match=r"a.json, b.json: image 'i1' appears in both"):
        accumulate_openimages(gt, [a, b], names=["a.json", "b.json"])
    c = match_openimages(gt, pred, images=np.array([3]), challenge=True)
    with pytest.raises(DataFormatError, match=r"c\.json: expected the options of a\.json"):
        accumulate_openimages(gt, [a, c], names=["a.json", "c.json"])
    with pytest.raises(DataFormatError, match="at least one"):
        accumulate_openimages(gt, [])
    # challenge partials made with different image-level labels do not merge
    one = ImageLabels.from_arrays([0], [1])
    two = ImageLabels.from_arrays([0], [2])
    d = match_openimages(gt, pred, images=np.array([0]), challenge=True, image_labels=one)
    e = match_openimages(gt, pred, images=np.array([1]), challenge=True, image_labels=two)
    with pytest.raises(DataFormatError, match=r"e\.csv: expected the options of d\.csv"):
        accumulate_openimages(gt, [d, e], names=["d.csv", "e.csv"])


def test_partial_is_compact() -> None:
    gt, pred, _ = _random(5, 6)
    part = match_openimages(gt, pred)
    assert part.nbytes == 21 * len(part) + 8 * part.images.size


def test_max_dets_and_bad_options() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1], ["cat"])
    gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], image_index=[0], category_id=[1])
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=[[5, 5, 6, 6], [0, 0, 1, 1]],
        image_index=[0, 0],
        category_id=[1, 1],
        scores=[0.9, 0.8],
    )
    assert evaluate_openimages(gt, pred).stats["mAP"] == 0.5
    low = Dataset.from_arrays(
        images, cats, boxes=pred.boxes, image_index=[0, 0], category_id=[1, 1], scores=[-10, 0.8]
    )
    assert evaluate_openimages(gt, low).stats["mAP"] == 1.0  # score <= -10 dropped, as TF
    assert evaluate_openimages(gt, pred, max_dets=1).stats["mAP"] == 0.0
    with pytest.raises(ParameterError, match="max_dets"):
        evaluate_openimages(gt, pred, max_dets=0)
    with pytest.raises(ParameterError, match="iou_threshold"):
        evaluate_openimages(gt, pred, iou_threshold=1.5)
    with pytest.raises(ParameterError, match="group_of_weight"):
        evaluate_openimages(gt, pred, group_of_weight=-1)
    with pytest.raises(TypeError, match="image_labels"):
        evaluate_openimages(gt, pred, image_labels=[1])  # type: ignore[arg-type]


def test_no_positives_anywhere_gives_minus_one() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1], ["cat"])
    empty = Dataset.from_arrays(
        images, cats, boxes=np.zeros((0, 4)), image_index=[], category_id=[]
    )
    pred = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 1, 1]], image_index=[0], category_id=[1], scores=[0.5]
    )
    r = evaluate_openimages(empty, pred)
    assert r.stats["mAP"] == -1.0 and r.per_class[0]["AP"] == -1.0


# ---------------------------------------------------------------- readers and hierarchy

HIERARCHY = {
    "LabelName": "/m/root",
    "Subcategory": [
        {
            "LabelName": "/m/animal",
            "Subcategory": [
                {"LabelName": "/m/cat"},
                {"LabelName": "/m/dog", "Subcategory": [{"LabelName": "/m/puppy"}]},
            ],
        },
        {"LabelName": "/m/toy", "Subcategory": [{"LabelName": "/m/puppy"}]},
    ],
}


def test_hierarchy_flattening() -> None:
    h = read_openimages_hierarchy(HIERARCHY)
    assert h.ancestors["/m/puppy"] == ("/m/dog", "/m/animal", "/m/toy")
    assert h.ancestors["/m/animal"] == ()
    assert h.descendants["/m/animal"] == ("/m/cat", "/m/dog", "/m/puppy")
    assert "/m/root" not in h.ancestors
    with pytest.raises(DataFormatError, match=r"hierarchy.Subcategory\[0\]"):
        read_openimages_hierarchy({"LabelName": "/m/root", "Subcategory": [{"x": 1}]})


def test_a_class_under_two_parents_expands_into_a_set(tmp_path: Path) -> None:
    # #23 item 4: Open Images lists Hat under Clothing and under Fashion accessory; a Sombrero
    # box (under both Hats) must become one Hat box, as the TF Object Detection API's set
    hat = {"LabelName": "/m/hat", "Subcategory": [{"LabelName": "/m/sombrero"}]}
    tree = {
        "LabelName": "/m/root",
        "Subcategory": [
            {"LabelName": "/m/clothing", "Subcategory": [hat]},
            {"LabelName": "/m/fashion", "Subcategory": [hat]},
        ],
    }
    h = read_openimages_hierarchy(tree)
    assert h.ancestors["/m/sombrero"] == ("/m/hat", "/m/clothing", "/m/fashion")
    assert h.ancestors["/m/hat"] == ("/m/clothing", "/m/fashion")
    assert h.descendants["/m/clothing"] == ("/m/hat", "/m/sombrero")
    boxes = tmp_path / "boxes.csv"
    boxes.write_text(
        "ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,"
        "IsGroupOf,IsDepiction,IsInside\n"
        "im1,xclick,/m/sombrero,1,0.1,0.2,0.3,0.4,0,0,0,0,0\n"
    )
    (tmp_path / "h.json").write_text(json.dumps(tree))
    ds = read_openimages_ground_truth(boxes, hierarchy=tmp_path / "h.json").dataset
    names = [ds.categories.name_of(int(c)) for c in ds.category_id]
    assert names == ["/m/sombrero", "/m/hat", "/m/clothing", "/m/fashion"]


def test_expansion_of_boxes_and_labels(tmp_path: Path) -> None:
    boxes = tmp_path / "boxes.csv"
    boxes.write_text(
        "ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,"
        "IsGroupOf,IsDepiction,IsInside\n"
        "im1,xclick,/m/puppy,1,0.1,0.2,0.3,0.4,0,0,1,0,0\n"
        "im1,xclick,/m/cat,1,0.5,0.6,0.5,0.6,0,0,0,0,0\n"
    )
    labels = tmp_path / "labels.csv"
    labels.write_text("ImageID,Source,LabelName,Confidence\nim2,verification,/m/animal,0\n")
    hierarchy = tmp_path / "h.json"
    hierarchy.write_text(json.dumps(HIERARCHY))
    gt = read_openimages_ground_truth(boxes, image_labels=labels, hierarchy=hierarchy)
    ds = gt.dataset
    names = [ds.categories.name_of(int(c)) for c in ds.category_id]
    assert names == ["/m/puppy", "/m/dog", "/m/animal", "/m/toy", "/m/cat", "/m/animal"]
    assert ds.group_of is not None
    assert ds.group_of.tolist() == [True] * 4 + [False] * 2
    assert ds.boxes[1].tolist() == [0.1, 0.3, 0.2, 0.4]
    assert ds.images.stems == ("im1", "im2")
    assert gt.image_labels is not None
    label_names = [ds.categories.name_of(int(c)) for c in gt.image_labels.category_id]
    assert label_names == ["/m/animal", "/m/cat", "/m/dog", "/m/puppy"]
    assert not gt.image_labels.positive.any()
    assert gt.image_labels.image_index.tolist() == [1, 1, 1, 1]


def test_reader_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("ImageID,LabelName,XMin,XMax,YMin\nim,/m/a,0,1,0\n")
    with pytest.raises(DataFormatError, match=r"bad.csv: line 1: .*missing YMax"):
        read_openimages_ground_truth(bad)
    bad.write_text("ImageID,LabelName,XMin,XMax,YMin,YMax\nim,/m/a,0,x,0,1\n")
    with pytest.raises(DataFormatError, match=r"bad.csv: line 2: XMax: expected a number"):
        read_openimages_ground_truth(bad)
    bad.write_text("ImageID,LabelName,XMin,XMax,YMin,YMax\nim,/m/a,0.5,0.1,0,1\n")
    with pytest.raises(DataFormatError, match=r"line 2: expected XMin <= XMax"):
        read_openimages_ground_truth(bad)
    bad.write_text("ImageID,LabelName,XMin,XMax,YMin,YMax,IsGroupOf\nim,/m/a,0,1,0,1,2\n")
    with pytest.raises(DataFormatError, match=r"IsGroupOf: expected 0 or 1"):
        read_openimages_ground_truth(bad)
    bad.write_text("ImageID,LabelName,XMin,XMax,YMin,YMax\nim,/m/zebra,0,1,0,1\n")
    with pytest.raises(DataFormatError, match=r"'/m/zebra' is not in the hierarchy"):
        read_openimages_ground_truth(bad, hierarchy=HIERARCHY)
    good = read_openimages_ground_truth(DATA / "oiv2_boxes.csv", categories=NAMES)
    pred = tmp_path / "pred.csv"
    pred.write_text("ImageID,LabelName,Score,XMin,XMax,YMin,YMax\nimg9,cat,0.5,0,1,0,1\n")
    with pytest.raises(DataFormatError, match=r"pred.csv: row 1: ImageID 'img9' is not in"):
        read_openimages_predictions(pred, good.dataset)
    assert len(read_openimages_predictions(pred, good.dataset, unknown="drop")) == 0
