"""COCO engine: the pipeline against itself with plain-Python twins for its kernels, golden
vectors, compat switches, readers, results, Evaluator streaming and the sample data."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.dataset import Dataset
from ioukit.engine import evaluate
from ioukit.errors import DataFormatError
from ioukit.evaluation.protocols.coco import evaluate_coco
from ioukit.evaluator import Evaluator
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.matching import match_predictions
from ioukit.sample_data import ground_truth_path, predictions_path
from ioukit.synthetic import make_grid_detections
from tests.kernels.test_match_kernels import patch_with_twins

EPS = float(np.spacing(1))


# --------------------------------------------------------------------------- python twins
def match_group_twin(
    iou: np.ndarray, gt_ignore: np.ndarray, gt_crowd: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pycocotools' evaluateImg matching loop, indices instead of ids."""
    n_t, (n_p, n_g) = len(thresholds), iou.shape
    pm = -np.ones((n_t, n_p), dtype=np.int64)
    pi = np.zeros((n_t, n_p), dtype=bool)
    gm = -np.ones((n_t, n_g), dtype=np.int64)
    for t, thr in enumerate(thresholds):
        for d in range(n_p):
            best, m = thr, -1
            for g in range(n_g):
                if gm[t, g] >= 0 and not gt_crowd[g]:
                    continue
                if m > -1 and not gt_ignore[m] and gt_ignore[g]:
                    break
                if iou[d, g] < best:
                    continue
                best, m = iou[d, g], g
            if m == -1:
                continue
            pm[t, d], pi[t, d], gm[t, m] = m, gt_ignore[m], d
    return pm, pi, gm


def coco_gt(
    boxes: list[list[float]],
    *,
    image_ids: list[int] | None = None,
    cats: list[int] | None = None,
    extra: list[dict[str, Any]] | None = None,
    ids: list[int] | None = None,
    images: list[int] | None = None,
) -> dict[str, Any]:
    n = len(boxes)
    image_ids = image_ids or [1] * n
    cats = cats or [1] * n
    anns = []
    for i, b in enumerate(boxes):
        ann = {
            "id": (ids[i] if ids else i + 1),
            "image_id": image_ids[i],
            "category_id": cats[i],
            "bbox": b,
            "area": b[2] * b[3],
            "iscrowd": 0,
        }
        ann.update((extra or [{}] * n)[i])
        anns.append(ann)
    all_images = sorted(set(images or []) | set(image_ids))
    return {
        "images": [{"id": i, "file_name": f"{i}.jpg"} for i in all_images],
        "categories": [{"id": c, "name": f"c{c}"} for c in sorted(set(cats) | {1})],
        "annotations": anns,
    }


def dets(rows: list[tuple[int, int, list[float], float]]) -> list[dict[str, Any]]:
    return [{"image_id": i, "category_id": c, "bbox": b, "score": s} for i, c, b, s in rows]


def random_case(seed: int, n_images: int = 12, n_cats: int = 3) -> tuple[dict[str, Any], list]:
    return make_grid_detections(n_images, n_cats, seed=seed)


def test_match_equal_iou_last_gt_wins_and_crowd_absorbs() -> None:
    m = match_predictions(np.array([[0.8, 0.8]]), [0.9])
    assert m.matched_gt.tolist() == [[1]]
    m3 = match_predictions(np.full((3, 1), 0.6), [0.9, 0.8, 0.7], gt_crowd=[True])
    assert m3.matched_gt.tolist() == [[0, 0, 0]] and m3.ignored.all()


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"use_cats": False},
        {"compat": "pycocotools"},
        {"max_dets": [1, 2, 3]},
        {"area_ranges": {"tiny": (0, 200), "big": (200, 1e10)}, "iou_thresholds": [0.3, 0.5]},
    ],
)
@pytest.mark.parametrize("seed", range(3))
def test_kernels_equal_python_twins(
    monkeypatch: pytest.MonkeyPatch, seed: int, options: dict[str, Any]
) -> None:
    gt_dict, res = random_case(seed)
    gt = read_coco_ground_truth(gt_dict)
    pred = read_coco_results(res, gt)
    fast = evaluate_coco(gt, pred, **options)
    patch_with_twins(monkeypatch)
    slow = evaluate_coco(gt, pred, **options)
    for name in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(fast.arrays[name], slow.arrays[name], err_msg=name)
    assert fast.stats == slow.stats


