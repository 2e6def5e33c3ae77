"""Label-error candidates: planted errors (relabelled objects, deleted annotations, enlarged
boxes) must come out on top; closed-form fixtures for each kind; bad input."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.label_errors import COLUMNS, KINDS, label_errors
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import ParameterError
from ioukit.evaluation.result import ProtocolResult
from ioukit.overlap import box_iou
from ioukit.synthetic import make_detections, to_datasets

# ------------------------------------------------------------------ planted errors


def _good_detector(
    seed: int, n_images: int = 250, n_cats: int = 6
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Clean ground truth and a good detector's results on it: each object found with
    probability 0.93 (small jitter, its class, high scores), its own mistakes scored lower
    (3 % wrong class, duplicates at half the score, background boxes)."""
    rng = np.random.default_rng(seed)
    images, anns, res = [], [], []
    ann_id = 1
    for img in range(1, n_images + 1):
        width, height = 640, 480
        images.append({"id": img, "file_name": f"{img}.jpg", "width": width, "height": height})
        for _ in range(int(rng.poisson(5))):
            w, h = rng.uniform(20, 260), rng.uniform(20, 220)
            x, y = rng.uniform(0, width - w), rng.uniform(0, height - h)
            cat = int(rng.integers(1, n_cats + 1))
            anns.append(
                {"id": ann_id, "image_id": img, "category_id": cat, "bbox": [x, y, w, h],
                 "area": w * h, "iscrowd": 0}
            )  # fmt: skip
            ann_id += 1
            if rng.random() < 0.93:
                jitter = rng.normal(0, 0.025, 4) * [w, h, w, h]
                box = [x + jitter[0], y + jitter[1], w + jitter[2], h + jitter[3]]
                score = float(rng.beta(6, 1.5))
                wrong = rng.random() < 0.03
                if wrong:
                    cat = int(rng.choice([c for c in range(1, n_cats + 1) if c != cat]))
                    score *= 0.6
                res.append({"image_id": img, "category_id": cat, "bbox": box, "score": score})
                if rng.random() < 0.2:
                    res.append(
                        {"image_id": img, "category_id": cat, "bbox": box, "score": score * 0.5}
                    )
        for _ in range(int(rng.poisson(4))):
            w, h = rng.uniform(10, 200), rng.uniform(10, 200)
            box = [rng.uniform(0, width - w), rng.uniform(0, height - h), w, h]
            cat = int(rng.integers(1, n_cats + 1))
            res.append(
                {"image_id": img, "category_id": cat, "bbox": box, "score": float(rng.beta(1.5, 6))}
            )
    cats = [{"id": i, "name": f"c{i}"} for i in range(1, n_cats + 1)]
    return {"images": images, "annotations": anns, "categories": cats}, res


def _plant(
    gt: dict[str, Any], seed: int, fraction: float = 0.04
) -> tuple[dict[str, Any], set[int], dict[int, list[list[float]]], set[int]]:
    """A copy of ``gt`` with ``fraction`` of the objects relabelled, as many deleted and as
    many large ones enlarged 1.3x about their centre (IoU with the original 0.59)."""
    rng = np.random.default_rng(1000 + seed)
    anns = gt["annotations"]
    pick = rng.permutation(len(anns))
    k = int(fraction * len(anns))
    relabel = {anns[i]["id"] for i in pick[:k]}
    delete = {anns[i]["id"] for i in pick[k : 2 * k]}
    large = [i for i in pick[2 * k :] if anns[i]["area"] > 96.0**2 * 1.2]
    enlarge = {anns[i]["id"] for i in large[:k]}
    cats = [c["id"] for c in gt["categories"]]
    new = copy.deepcopy(gt)
    deleted: dict[int, list[list[float]]] = {}
    kept = []
    for a in new["annotations"]:
        x, y, w, h = a["bbox"]
        if a["id"] in delete:
            deleted.setdefault(a["image_id"], []).append([x, y, x + w, y + h])
            continue
        if a["id"] in relabel:
            a["category_id"] = int(rng.choice([c for c in cats if c != a["category_id"]]))
        if a["id"] in enlarge:
            a["bbox"] = [x - 0.15 * w, y - 0.15 * h, 1.3 * w, 1.3 * h]
            a["area"] = a["area"] * 1.69
        kept.append(a)
    new["annotations"] = kept
    return new, relabel, deleted, enlarge


