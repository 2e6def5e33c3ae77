"""COCOeval drop-in against pycocotools side by side: every pattern frameworks use."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import numpy as np
import pycocotools.mask
import pytest

from ioukit import synthetic
from ioukit.compat.pycocotools import coco as ours_coco
from ioukit.compat.pycocotools import cocoeval as ours_cocoeval
from ioukit.compat.pycocotools import mask as ours_mask

from .oracle import (
    OURS,
    REF,
    VAL100_GT,
    VAL100_RESULTS,
    assert_same_eval,
    assert_same_evalimgs,
    index,
    plain,
    quiet,
)


@pytest.fixture(scope="module")
def detections() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return synthetic.make_detections(120, 8, seed=3)


def _both(gt: Any, results: Any, iou_type: str, setup: Any = None) -> tuple[Any, Any]:
    ref, ref_text = plain(REF, gt, results, iou_type, setup)
    ours, ours_text = plain(OURS, gt, results, iou_type, setup)
    assert_same_eval(ref, ours)
    assert ours_text == ref_text
    return ref, ours


def test_val2014_bbox_from_files_on_the_compiled_path() -> None:
    _, ours = _both(VAL100_GT, VAL100_RESULTS, "bbox")
    assert ours._source is not None  # the compiled pipeline ran, not the Python stages
    # the published full-precision vector (faster-coco-eval's test of the same files)
    expected = json.loads((VAL100_GT.parent / "expected.json").read_text())
    np.testing.assert_allclose(ours.stats, expected["expected_full_precision"]["stats"], atol=1e-12)


def test_val2014_evalimgs_and_ious_built_on_read_equal_pycocotools() -> None:
    ref, ours = _both(VAL100_GT, VAL100_RESULTS, "bbox")
    precision = ours.eval["precision"].copy()
    assert ours._pending  # nothing built yet
    assert_same_evalimgs(ref.evalImgs, ours.evalImgs)
    assert ref.ious.keys() == ours.ious.keys()
    for key, value in ref.ious.items():
        assert np.array_equal(np.asarray(value), np.asarray(ours.ious[key])), key
    assert sorted(ref._gts) == sorted(ours._gts)
    assert np.array_equal(precision, ours.eval["precision"])  # reading did not reset eval


@pytest.mark.parametrize("form", ["list", "ndarray", "unbound"])
def test_val2014_results_forms(form: str) -> None:
    rows = json.loads(VAL100_RESULTS.read_text())
    if form == "ndarray":
        array = np.array([[r["image_id"], *r["bbox"], r["score"], r["category_id"]] for r in rows])
        results: Any = array
    else:
        results = rows

    def run(classes: Any) -> Any:
        coco_cls, eval_cls = classes

        def go() -> Any:
            gt = coco_cls(str(VAL100_GT))
            res = results if form == "ndarray" else copy.deepcopy(results)
            dt = coco_cls.loadRes(gt, res) if form == "unbound" else gt.loadRes(res)
            ev = eval_cls(gt, dt, "bbox")
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
            return ev

        return quiet(go)

    (ref, ref_text), (ours, ours_text) = run(REF), run(OURS)
    assert_same_eval(ref, ours)
    assert ref_text == ours_text


def test_val2014_segm_results_with_and_without_bbox() -> None:
    gt = json.loads(VAL100_GT.read_text())
    rows = json.loads(VAL100_RESULTS.read_text())
    sizes = {im["id"]: (im["height"], im["width"]) for im in gt["images"]}
    segm = []
    for r in rows:
        x, y, w, h = r["bbox"]
        poly = [x, y, x + w, y, x + w, y + 0.6 * h, x + 0.5 * w, y + h, x, y + h]
        rle = pycocotools.mask.merge(pycocotools.mask.frPyObjects([poly], *sizes[r["image_id"]]))
        segm.append({**r, "segmentation": {"size": rle["size"], "counts": rle["counts"].decode()}})
    _both(gt, segm, "segm")  # with 'bbox': pycocotools keeps the box area
    no_box = [{k: v for k, v in r.items() if k != "bbox"} for r in segm]
    _, ours = _both(gt, no_box, "segm")  # without: the mask area and its box
    assert ours._source is not None


def test_synthetic_segm_and_keypoints(detections: Any) -> None:
    gt, res = synthetic.add_masks(*detections)
    _, ours = _both(gt, res, "segm")
    assert ours._source is not None
    kgt, kres = synthetic.make_keypoints(40, seed=5)
    assert any(a["num_keypoints"] == 0 for a in kgt["annotations"])
    _, ours = _both(kgt, kres, "keypoints")
    assert ours._source is not None


@pytest.mark.parametrize("form", ["list", "file", "files"])
@pytest.mark.parametrize(
    "name",
    ["default", "no_cats", "mmdet_max_dets", "ranges", "subsets", "id_zero", "crowd_ignore"],
)
def test_parameters_and_quirks(detections: Any, name: str, form: str, tmp_path: Any) -> None:
    gt, res = copy.deepcopy(detections)
    if form != "list":  # loadRes(path): evaluated from the file's columns
        path = tmp_path / "results.json"
        path.write_text(json.dumps(res))
        res = path

    def setup(p: Any) -> None:
        if name == "no_cats":
            p.useCats = 0
        elif name == "mmdet_max_dets":
            p.maxDets = [100, 300, 1000]
        elif name == "ranges":
            p.areaRng = [[0, 1e10], [0, 64], [64, 1e5], [40, 50]]
            p.areaRngLbl = ["all", "small", "big", "narrow"]
        elif name == "subsets":
            p.imgIds = p.imgIds[::3]
            p.catIds = p.catIds[1:5]
            p.iouThrs = np.array([0.5, 0.75])
            p.recThrs = np.linspace(0, 1, 11)

    if name == "id_zero":  # pycocotools never matches a ground truth with id 0
        gt["annotations"][0]["id"] = 0
    if name == "crowd_ignore":  # pycocotools overwrites 'ignore' with 'iscrowd'
        for a in gt["annotations"][::4]:
            a["ignore"] = 1
    if form == "files":  # COCO(path) too: the ground truth's columns
        gt_path = tmp_path / "gt.json"
        gt_path.write_text(json.dumps(gt))
        gt = gt_path
    _, ours = _both(gt, res, "bbox", setup)
    assert ours._source is not None
    assert (ours_coco._results_columns(ours.cocoDt) is not None) == (form != "list")
    assert (ours_coco._ground_truth_columns(ours.cocoGt) is not None) == (form == "files")


def test_mmdet_per_class_table(detections: Any) -> None:
    gt, res = detections

    def setup(p: Any) -> None:
        p.maxDets = [100, 300, 1000]

    ref, ours = _both(gt, res, "bbox", setup)
    # AP at maxDets 100 but AP50 / AP75 / sizes at 1000 (pycocotools' maxDets[2])
    assert ours.stats[0] != -1
    for k in range(len(ref.params.catIds)):
        a = ref.eval["precision"][:, :, k, 0, -1]
        b = ours.eval["precision"][:, :, k, 0, -1]
        ap_ref = np.mean(a[a > -1]) if (a > -1).any() else float("nan")
        ap_ours = np.mean(b[b > -1]) if (b > -1).any() else float("nan")
        assert np.array_equal(ap_ref, ap_ours, equal_nan=True)


@pytest.mark.parametrize("case", ["negative_width", "duplicate_gt_id", "detection_id_zero"])
def test_inputs_only_pycocotools_accepts_run_the_python_stages(detections: Any, case: str) -> None:
    gt, res = copy.deepcopy(detections)
    if case == "negative_width":
        gt["annotations"][1]["bbox"][2] = -3.0
    elif case == "duplicate_gt_id":
        gt["annotations"][2]["id"] = gt["annotations"][5]["id"]

    if case == "detection_id_zero":

        def run(classes: Any) -> Any:
            def go() -> Any:
                g = index(classes[0], gt)
                d = g.loadRes(copy.deepcopy(res))
                first = d.dataset["annotations"][0]
                del d.anns[first["id"]]
                first["id"] = 0
                d.anns[0] = first
                ev = classes[1](g, d, "bbox")
                ev.evaluate()
                ev.accumulate()
                ev.summarize()
                return ev

            return quiet(go)[0]

        ref, ours = run(REF), run(OURS)
        assert_same_eval(ref, ours)
    else:
        _, ours = _both(gt, res, "bbox")
    assert ours._source is None


def _shrink(box: list[float]) -> list[float]:
    x, y, w, h = box
    return [x + 0.1 * w, y + 0.1 * h, 0.8 * w, 0.8 * h]


def _iou_subclass(base: type, mask_module: Any) -> type:
    class ShrunkIoU(base):  # type: ignore[misc, valid-type]
        calls = 0

        def computeIoU(self, imgId: Any, catId: Any) -> Any:  # noqa: N802
            type(self).calls += 1
            gts, dts = self._gts[imgId, catId], self._dts[imgId, catId]
            if not gts and not dts:
                return []
            order = np.argsort([-d["score"] for d in dts], kind="mergesort")
            kept = [dts[i] for i in order[: self.params.maxDets[-1]]]
            return mask_module.iou(
                [_shrink(d["bbox"]) for d in kept],
                [_shrink(g["bbox"]) for g in gts],
                [int(g["iscrowd"]) for g in gts],
            )

    return ShrunkIoU


def test_compute_iou_subclass_is_called(detections: Any) -> None:
    gt, res = detections
    ref_cls = _iou_subclass(REF[1], pycocotools.mask)
    ours_cls = _iou_subclass(OURS[1], ours_mask)
    ref, ref_text = plain((REF[0], ref_cls), gt, res, "bbox")
    ours, ours_text = plain((OURS[0], ours_cls), gt, res, "bbox")
    assert ours_cls.calls == ref_cls.calls > 0
    assert_same_eval(ref, ours)
    assert ours_text == ref_text
    plain_ref, _ = plain(REF, gt, res, "bbox")
    assert not np.array_equal(plain_ref.stats, ours.stats)  # its own IoU was used


def test_evaluate_img_subclass_is_called(detections: Any) -> None:
    gt, res = detections

    class Counting(OURS[1]):  # type: ignore[misc, valid-type]
        calls = 0

        def evaluateImg(self, *args: Any) -> Any:  # noqa: N802
            type(self).calls += 1
            return super().evaluateImg(*args)

    ref, _ = plain(REF, gt, res, "bbox")
    ours, _ = plain((OURS[0], Counting), gt, res, "bbox")
    assert Counting.calls == len(ref.evalImgs)
    assert_same_eval(ref, ours)


def _merged(
    classes: tuple[type, type],
    gt: dict[str, Any],
    res: list[Any],
    shards: int,
    *,
    batch: int | None = None,
    ship: bool = False,
    pad: bool = False,
    edit: Any = None,
) -> Any:
    """torchvision / DETR ``CocoEvaluator``: each rank evaluates its images batch by batch
    with one COCOeval (``cocoDt`` and ``params.imgIds`` replaced, ``COCO()`` for a batch
    without results), keeps ``np.asarray(evalImgs)`` reshaped; the ranks' arrays are merged
    (``ship``: pickled and unpickled, as ``all_gather`` does; ``pad``: a rank repeats an
    image, as DistributedSampler pads), assigned with ``_paramsEval``, then accumulated on
    rank 0's COCOeval. ``edit(entries)`` may change the merged entries first."""
    coco_cls, eval_cls = classes

    def go() -> Any:
        g = index(coco_cls, gt)
        ids = sorted(g.getImgIds())
        all_ids, all_imgs = [], []
        final = None
        for s in range(shards):
            mine = ids[s::shards] + (ids[:1] if pad and s == shards - 1 else [])
            ev = eval_cls(g, iouType="bbox")
            final = final or ev
            seen, parts = [], []
            for b in range(0, len(mine), batch or len(mine)):
                chunk = set(mine[b : b + (batch or len(mine))])
                part = [copy.deepcopy(r) for r in res if r["image_id"] in chunk]
                ev.cocoDt = coco_cls.loadRes(g, part) if part else coco_cls()
                ev.params.imgIds = sorted(chunk)
                ev.evaluate()
                n_areas, n_imgs = len(ev.params.areaRng), len(ev.params.imgIds)
                seen.extend(ev.params.imgIds)
                parts.append(np.asarray(ev.evalImgs).reshape(-1, n_areas, n_imgs))
            shipped = (seen, np.concatenate(parts, axis=2))
            if ship:
                shipped = pickle.loads(pickle.dumps(shipped))
            all_ids.extend(shipped[0])
            all_imgs.append(shipped[1])
        merged_ids, first = np.unique(np.array(all_ids), return_index=True)
        merged = np.concatenate(all_imgs, axis=2)[..., first]
        final.evalImgs = list(merged.flatten())
        if edit is not None:
            edit(final.evalImgs)
        final.params.imgIds = list(merged_ids)
        final._paramsEval = copy.deepcopy(final.params)
        final.accumulate()
        final.summarize()
        return final

    return quiet(go)