# --------------------------------------------------------------------------- golden vectors
def test_golden_coco101() -> None:
    # 3 GT; detections in descending score are TP, FP, TP, FP, TP (REFERENCE.md 3.5)
    gt = coco_gt([[0, 0, 10, 10], [20, 0, 10, 10], [40, 0, 10, 10]])
    far = [100, 100, 10, 10]
    rows = [
        (1, 1, [0, 0, 10, 10], 0.9),
        (1, 1, far, 0.8),
        (1, 1, [20, 0, 10, 10], 0.7),
        (1, 1, far, 0.6),
        (1, 1, [40, 0, 10, 10], 0.5),
    ]
    r = evaluate(gt, dets(rows), iou_thresholds=[0.5])
    assert r.stats["AP"] == pytest.approx(0.7564356, abs=5e-8)
    assert r.precision is not None
    got = r.precision[0, [0, 33, 34, 66, 67, 100], 0, 0, -1]
    np.testing.assert_allclose(got, [1, 1, 2 / 3, 2 / 3, 0.6, 0.6], rtol=1e-12)


def test_inclusive_threshold_and_area_boundaries() -> None:
    # a 32x32 GT is both small and medium; IoU exactly 0.5 matches at 0.5
    gt = coco_gt([[0, 0, 32, 32]])
    r = evaluate(gt, dets([(1, 1, [0, 0, 32, 32], 0.9)]))
    assert r.stats["APs"] == r.stats["APm"] == pytest.approx(1.0)
    assert r.stats["APl"] == -1.0
    half = evaluate(
        coco_gt([[0, 0, 10, 10]]), dets([(1, 1, [0, 0, 10, 20], 0.9)]), iou_thresholds=[0.5]
    )
    assert half.stats["AP"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- compat switches
def test_annotation_id_zero() -> None:
    gt = coco_gt([[0, 0, 10, 10], [20, 0, 10, 10]], ids=[0, 1])
    rows = dets([(1, 1, [0, 0, 10, 10], 0.9), (1, 1, [20, 0, 10, 10], 0.8)])
    assert evaluate(gt, rows).stats["AP50"] == pytest.approx(1.0)
    pyco = evaluate(gt, rows, compat="pycocotools").stats
    assert pyco["AP50"] == pytest.approx(0.2525, abs=1e-4)  # REFERENCE 3.4 (ran)
    assert pyco["AR100"] == pytest.approx(0.5)


def test_user_ignore_flag() -> None:
    gt = coco_gt([[0, 0, 10, 10], [20, 0, 10, 10]], extra=[{"ignore": 1}, {}])
    rows = dets([(1, 1, [20, 0, 10, 10], 0.9)])
    assert evaluate(gt, rows).stats["AP50"] == pytest.approx(1.0)
    assert evaluate(gt, rows, compat="pycocotools").stats["AP50"] == pytest.approx(0.5, abs=0.01)


def test_headline_ap_with_max_dets_not_ending_in_100() -> None:
    gt = coco_gt([[214, 41, 348, 244]])
    rows = dets([(1, 1, [258, 41, 348, 244], 0.536)])
    ours = evaluate(gt, rows, max_dets=[1, 10, 1000])
    assert ours.stats["AP"] == pytest.approx(0.6)
    pyco = evaluate(gt, rows, max_dets=[1, 10, 1000], compat="pycocotools")
    expected = [-1.0, 1.0, 1.0, -1.0, -1.0, 0.6, 0.6, 0.6, 0.6, -1.0, -1.0, 0.6]
    np.testing.assert_allclose(list(pyco.stats.values()), expected, atol=1e-12)
    assert list(ours.stats)[6:9] == ["AR1", "AR10", "AR1000"]


def test_missing_iscrowd() -> None:
    gt = coco_gt([[0, 0, 10, 10]])
    del gt["annotations"][0]["iscrowd"]
    rows = dets([(1, 1, [0, 0, 10, 10], 0.9)])
    assert evaluate(gt, rows).stats["AP"] == pytest.approx(1.0)
    with pytest.raises(DataFormatError, match=r"annotations\[0\]\.iscrowd: missing"):
        evaluate(gt, rows, compat="pycocotools")


def test_crowd_absorbs_and_crowd_iou_uses_prediction_area() -> None:
    gt = coco_gt([[0, 0, 100, 100], [200, 0, 10, 10]], extra=[{"iscrowd": 1}, {}])
    rows = dets(
        [(1, 1, [2, 2, 2, 2], 0.95), (1, 1, [50, 50, 10, 10], 0.9), (1, 1, [200, 0, 10, 10], 0.5)]
    )
    assert evaluate(gt, rows).stats["AP50"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- readers
def test_reader_errors_name_file_and_path(tmp_path: Path) -> None:
    gt = coco_gt([[0, 0, 10, 10], [1, 1, 5, 5]])
    gt["annotations"][1]["bbox"] = [1, 2, 3]
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(gt))
    with pytest.raises(
        DataFormatError,
        match=r"gt\.json: annotations\[1\]\.bbox: expected 4 "
        r"numbers, got 3",
    ):
        read_coco_ground_truth(path)
    good = read_coco_ground_truth(coco_gt([[0, 0, 10, 10]]))
    with pytest.raises(DataFormatError, match=r"results\[1\]\.image_id: 99 is not"):
        read_coco_results(dets([(1, 1, [0, 0, 1, 1], 0.5), (99, 1, [0, 0, 1, 1], 0.5)]), good)
    with pytest.raises(DataFormatError, match=r"results\[0\]\.score: missing"):
        read_coco_results([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}], good)
    with pytest.raises(DataFormatError, match=r"results\[0\]\.category_id: 7 is not"):
        read_coco_results(dets([(1, 7, [0, 0, 1, 1], 0.5)]), good)
    (tmp_path / "bad.json").write_text("[{")
    with pytest.raises(DataFormatError, match=r"bad\.json: not valid JSON"):
        read_coco_results(tmp_path / "bad.json", good)
    with pytest.raises(DataFormatError, match=r"nope\.json: cannot read"):
        read_coco_ground_truth(tmp_path / "nope.json")


