"""Boundary AP (``iou_type="boundary"``) against its references, run side by side (#26 item 1).

- ``compat="faster_coco_eval"``: faster-coco-eval's ``COCOeval_faster(iouType="boundary")``;
- ``compat="ultrafast"``: ultrafast-pycocotools' ``COCOeval(iouType="boundary")``;
- default: an OpenCV transcription of boundary-iou-api's ``coco_instance_api/cocoeval.py``
  (``_prepare`` with its ignore rule, ``computeBoundaryIoU``; ``mask_to_boundary`` with
  ``cv2.erode``) on pycocotools' ``COCOeval`` (of which boundary-iou-api's is a copy).

On the COCO API's 100-image val2014 segm fixture and on generated sets with crowds, masks
touching the image border, one-pixel-wide lines and single pixels, on image sizes where the
three roundings of the erosion radius differ. The 12 stats and the precision, recall and
scores arrays must agree to 1e-12.
"""

from __future__ import annotations

import contextlib
import copy
import io
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.groups import Groups
from ioukit.evaluation.registry import make_protocol, similarity_input, similarity_names
from ioukit.evaluation.similarity.boundary import BoundaryIoU
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from tests.coco_reference import apply_options, compare

pytest.importorskip("pycocotools")
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pycocotools, NumPy 2

DATA = Path(__file__).resolve().parents[2] / "data" / "conformance" / "coco" / "val2014_100"
GT_FILE = DATA / "instances_val2014_100.json"
SEGM_FILE = DATA / "instances_val2014_fakesegm100_results.json"


# ------------------------------------------------------------------- the references, side by side
def mask_to_boundary(mask: np.ndarray, dilation_ratio: float = 0.02) -> np.ndarray:
    """boundary-iou-api ``boundary_utils.mask_to_boundary``, line by line."""
    cv2 = pytest.importorskip("cv2")
    h, w = mask.shape
    img_diag = np.sqrt(h**2 + w**2)
    dilation = int(round(dilation_ratio * img_diag))  # noqa: RUF046 - its line
    if dilation < 1:
        dilation = 1
    new_mask = cv2.copyMakeBorder(mask, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    kernel = np.ones((3, 3), dtype=np.uint8)
    new_mask_erode = cv2.erode(new_mask, kernel, iterations=dilation)
    mask_erode = new_mask_erode[1 : h + 1, 1 : w + 1]
    return np.asarray(mask - mask_erode)


class BoundaryCOCOeval(COCOeval):  # type: ignore[misc]
    """boundary-iou-api's ``COCOeval(iouType="boundary")``: its ``_prepare`` (boundaries added
    to every annotation, ``ignore or iscrowd``) and ``computeBoundaryIoU`` transcribed on
    pycocotools' ``COCOeval`` (the rest of its file is pycocotools' code)."""

    def __init__(self, coco_gt: Any, coco_dt: Any, dilation_ratio: float = 0.02) -> None:
        super().__init__(coco_gt, coco_dt, "segm")
        self.dilation_ratio = dilation_ratio

    def _prepare(self) -> None:
        p = self.params
        if p.useCats:
            gts = self.cocoGt.loadAnns(self.cocoGt.getAnnIds(imgIds=p.imgIds, catIds=p.catIds))
            dts = self.cocoDt.loadAnns(self.cocoDt.getAnnIds(imgIds=p.imgIds, catIds=p.catIds))
        else:
            gts = self.cocoGt.loadAnns(self.cocoGt.getAnnIds(imgIds=p.imgIds))
            dts = self.cocoDt.loadAnns(self.cocoDt.getAnnIds(imgIds=p.imgIds))
        for anns, coco in ((gts, self.cocoGt), (dts, self.cocoDt)):
            for ann in anns:  # coco.py's augment_annotations_with_boundary_single_core
                boundary = mask_to_boundary(coco.annToMask(ann), self.dilation_ratio)
                ann["boundary"] = mask_utils.encode(
                    np.array(boundary[:, :, None], order="F", dtype="uint8")
                )[0]
                ann["segmentation"] = coco.annToRLE(ann)
        for gt in gts:
            gt["ignore"] = gt["ignore"] if "ignore" in gt else 0  # noqa: SIM401 - its line
            gt["ignore"] = gt["ignore"] or ("iscrowd" in gt and gt["iscrowd"])
        self._gts = defaultdict(list)
        self._dts = defaultdict(list)
        for gt in gts:
            self._gts[gt["image_id"], gt["category_id"]].append(gt)
        for dt in dts:
            self._dts[dt["image_id"], dt["category_id"]].append(dt)
        self.evalImgs = defaultdict(list)
        self.eval = {}

    def computeIoU(self, imgId: Any, catId: Any) -> Any:  # noqa: N802 - its name
        p = self.params
        if p.useCats:
            gt = self._gts[imgId, catId]
            dt = self._dts[imgId, catId]
        else:
            gt = [_ for cId in p.catIds for _ in self._gts[imgId, cId]]
            dt = [_ for cId in p.catIds for _ in self._dts[imgId, cId]]
        if len(gt) == 0 and len(dt) == 0:
            return []
        inds = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in inds]
        if len(dt) > p.maxDets[-1]:
            dt = dt[0 : p.maxDets[-1]]
        g_m = [g["segmentation"] for g in gt]
        d_m = [d["segmentation"] for d in dt]
        g_b = [g["boundary"] for g in gt]
        d_b = [d["boundary"] for d in dt]
        iscrowd = [int(o["iscrowd"]) for o in gt]
        mask_ious = mask_utils.iou(d_m, g_m, iscrowd)
        boundary_ious = mask_utils.iou(d_b, g_b, iscrowd)
        mask_ious = np.array(mask_ious)
        boundary_ious = np.array(boundary_ious)
        iscrowd = np.array(iscrowd)
        ious = mask_ious
        if len(gt) and len(dt):
            keep = iscrowd == 0
            ious[:, keep] = np.minimum(mask_ious[:, keep], boundary_ious[:, keep])
        else:
            ious = np.minimum(mask_ious, boundary_ious)
        return ious


