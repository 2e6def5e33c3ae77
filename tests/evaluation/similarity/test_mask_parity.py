"""COCO segm evaluation: parity with pycocotools and faster-coco-eval (run side by side on
generated polygon / RLE datasets), the segm kernels against plain-Python twins, edge cases and
clear errors. A parity failure prints both stat vectors and their difference."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.dataset import Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.errors import DataFormatError
from ioukit.evaluation.protocols.coco import evaluate_coco
from ioukit.evaluation.similarity import mask as _segm
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.masks import RleStrings
from tests import coco_reference as reference
from tests.coco_reference import compare
from tests.kernels.test_match_kernels import patch_with_twins

pytest.importorskip("pycocotools")
from pycocotools import mask as mask_utils


# ------------------------------------------------------------------------------ generated data
def _blob(rng: np.random.Generator, h: int, w: int, cx: float, cy: float, r: float) -> np.ndarray:
    """A random blob: an ellipse with a jagged edge, clipped to the image."""
    yy, xx = np.mgrid[0:h, 0:w]
    angle = np.arctan2(yy - cy, xx - cx)
    wobble = 1 + 0.25 * np.sin(3 * angle + rng.uniform(0, 6)) * rng.uniform(0, 1)
    ax, ay = r * rng.uniform(0.6, 1.4), r * rng.uniform(0.6, 1.4)
    return (((xx - cx) / ax) ** 2 + ((yy - cy) / ay) ** 2) <= wobble**2


def _rle(mask: np.ndarray) -> dict[str, Any]:
    """Compressed RLE by pycocotools itself, counts as the str a JSON file holds."""
    enc = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    return {"size": [int(s) for s in enc["size"]], "counts": enc["counts"].decode("ascii")}


def _uncompressed(mask: np.ndarray) -> dict[str, Any]:
    """Uncompressed RLE (run lengths, column-major, starting with zeros): COCO crowd style."""
    flat = mask.T.reshape(-1).astype(np.int8)
    change = np.flatnonzero(np.diff(flat)) + 1
    bounds = np.r_[0, change, flat.size]
    runs = np.diff(bounds).tolist()
    if flat.size and flat[0] == 1:
        runs = [0, *runs]
    return {"size": list(mask.shape), "counts": runs}


def _polygon(rng: np.random.Generator, cx: float, cy: float, r: float) -> list[float]:
    k = int(rng.integers(3, 9))
    angles = np.sort(rng.uniform(0, 2 * np.pi, k))
    radii = r * rng.uniform(0.5, 1.3, k)
    return (
        np.round(np.c_[cx + radii * np.cos(angles), cy + radii * np.sin(angles)], 2)
        .ravel()
        .tolist()
    )


def generate(
    seed: int,
    *,
    n_images: int = 12,
    n_cats: int = 3,
    crowd: float = 0.1,
    polygons: float = 0.5,
    result_polygons: float = 0.0,
    result_bbox: bool = True,
    empty_masks: float = 0.0,
    score_levels: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A small COCO set with masks: GT polygons / RLE / crowd uncompressed RLE, RLE results."""
    rng = np.random.default_rng(seed)
    images, anns, res = [], [], []
    cat_ids = [1 + 3 * c for c in range(n_cats)]
    for i in range(n_images):
        image_id = 7 * i + 3
        big = rng.random() < 0.3
        h, w = (
            (int(rng.integers(150, 200)), int(rng.integers(150, 200)))
            if big
            else (
                int(rng.integers(40, 130)),
                int(rng.integers(40, 130)),
            )
        )
        images.append({"id": image_id, "file_name": f"{image_id}.jpg", "height": h, "width": w})
        objects: list[tuple[Any, Any, float, float, float, int]] = []
        for _ in range(int(rng.integers(0, 6))):
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            sizes = [rng.uniform(1.5, 3.0), rng.uniform(3, 8), rng.uniform(8, 30)]
            r = float(rng.choice([*sizes, rng.uniform(55, 75)] if big else sizes))
            c = int(rng.choice(cat_ids))
            is_crowd = bool(rng.random() < crowd)
            polys, mask = None, None
            if rng.random() < polygons and not is_crowd:
                polys = [_polygon(rng, cx, cy, r)]
                if rng.random() < 0.2:
                    polys.append(_polygon(rng, cx + r, cy, r / 2))
                seg: Any = polys
                coded = mask_utils.merge(mask_utils.frPyObjects(polys, h, w))
            else:
                mask = _blob(rng, h, w, cx, cy, r)
                if rng.random() < empty_masks:
                    mask[:] = False
                seg = _uncompressed(mask) if is_crowd else _rle(mask)
                coded = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
            area = float(mask_utils.area(coded))
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": image_id,
                    "category_id": c,
                    "segmentation": seg,
                    "area": area * float(rng.uniform(0.8, 1.2)) if rng.random() < 0.3 else area,
                    "bbox": [float(v) for v in mask_utils.toBbox(coded)],
                    "iscrowd": int(is_crowd),
                }
            )
            objects.append((polys, mask, cx, cy, r, c))
        dets: list[tuple[Any, Any, float, float, float, int]] = []
        for polys, mask, cx, cy, r, c in objects:  # detections close to the objects
            for _ in range(int(rng.integers(0, 3))):
                if polys is not None:
                    jitter = max(r / 8, 0.3)
                    moved = [(np.array(p) + rng.normal(0, jitter, len(p))).tolist() for p in polys]
                    dets.append((moved, None, cx, cy, r, c))
                else:
                    step = 1 if r < 8 else 3
                    shift = (int(rng.integers(-step, step + 1)), int(rng.integers(-step, step + 1)))
                    dets.append((None, np.roll(mask, shift, axis=(0, 1)), cx, cy, r, c))
        for _ in range(int(rng.integers(0, 4))):  # false positives
            cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(2, 20)
            dets.append((None, _blob(rng, h, w, cx, cy, r), cx, cy, r, 0))
        for polys, mask, cx, cy, r, c in dets:
            label = c if c and rng.random() < 0.9 else int(rng.choice(cat_ids))
            s = float(rng.random())
            score = float(np.ceil(s * score_levels) / score_levels) if score_levels else s
            record: dict[str, Any] = {
                "image_id": image_id,
                "category_id": label,
                "score": round(score, 6),
            }
            as_polygons = rng.random() < result_polygons
            if polys is None and as_polygons:
                polys = [_polygon(rng, cx, cy, r * rng.uniform(0.8, 1.2))]
            if polys is not None:
                coded = mask_utils.merge(mask_utils.frPyObjects(polys, h, w))
                if as_polygons:
                    record["segmentation"] = polys
                else:
                    record["segmentation"] = {
                        "size": [h, w],
                        "counts": coded["counts"].decode("ascii"),
                    }
            else:
                if rng.random() < empty_masks:
                    mask = np.zeros_like(mask)
                record["segmentation"] = _rle(mask)
                coded = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
            if result_bbox:
                record["bbox"] = [round(float(v), 2) for v in mask_utils.toBbox(coded)]
            res.append(record)
    rng.shuffle(res)  # type: ignore[arg-type]
    cats = [{"id": c, "name": f"c{c}"} for c in cat_ids]
    return {"images": images, "annotations": anns, "categories": cats}, res