def test_chunked_results_file_equals_in_memory(tmp_path: Path) -> None:
    gt_dict, _ = random_case(0)
    rng = np.random.default_rng(1)
    images = [im["id"] for im in gt_dict["images"]]
    rows = [
        {
            "image_id": int(rng.choice(images)),
            "category_id": int(rng.integers(1, 4)),
            "bbox": [float(v) for v in rng.uniform(1, 50, 4)],
            "score": float(rng.random()),
            'n"ote': "a }, { inside a string",
        }
        for _ in range(30000)
    ]
    path = tmp_path / "res.json"
    path.write_text(json.dumps(rows, indent=1))  # > 1 MB: chunked, then the fallback
    gt = read_coco_ground_truth(gt_dict)
    from_file = read_coco_results(path, gt)
    in_memory = read_coco_results(rows, gt)
    np.testing.assert_array_equal(from_file.boxes, in_memory.boxes)
    np.testing.assert_array_equal(from_file.scores, in_memory.scores)  # type: ignore[arg-type]
    rows[25000]["bbox"] = [1, 2]
    path.write_text(json.dumps([{k: v for k, v in r.items() if k != 'n"ote'} for r in rows]))
    with pytest.raises(DataFormatError, match=r"results\[25000\]\.bbox: expected 4 numbers"):
        read_coco_results(path, gt)


