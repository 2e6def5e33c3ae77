"""Keypoint (OKS) evaluation: parity with pycocotools, faster-coco-eval and published vectors."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.protocols.keypoints import KeypointProtocol
from ioukit.evaluation.registry import make_protocol
from ioukit.evaluation.similarity.oks import CROWDPOSE_SIGMAS
from tests.keypoints_data import make_keypoint_set

TOL = 1e-12
DATA = Path(__file__).parents[2] / "data" / "conformance"
KEYS = ["AP", "AP50", "AP75", "APm", "APl", "AR", "AR50", "AR75", "ARm", "ARl"]


def _pycocotools(
    gt: dict[str, Any], results: list[dict[str, Any]], sigmas: Any = None, use_cats: bool = True
) -> tuple[Any, str]:
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        dt = coco.loadRes(copy.deepcopy(results))
        e = COCOeval(coco, dt, "keypoints")
        if sigmas is not None:
            e.params.kpt_oks_sigmas = np.array(sigmas)
        e.params.useCats = int(use_cats)
        e.evaluate()
        e.accumulate()
    with contextlib.redirect_stdout(out := io.StringIO()):
        e.summarize()
    return e, out.getvalue()


def _compare(ours: Any, ref: Any, name: str = "pycocotools") -> None:
    a = np.array([ours.stats[k] for k in KEYS])
    b = np.asarray(ref.stats[:10], dtype=float)
    assert np.abs(a - b).max() <= TOL, (
        f"{name} stats differ\n ioukit: {a.tolist()}\n {name}: {b.tolist()}\n diff: {(a - b)}"
    )
    for key in ("precision", "recall", "scores"):
        got, want = ours.result.arrays[key], ref.eval[key]
        assert got.shape == want.shape, f"{key}: {got.shape} != {want.shape}"
        assert np.abs(got - want).max() <= TOL, f"{key}: max diff {np.abs(got - want).max()}"


@pytest.mark.parametrize(
    "case",
    [
        {"seed": 0},
        {"seed": 1, "num_classes": 2},
        {"seed": 2, "with_bbox": True},
        {"seed": 3, "num_keypoints": 6, "sigmas": [0.05, 0.1, 0.02, 0.3, 0.07, 0.12]},
        {"seed": 4, "hidden_rate": 0.4, "crowd_rate": 0.2},
        {"seed": 5, "max_people": 20, "results_per_person": (3, 6)},
    ],
    ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items() if k != "sigmas"),
)
def test_parity_with_pycocotools(case: dict[str, Any]) -> None:
    case = dict(case)
    sigmas = case.pop("sigmas", None)
    gt, results = make_keypoint_set(15, **case)
    ref, printed = _pycocotools(gt, results, sigmas)
    ours = ioukit.evaluate(gt, results, iou_type="keypoints", sigmas=sigmas)
    _compare(ours, ref)
    assert list(ours.stats) == KEYS
    assert ours.summary() == printed.rstrip("\n")


def test_class_agnostic() -> None:
    """pycocotools' computeOks ignores useCats=0 (it finds no pairs: every stat 0); ioukit
    pools the classes as for boxes, which with one class changes nothing."""
    gt, results = make_keypoint_set(10, seed=31)
    ref, _ = _pycocotools(gt, results)
    _compare(ioukit.evaluate(gt, results, iou_type="keypoints", use_cats=False), ref)
    broken, _ = _pycocotools(gt, results, use_cats=False)
    assert list(broken.stats) == [0.0] * 10


def test_not_a_keypoint_dataset() -> None:
    gt, results = make_keypoint_set(2, seed=1)
    for ann in gt["annotations"]:
        del ann["keypoints"]
    with pytest.raises(DataFormatError, match="no annotation has keypoints"):
        ioukit.evaluate(gt, results, iou_type="keypoints")


def test_parity_compat_and_faster_coco_eval() -> None:
    fce = pytest.importorskip("faster_coco_eval")
    gt, results = make_keypoint_set(12, seed=7, num_classes=2)
    ref, _ = _pycocotools(gt, results)
    _compare(ioukit.evaluate(gt, results, iou_type="keypoints", compat="pycocotools"), ref)
    coco = fce.COCO(copy.deepcopy(gt))
    e = fce.COCOeval_faster(coco, coco.loadRes(copy.deepcopy(results)), "keypoints")
    e.evaluate()
    e.accumulate()
    e.summarize()
    _compare(ioukit.evaluate(gt, results, iou_type="keypoints"), e, "faster-coco-eval")


def test_oks_area_box_equals_faster_coco_eval_use_area_false() -> None:
    fce = pytest.importorskip("faster_coco_eval")
    gt, results = make_keypoint_set(12, seed=8)
    coco = fce.COCO(copy.deepcopy(gt))
    e = fce.COCOeval_faster(coco, coco.loadRes(copy.deepcopy(results)), "keypoints", use_area=False)
    e.evaluate()
    e.accumulate()
    e.summarize()
    # faster-coco-eval scales OKS by the box but ranges by the annotation's area
    ours = ioukit.evaluate(
        gt, results, iou_type="keypoints", oks_area="box", range_area="annotation"
    )
    _compare(ours, e, "faster-coco-eval use_area=False")


def _box_area_gt(gt: dict[str, Any]) -> dict[str, Any]:
    """``gt`` with every ``area`` replaced by xtcocotools' ``bbox[2] * bbox[3] * 0.53``."""
    gt = copy.deepcopy(gt)
    for ann in gt["annotations"]:
        ann["area"] = ann["bbox"][2] * ann["bbox"][3] * 0.53
    return gt