def _score(
    le: Any, pred: Dataset, relabel: set[int], deleted: dict[int, list[list[float]]],
    enlarge: set[int],
) -> np.ndarray:  # fmt: skip
    """Per candidate: is it one of the planted errors (and of the planted kind)?"""
    hits = []
    for row in le.rows():
        if row["kind"] == "wrong_label":
            hits.append(row["gt_annotation_id"] in relabel)
        elif row["kind"] == "loose_box":
            hits.append(row["gt_annotation_id"] in enlarge)
        else:
            boxes = deleted.get(row["image_id"], [])
            box = pred.boxes[row["prediction_row"]][None]
            hits.append(bool(boxes) and float(box_iou(box, np.array(boxes)).max()) >= 0.5)
    return np.array(hits, dtype=bool)


@pytest.mark.parametrize("seed", range(3))
def test_planted_errors_come_out_on_top(seed: int) -> None:
    clean, res = _good_detector(seed)
    gt, relabel, deleted, enlarge = _plant(clean, seed)
    g, p = to_datasets(gt, res)
    le = ioukit.evaluate(g, p).label_errors(n=None)
    hit = _score(le, p, relabel, deleted, enlarge)
    planted = len(relabel) + sum(len(v) for v in deleted.values()) + len(enlarge)
    # measured (seeds 0-2): precision 1.0 in the top planted/4, 0.95-1.0 in the top
    # planted/2, 0.58-0.67 in the top `planted` (recall caps it: below)
    k = planted // 2
    assert hit[: planted // 4].mean() >= 0.9, hit[: planted // 4].mean()
    assert hit[:k].mean() >= 0.85, hit[:k].mean()
    # recall (measured 0.90-0.92 wrong labels, 0.48-0.61 loose boxes; deleted objects 0.40-0.53:
    # a deleted object next to another ground truth (IoU >= 0.1) is not "far from any")
    found = {int(a) for a in le.gt_annotation_id[hit]}
    assert len(found & relabel) >= 0.8 * len(relabel)
    assert len(found & enlarge) >= 0.4 * len(enlarge)
    # the clean ground truth gives far fewer candidates above the same score
    clean_le = ioukit.evaluate(*to_datasets(clean, res)).label_errors(n=None)
    cut = float(le.score[k - 1])
    assert int((clean_le.score >= cut).sum()) <= 0.25 * k


def test_noisy_detector_still_ranks_planted_errors_above_chance() -> None:
    # make_detections' detector makes the same mistakes as the planted ones (8 % wrong
    # class at full score, jitter up to 15 %): precision is lower, but far above the share
    # of planted errors among all candidates
    clean, res = make_detections(
        num_images=300, num_classes=6, seed=0, fp_per_image=3.0, crowd_fraction=0.0
    )
    gt, relabel, deleted, enlarge = _plant(clean, 0)
    g, p = to_datasets(gt, res)
    le = ioukit.evaluate(g, p).label_errors(n=None)
    hit = _score(le, p, relabel, deleted, enlarge)
    assert hit[:100].mean() >= 0.55
    assert hit[:100].mean() >= 2.5 * hit.mean()


# ------------------------------------------------------------------ closed-form fixtures


def _pair() -> tuple[Dataset, Dataset]:
    images = ImageTable.from_lists([7, 8], ["a", "b"], [400, 400], [400, 400])
    cats = CategoryTable.from_lists([1, 2], ["cat", "dog"])
    gt = Dataset.from_arrays(
        images, cats,
        boxes=[[0, 0, 20, 20], [100, 100, 300, 300], [0, 0, 50, 50], [200, 0, 240, 40]],
        image_index=[0, 0, 1, 1], category_id=[1, 1, 2, 2], annotation_id=[11, 12, 13, 14],
    )  # fmt: skip
    pred = Dataset.from_arrays(
        images, cats,
        boxes=[
            [0, 0, 20, 19],  # dog on the unmatched cat 11: wrong label
            [100, 100, 280, 280],  # cat on the large cat 12, IoU 0.81: not loose
            [100, 100, 255, 255],  # second cat on 12: IoU 0.6006 -> a FP, near a GT
            [350, 350, 380, 380],  # far from everything: missing annotation
            [0, 0, 50, 40],  # dog on 13, IoU 0.8, TP
            [300, 300, 310, 310],  # image 8, far: missing annotation, low score
            [200, 0, 240, 40],  # cat on dog 14 (unmatched): wrong label
        ],
        image_index=[0, 0, 0, 0, 1, 1, 1], category_id=[2, 1, 1, 1, 2, 1, 1],
        scores=[0.9, 0.95, 0.5, 0.8, 0.7, 0.3, 0.6],
    )  # fmt: skip
    return gt, pred


def test_each_kind_by_hand() -> None:
    gt, pred = _pair()
    le = label_errors(ioukit.evaluate(gt, pred))
    got = [(r["kind"], r["prediction_row"], r["gt_annotation_id"], r["score"]) for r in le.rows()]
    assert got == [
        ("wrong_label", 0, 11, 0.9),
        ("missing_annotation", 3, -1, 0.8),
        ("wrong_label", 6, 14, 0.6),
        ("missing_annotation", 5, -1, 0.3),
    ]
    assert le.rows()[0]["iou"] == pytest.approx(19 / 20)
    assert le.rows()[0]["gt_category_id"] == 1 and le.rows()[0]["pred_category_id"] == 2
    assert tuple(le.rows()[0]) == COLUMNS
    assert le.counts == {"wrong_label": 2, "missing_annotation": 2, "loose_box": 0}
    assert [r["rank"] for r in le.rows()] == [1, 2, 3, 4]
    assert le.image_id.tolist() == [7, 7, 8, 8] and le.file_name == ("a", "a", "b", "b")


def test_loose_box_by_hand() -> None:
    gt, pred = _pair()
    # with the 0.81 box gone, the 0.6006 one matches cat 12 (area 40 000 > 96^2) ...
    keep = [0, 2, 3, 4, 5, 6]
    pred2 = Dataset.from_arrays(
        pred.images, pred.categories, boxes=pred.boxes[keep], image_index=pred.image_index[keep],
        category_id=pred.category_id[keep], scores=pred.scores[keep],
    )  # fmt: skip
    le = label_errors(ioukit.evaluate(gt, pred2), kinds=("loose_box",))
    assert le.rows() == []  # ... but 0.6006 is not below 0.6
    le = label_errors(ioukit.evaluate(gt, pred2), kinds=("loose_box",), loose=0.61)
    [row] = le.rows()
    assert (row["kind"], row["gt_annotation_id"]) == ("loose_box", 12)
    assert row["iou"] == pytest.approx(155**2 / 200**2)
    assert (
        label_errors(ioukit.evaluate(gt, pred2), loose=0.61, large_area=50_000.0).counts[
            "loose_box"
        ]
        == 0
    )


def test_matched_other_class_gt_is_not_a_wrong_label() -> None:
    images = ImageTable.from_lists([1], ["a"], [100], [100])
    cats = CategoryTable.from_lists([1, 2], ["cat", "dog"])
    gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 20, 20]], image_index=[0], category_id=[1])
    pred = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 20, 20], [0, 0, 20, 19]], image_index=[0, 0],
        category_id=[1, 2], scores=[0.5, 0.9],
    )  # fmt: skip
    assert label_errors(ioukit.evaluate(gt, pred)).rows() == []