def test_reader_does_not_mutate_and_keeps_segmentation() -> None:
    gt = coco_gt([[0, 0, 10, 10]], extra=[{"segmentation": [[0, 0, 10, 0, 10, 10]]}])
    before = json.dumps(gt)
    ds = read_coco_ground_truth(gt, keep_segmentation=True)
    assert json.dumps(gt) == before
    assert ds.segmentation == ([[0, 0, 10, 0, 10, 10]],)
    assert read_coco_ground_truth(gt).segmentation is None


# --------------------------------------------------------------------------- result object
def test_result_summary_and_to_dict() -> None:
    r = evaluate(ground_truth_path(), predictions_path())
    lines = r.summary().splitlines()
    assert len(lines) == 12
    assert lines[0].startswith(
        " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = "
    )
    assert lines[9].startswith(" Average Recall     (AR) @[ IoU=0.50:0.95 | area= small | ")
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert list(d["stats"]) == [
        "AP",
        "AP50",
        "AP75",
        "APs",
        "APm",
        "APl",
        "AR1",
        "AR10",
        "AR100",
        "ARs",
        "ARm",
        "ARl",
    ]
    assert [row["name"] for row in r.per_class] == [
        "person",
        "car",
        "dog",
        "bicycle",
        "traffic light",
    ]
    table = r.per_class_table().splitlines()
    assert table[0].split()[:4] == ["category_id", "name", "num_gt", "num_pred"]
    assert len(table) == 6
    assert r.precision is not None and r.precision.shape == (10, 101, 5, 4, 3)


def test_custom_area_ranges_summary_adapts() -> None:
    gt = coco_gt([[0, 0, 5, 5], [20, 0, 30, 30]])
    r = evaluate(
        gt, dets([(1, 1, [0, 0, 5, 5], 0.9)]), area_ranges={"nano": (0, 64), "rest": (64, 1e10)}
    )
    assert list(r.stats) == [
        "AP",
        "AP50",
        "AP75",
        "AP_nano",
        "AP_rest",
        "AR1",
        "AR10",
        "AR100",
        "AR_nano",
        "AR_rest",
    ]
    assert "area=  nano" in r.summary()
    assert r.stats["AP_rest"] == 0.0 and r.stats["AP_nano"] == pytest.approx(1.0)


def test_bad_options() -> None:
    gt = coco_gt([[0, 0, 5, 5]])
    with pytest.raises(ValueError, match="protocol"):
        evaluate(gt, [], protocol="nope")
    with pytest.raises(ValueError, match="iou_type"):
        evaluate(gt, [], iou_type="segm")
    with pytest.raises(ValueError, match="compat"):
        evaluate(gt, [], compat="cocoapi")
    with pytest.raises(ValueError, match="recall_thresholds"):
        evaluate(gt, [], recall_thresholds=[0.5, 0.2])
    with pytest.raises(ValueError, match="iou_thresholds"):
        evaluate(gt, [], iou_thresholds=[1.5])


def test_empty_predictions_and_no_ground_truth() -> None:
    r = evaluate(coco_gt([[0, 0, 5, 5]]), [])
    assert r.stats["AP"] == 0.0 and r.stats["AR100"] == 0.0
    empty = {"images": [{"id": 1}], "annotations": [], "categories": [{"id": 1}]}
    r2 = evaluate(empty, dets([(1, 1, [0, 0, 5, 5], 0.9)]))
    assert all(v == -1.0 for v in r2.stats.values())
    assert math.isclose(r2.per_class[0]["AP"], -1.0)


# --------------------------------------------------------------------------- Evaluator
def _split_by_image(gt: Dataset, pred: Dataset) -> tuple[list[dict], list[dict]]:
    preds, targets = [], []
    order = np.argsort(gt.images.ids, kind="stable")
    for row in order:
        p = pred.image_index == row
        g = gt.image_index == row
        preds.append(
            {
                "boxes": pred.boxes[p],
                "scores": pred.scores[p],  # type: ignore[index]
                "labels": pred.category_id[p],
            }
        )
        targets.append(
            {
                "boxes": gt.boxes[g],
                "labels": gt.category_id[g],
                "iscrowd": gt.crowd[g].astype(int),
                "area": gt.area[g],
            }
        )
    return preds, targets


