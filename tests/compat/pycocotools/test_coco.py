"""COCO index drop-in against pycocotools side by side."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pycocotools.coco
import pytest

from ioukit import compat, synthetic
from ioukit.compat.pycocotools import coco as ours_coco

from .oracle import OURS, REF, VAL100_GT, VAL100_RESULTS, quiet


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    return quiet(lambda: REF[0](str(VAL100_GT)))[0], quiet(lambda: OURS[0](str(VAL100_GT)))[0]


def test_constructor_prints_and_indexes_as_pycocotools(pair: Any) -> None:
    ref_text = quiet(lambda: REF[0](str(VAL100_GT)))[1]
    ours_text = quiet(lambda: OURS[0](str(VAL100_GT)))[1]
    assert ours_text == ref_text
    ref, ours = pair
    assert ref.dataset == ours.dataset
    for name in ("anns", "cats", "imgs", "imgToAnns", "catToImgs"):
        assert getattr(ref, name) == getattr(ours, name), name
    empty = OURS[0]()
    assert empty.dataset == {} and empty.anns == {} and len(empty.imgToAnns) == 0


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"imgIds": [139, 285]},
        {"imgIds": 139},
        {"catIds": [1, 18]},
        {"imgIds": [139], "catIds": 1},
        {"areaRng": [100, 5000]},
        {"iscrowd": True},
        {"iscrowd": False, "catIds": [1]},
        {"imgIds": [999999]},
    ],
)
def test_get_ann_ids(pair: Any, query: dict[str, Any]) -> None:
    ref, ours = pair
    assert ref.getAnnIds(**query) == ours.getAnnIds(**query)


def test_cats_images_and_loads(pair: Any) -> None:
    ref, ours = pair
    for query in ({}, {"catNms": ["person", "dog"]}, {"supNms": "animal"}, {"catIds": [1, 3]}):
        assert ref.getCatIds(**query) == ours.getCatIds(**query)
    for query in ({}, {"catIds": [1]}, {"imgIds": [139, 285], "catIds": [1]}, {"catIds": [1, 62]}):
        assert sorted(ref.getImgIds(**query)) == sorted(ours.getImgIds(**query))
    ids = ref.getAnnIds()[:5]
    assert ref.loadAnns(ids) == ours.loadAnns(ids)
    assert ref.loadAnns(ids[0]) == ours.loadAnns(ids[0])
    assert ref.loadCats([1, 2]) == ours.loadCats([1, 2])
    assert ref.loadImgs(139) == ours.loadImgs(139)
    with pytest.raises(KeyError):
        ours.loadAnns([-5])


def test_ann_to_rle_and_mask(pair: Any) -> None:
    ref, ours = pair
    crowd = [a for a in ref.dataset["annotations"] if a["iscrowd"]][:3]
    polys = [a for a in ref.dataset["annotations"] if not a["iscrowd"]][:10]
    for ann in crowd + polys:
        a, b = ref.annToRLE(copy.deepcopy(ann)), ours.annToRLE(copy.deepcopy(ann))
        assert a == b
        with warnings.catch_warnings():  # pycocotools' __array__ under newer NumPy rules
            warnings.simplefilter("ignore", DeprecationWarning)
            expected = ref.annToMask(ann)
        assert np.array_equal(expected, ours.annToMask(ann))


def _load_res(coco: Any, results: Any) -> Any:
    return quiet(lambda: coco.loadRes(results))


@pytest.mark.parametrize("kind", ["bbox", "segm_with_bbox", "segm", "keypoints", "numpy"])
def test_load_res_writes_the_fields_pycocotools_writes(pair: Any, kind: str) -> None:
    ref, ours = pair
    rows = json.loads(VAL100_RESULTS.read_text())[:50]
    if kind == "keypoints":
        kgt, results = synthetic.make_keypoints(5, seed=1)
        ref = quiet(lambda: _indexed(REF[0], kgt))[0]
        ours = quiet(lambda: _indexed(OURS[0], kgt))[0]
    elif kind.startswith("segm"):
        results = []
        for r in rows:
            rle = ours.annToRLE({"image_id": r["image_id"], "segmentation": [_poly(r["bbox"])]})
            seg = {"size": rle["size"], "counts": rle["counts"].decode()}
            kept = r if kind != "segm" else {k: v for k, v in r.items() if k != "bbox"}
            results.append({**kept, "segmentation": seg})
    elif kind == "numpy":
        results = np.array(
            [[r["image_id"], *r["bbox"], r["score"], r["category_id"]] for r in rows]
        )
    else:
        results = rows
    a_in = results if kind == "numpy" else copy.deepcopy(results)
    b_in = results if kind == "numpy" else copy.deepcopy(results)
    (a, a_text), (b, b_text) = _load_res(ref, a_in), _load_res(ours, b_in)
    assert a_text == b_text
    assert a.dataset.keys() == b.dataset.keys()
    assert a.dataset["images"] == b.dataset["images"]
    for x, y in zip(a.dataset["annotations"], b.dataset["annotations"], strict=True):
        assert x.keys() == y.keys()
        for key in x:
            assert np.array_equal(np.asarray(x[key]), np.asarray(y[key])), key
            assert type(x[key]) is type(y[key]) or key == "segmentation", key
    if kind != "numpy":  # pycocotools completes the caller's dicts in place
        assert b_in[0]["id"] == 1 and "area" in b_in[0]


def _indexed(cls: type, dataset: dict[str, Any]) -> Any:
    c = cls()
    c.dataset = copy.deepcopy(dataset)
    c.createIndex()
    return c


def _poly(b: list[float]) -> list[float]:
    x, y, w, h = b
    return [x, y, x + w, y, x + w, y + h, x, y + h]


def test_load_res_errors_have_pycocotools_types(pair: Any) -> None:
    ref, ours = pair
    unknown = [{"image_id": -7, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}]
    for coco in (ref, ours):
        with pytest.raises(AssertionError, match="Results do not correspond"):
            _load_res(coco, copy.deepcopy(unknown))
        with pytest.raises(AssertionError, match="results in not an array"):
            _load_res(coco, {"image_id": 139})
        with pytest.raises(AssertionError):
            quiet(lambda c=coco: c.loadNumpyAnnotations(np.zeros((3, 6))))
    with pytest.raises(AssertionError, match="-7"):
        _load_res(ours, copy.deepcopy(unknown))
    with pytest.raises(AssertionError, match=r"\(N, 7\)"):
        quiet(lambda: ours.loadNumpyAnnotations(np.zeros((3, 6))))
    missing = [{"image_id": 139, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},
               {"image_id": 139, "category_id": 1, "score": 0.5}]  # fmt: skip
    for coco in (ref, ours):
        with pytest.raises(KeyError, match="bbox"):
            _load_res(coco, copy.deepcopy(missing))


def test_info_download_show(pair: Any) -> None:
    ref, ours = pair
    ours.dataset["info"] = ref.dataset["info"] = {"year": 2014, "version": "1.0"}
    assert quiet(ref.info)[1] == quiet(ours.info)[1]
    with pytest.raises(RuntimeError, match="no network"):
        ours.download("/tmp/x")
    assert ours.showAnns([]) == 0
    assert quiet(lambda: ours.showAnns([{"caption": "a cat"}]))[1] == "a cat\n"
    with pytest.raises(Exception, match="datasetType not supported"):
        ours.showAnns([{"bbox": [0, 0, 1, 1]}])


def test_show_anns_draws_with_matplotlib(pair: Any) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, ours = pair
    anns = ours.loadAnns(ours.getAnnIds(imgIds=[139]))
    crowd = [a for a in ours.dataset["annotations"] if a["iscrowd"]][:1]
    fig = plt.figure()
    ours.showAnns(anns + crowd, draw_bbox=True)
    assert len(plt.gca().collections) == 2
    plt.close(fig)


def test_deepcopy_and_pickle(pair: Any) -> None:
    _, ours = pair
    for clone in (copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert clone.dataset == ours.dataset
        assert clone.imgToAnns == ours.imgToAnns
        assert clone.getAnnIds(imgIds=[139]) == ours.getAnnIds(imgIds=[139])


def test_init_as_pycocotools_binds_the_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in compat.PYCOCOTOOLS_MODULES:
        monkeypatch.setitem(sys.modules, name, sys.modules.get(name))
    compat.init_as_pycocotools()
    import pycocotools as bound
    from pycocotools import mask as bound_mask
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval, maskUtils

    assert COCO is ours_coco.COCO
    assert COCOeval.__module__ == "ioukit.compat.pycocotools.cocoeval"
    assert maskUtils is bound_mask
    assert bound.coco is ours_coco
    assert pycocotools.coco.COCO is not COCO  # the real one, imported before


@pytest.mark.parametrize("extra", [False, True])
def test_load_res_of_a_file_builds_pycocotools_dicts_when_read(
    pair: Any, tmp_path: Any, extra: bool
) -> None:
    # a file of plain box results stays columns until read; then the dicts are pycocotools'
    ref, ours = pair
    rows = json.loads(VAL100_RESULTS.read_text())[:300]
    if extra:  # another key: kept in the dicts (the evaluation reads the four)
        rows = [{**r, "note": i} for i, r in enumerate(rows)]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(rows))
    (a, a_text), (b, b_text) = _load_res(ref, str(path)), _load_res(ours, str(path))
    assert a_text == b_text
    assert ours_coco._results_columns(b) is not None
    assert a.imgs == b.imgs and a.cats == b.cats
    path.unlink()  # the dicts come from the bytes read at loadRes
    assert a.dataset["annotations"] == b.dataset["annotations"]
    assert ours_coco._results_columns(b) is None
    assert a.anns == b.anns and a.imgToAnns == b.imgToAnns and a.catToImgs == b.catToImgs


def test_load_res_of_a_file_errors_and_copies(pair: Any, tmp_path: Any) -> None:
    ref, ours = pair
    path = tmp_path / "results.json"
    rows = json.loads(VAL100_RESULTS.read_text())[:20]
    path.write_text(json.dumps([*rows, {**rows[0], "image_id": -7}]))
    for coco in (ref, ours):
        with pytest.raises(AssertionError, match="Results do not correspond"):
            _load_res(coco, str(path))
    with pytest.raises(AssertionError, match=r"results\[20\]\['image_id'\] = -7"):
        _load_res(ours, str(path))
    path.write_text(json.dumps(rows))
    lazy, _ = _load_res(ours, str(path))
    for clone in (copy.deepcopy(lazy), pickle.loads(pickle.dumps(lazy))):
        assert ours_coco._results_columns(clone) is not None
        assert clone.loadAnns([1, 2]) == lazy.loadAnns([1, 2])
    other, _ = _load_res(ours, str(path))
    other.dataset = {"images": [], "categories": [], "annotations": []}  # replaced: no columns
    assert ours_coco._results_columns(other) is None and other.dataset["annotations"] == []


_TRICKY = {  # what orjson refuses or reads otherwise than json: json's objects or error
    "big id": b'{"images": [{"id": 1208925819614629174706176}], "annotations": [], '
    b'"categories": []}',
    "uint64 id": b'{"images": [{"id": 18446744073709551615}], "categories": []}',
    "nan": b'{"images": [], "annotations": [{"id": 1, "image_id": 1, "area": NaN}]}',
    "overflow": b'{"images": [{"id": 1, "width": 1e400}]}',
    "surrogate": b'{"categories": [{"id": 1, "name": "\\ud800"}]}',
    "long float": b'{"images": [{"id": 1, "width": 0.12345678901234567890123}]}',
    "bom": b'\xef\xbb\xbf{"images": []}',
    "not json": b'{"images": [1,]}',
    "array": b"[1, 2]",
    "plain": b'{"info": {"v": 1}, "images": [{"id": 3, "file_name": "\xc3\xa9.jpg"}], '
    b'"annotations": [{"id": 1, "image_id": 3, "category_id": 2, "bbox": [0.1, 2, 3, 4e0]}], '
    b'"categories": [{"id": 2, "name": "x"}], "images": [{"id": 4}]}',
}


@pytest.mark.parametrize("fast", [False, True], ids=["json", "orjson"])
@pytest.mark.parametrize("name", list(_TRICKY))
def test_constructor_reads_the_file_as_pycocotools(
    tmp_path: Any, name: str, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # COCO(path) parses with json below _ORJSON_FROM bytes, above with orjson where it gives
    # json's objects (a run of 19 digits goes to json), else with json
    if fast:
        monkeypatch.setattr(ours_coco, "_ORJSON_FROM", 0)
    path = tmp_path / "gt.json"
    path.write_bytes(_TRICKY[name])
    outcomes = []
    for cls in (REF[0], OURS[0]):
        try:
            coco = quiet(lambda cls=cls: cls(str(path)))[0]
        except Exception as exc:  # the type is compared
            outcomes.append(type(exc))
        else:
            outcomes.append(coco.dataset)
    ref, ours = outcomes
    assert repr(ref) == repr(ours)  # repr: types (int, not float), nan, key order


def test_a_box_evaluation_loads_neither_masks_nor_orjson(tmp_path: Any) -> None:
    # the mask module (ioukit.masks, array-api-compat) loads when someone uses it; orjson
    # only for a file large enough to repay its import
    gt, res = synthetic.make_detections(20, seed=0)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(res))
    code = f"""