def run_boundary_api(gt: dict[str, Any], res: list[dict[str, Any]], **options: Any) -> Any:
    """The transcription of boundary-iou-api, from the two JSON documents to its arrays."""
    ratio = options.pop("dilation_ratio", 0.02)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        dt = coco.loadRes(copy.deepcopy(res))
        e = BoundaryCOCOeval(coco, dt, ratio)
        apply_options(e, options)
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def run_faster_coco_eval(gt: dict[str, Any], res: list[dict[str, Any]], **options: Any) -> Any:
    fce = pytest.importorskip("faster_coco_eval")
    ratio = options.pop("dilation_ratio", 0.02)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = fce.COCO(copy.deepcopy(gt))
        dt = coco.loadRes(copy.deepcopy(res))
        e = fce.COCOeval_faster(coco, dt, "boundary", boundary_dilation_ratio=ratio)
        apply_options(e, options)
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def run_ultrafast(gt: dict[str, Any], res: list[dict[str, Any]], **options: Any) -> Any:
    uf = pytest.importorskip("ultrafast_pycocotools")
    ratio = options.pop("dilation_ratio", 0.02)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = uf.COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        dt = coco.loadRes(copy.deepcopy(res))
        e = uf.COCOeval(coco, dt, "boundary", boundary_dilation_ratio=ratio)
        apply_options(e, options)
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


REFERENCES = {None: run_boundary_api, "faster_coco_eval": run_faster_coco_eval}
REFERENCES["ultrafast"] = run_ultrafast


# ------------------------------------------------------------------------------ generated data
def _rle(mask: np.ndarray) -> dict[str, Any]:
    enc = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    return {"size": [int(s) for s in enc["size"]], "counts": enc["counts"].decode("ascii")}