def test_evaluator_equals_evaluate_and_merge() -> None:
    gt_dict, res = random_case(5)
    gt = read_coco_ground_truth(gt_dict)
    pred = read_coco_results(res, gt)
    expected = evaluate(gt, pred)
    preds, targets = _split_by_image(gt, pred)
    one = Evaluator()
    for p, t in zip(preds, targets, strict=True):
        one.update([p], [t])
    assert len(one) == len(preds)
    got = one.compute()
    assert got.stats == expected.stats
    np.testing.assert_array_equal(got.precision, expected.precision)  # type: ignore[arg-type]
    a, b = Evaluator(), Evaluator()
    a.update(preds[:5], targets[:5])
    b.update(preds[5:], targets[5:])
    assert a.merge(b).compute().stats == expected.stats


def test_evaluator_torch_and_box_format() -> None:
    torch = pytest.importorskip("torch")
    ev = Evaluator(fmt="xywh", iou_thresholds=[0.2])
    ev.update(
        [
            {
                "boxes": torch.tensor([[0.5, 0.5, 1.0, 1.0]]),
                "scores": torch.tensor([1.0]),
                "labels": torch.tensor([0]),
            }
        ],
        [{"boxes": torch.tensor([[0.0, 0.0, 1.0, 1.0]]), "labels": torch.tensor([0])}],
    )
    assert ev.compute().stats["AP"] == 0.0  # IoU 1/7 < 0.2 (torchmetrics test_for_box_format)
    ev2 = Evaluator(iou_thresholds=[0.2])
    ev2.update(
        [{"boxes": [[0.5, 0.5, 1, 1]], "scores": [1.0], "labels": [0]}],
        [{"boxes": [[0, 0, 1, 1]], "labels": [0]}],
    )
    assert ev2.compute().stats["AP"] == pytest.approx(1.0)
    with pytest.raises(DataFormatError, match=r"predictions\[0\]\.scores: missing"):
        ev2.update([{"boxes": [[0, 0, 1, 1]], "labels": [0]}], [{"boxes": [], "labels": []}])
    ev2.reset()
    assert len(ev2) == 0


# --------------------------------------------------------------------------- sample data
def test_sample_data_is_small_and_deterministic() -> None:
    gt_file, pred_file = ground_truth_path(), predictions_path()
    assert gt_file.stat().st_size + pred_file.stat().st_size < 1_000_000
    gt = json.loads(gt_file.read_text())
    assert len(gt["images"]) == 200 and len(gt["categories"]) == 5
    r = evaluate(gt_file, pred_file)
    assert 0.1 < r.stats["AP"] < 0.9


# --------------------------------------------------------------------------- numba JSON scanner
def _scan(text: str) -> tuple[int, int]:
    from ioukit._kernels.coco_json import scan_results

    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    cap = max(text.count("{"), 1)
    out = [np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty((cap, 4)), np.empty(cap)]
    code, n = scan_results(buf, *out)
    return int(code), int(n)