def test_n_cuts_the_ranked_list() -> None:
    gt, pred = _pair()
    le = label_errors(ioukit.evaluate(gt, pred), n=2)
    assert len(le) == 2 and le.counts["wrong_label"] == 2
    assert "wrong_label" in le.table().splitlines()[1]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n": 0}, "n: expected a positive integer or None, got 0"),
        ({"n": 2.5}, "n: expected a positive integer"),
        ({"overlap": 1.5}, r"overlap: expected a number in \[0, 1\], got 1.5"),
        ({"far": "x"}, "far: expected a number"),
        ({"kinds": ("typo",)}, "kinds: expected names from"),
        ({"iou_threshold": 0.42}, "iou_threshold: expected one of"),
    ],
)
def test_bad_input(options: dict[str, Any], message: str) -> None:
    gt, pred = _pair()
    with pytest.raises(ParameterError, match=message):
        label_errors(ioukit.evaluate(gt, pred), **options)


def test_no_outcome() -> None:
    gt, _ = _pair()
    r = ioukit.EvaluationResult(ProtocolResult("voc10", {}, ()), gt, gt)
    with pytest.raises(ParameterError, match=r"outcome.*'voc10'"):
        r.label_errors()


def test_kinds_constant() -> None:
    assert KINDS == ("wrong_label", "missing_annotation", "loose_box")