@pytest.mark.parametrize("seed", [8, 9, 10, 11])
def test_oks_area_box_ranges_as_xtcocotools_use_area_false(seed: int) -> None:
    """xtcocotools' ``use_area=False`` scales OKS *and* assigns medium/large by the box
    ``w * h * 0.53`` (its ``computeOks`` and ``evaluateImg``): exactly pycocotools given that
    number as every ground truth's ``area``, which is the reference run here."""
    gt, results = make_keypoint_set(15, seed=seed, max_people=4 + 3 * (seed % 3))
    ref, _ = _pycocotools(_box_area_gt(gt), results)
    ours = ioukit.evaluate(gt, results, iou_type="keypoints", oks_area="box")
    _compare(ours, ref, "pycocotools with area = w*h*0.53")
    assert ours.params["range_area"] == "oks"
    # the switch changes the ranged stats only (the OKS itself is the same)
    other = ioukit.evaluate(
        gt, results, iou_type="keypoints", oks_area="box", range_area="annotation"
    )
    assert [ours.stats[k] for k in ("AP", "AP50", "AP75", "AR")] == [
        other.stats[k] for k in ("AP", "AP50", "AP75", "AR")
    ]


def test_oks_area_box_ranges_differ_from_annotation_ranges() -> None:
    """The generated areas are not w*h*0.53: the two range rules give other APm (so the
    parity above tests the ranges, not only the OKS)."""
    gt, results = make_keypoint_set(15, seed=8)
    a = ioukit.evaluate(gt, results, iou_type="keypoints", oks_area="box")
    b = ioukit.evaluate(gt, results, iou_type="keypoints", oks_area="box", range_area="annotation")
    assert (a.stats["APm"], a.stats["ARm"]) != (b.stats["APm"], b.stats["ARm"])


def test_oks_area_box_equals_xtcocotools_itself() -> None:
    """xtcocotools' own ``COCOeval(..., use_area=False)`` (its wheels need NumPy < 2: run in
    CI's oldest-versions lane)."""
    pytest.importorskip("xtcocotools")
    from xtcocotools.coco import COCO as XCOCO
    from xtcocotools.cocoeval import COCOeval as XCOCOeval

    for seed in (8, 9):
        gt, results = make_keypoint_set(15, seed=seed, max_people=9)
        with contextlib.redirect_stdout(io.StringIO()):
            coco = XCOCO()
            coco.dataset = copy.deepcopy(gt)
            coco.createIndex()
            e = XCOCOeval(coco, coco.loadRes(copy.deepcopy(results)), "keypoints", use_area=False)
            e.evaluate()
            e.accumulate()
            e.summarize()
        _compare(
            ioukit.evaluate(gt, results, iou_type="keypoints", oks_area="box"), e, "xtcocotools"
        )


def test_range_area_is_checked() -> None:
    gt, results = make_keypoint_set(2, seed=1)
    with pytest.raises(
        ParameterError, match="range_area: expected 'oks' or 'annotation', got 'box'"
    ):
        ioukit.evaluate(gt, results, iou_type="keypoints", range_area="box")