# ------------------------------------------------------------------------------ reference runs
def run_pycocotools(gt: dict[str, Any], res: list[dict[str, Any]], options: dict[str, Any]) -> Any:
    return reference.run_pycocotools(gt, res, options, "segm")


def run_faster_coco_eval(
    gt: dict[str, Any], res: list[dict[str, Any]], options: dict[str, Any]
) -> Any:
    return reference.run_faster_coco_eval(gt, res, options, "segm")


CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("rle_and_polygons", {"n_images": 40}, {}),
    ("crowds", {"n_images": 30, "crowd": 0.35}, {}),
    ("polygon_results", {"n_images": 25, "result_polygons": 0.6}, {}),
    ("results_without_bbox", {"n_images": 30, "result_bbox": False}, {}),
    ("empty_masks", {"n_images": 25, "empty_masks": 0.3}, {}),
    ("ties_use_cats_false", {"n_images": 25, "score_levels": 3}, {"use_cats": False}),
    ("custom", {"n_images": 25}, {"iou_thresholds": [0.3, 0.6], "max_dets": [1, 3, 100]}),
]


@pytest.mark.parametrize(("name", "shape", "options"), CASES, ids=[c[0] for c in CASES])
def test_segm_parity_with_pycocotools_and_faster_coco_eval(
    name: str, shape: dict[str, Any], options: dict[str, Any]
) -> None:
    gt, res = generate(len(name) + 100, **shape)
    if shape.get("result_polygons") and not shape.get("result_bbox", True):
        pytest.skip("pycocotools cannot compute the area of polygon results without a bbox")
    gt_before, res_before = copy.deepcopy(gt), copy.deepcopy(res)
    ours = evaluate(gt, res, iou_type="segm", **options)
    assert gt == gt_before and res == res_before  # inputs untouched
    compare("pycocotools", ours, run_pycocotools(gt, res, options))
    compat = evaluate(gt, res, iou_type="segm", compat="pycocotools", **options)
    compare("pycocotools", compat, run_pycocotools(gt, res, options))
    compare("faster-coco-eval", ours, run_faster_coco_eval(gt, res, options))