def test_csv() -> None:
    gt, pred = _pair()
    le = label_errors(ioukit.evaluate(gt, pred))
    lines = le.csv_bytes().decode().splitlines()
    assert lines[0] == ",".join(COLUMNS)
    assert lines[1] == "1,wrong_label,7,a,0,1,11,2,1,0.9,0.95"
    empty = label_errors(ioukit.evaluate(gt, pred), kinds=("loose_box",))
    assert empty.csv_bytes().decode() == ",".join(COLUMNS) + "\n"


def test_csv_quotes_formula_and_comma_names() -> None:
    images = ImageTable.from_lists([1], ["=cmd,x"], [100], [100])
    cats = CategoryTable.from_lists([1], ["cat"])
    gt = Dataset.from_arrays(images, cats, boxes=[], image_index=[], category_id=[])
    pred = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 5, 5]], image_index=[0], category_id=[1], scores=[0.5]
    )
    text = label_errors(ioukit.evaluate(gt, pred)).csv_bytes().decode()
    assert text.splitlines()[1].split(",", 3)[3].startswith('"\'=cmd,x"')


def _loop_reference(result: ioukit.EvaluationResult) -> list[tuple[Any, ...]]:
    """The candidates by a loop over the kept predictions, each against its image's ground
    truths through the pairwise ``box_iou`` (the module's rules written out one by one)."""
    o, gt, pred = result.outcome, result.ground_truth, result.predictions
    assert o is not None
    status, matched, iou = o.status_at(0, 0), o.matched_gt_at(0), o.iou_at(0)
    keep = (status != 2) & (np.asarray(o.rank) < 100)
    taken = {int(matched[k]) for k in np.flatnonzero(keep & (status == 1))}
    regular = ~(gt.crowd | gt.ignore | gt.difficult)
    out = []
    for k in np.flatnonzero(keep).tolist():
        row = int(o.pred_row[k])
        score = float(pred.scores[row])
        if status[k] == 1:
            g = int(matched[k])
            if 0.5 <= iou[k] < 0.6 and gt.area[g] > 96.0**2:
                out.append((score, 2, row, g, float(iou[k])))
            continue
        in_image = np.flatnonzero(gt.image_index == pred.image_index[row])
        ious = box_iou(pred.boxes[row : row + 1], gt.boxes[in_image])[0]
        if len(in_image) == 0 or ious.max() < 0.1:
            out.append((score, 1, row, -1, float(ious.max()) if len(in_image) else 0.0))
        best = None
        for g, v in zip(in_image.tolist(), ious.tolist(), strict=True):
            other = gt.category_id[g] != pred.category_id[row]
            wrong = other and regular[g] and g not in taken and v >= 0.5
            if wrong and (best is None or v > best[1]):
                best = (g, v)
        if best is not None:
            out.append((score, 0, row, best[0], best[1]))
    ids = gt.images.ids
    out.sort(key=lambda c: (-c[0], c[1], int(ids[pred.image_index[c[2]]]), c[2]))
    return [(KINDS[c[1]], c[2], c[3], c[0], c[4]) for c in out]


@pytest.mark.parametrize("seed", [0, 1])
def test_every_candidate_equals_a_loop_over_the_predictions(seed: int) -> None:
    gt, res = make_detections(
        num_images=40, num_classes=5, gt_per_image=5.0, fp_per_image=8.0, crowd_fraction=0.1,
        empty_gt_images=0.1, seed=seed,
    )  # fmt: skip
    r = ioukit.evaluate(gt, res)
    le = label_errors(r, n=None)
    got = list(
        zip(le.kind, le.prediction_row.tolist(), le.gt_row.tolist(), le.score.tolist(),
            le.iou.tolist(), strict=True)
    )  # fmt: skip
    want = _loop_reference(r)
    assert {k for k, *_ in want} == set(KINDS)  # every kind occurs
    assert got == want  # the same candidates, order and IoU bits