def test_conformance_keypoints_fixture() -> None:
    folder = DATA / "keypoints"
    expected = json.loads((folder / "expected.json").read_text())
    ours = ioukit.evaluate(folder / "gt.json", folder / "dt.json", iou_type="keypoints")
    got = [ours.stats[k] for k in expected["keys"]]
    assert np.abs(np.array(got) - expected["published"]).max() <= TOL, got
    gt = json.loads((folder / "gt.json").read_text())
    ref, _ = _pycocotools(gt, json.loads((folder / "dt.json").read_text()))
    _compare(ours, ref)


def test_conformance_crowdpose(tmp_path: Path) -> None:
    folder = DATA / "crowdpose"
    expected = json.loads((folder / "expected.json").read_text())
    np.testing.assert_allclose(CROWDPOSE_SIGMAS, expected["sigmas"], rtol=1e-15)
    ours = ioukit.evaluate(folder / "gt.json", folder / "dt.json", protocol="crowdpose")
    for key, want in expected["published"].items():
        got = ours.stats[key]
        if key.startswith("AP_"):
            assert round(got, 4) == want, (key, got, want)
        else:
            assert abs(got - want) <= TOL, (key, got, want)
    lines = ours.summary().splitlines()
    assert len(lines) == 9
    assert lines[8] == (
        " Average Precision  (AP) @[ IoU=0.50:0.95 | area=  hard | maxDets= 20 ] = 0.412"
    )