FILE_CASES = [c for c in CASES if not c[1].get("result_polygons")]


def _files(tmp_path: Path, gt: dict[str, Any], res: list[dict[str, Any]]) -> tuple[Path, Path]:
    gt_file, res_file = tmp_path / "gt.json", tmp_path / "results.json"
    gt_file.write_text(json.dumps(gt))
    res_file.write_text(json.dumps(res))
    return gt_file, res_file


@pytest.mark.parametrize(("name", "shape", "options"), FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_segm_parity_from_files(
    tmp_path: Path, name: str, shape: dict[str, Any], options: dict[str, Any]
) -> None:
    # a results file of compressed RLE: the scanner keeps the strings flat (no dict per mask)
    # and the IoU kernel reads them in place
    gt, res = generate(len(name) + 200, **shape)
    gt_file, res_file = _files(tmp_path, gt, res)
    flat = read_coco_results(res_file, read_coco_ground_truth(gt_file), iou_type="segm")
    assert isinstance(flat.segmentation, RleStrings)
    ours = evaluate(gt_file, res_file, iou_type="segm", **options)
    compare("pycocotools", ours, run_pycocotools(gt, res, options))


def test_segm_differs_from_bbox_and_uses_mask_iou() -> None:
    gt, res = generate(3, n_images=8)
    segm = evaluate(gt, res, iou_type="segm")
    bbox = evaluate(gt, res)
    assert segm.stats["AP"] != bbox.stats["AP"]
    assert segm.result.params["iou_type"] == "segm"


# ------------------------------------------------------------------------------ kernel twins
def _dense(starts: np.ndarray, ends: np.ndarray, o: np.ndarray, i: int, n: int) -> np.ndarray:
    flat = np.zeros(n, dtype=bool)
    for s, e in zip(starts[o[i] : o[i + 1]], ends[o[i] : o[i + 1]], strict=True):
        flat[s:e] = True
    return flat


def group_mask_iou_twin(*args: Any) -> None:
    """Plain-Python twin of kernels.group_mask_iou: dense masks rebuilt from the intervals."""
    (g_start, g_end, p_start, p_count, _heights, ps, pe, po, _pb, _pa) = args[:10]
    (gs, ge, go, _gb, _ga, crowd, iou_offsets, out) = args[10:]
    for k in range(len(g_start)):
        n_p, n_g = int(p_count[k]), int(g_end[k] - g_start[k])
        if n_p == 0 or n_g == 0:
            continue
        n = int(max(ends.max(initial=0) for ends in (pe, ge)) + 1)
        block = out[iou_offsets[k] : iou_offsets[k] + n_p * n_g].reshape(n_p, n_g)
        for d in range(n_p):
            a = _dense(ps, pe, po, p_start[k] + d, n)
            for j in range(n_g):
                g = g_start[k] + j
                b = _dense(gs, ge, go, g, n)
                inter = float(np.sum(a & b))
                union = float(a.sum()) if crowd[g] else float(np.sum(a | b))
                block[d, j] = inter / union if inter > 0 else 0.0


def test_segm_kernels_equal_twins(monkeypatch: pytest.MonkeyPatch) -> None:
    gt, res = generate(11, n_images=6, crowd=0.3, empty_masks=0.1)
    gt_ds = read_coco_ground_truth(gt, keep_segmentation=True)
    pred_ds = read_coco_results(res, gt_ds, iou_type="segm")
    options: dict[str, Any] = {"iou_type": "segm", "max_dets": [1, 2, 4]}
    fast = evaluate_coco(gt_ds, pred_ds, **options)
    from ioukit.evaluation.similarity import mask as _segm

    compiled = _segm._rle_kernel
    monkeypatch.setattr(
        _segm,
        "_rle_kernel",
        lambda name: group_mask_iou_twin if name == "group_mask_iou" else compiled(name),
    )
    patch_with_twins(monkeypatch)
    slow = evaluate_coco(gt_ds, pred_ds, **options)
    assert fast.stats == slow.stats
    for key in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(fast.arrays[key], slow.arrays[key])


def group_rle_iou_twin(*args: Any) -> int:
    """Plain-Python twin of kernels.group_rle_iou: each prediction decoded by pycocotools'
    own ``decode`` (column-major), each ground truth rebuilt from its intervals."""
    (segs, p_kept, _image_h, _image_w, g_start, g_end, p_start, p_count, _sizes) = args[:9]
    (gs, ge, go, _gb, _ga, crowd, iou_offsets, out) = args[9:]
    for k in range(len(g_start)):
        n_p, n_g = int(p_count[k]), int(g_end[k] - g_start[k])
        if n_p == 0 or n_g == 0:
            continue
        block = out[iou_offsets[k] : iou_offsets[k] + n_p * n_g].reshape(n_p, n_g)
        for d in range(n_p):
            seg = segs[p_kept[p_start[k] + d]]
            counts = seg["counts"]
            rle = {
                "size": seg["size"],
                "counts": counts.encode() if isinstance(counts, str) else counts,
            }
            a = mask_utils.decode(rle).T.reshape(-1).astype(bool)
            for j in range(n_g):
                g = g_start[k] + j
                b = _dense(gs, ge, go, g, a.size)
                inter = float(np.sum(a & b))
                union = float(a.sum()) if crowd[g] else float(np.sum(a | b))
                block[d, j] = inter / union if inter > 0 else 0.0
    return -1


def group_rle_strings_iou_twin(
    counts: np.ndarray,
    byte_offsets: np.ndarray,
    mask_h: np.ndarray,
    mask_w: np.ndarray,
    *args: Any,
) -> int:
    """Plain-Python twin of kernels.group_rle_strings_iou: the strings cut out of the buffer
    as dicts, then :func:`group_rle_iou_twin`."""
    segs = [
        {"size": [int(mask_h[r]), int(mask_w[r])],
         "counts": counts[byte_offsets[r] : byte_offsets[r + 1]].tobytes()}
        for r in range(len(mask_h))
    ]  # fmt: skip
    return group_rle_iou_twin(segs, *args)


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # pycocotools
@pytest.mark.parametrize(
    ("source", "name", "twin"),
    [("dicts", "group_rle_iou", group_rle_iou_twin),
     ("file", "group_rle_strings_iou", group_rle_strings_iou_twin)],
)  # fmt: skip
def test_plain_rle_kernels_equal_twins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, name: str, twin: Any
) -> None:
    # RLE-string results (the common case) take group_rle_iou (dicts in memory) or
    # group_rle_strings_iou (a file's strings, kept flat): compare each with its twin
    gt, res = generate(12, n_images=6, crowd=0.3, empty_masks=0.1)
    if source == "file":
        gt_file, res_file = _files(tmp_path, gt, res)
        gt_ds = read_coco_ground_truth(gt_file, keep_segmentation=True)
        pred_ds = read_coco_results(res_file, gt_ds, iou_type="segm")
        assert isinstance(pred_ds.segmentation, RleStrings)
    else:
        gt_ds = read_coco_ground_truth(gt, keep_segmentation=True)
        pred_ds = read_coco_results(res, gt_ds, iou_type="segm")
    options: dict[str, Any] = {"iou_type": "segm", "max_dets": [1, 2, 4]}
    fast = evaluate_coco(gt_ds, pred_ds, **options)
    compiled = _segm._rle_kernel
    calls: list[str] = []

    def kernel(called: str) -> Any:
        calls.append(called)
        return twin if called == name else compiled(called)

    monkeypatch.setattr(_segm, "_rle_kernel", kernel)
    slow = evaluate_coco(gt_ds, pred_ds, **options)
    assert calls == [name]  # the plain path ran (and not the general one)
    assert fast.stats == slow.stats
    for key in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(fast.arrays[key], slow.arrays[key])


