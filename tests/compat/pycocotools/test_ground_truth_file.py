"""``COCO(path)`` of a ground-truth file: columns until someone reads the dicts, then the dicts.

The drop-in keeps a ground-truth file's annotations as the scanner's columns and builds the
dicts (``dataset["annotations"]``, ``anns``, ``imgToAnns``, ``catToImgs``) on first access;
``COCOeval`` evaluates the columns only while nobody has accessed them (so nobody can have
edited them). Every edit a framework makes after loading (detectron2 and mmdetection set
``iscrowd``, ``area``, ignore flags) goes through one of those attributes, so it is seen:
each case runs side by side with pycocotools.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit import synthetic
from ioukit.compat.pycocotools import coco as ours_coco

from .oracle import OURS, REF, VAL100_GT, assert_same_eval, quiet


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    gt, res = synthetic.make_detections(80, 8, seed=11)
    for i, ann in enumerate(gt["annotations"]):  # what real files carry besides the six
        x, y, w, h = ann["bbox"]
        ann["segmentation"] = [[x, y, x + w, y, x + w, y + h]]
        if i % 7 == 0:
            ann["ignore"] = 1  # pycocotools overwrites it with iscrowd
        if i % 11 == 0:
            ann["iscrowd"] = 1
    folder = tmp_path_factory.mktemp("gt")
    gt_path, res_path = folder / "gt.json", folder / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(res))
    return gt_path, res_path, gt


def _run(
    classes: tuple[type, type],
    gt_path: Path,
    res_path: Path,
    edit: Callable[[Any], None] | None = None,
    iou_type: str = "bbox",
) -> tuple[Any, Any, str]:
    coco_cls, eval_cls = classes

    def go() -> tuple[Any, Any]:
        gt = coco_cls(str(gt_path))
        if edit is not None:
            edit(gt)
        ev = eval_cls(gt, gt.loadRes(str(res_path)), iou_type)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
        return gt, ev

    (gt, ev), text = quiet(go)
    return gt, ev, text


def test_plain_pattern_evaluates_the_columns(files: Any) -> None:
    gt_path, res_path, _ = files
    _, ref, ref_text = _run(REF, gt_path, res_path)
    gt, ours, ours_text = _run(OURS, gt_path, res_path)
    assert ours_text == ref_text
    assert_same_eval(ref, ours)
    assert ours._source is not None  # the compiled run
    assert ours_coco._ground_truth_columns(gt) is not None  # no annotation dict was built


@pytest.mark.parametrize("n_results", [1, 2])
def test_one_annotation_and_one_result(tmp_path: Path, n_results: int) -> None:
    # one row: the w, h column is a copy of the boxes' (a view of one row was overwritten
    # by the corners, and the IoU read them: stats 0 instead of 0.9)
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
                         "bbox": [50.0, 50.0, 10.0, 10.0], "area": 100.0, "iscrowd": 0}],
    }  # fmt: skip
    res = [{"image_id": 1, "category_id": 1, "bbox": [50.0, 50.0, 10.0, 9.0], "score": 0.9}]
    res += [{"image_id": 1, "category_id": 1, "bbox": [20.0, 20.0, 5.0, 5.0], "score": 0.5}]
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(res[:n_results]))
    _, ref, ref_text = _run(REF, tmp_path / "gt.json", tmp_path / "res.json")
    gt_coco, ours, ours_text = _run(OURS, tmp_path / "gt.json", tmp_path / "res.json")
    assert ours_text == ref_text
    assert_same_eval(ref, ours)
    assert round(float(ours.stats[0]), 3) == 0.9
    assert ours_coco._ground_truth_columns(gt_coco) is not None  # the columns were evaluated


def test_the_dicts_are_pycocotools_when_read(files: Any) -> None:
    gt_path, _, _ = files
    for path in (gt_path, VAL100_GT):
        ref = quiet(lambda path=path: REF[0](str(path)))[0]
        ours, text = quiet(lambda path=path: OURS[0](str(path)))
        assert text == quiet(lambda path=path: REF[0](str(path)))[1]
        assert ours_coco._ground_truth_columns(ours) is not None
        assert ref.imgs == ours.imgs and ref.cats == ours.cats
        assert ref.getCatIds() == ours.getCatIds() and ref.getImgIds() == ours.getImgIds()
        assert ours_coco._ground_truth_columns(ours) is not None  # ids: no dicts built
        assert repr(ref.dataset) == repr(ours.dataset)  # members, order, types
        assert ours_coco._ground_truth_columns(ours) is None
        for name in ("anns", "imgToAnns", "catToImgs"):
            assert getattr(ref, name) == getattr(ours, name), name
        first = ours.dataset["images"][0]
        assert ours.imgs[first["id"]] is first  # one object, as pycocotools'
        ann = ours.dataset["annotations"][0]
        assert ours.anns[ann["id"]] is ann and ann in ours.imgToAnns[ann["image_id"]]


def _set_crowd(gt: Any) -> None:
    for ann in gt.dataset["annotations"][::3]:
        ann["iscrowd"] = 1


def _set_area(gt: Any) -> None:
    for ann in list(gt.anns.values())[::2]:
        ann["area"] = 10.0 * ann["area"]


def _move_box(gt: Any) -> None:
    for anns in list(gt.imgToAnns.values())[::4]:
        anns[0]["bbox"] = [1.0, 2.0, 30.0, 40.0]


def _drop_from_index(gt: Any) -> None:
    first = next(iter(gt.imgToAnns))
    gt.imgToAnns[first] = []


def _replace_and_reindex(gt: Any) -> None:
    dataset = copy.deepcopy(gt.dataset)
    dataset["annotations"] = dataset["annotations"][::2]
    gt.dataset = dataset
    gt.createIndex()


def _append_without_index(gt: Any) -> None:
    # pycocotools' index does not see it (imgToAnns unchanged); nor does the drop-in's
    gt.dataset["annotations"].append({**gt.dataset["annotations"][0], "id": 10**6})


def _drop_category(gt: Any) -> None:
    gt.dataset["categories"].pop()  # getCatIds (hence params.catIds) lose it


EDITS = {
    "dataset iscrowd": _set_crowd,
    "anns area": _set_area,
    "imgToAnns bbox": _move_box,
    "imgToAnns entry": _drop_from_index,
    "dataset replaced": _replace_and_reindex,
    "appended, not indexed": _append_without_index,
    "dataset categories": _drop_category,
}


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edit_after_loading_is_seen(files: Any, name: str) -> None:
    gt_path, res_path, _ = files
    _, ref, ref_text = _run(REF, gt_path, res_path, EDITS[name])
    _, ours, ours_text = _run(OURS, gt_path, res_path, EDITS[name])
    assert ours_text == ref_text
    assert_same_eval(ref, ours)
    _, unedited, _ = _run(REF, gt_path, res_path)
    seen = not np.array_equal(ref.eval["precision"], unedited.eval["precision"])
    assert seen == (name != "appended, not indexed"), name  # each edit changes the numbers


def test_an_edit_between_two_evaluations_is_seen(files: Any) -> None:
    gt_path, res_path, _ = files
    runs = []
    for coco_cls, eval_cls in (REF, OURS):

        def go(coco_cls: type = coco_cls, eval_cls: type = eval_cls) -> list[Any]:
            gt = coco_cls(str(gt_path))
            ev = eval_cls(gt, gt.loadRes(str(res_path)), "bbox")
            ev.evaluate()
            ev.accumulate()
            first = ev.eval["precision"].copy()
            _set_crowd(gt)
            ev.evaluate()
            ev.accumulate()
            return [first, ev.eval["precision"]]

        runs.append(quiet(go)[0])
    (ref_first, ref_second), (ours_first, ours_second) = runs
    assert ref_first.tobytes() == ours_first.tobytes()
    assert ref_second.tobytes() == ours_second.tobytes()
    assert not np.array_equal(ref_first, ref_second)


def test_copies_keep_the_columns(files: Any) -> None:
    gt_path, res_path, _ = files
    _, ref, _ = _run(REF, gt_path, res_path)
    lazy = quiet(lambda: OURS[0](str(gt_path)))[0]
    for clone in (copy.deepcopy(lazy), pickle.loads(pickle.dumps(lazy))):
        assert ours_coco._ground_truth_columns(clone) is not None

        def go(clone: Any = clone) -> Any:
            ev = OURS[1](clone, clone.loadRes(str(res_path)), "bbox")
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
            return ev

        assert_same_eval(ref, quiet(go)[0])
        assert clone.dataset == lazy.dataset


def test_segm_and_evalimgs_read_the_dicts(files: Any, tmp_path: Path) -> None:
    gt, res = synthetic.add_masks(*synthetic.make_detections(30, 4, seed=2))
    gt_path, res_path = tmp_path / "gt.json", tmp_path / "res.json"
    gt_path.write_text(json.dumps(gt))
    res_path.write_text(json.dumps(res))
    _, ref, _ = _run(REF, gt_path, res_path, iou_type="segm")
    _, ours, _ = _run(OURS, gt_path, res_path, iou_type="segm")
    assert_same_eval(ref, ours)
    box_path, box_res, _ = files  # evalImgs of a columns run: built from the file's dicts
    _, ref, _ = _run(REF, box_path, box_res)
    _, ours, _ = _run(OURS, box_path, box_res)
    assert [e and e["gtIds"] for e in ref.evalImgs] == [e and e["gtIds"] for e in ours.evalImgs]


def _shape(gt: dict[str, Any], name: str) -> dict[str, Any]:
    gt = copy.deepcopy(gt)
    anns = gt["annotations"]
    if name == "missing iscrowd":
        del anns[3]["iscrowd"]
    elif name == "missing area":
        del anns[3]["area"]
    elif name == "missing id":
        del anns[3]["id"]
    elif name == "missing image_id":
        del anns[5]["image_id"]
    elif name == "iscrowd true":
        anns[3]["iscrowd"] = True
    elif name == "float id":
        anns[3]["id"] = 3.0
    elif name == "duplicate ids":
        anns[3]["id"] = anns[4]["id"]
    elif name == "id zero":
        anns[3]["id"] = 0
    elif name == "box of 5":
        anns[3]["bbox"] = [*anns[3]["bbox"], 1]
    elif name == "no annotations":
        del gt["annotations"]
    elif name == "empty annotations":
        gt["annotations"] = []
    elif name == "image without id":
        del gt["images"][2]["id"]
    elif name == "no categories":
        del gt["categories"]
    return gt


SHAPES = [
    "missing iscrowd",
    "missing area",
    "missing id",
    "missing image_id",
    "iscrowd true",
    "float id",
    "duplicate ids",
    "id zero",
    "box of 5",
    "no annotations",
    "empty annotations",
    "image without id",
    "no categories",
]


@pytest.mark.parametrize("name", SHAPES)
def test_shapes_the_scanner_leaves_to_the_parser(files: Any, tmp_path: Path, name: str) -> None:
    # whichever route reads the file, pycocotools' numbers or its exception type
    _, res_path, gt = files
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(_shape(gt, name)))
    outcomes = []
    for classes in (REF, OURS):
        try:
            _, ev, text = _run(classes, path, res_path)
        except Exception as exc:  # the type is compared
            outcomes.append(type(exc))
        else:
            outcomes.append((ev.eval["precision"].tobytes(), ev.stats.tobytes(), text))
    assert outcomes[0] == outcomes[1]