def _crowdpose_set(seed: int, tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    gt, results = make_keypoint_set(18, seed=seed, num_keypoints=14)
    rng = np.random.default_rng(seed)
    for image in gt["images"]:
        image["crowdIndex"] = round(float(rng.uniform(0, 1)), 2)
    for ann in gt["annotations"]:
        del ann["area"]  # CrowdPose has none: OKS is scaled by the box
    path = tmp_path / "crowdpose_gt.json"
    path.write_text(json.dumps(gt))
    return path, results


@pytest.mark.parametrize("seed", [1, 2])
def test_crowdpose_parity_with_faster_coco_eval(seed: int, tmp_path: Path) -> None:
    fce = pytest.importorskip("faster_coco_eval")
    path, results = _crowdpose_set(seed, tmp_path)
    coco = fce.COCO(str(path))
    e = fce.COCOeval_faster(
        coco,
        coco.loadRes(copy.deepcopy(results)),
        "keypoints_crowd",
        kpt_oks_sigmas=CROWDPOSE_SIGMAS,
        use_area=False,
    )
    with contextlib.redirect_stdout(io.StringIO()):
        e.evaluate()
        e.accumulate()
        e.summarize()
    ours = ioukit.evaluate(path, results, protocol="crowdpose")
    keys = ["AP", "AP50", "AP75", "AR", "AR50", "AR75"]
    np.testing.assert_allclose([ours.stats[k] for k in keys], e.stats[:6], rtol=0, atol=TOL)
    for i, key in enumerate(["AP_easy", "AP_medium", "AP_hard"]):
        assert round(ours.stats[key], 4) == e.all_stats[6 + i], key


class TestErrors:
    def test_sigmas_length(self) -> None:
        gt, results = make_keypoint_set(2, num_keypoints=6, seed=1)
        with pytest.raises(ValueError, match="default COCO person sigmas are for 17"):
            ioukit.evaluate(gt, results, iou_type="keypoints")
        with pytest.raises(ValueError, match=r"sigmas: expected 6 values .* got 4"):
            ioukit.evaluate(gt, results, iou_type="keypoints", sigmas=[0.1] * 4)

    def test_bad_sigma(self) -> None:
        with pytest.raises(ValueError, match=r"sigmas\[1\]: expected a positive finite number"):
            KeypointProtocol.from_options(sigmas=[0.1, 0.0])

    def test_k_differs(self) -> None:
        gt, results = make_keypoint_set(2, seed=1)
        results[3]["keypoints"] = results[3]["keypoints"][:-3]
        with pytest.raises(DataFormatError, match=r"results\[3\].keypoints: expected 51"):
            ioukit.evaluate(gt, results, iou_type="keypoints")

    def test_protocol(self) -> None:
        with pytest.raises(ValueError, match="needs protocol 'coco', 'crowdpose' or 'yolo'"):
            make_protocol("voc10", iou_type="keypoints")
        gt, results = make_keypoint_set(2, seed=1)
        with pytest.raises(ValueError, match="needs protocol 'coco', 'crowdpose' or 'yolo'"):
            ioukit.evaluate(gt, results, iou_type="keypoints", protocol="voc07")

    def test_crowdpose_needs_crowd_index(self) -> None:
        gt, results = make_keypoint_set(2, seed=1, num_keypoints=14)
        with pytest.raises(DataFormatError, match=r"image 1000 has no crowdIndex"):
            ioukit.evaluate(gt, results, protocol="crowdpose")
        gt["images"][0]["crowdIndex"] = "high"
        with pytest.raises(DataFormatError, match=r"images\[0\].crowdIndex: expected a finite"):
            ioukit.evaluate(gt, results, protocol="crowdpose")


def _per_image(gt: dict[str, Any], results: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """torchmetrics-style per-image dicts of a COCO keypoint set (predictions without boxes)."""
    predictions, targets = [], []
    for image in gt["images"]:
        anns = [a for a in gt["annotations"] if a["image_id"] == image["id"]]
        res = [r for r in results if r["image_id"] == image["id"]]
        xywh = np.array([a["bbox"] for a in anns], dtype=float).reshape(-1, 4)
        targets.append(
            {
                "boxes": np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1),
                "labels": [a["category_id"] for a in anns],
                "area": [a["area"] for a in anns],
                "iscrowd": [a["iscrowd"] for a in anns],
                "keypoints": np.array([a["keypoints"] for a in anns]).reshape(len(anns), -1, 3),
            }
        )
        predictions.append(
            {
                "keypoints": np.array([r["keypoints"] for r in res]).reshape(len(res), -1, 3),
                "scores": [r["score"] for r in res],
                "labels": [r["category_id"] for r in res],
            }
        )
    return predictions, targets


def test_evaluator_streams_keypoints() -> None:
    gt, results = make_keypoint_set(10, seed=21, num_classes=2)
    for i, image in enumerate(gt["images"]):
        image["id"] = i  # the Evaluator numbers images in arrival order
    for ann in gt["annotations"]:
        ann["image_id"] = (ann["image_id"] - 1000) // 7
    for r in results:
        r["image_id"] = (r["image_id"] - 1000) // 7
    predictions, targets = _per_image(gt, results)
    ev = ioukit.Evaluator(iou_type="keypoints")
    ev.update(predictions[:4], targets[:4])
    other = ioukit.Evaluator(iou_type="keypoints")
    other.update(predictions[4:], targets[4:])
    ours = ev.merge(other).compute()
    ref, _ = _pycocotools(gt, results)
    _compare(ours, ref)


def test_evaluator_errors() -> None:
    ev = ioukit.Evaluator(iou_type="keypoints")
    kp = np.ones((1, 17, 3))
    with pytest.raises(DataFormatError, match=r"targets\[0\].boxes: missing"):
        ev.update([{"keypoints": kp, "scores": [1.0], "labels": [1]}],
                  [{"keypoints": kp, "labels": [1]}])  # fmt: skip
    bad = kp.copy()
    bad[0, 2, 2] = -2  # v > 0 is labelled; negative is refused
    with pytest.raises(DataFormatError, match=r"targets\[0\].keypoints\[0, 2, 2\]: expected a vis"):
        ev.update([{"keypoints": kp, "scores": [1.0], "labels": [1]}],
                  [{"keypoints": bad, "labels": [1], "boxes": [[0, 0, 2, 2]]}])  # fmt: skip
    ev.update([{"keypoints": kp, "scores": [1.0], "labels": [1]}],
              [{"keypoints": kp, "labels": [1], "boxes": [[0, 0, 2, 2]]}])  # fmt: skip
    # another K is refused at update, naming where the first K came from (#23 item 25);
    # nothing is added, so compute keeps working
    with pytest.raises(DataFormatError, match=r"predictions\[0\].keypoints: expected 17 "
                       r"keypoints per instance as in update call 0, targets\[0\]"):  # fmt: skip
        ev.update([{"keypoints": np.ones((1, 5, 3)), "scores": [1.0], "labels": [1]}],
                  [{"keypoints": kp, "labels": [1], "boxes": [[0, 0, 2, 2]]}])  # fmt: skip
    assert len(ev) == 1
    assert ev.compute().stats["AP"] == pytest.approx(1.0)


def test_keypoint_errors_find_the_bad_joint(tmp_path: Path) -> None:
    from ioukit.analysis.keypoints import keypoint_errors

    gt, results = make_keypoint_set(8, seed=41, results_per_person=(1, 1), max_people=6)
    by_image: dict[int, list[dict[str, Any]]] = {}
    for a in gt["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    # perfect predictions except the left wrist (keypoint 10), moved by 30 pixels
    results = []
    for a in gt["annotations"]:
        if a["iscrowd"] or a["num_keypoints"] == 0:
            continue
        kp = list(a["keypoints"])
        kp[27] += 30.0
        results.append({"image_id": a["image_id"], "category_id": 1, "keypoints": kp,
                        "score": 0.9})  # fmt: skip
    r = ioukit.evaluate(gt, results, iou_type="keypoints")
    errors = keypoint_errors(r)
    worst = int(np.nanargmin(errors.similarity))
    assert errors.names[worst] == "left_wrist"
    others = np.delete(errors.similarity, worst)
    assert np.all(others[~np.isnan(others)] == 1.0)
    assert errors.table().splitlines()[1].startswith("left_wrist")
    with pytest.raises(ValueError, match="threshold: expected one of"):
        keypoint_errors(r, threshold=0.42)
    pytest.importorskip("matplotlib")
    from ioukit.plots import write_plots

    files = write_plots(r, tmp_path / "plots")
    assert (tmp_path / "plots" / "keypoint_errors.png") in files


def test_pipeline_oks_is_compute_oks_bit_for_bit() -> None:
    """Every group's matrix through the readers and Groups equals ``computeOks`` exactly,
    including persons without a visible keypoint (box w, h as the file gave them)."""
    from ioukit.evaluation.groups import Groups
    from ioukit.evaluation.similarity.oks import OKS
    from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints

    gt, results = make_keypoint_set(12, seed=51, hidden_rate=0.4, results_per_person=(2, 4))
    ref, _ = _pycocotools(gt, results)
    gt_ds = read_coco_keypoints(gt)
    pred_ds = read_coco_keypoint_results(results, gt_ds)
    groups = Groups.build(gt_ds, pred_ds, max_det=20)
    matrices = OKS().matrices(gt_ds, pred_ds, groups)
    cat_ids = groups.category_ids
    compared = hidden = 0
    for i in range(groups.n_groups):
        image_rank, k = divmod(int(groups.keys[i]), len(cat_ids))
        image_id = int(np.sort(gt_ds.images.ids)[image_rank])
        want = np.asarray(ref.ious[image_id, int(cat_ids[k])])
        got = matrices.matrix(groups, i)
        if want.size == 0:
            assert got.size == 0
            continue
        np.testing.assert_array_equal(got, want)
        compared += 1
        rows = groups.gt_rows[groups.gt_start[i] : groups.gt_end[i]]
        hidden += int((~(gt_ds.keypoints[rows, :, 2] > 0).any(axis=1)).sum())
    assert compared > 10 and hidden > 5


def test_evaluator_torch_and_crowdpose() -> None:
    torch = pytest.importorskip("torch")
    gt, results = make_keypoint_set(6, seed=61, num_keypoints=14)
    for i, image in enumerate(gt["images"]):
        image["id"] = i
        image["crowdIndex"] = [0.1, 0.5, 0.9][i % 3]
    for ann in gt["annotations"]:
        ann["image_id"] = (ann["image_id"] - 1000) // 7
        ann["area"] = 1.0  # crowdpose scales by the box
    for r in results:
        r["image_id"] = (r["image_id"] - 1000) // 7
    predictions, targets = _per_image(gt, results)
    for d in (*predictions, *targets):
        d["keypoints"] = torch.as_tensor(d["keypoints"], dtype=torch.float64)
    index = {image["id"]: image["crowdIndex"] for image in gt["images"]}
    ev = ioukit.Evaluator(protocol="crowdpose", crowd_index=index)
    ev.update(predictions, targets)
    streamed = ev.compute().stats
    direct = ioukit.evaluate(gt, results, protocol="crowdpose").stats
    assert streamed == direct


def test_ground_truth_without_annotations_gives_minus_one_not_a_sigmas_error() -> None:
    # K comes from the results when the ground truth has no annotation (pycocotools: -1 for
    # every stat, as there is nothing to recall)
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "annotations": [],
        "categories": [{"id": 1, "name": "person", "keypoints": ["j"] * 17}],
    }
    results = [{"image_id": 1, "category_id": 1, "score": 0.9, "keypoints": [10, 10, 2] * 17}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the empty-annotations warning
        stats = ioukit.evaluate(gt, results, iou_type="keypoints").stats
        assert ioukit.evaluate(gt, [], iou_type="keypoints").stats == stats
    ref, _ = _pycocotools(gt, results)  # side by side: pycocotools gives -1 everywhere too
    assert list(stats.values()) == [float(v) for v in ref.stats]
    assert set(stats.values()) == {-1.0}