@pytest.mark.parametrize("seed", range(4))
def test_scanner_equals_general_parser(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    gt = read_coco_ground_truth(coco_gt([[0, 0, 1, 1]], images=[1, 2, 3], cats=[1]))
    numbers = [
        lambda: float(rng.normal() * 10.0 ** int(rng.integers(-8, 8))),  # 17 digits, exponents
        lambda: round(float(rng.uniform(0, 600)), int(rng.integers(0, 4))),
        lambda: int(rng.integers(0, 1000)),
        lambda: float(np.float32(rng.random())),  # float32 values seen as float64
    ]
    rows = []
    for _ in range(300):
        pick = numbers[int(rng.integers(len(numbers)))]
        box = [abs(pick()) for _ in range(4)]
        row: dict[str, Any] = {
            "image_id": int(rng.integers(1, 4)),
            "category_id": 1,
            "bbox": box,
            "score": abs(pick()),
        }
        if rng.random() < 0.3:
            row["segmentation"] = {"counts": 'a"}{,]\\', "size": [[1, {"x": []}], 2]}
        if rng.random() < 0.3:
            row = dict(reversed(list(row.items())))
        rows.append(row)
    text = json.dumps(rows, indent=int(rng.integers(0, 3)) or None)
    text = text.replace("1e-0", "1E-0") if seed == 1 else text
    path = tmp_path / "res.json"
    path.write_text(text)
    assert _scan(text) == (0, 300)
    from_file = read_coco_results(path, gt)
    in_memory = read_coco_results(json.loads(text), gt)
    np.testing.assert_array_equal(from_file.boxes, in_memory.boxes)
    np.testing.assert_array_equal(from_file.scores, in_memory.scores)  # type: ignore[arg-type]
    np.testing.assert_array_equal(from_file.image_index, in_memory.image_index)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("[]", 0),
        (' [ { "image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5 } ] ', 0),
        # 4 (UNSUPPORTED): valid JSON in another shape, left to the general parser
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3], "score": 0.5}]', 4),
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4]}]', 2),
        ('[{"image_id": 1.5, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]', 4),
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": NaN}]', 1),
        ('\ufeff[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1}]', 4),
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1}] x', 1),
        ('{"annotations": []}', 4),
        # 1 (INVALID): not JSON, deep inside a skipped value too
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1, "x": [1 2]}]', 1),
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1, "x": {"a" 1}}]', 1),
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1, "x": [[1}]}]', 1),
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1, "x": [1,]}]', 1),
        ('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 001}]', 1),
    ],
)
def test_scanner_falls_back_on_anything_unusual(text: str, code: int) -> None:
    assert _scan(text)[0] == code


def test_other_protocols_and_delegations() -> None:
    pytest.importorskip("ioukit.evaluation.protocols.voc")
    r = evaluate(ground_truth_path(), predictions_path())
    cm = r.confusion_matrix()
    assert cm is not None
    curves = r.curves(iou_threshold=0.5)
    assert curves is not None
    for protocol, key in (("voc07", "mAP"), ("voc10", "mAP")):
        other = evaluate(ground_truth_path(), predictions_path(), protocol=protocol)
        assert other.protocol == protocol and 0 < other.stats[key] < 1
        assert other.precision is not None and other.precision.shape == (len(other.per_class), 101)
        assert [c.to_dict() for c in other.classes] == list(other.per_class)
        assert other.summary().startswith(protocol)
    yolo = evaluate(ground_truth_path(), predictions_path(), protocol="yolo")
    assert yolo.protocol == "yolo"
    assert Evaluator(protocol="voc10").protocol == "voc10"


def test_nothing_to_evaluate() -> None:
    assert Evaluator().compute().stats["AP"] == -1.0
    empty = {"images": [], "annotations": [], "categories": []}
    r = evaluate(empty, [])
    assert r.per_class == () and r.stats["AR100"] == -1.0
    pooled = evaluate(coco_gt([[0, 0, 5, 5]]), dets([(1, 1, [0, 0, 5, 5], 1.0)]), use_cats=False)
    assert pooled.per_class[0]["category_id"] == -1
    assert pooled.per_class[0]["AP"] == pytest.approx(pooled.stats["AP"], abs=1e-12)


@pytest.mark.parametrize(
    ("area_ranges", "message"),
    [
        ("small", r"area_ranges: expected a mapping of name to \(low, high\)"),
        ({"small": "0-100"}, r"area_ranges\['small'\]: expected \(low, high\) numbers"),
    ],
)
def test_area_ranges_of_the_wrong_kind_name_the_option(area_ranges: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(ground_truth_path(), predictions_path(), area_ranges=area_ranges)