import contextlib, io, sys
from ioukit.compat import init_as_pycocotools
init_as_pycocotools()
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO({str(tmp_path / "gt.json")!r})
    ev = COCOeval(gt, gt.loadRes({str(tmp_path / "res.json")!r}), "bbox")
    ev.evaluate(); ev.accumulate(); ev.summarize()
print(sorted(m for m in ("ioukit.masks", "array_api_compat", "orjson", "locale")
             if m in sys.modules))
import pycocotools.mask
from pycocotools.cocoeval import maskUtils
import ioukit.compat.pycocotools.mask as mask
print(pycocotools.mask is maskUtils is mask, mask.area({{"size": [1, 1], "counts": b"01"}}))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[]", "True 1"]


_FORMS = {  # results files (I, J: two images of the fixture, C a category): the dicts are
    # json's, from the bytes or from the columns
    "floats": (b'[{"image_id": I, "category_id": C, "bbox": [1.5, 2.25, 3.0, 4e-3], '
               b'"score": 0.9}, {"image_id": J, "category_id": C, "bbox": [0.0, -0.0, '
               b'1E+2, 5e-324], "score": 1.0}]', True),
    "integers": (b'[{"image_id": I, "category_id": C, "bbox": [10, -0, 3, 999999999999999], '
                 b'"score": 1}]', True),
    "another order": (b'[{"score": 0.5, "bbox": [1, 2, 3, 4.5], "category_id": C, '
                      b'"image_id": I}]', True),
    "two orders": (b'[{"image_id": I, "category_id": C, "bbox": [1, 2, 3, 4], "score": 0.5}, '
                   b'{"category_id": C, "image_id": J, "bbox": [1, 2, 3, 4], "score": 0.5}]',
                   False),
    "another key": (b'[{"image_id": I, "category_id": C, "bbox": [1, 2, 3, 4], "score": 0.5, '
                    b'"note": [1]}]', False),
    "a key twice": (b'[{"image_id": I, "category_id": C, "bbox": [1, 2, 3, 4], "score": 0.5, '
                    b'"score": 0.7}]', False),
    "beyond 2**53": (b'[{"image_id": I, "category_id": C, "bbox": [1, 2, 3, '
                     b'9007199254740993], "score": 0.5}]', False),
}  # fmt: skip


@pytest.mark.parametrize("name", list(_FORMS))
def test_load_res_builds_json_s_dicts_without_the_bytes(
    pair: Any, tmp_path: Any, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # from _KEEP_BYTES_BELOW bytes on, a file of the four keys in one order keeps no bytes:
    # its dicts come from the columns (keys in the file's order, its ints as ints)
    ref, ours = pair
    monkeypatch.setattr(ours_coco, "_KEEP_BYTES_BELOW", 0)
    text, dropped = _FORMS[name]
    first, second = list(ours.imgs)[:2]
    for key, value in ((b"I", first), (b"J", second), (b"C", next(iter(ours.cats)))):
        text = text.replace(b": %s" % key, b": %d" % value)
    path = tmp_path / "results.json"
    path.write_bytes(text)
    (a, a_text), (b, b_text) = _load_res(ref, str(path)), _load_res(ours, str(path))
    assert a_text == b_text
    results = ours_coco._results_columns(b)
    assert results is not None and (results.raw is None) is dropped
    clone = pickle.loads(pickle.dumps(b))
    want = repr(a.dataset["annotations"])  # repr: ints and floats, -0.0, key order
    assert repr(b.dataset["annotations"]) == want
    assert repr(clone.dataset["annotations"]) == want