# ------------------------------------------------------------------------------ reader, errors
def _tiny() -> tuple[dict[str, Any], dict[str, Any]]:
    mask = np.zeros((6, 8), dtype=bool)
    mask[1:4, 2:6] = True
    rle = _rle(mask)
    gt = {
        "images": [{"id": 1, "height": 6, "width": 8}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "segmentation": rle,
                "area": 12.0,
                "bbox": [2, 1, 4, 3],
                "iscrowd": 0,
            }
        ],
    }
    return gt, rle


def test_results_without_segmentation_name_the_record() -> None:
    gt, rle = _tiny()
    res = [
        {"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 2, 2], "score": 0.5},
    ]
    with pytest.raises(DataFormatError, match=r"results\[1\]\.segmentation: missing"):
        evaluate(gt, res, iou_type="segm")
    res[1]["segmentation"] = "oops"
    with pytest.raises(DataFormatError, match=r"results\[1\]\.segmentation: expected"):
        evaluate(gt, res, iou_type="segm")


def test_segm_needs_masks_on_datasets() -> None:
    gt, rle = _tiny()
    gt_ds = read_coco_ground_truth(gt)  # masks not kept
    pred_ds = read_coco_results(
        [{"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9}],
        gt_ds,
        iou_type="segm",
    )
    with pytest.raises(DataFormatError, match=r"ground_truth\.segmentation"):
        evaluate_coco(gt_ds, pred_ds, iou_type="segm")


def test_mask_of_the_wrong_size_is_an_error() -> None:
    gt, rle = _tiny()
    other = _rle(np.ones((5, 8), dtype=bool))
    res = [
        {"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9},
        {"image_id": 1, "category_id": 1, "segmentation": other, "score": 0.5},
    ]
    with pytest.raises(DataFormatError, match=r"results\[1\]\.segmentation.*\[6, 8\]"):
        evaluate(gt, res, iou_type="segm")


def test_loadres_area_and_box_rules() -> None:
    gt, rle = _tiny()
    gt_ds = read_coco_ground_truth(gt, keep_segmentation=True)
    # no bbox in the first record: mask area and toBbox, as loadRes' segm branch
    pred = read_coco_results(
        [{"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9}],
        gt_ds,
        iou_type="segm",
    )
    assert pred.area.tolist() == [12.0]
    assert pred.boxes.tolist() == [[2.0, 1.0, 6.0, 4.0]]
    # a bbox in the first record: every area is w * h of the box (loadRes' bbox branch)
    pred = read_coco_results(
        [{"image_id": 1, "category_id": 1, "segmentation": rle, "bbox": [0, 0, 5, 5], "score": 1}],
        gt_ds,
        iou_type="segm",
    )
    assert pred.area.tolist() == [25.0]


def test_empty_masks_and_no_predictions() -> None:
    gt, _ = _tiny()
    empty = _rle(np.zeros((6, 8), dtype=bool))
    res = [{"image_id": 1, "category_id": 1, "segmentation": empty, "score": 0.9}]
    r = evaluate(gt, res, iou_type="segm")
    ref = run_pycocotools(gt, res, {})
    compare("pycocotools", r, ref)
    assert r.stats["AP"] == 0.0
    assert evaluate(gt, [], iou_type="segm").stats["AP"] == 0.0


def test_segm_needs_the_coco_protocol() -> None:
    gt, rle = _tiny()
    res = [{"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9}]
    with pytest.raises(ValueError, match="protocol"):
        evaluate(gt, res, iou_type="segm", protocol="voc07")
    with pytest.raises(ValueError, match="iou_type"):
        evaluate(gt, res, iou_type="obb")


def test_cli_eval_segm(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from ioukit.cli import main

    gt, res = generate(5, n_images=6)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(res))
    args = ["eval", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "res.json")]
    assert main([*args, "--iou-type", "segm", "--quiet", "--json", str(tmp_path / "r.json")]) == 0
    want = evaluate(gt, res, iou_type="segm").stats["AP"]
    assert json.loads((tmp_path / "r.json").read_text())["stats"]["AP"] == pytest.approx(want)
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    bad = ["eval", "--gt", str(tmp_path / "labels"), "--pred", str(tmp_path / "labels")]
    assert main([*bad, "--iou-type", "segm", "--quiet"]) == 2
    assert "expected COCO JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("seg", "message"),
    [
        ({"size": [6, 8], "counts": "1!2"}, r"results\[1\]\.segmentation\[0\]\.counts: expected a "
         r"compressed RLE string \(characters '0' to 'o', last one below 'P'\), got b'1!2'"),
        ({"size": [6, 8], "counts": "0`"}, r"results\[1\]\.segmentation\[0\]\.counts: expected a "
         r"compressed RLE string"),
        ({"size": [6, 8], "counts": "05"}, r"results\[1\]\.segmentation\[0\]\.counts: expected run "
         r"lengths summing to height \* width = 6 \* 8 = 48, got 5"),
        ({"size": [6, 8], "counts": "0;Q"}, r"results\[1\]\.segmentation\[0\]\.counts: expected a "
         r"compressed RLE string"),
        ({"size": [6, 8], "counts": "0\u00e9"},
         r"results\[1\]\.segmentation\[0\]\.counts: expected a compressed RLE string "
         r"\(characters '0' to 'o'\), got '0\u00e9'"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("category", [1, 2])
def test_bad_rle_string_in_results_is_named(
    seg: dict[str, Any], message: str, category: int
) -> None:
    # every result has a bbox, so the reader does not decode the masks: the evaluation does,
    # by the compiled plain-RLE path, and a string it refuses is worded by the general path;
    # category 2 has no ground truth (the kernel fills no block there, but checks the string)
    gt, rle = _tiny()
    gt["categories"].append({"id": 2, "name": "b"})
    res = [
        {"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9, "bbox": [0, 0, 2, 2]},
        {"image_id": 1, "category_id": category, "segmentation": seg, "score": 0.5,
         "bbox": [0, 0, 1, 1]},
    ]  # fmt: skip
    with pytest.raises(DataFormatError, match=message):
        evaluate(gt, res, iou_type="segm")


@pytest.mark.parametrize("category", [1, 2])
def test_bad_rle_string_in_a_results_file_gets_the_same_message(
    tmp_path: Path, category: int
) -> None:
    # the scanner's flat strings: the kernel refuses the string, the general path words it
    gt, rle = _tiny()
    gt["categories"].append({"id": 2, "name": "b"})
    for seg in ({"size": [6, 8], "counts": "1!2"}, {"size": [6, 8], "counts": "05"},
                {"size": [6, 8], "counts": "0\u00e9"}):  # fmt: skip
        res = [
            {"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9,
             "bbox": [0, 0, 2, 2]},
            {"image_id": 1, "category_id": category, "segmentation": seg, "score": 0.5,
             "bbox": [0, 0, 1, 1]},
        ]  # fmt: skip
        gt_file, res_file = _files(tmp_path, gt, res)
        with pytest.raises(DataFormatError) as in_memory:
            evaluate(gt, res, iou_type="segm")
        with pytest.raises(DataFormatError) as from_file:
            evaluate(gt_file, res_file, iou_type="segm")
        assert str(from_file.value) == str(in_memory.value)


def test_plain_rle_variants_evaluate_alike() -> None:
    # bytes counts, a tuple size and a dict subclass are read as the plain str/list form
    gt, rle = _tiny()

    class Seg(dict):  # type: ignore[type-arg]
        pass

    def run(seg: Any) -> list[float]:
        res = [
            {
                "image_id": 1,
                "category_id": 1,
                "segmentation": rle,
                "score": 0.9,
                "bbox": [0, 0, 2, 2],
            },
            {
                "image_id": 1,
                "category_id": 1,
                "segmentation": seg,
                "score": 0.5,
                "bbox": [0, 0, 1, 1],
            },
        ]
        return list(evaluate(gt, res, iou_type="segm").stats.values())

    plain = run(dict(rle))
    assert run({"size": rle["size"], "counts": rle["counts"].encode()}) == plain
    assert run({"size": tuple(rle["size"]), "counts": rle["counts"]}) == plain
    assert run(Seg(rle)) == plain
    assert run({"counts": rle["counts"], "size": rle["size"]}) == plain


def test_masks_of_differing_sizes_on_an_image_without_size() -> None:
    gt, _ = _tiny()
    gt["images"].append({"id": 2})
    five, four = _rle(np.ones((5, 8), dtype=bool)), _rle(np.ones((4, 8), dtype=bool))
    gt["annotations"].append(dict(gt["annotations"][0], id=2, image_id=2, segmentation=five))
    res = [
        {"image_id": 2, "category_id": 1, "segmentation": five, "score": 0.9, "bbox": [0, 0, 2, 2]},
        {"image_id": 2, "category_id": 1, "segmentation": four, "score": 0.5, "bbox": [0, 0, 1, 1]},
    ]
    with pytest.raises(
        DataFormatError,
        match=r"results\[1\]\.segmentation\.size: expected the size of the other masks of its "
        r"image, \[5, 8\], got \[4, 8\]",
    ):
        evaluate(gt, res, iou_type="segm")


def _polygon_gt(segmentations: list[Any]) -> Any:
    """A ground-truth Dataset of these segmentations on images of two sizes (and one image
    of unknown size), read without the reader's polygon checks."""
    n = len(segmentations)
    images = ImageTable.from_lists([1, 2, 3], ["a", "b", "c"], [20, 31, np.nan], [30, 17, np.nan])
    gt = read_coco_ground_truth(
        {"images": [{"id": 1, "height": 1, "width": 1}], "annotations": [],
         "categories": [{"id": 1, "name": "a"}]}
    )  # fmt: skip
    return Dataset(
        images=images,
        categories=gt.categories,
        boxes=np.zeros((n, 4)),
        image_index=np.arange(n, dtype=np.int64) % 2,
        category_id=np.ones(n, dtype=np.int64),
        area=np.ones(n),
        crowd=np.zeros(n, dtype=bool),
        ignore=np.zeros(n, dtype=bool),
        difficult=np.zeros(n, dtype=bool),
        annotation_id=np.arange(1, n + 1, dtype=np.int64),
        scores=None,
        segmentation=tuple(segmentations),
    )


SINGLE_POLYGONS = [
    [[1.5, 2.25, 20.0, 3.0, 12.5, 18.75]],
    [[1, 2, 25, 3, 12, 15]],  # ints
    [[0.5, 0.5, 29.0, 0.5, 29.0, 19.5, 0.5, 19.5]],
    [[]],  # no coordinate
    [[2, 2, 9, 2, 9, 9], [12, 12, 20, 12, 15, 18]],  # two polygons: the one-by-one path
    [[np.float64(1.0), 2.0, 9.0, 2.0, 5.0, 9.0]],  # a NumPy scalar: the per-size path
    [[True, 2.0, 9.0, 2.0, 5.0, 9.0]],  # a bool
    [[-15.0, -15.0, 33.0, -15.0, 33.0, 33.0]],  # off the image, within reach
    [[3.0, 1.0, 3.4, 19.0, 3.1, 10.0]],  # steep edges
]


def test_single_polygons_read_by_the_kernel_equal_the_per_size_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GT polygons of one ring of plain numbers are read from their lists by the kernel and
    rasterised in one call, each on its image's size, straight into intervals
    (``polygons_intervals``; only single polygons, and mixed with other masks): the same
    intervals, boxes and areas as the per-size ``masks.polygon_runs`` path."""
    for segmentations in (SINGLE_POLYGONS, [SINGLE_POLYGONS[i] for i in (0, 1, 2, 7, 8)]):
        gt = _polygon_gt(segmentations)
        rows = np.arange(len(segmentations), dtype=np.int64)
        ours = _segm._mask_runs(gt, rows, "annotations")
        with monkeypatch.context() as m:
            m.setattr(_segm, "_single_polygon_coords", lambda _s, _r, ks, _h, _w: (ks[:0], None))
            m.setattr(_segm, "_single_polygon_runs", lambda _s, _r, ks, _h, _w: (ks[:0], None))
            general = _segm._mask_runs(gt, rows, "annotations")
        for a, b in zip(ours, general, strict=True):
            np.testing.assert_array_equal(a, b)
    gt = _polygon_gt(SINGLE_POLYGONS)
    ours = _segm._mask_runs(gt, np.arange(len(SINGLE_POLYGONS), dtype=np.int64), "annotations")
    for i in (0, 1, 2, 7, 8):  # and pycocotools' areas
        h, w = int(gt.images.heights[i % 2]), int(gt.images.widths[i % 2])
        want = mask_utils.merge(mask_utils.frPyObjects(SINGLE_POLYGONS[i], h, w))
        assert int(mask_utils.area(want)) == int(ours[4][i])


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            [[1.0, 2.0, float("nan"), 3.0, 4.0, 5.0]],
            r"annotations\[0\]\.segmentation: segmentation\[0\]: expected finite",
        ),
        (
            [[1.0, 2.0, 95.0, 3.0, 4.0, 5.0]],
            r"annotations\[0\]\.segmentation: segmentation\[0\]: expected coordinates near",
        ),
    ],
)
def test_a_bad_single_polygon_is_worded_by_the_per_size_path(bad: Any, message: str) -> None:
    gt = _polygon_gt([bad, *SINGLE_POLYGONS[:2]])
    with pytest.raises(DataFormatError, match=message):
        _segm._mask_runs(gt, np.arange(3, dtype=np.int64), "annotations")