def _uncompressed(mask: np.ndarray) -> dict[str, Any]:
    """Uncompressed RLE (column-major runs starting with zeros): COCO's crowd style."""
    flat = mask.T.reshape(-1).astype(np.int8)
    bounds = np.r_[0, np.flatnonzero(np.diff(flat)) + 1, flat.size]
    runs = np.diff(bounds).tolist()
    if flat.size and flat[0] == 1:
        runs = [0, *runs]
    return {"size": list(mask.shape), "counts": runs}


def _shape(rng: np.random.Generator, h: int, w: int, kind: int) -> np.ndarray:
    """Blob, border-touching rectangle, one-pixel line, single pixel, ring with a hole."""
    m = np.zeros((h, w), dtype=np.uint8)
    yy, xx = np.mgrid[:h, :w]
    if kind == 0:  # an ellipse, possibly cut by the border
        cy, cx = rng.uniform(-0.1, 1.1) * h, rng.uniform(-0.1, 1.1) * w
        ry, rx = rng.uniform(0.1, 0.5) * h + 1, rng.uniform(0.1, 0.5) * w + 1
        m[((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1] = 1
    elif kind == 1:  # a rectangle touching one or two borders
        y0 = 0 if rng.random() < 0.5 else int(rng.integers(0, h))
        x0 = 0 if rng.random() < 0.5 else int(rng.integers(0, w))
        m[y0 : y0 + int(rng.integers(1, h + 1)), x0 : x0 + int(rng.integers(1, w + 1))] = 1
    elif kind == 2:  # a one-pixel-wide line
        if rng.random() < 0.5:
            m[int(rng.integers(0, h)), int(rng.integers(0, w // 2 + 1)) :] = 1
        else:
            m[int(rng.integers(0, h // 2 + 1)) :, int(rng.integers(0, w))] = 1
    elif kind == 3:  # one pixel
        m[int(rng.integers(0, h)), int(rng.integers(0, w))] = 1
    else:  # a ring
        cy, cx = rng.uniform(0.3, 0.7) * h, rng.uniform(0.3, 0.7) * w
        r = np.hypot(yy - cy, xx - cx)
        outer = rng.uniform(0.2, 0.45) * min(h, w) + 1
        m[(r <= outer) & (r >= outer * rng.uniform(0.2, 0.7))] = 1
    return m


def _jitter(rng: np.random.Generator, m: np.ndarray) -> np.ndarray:
    """A prediction near ``m``: often exact, else shifted by a pixel, a few pixels flipped."""
    if rng.random() < 0.3:
        return m.copy()
    out = np.roll(m, (int(rng.integers(-1, 2)), int(rng.integers(-1, 2))), axis=(0, 1))
    flip = rng.random(m.shape) < 0.01
    return np.where(flip, 1 - out, out).astype(np.uint8)


# sizes where the three roundings of d = ratio * diagonal differ (105 x 140: 3.5; 75 x 100:
# 2.5), thin images, and ordinary ones
SIZES = [(105, 140), (75, 100), (48, 64), (1, 60), (40, 3), (17, 23), (120, 90)]


def generate(seed: int, n_images: int = 14) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """COCO ground truth (RLE, some polygons, crowds as uncompressed RLE) and RLE results."""
    rng = np.random.default_rng(seed)
    images, anns, res = [], [], []
    cats = [1, 4]
    for i in range(n_images):
        h, w = SIZES[(i + seed) % len(SIZES)]
        images.append({"id": 10 + i, "height": h, "width": w, "file_name": f"{i}.jpg"})
        masks = []
        for _ in range(int(rng.integers(0, 6))):
            kind = int(rng.integers(0, 5))
            m = _shape(rng, h, w, kind)
            if not m.any():
                m[0, 0] = 1
            crowd = int(rng.random() < 0.15)
            seg: Any = _uncompressed(m) if crowd else _rle(m)
            if not crowd and kind == 1 and h > 2 and w > 2 and rng.random() < 0.5:
                ys, xs = np.nonzero(m)  # the rectangle as a polygon
                y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
                seg = [[float(x0), float(y0), float(x1), float(y0), float(x1), float(y1)]]
                seg[0] += [float(x0), float(y1)]
            cat = cats[int(rng.integers(0, 2))]
            ann = {"id": len(anns) + 1, "image_id": 10 + i, "category_id": cat, "iscrowd": crowd}
            ann["segmentation"] = seg
            rle = mask_utils.frPyObjects(seg, h, w) if isinstance(seg, list) else None
            area_mask = mask_utils.decode(mask_utils.merge(rle)) if rle is not None else m
            ys, xs = np.nonzero(area_mask)
            ann["area"] = float(area_mask.sum())
            ann["bbox"] = (
                [float(xs.min()), float(ys.min()), float(np.ptp(xs) + 1), float(np.ptp(ys) + 1)]
                if ys.size
                else [0.0, 0.0, 0.0, 0.0]
            )
            anns.append(ann)
            masks.append((area_mask, cat))
        for m, cat in masks:
            for _ in range(int(rng.integers(0, 3))):
                p = _jitter(rng, m)
                score = float(np.round(rng.uniform(0.05, 1.0), 2))  # ties happen
                res.append({"image_id": 10 + i, "category_id": cat, "score": score})
                res[-1]["segmentation"] = _rle(p)
        for _ in range(int(rng.integers(0, 3))):  # false positives
            p = _shape(rng, h, w, int(rng.integers(0, 5)))
            res.append({"image_id": 10 + i, "category_id": cats[int(rng.integers(0, 2))]})
            res[-1].update(score=float(rng.uniform(0, 1)), segmentation=_rle(p))
    categories = [{"id": c, "name": f"c{c}"} for c in cats]
    return {"images": images, "annotations": anns, "categories": categories}, res


# ----------------------------------------------------------------------------------- the tests
def test_boundary_is_a_registered_similarity_under_coco() -> None:
    assert "boundary" in similarity_names()
    assert similarity_input("boundary") == "segmentation"
    assert type(make_protocol("coco", iou_type="boundary")).__name__ == "BoundaryProtocol"


@pytest.fixture(scope="module")
def coco_fixture() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    import json

    gt = json.loads(GT_FILE.read_text())
    return gt, json.loads(SEGM_FILE.read_text())


@pytest.mark.parametrize("compat", ["faster_coco_eval", "ultrafast", None])
def test_coco_fixture_equals_the_reference(
    compat: str | None, coco_fixture: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    gt, res = coco_fixture
    ours = ioukit.evaluate(GT_FILE, SEGM_FILE, iou_type="boundary", compat=compat)
    compare(str(compat), ours, REFERENCES[compat](gt, res))


def test_coco_fixture_the_tools_differ_and_compat_says_whose() -> None:
    # faster-coco-eval and boundary-iou-api agree on this fixture (every image is 640 x 480
    # or so: no diagonal at k + 0.5), ultrafast-pycocotools' rounding differs on some images
    aps = {
        c: ioukit.evaluate(GT_FILE, SEGM_FILE, iou_type="boundary", compat=c).stats["AP"]
        for c in (None, "faster_coco_eval", "ultrafast")
    }
    assert aps[None] == aps["faster_coco_eval"]
    assert abs(aps["ultrafast"] - aps[None]) > 1e-5
    segm = ioukit.evaluate(GT_FILE, SEGM_FILE, iou_type="segm").stats["AP"]
    assert aps[None] < segm  # the boundary term only lowers the similarity


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("compat", [None, "faster_coco_eval", "ultrafast"])
def test_generated_sets_equal_the_reference(seed: int, compat: str | None) -> None:
    gt, res = generate(seed)
    assert any(a["iscrowd"] for a in gt["annotations"])
    ours = ioukit.evaluate(gt, res, iou_type="boundary", compat=compat)
    compare(str(compat), ours, REFERENCES[compat](gt, res))


@pytest.mark.parametrize("compat", [None, "faster_coco_eval", "ultrafast"])
def test_options_dilation_ratio_and_class_agnostic(compat: str | None) -> None:
    gt, res = generate(7)
    options = {"dilation_ratio": 0.05, "use_cats": False, "max_dets": [1, 5, 100]}
    ours = ioukit.evaluate(gt, res, iou_type="boundary", compat=compat, **options)
    assert ours.result.params["dilation_ratio"] == 0.05
    compare(str(compat), ours, REFERENCES[compat](gt, res, **options))


def test_the_three_roundings_differ_where_documented() -> None:
    # images of 105 x 140 (diagonal 175: d = 3.5) and 75 x 100 (d = 2.5) in the set
    gt, res = generate(0)
    gt_ds = read_coco_ground_truth(gt, keep_segmentation=True)
    pred = read_coco_results(res, gt_ds, iou_type="segm")
    groups = Groups.build(gt_ds, pred, use_cats=True, max_det=100)
    values = {
        c: BoundaryIoU(compat=c).matrices(gt_ds, pred, groups).values
        for c in (None, "faster_coco_eval", "ultrafast")
    }
    assert not np.array_equal(values[None], values["faster_coco_eval"])
    assert not np.array_equal(values[None], values["ultrafast"])


def test_dataset_route_equals_the_file_route() -> None:
    gt, res = generate(2)
    gt_ds = read_coco_ground_truth(gt, keep_segmentation=True)
    pred = read_coco_results(res, gt_ds, iou_type="segm")
    a = ioukit.evaluate(gt_ds, pred, iou_type="boundary")
    b = ioukit.evaluate(gt, res, iou_type="boundary")
    assert a.stats == b.stats
    assert np.array_equal(a.precision, b.precision)


def test_crowd_columns_keep_the_mask_iou() -> None:
    # a prediction inside a crowd region: IoA 1 although its boundary is nowhere near the
    # crowd's; the same region as a regular object: min(mask IoU 1/16, boundary IoU 0)
    m = np.zeros((50, 50), dtype=np.uint8)
    m[5:45, 5:45] = 1
    p = np.zeros_like(m)
    p[20:30, 20:30] = 1
    for crowd, want in ((1, 1.0), (0, 0.0)):
        gt = {
            "images": [{"id": 1, "height": 50, "width": 50}],
            "categories": [{"id": 1, "name": "a"}],
            "annotations": [
                {"id": 1, "image_id": 1, "category_id": 1, "iscrowd": crowd, "area": 1600.0,
                 "bbox": [5, 5, 40, 40], "segmentation": _uncompressed(m) if crowd else _rle(m)},
            ],
        }  # fmt: skip
        res = [{"image_id": 1, "category_id": 1, "score": 0.9, "segmentation": _rle(p)}]
        gt_ds = read_coco_ground_truth(gt, keep_segmentation=True)
        pred = read_coco_results(res, gt_ds, iou_type="segm")
        groups = Groups.build(gt_ds, pred, use_cats=True, max_det=100)
        matrix = BoundaryIoU().matrices(gt_ds, pred, groups).matrix(groups, 0)
        assert matrix.tolist() == [[want]]
        ref = run_boundary_api(gt, res)
        assert ref.ious[1, 1].tolist() == [[want]]
        r = ioukit.evaluate(gt, res, iou_type="boundary")
        assert np.array_equal(r.precision, ref.eval["precision"])


def test_errors_name_the_option_and_the_missing_masks() -> None:
    gt, res = generate(1)
    with pytest.raises(ParameterError, match=r"compat: expected None, 'pycocotools', "):
        ioukit.evaluate(gt, res, iou_type="boundary", compat="opencv")
    with pytest.raises(ParameterError, match=r"dilation_ratio: expected a finite number >= 0"):
        ioukit.evaluate(gt, res, iou_type="boundary", dilation_ratio=float("nan"))
    with pytest.raises(ParameterError, match="dilation_ratio"):
        ioukit.evaluate(gt, res, iou_type="segm", dilation_ratio=0.02)  # segm has no such option
    boxes_gt = read_coco_ground_truth(gt)  # without keep_segmentation
    pred = read_coco_results(res, boxes_gt, iou_type="segm")
    with pytest.raises(DataFormatError, match=r"ground_truth.segmentation: expected masks .*"):
        ioukit.evaluate(boxes_gt, pred, iou_type="boundary")