def _no_python_accumulate(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> Any:
        raise AssertionError("pycocotools' accumulate loop ran: the compact path was expected")

    monkeypatch.setattr(ours_cocoeval.COCOeval, "_accumulate_python", refuse)


@pytest.mark.parametrize(
    ("shards", "batch", "ship", "pad"),
    [(3, None, False, False), (2, 2, True, True), (4, 5, True, False)],
)
def test_torchvision_detr_merge_pattern(
    monkeypatch: pytest.MonkeyPatch, shards: int, batch: int | None, ship: bool, pad: bool
) -> None:
    gt, res = synthetic.make_detections(60, 8, seed=4, empty_pred_images=0.1)
    ref, ref_text = _merged(REF, gt, res, shards, batch=batch, ship=ship, pad=pad)
    with monkeypatch.context() as m:
        _no_python_accumulate(m)  # accumulated from the runs' compact form
        ours, ours_text = _merged(OURS, gt, res, shards, batch=batch, ship=ship, pad=pad)
    assert_same_eval(ref, ours)
    assert ours_text == ref_text
    whole, _ = plain(REF, gt, res, "bbox")
    assert np.array_equal(whole.stats, ours.stats)
    # the entries, read after the merge (and the pickling), are pycocotools' dicts
    assert all(isinstance(e, dict) for e in ours.evalImgs if e is not None)
    assert_same_evalimgs(ref.evalImgs, ours.evalImgs)


def test_merge_pattern_with_edited_entries_runs_pycocotools_loop() -> None:
    # an entry someone changed (read, then written) is accumulated as pycocotools would
    gt, res = synthetic.make_detections(30, 5, seed=6)

    def edit(entries: list[Any]) -> None:
        for e in entries:
            if e is not None and len(e["dtScores"]) > 1:
                e["dtMatches"] = np.zeros_like(e["dtMatches"])
                e["dtScores"] = [x / 2 for x in e["dtScores"]]
                break

    ref, ref_text = _merged(REF, gt, res, 2, batch=3, ship=True, edit=edit)
    ours, ours_text = _merged(OURS, gt, res, 2, batch=3, ship=True, edit=edit)
    assert_same_eval(ref, ours)
    assert ours_text == ref_text
    plain_ref, _ = plain(REF, gt, res, "bbox")
    assert not np.array_equal(plain_ref.eval["precision"], ours.eval["precision"])


@pytest.mark.parametrize("form", ["list", "file", "file_subset"])
def test_evalimgs_entries_stay_unbuilt_through_numpy_and_pickle(
    detections: Any, form: str, tmp_path: Any
) -> None:
    # file: the results' columns (the payload computes them again for the pickle); subset:
    # only some images evaluated (the columns' rows picked)
    gt, res = detections
    setup = None
    if form != "list":
        path = tmp_path / "results.json"
        path.write_text(json.dumps(res))
        res = path
    if form == "file_subset":

        def setup(p: Any) -> None:
            p.imgIds = p.imgIds[::2]

    ours, _ = plain(OURS, gt, res, "bbox", setup)
    assert (ours_coco._results_columns(ours.cocoDt) is not None) == (form != "list")
    entries = [e for e in ours.evalImgs if e is not None]
    array = np.asarray(ours.evalImgs)  # torchvision's reshape: object array, nothing built
    assert array.dtype == object and array.shape == (len(ours.evalImgs),)
    again = pickle.loads(pickle.dumps(array))
    assert all(e._ref is not None for e in entries)
    assert all(e._ref is not None for e in again if e is not None)
    ref, _ = plain(REF, gt, res, "bbox", setup)
    assert_same_evalimgs(ref.evalImgs, list(again))  # built from the pickled columns
    assert_same_evalimgs(ref.evalImgs, ours.evalImgs)  # built from the COCO objects
    first = entries[0]
    assert copy.deepcopy(first).keys() == first.keys() and type(copy.copy(first)) is dict


def test_torchmetrics_pattern_empty_index_dataset_create_index(detections: Any) -> None:
    # torchmetrics' pycocotools backend: COCO(), .dataset, createIndex(), its own prediction
    # dicts (area given, no loadRes), then per-class runs with params.catIds = [k]
    gt, res = detections
    preds = {
        "images": gt["images"],
        "categories": gt["categories"],
        "annotations": [
            {**r, "id": i + 1, "area": r["bbox"][2] * r["bbox"][3], "iscrowd": 0}
            for i, r in enumerate(res)
        ],
    }

    def run(classes: Any) -> Any:
        coco_cls, eval_cls = classes

        def go() -> Any:
            target, predictions = index(coco_cls, gt), index(coco_cls, preds)
            ev = eval_cls(target, predictions, iouType="bbox")
            ev.params.maxDets = [1, 10, 100]
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
            per_class = []
            for k in sorted(target.getCatIds())[:3]:
                ev.params.catIds = [k]
                ev.evaluate()
                ev.accumulate()
                ev.summarize()
                per_class.append(ev.stats.copy())
            return ev, per_class

        return quiet(go)[0]

    (ref, ref_k), (ours, ours_k) = run(REF), run(OURS)
    assert_same_eval(ref, ours)
    assert np.asarray(ref_k).tobytes() == np.asarray(ours_k).tobytes()


def test_use_segm_and_params_fields() -> None:
    ref = REF[1](iouType="bbox").params
    ours = OURS[1](iouType="bbox").params
    for name in vars(ref):
        assert np.array_equal(np.asarray(getattr(ref, name)), np.asarray(getattr(ours, name)))
    kref, kours = REF[1](iouType="keypoints").params, OURS[1](iouType="keypoints").params
    for name in vars(kref):
        assert np.array_equal(np.asarray(getattr(kref, name)), np.asarray(getattr(kours, name)))
    assert hasattr(ours, "kpt_oks_sigmas") and ours.useSegm is None
    ours.setKpParams()
    assert ours.maxDets == [20]
    ours.setDetParams()
    assert ours.maxDets == [1, 10, 100]
    assert ours_cocoeval.maskUtils is ours_mask


def test_use_segm_deprecated_switch(detections: Any) -> None:
    gt, res = synthetic.add_masks(*detections)

    def setup(p: Any) -> None:
        p.useSegm = 0  # pycocotools: run bbox evaluation

    res = [{**r, "bbox": d["bbox"]} for r, d in zip(res, detections[1], strict=True)]
    _both(gt, res, "segm", setup)


def test_deepcopy_and_pickle_after_evaluate() -> None:
    ours, _ = plain(OURS, VAL100_GT, VAL100_RESULTS, "bbox")
    for clone in (copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert np.array_equal(clone.eval["precision"], ours.eval["precision"])
        assert clone.cocoGt.imgs.keys() == ours.cocoGt.imgs.keys()
        clone.accumulate.__func__  # noqa: B018 - bound method survives
        quiet(clone.accumulate)
        quiet(clone.summarize)
        assert np.array_equal(clone.stats, ours.stats)


def test_errors_match_pycocotools_types(detections: Any) -> None:
    gt, res = copy.deepcopy(detections)
    del gt["annotations"][3]["iscrowd"]
    for classes in (REF, OURS):
        with pytest.raises(KeyError) as info:
            plain(classes, gt, res, "bbox")
        assert "iscrowd" in str(info.value)
    assert "id=" in str(info.value)  # ours names the annotation

    gt, res = copy.deepcopy(detections)
    del res[4]["score"]
    for classes in (REF, OURS):
        with pytest.raises(KeyError, match="score"):
            plain(classes, gt, res, "bbox")

    for classes in (REF, OURS):
        ev = classes[1](iouType="bbox")
        with pytest.raises(Exception, match="Please run accumulate"):
            ev.summarize()
        with pytest.raises(Exception, match="iouType not supported"):
            classes[1](iouType="mask")


def test_accumulate_twice_and_after_changed_params(detections: Any) -> None:
    # the compiled run's arrays are handed over once; later calls read evalImgs' compact form
    gt, res = detections
    ref, _ = plain(REF, gt, res, "bbox")
    ours, _ = plain(OURS, gt, res, "bbox")
    for ev in (ref, ours):
        quiet(ev.accumulate)
        quiet(ev.summarize)
    assert_same_eval(ref, ours)
    for ev in (ref, ours):
        ev.params.maxDets = [1, 10]
        quiet(ev.accumulate)
    for key in ("precision", "recall", "scores"):
        assert ref.eval[key].tobytes() == ours.eval[key].tobytes(), key
