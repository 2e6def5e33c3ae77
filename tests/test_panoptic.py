"""Panoptic quality side by side with panopticapi (pq_compute) and torchmetrics (PanopticQuality).

The COCO panoptic data sets are generated here (seeded) into ``tmp_path``: stuff bands, thing
ellipses (some crowd), VOID rectangles, and predictions that shift, drop, relabel, merge and
add segments, so every branch of panopticapi's matching (IoU on both sides of 0.5, void and
crowd absorbing false positives, unmatched segments, stuff-only and thing-only images) is hit.
The published torchmetrics vectors are in ``tests/data/panoptic/torchmetrics_vectors.json``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.errors import DataFormatError, MaskError, MissingDependencyError, ParameterError
from ioukit.panoptic import PanopticResult, panoptic_quality, panoptic_quality_maps

pytest.importorskip("PIL")
from PIL import Image

HAVE_PYSPNG = importlib.util.find_spec("pyspng") is not None
# each PNG decoder: Pillow, and pyspng (the panoptic extra and CI's panopticapi lane have it)
DECODERS = [
    "pillow",
    pytest.param("pyspng", marks=pytest.mark.skipif(not HAVE_PYSPNG, reason="no pyspng")),
]

DATA = Path(__file__).parent / "data" / "panoptic"
THINGS = (1, 2, 3)
STUFF = (10, 11, 12)
UNUSED = 20  # a stuff category that never appears: per_class 0.0, not in n
TOL = 1e-12


# ---- generated COCO panoptic data sets ----------------------------------------------------


def encode(ids: np.ndarray) -> np.ndarray:
    """(H, W) ids -> (H, W, 3) uint8, written out independently of ioukit's id_to_rgb."""
    ids = ids.astype(np.int64)
    return np.stack([ids % 256, ids // 256 % 256, ids // 65536], axis=-1).astype(np.uint8)


def ellipse(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    cy, cx = rng.uniform(0, h), rng.uniform(0, w)
    ry, rx = rng.uniform(2, h / 2.5), rng.uniform(2, w / 2.5)
    return ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1


def rectangle(h: int, w: int, rng: np.random.Generator, scale: float = 0.3) -> np.ndarray:
    m = np.zeros((h, w), dtype=bool)
    y0, x0 = rng.integers(0, h), rng.integers(0, w)
    m[
        y0 : y0 + rng.integers(1, max(2, int(h * scale))),
        x0 : x0 + rng.integers(1, max(2, int(w * scale))),
    ] = True
    return m


def shifted(mask: np.ndarray, dy: int, dx: int) -> np.ndarray:
    out = np.zeros_like(mask)
    h, w = mask.shape
    ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
    xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
    out[yd, xd] = mask[ys, xs]
    return out


class Ids:
    """Distinct random segment ids in [1, 256^3)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self.used = rng, {0}

    def new(self) -> int:
        while True:
            v = int(self.rng.integers(1, 256**3))
            if v not in self.used:
                self.used.add(v)
                return v


def gt_image(
    h: int, w: int, kind: str, rng: np.random.Generator, ids: Ids
) -> tuple[np.ndarray, dict[int, tuple[int, int]]]:
    """(H, W) id map and {id: (category, iscrowd)}."""
    seg: dict[int, tuple[int, int]] = {}
    pan = np.zeros((h, w), dtype=np.int64)
    if kind != "things":
        cuts = np.sort(rng.integers(0, h, rng.integers(0, 3)))
        band = np.searchsorted(cuts, np.arange(h), side="right")
        for b in np.unique(band):
            sid = ids.new()
            seg[sid] = (int(rng.choice(STUFF)), 0)
            pan[band == b] = sid
    if kind != "stuff":
        for _ in range(rng.integers(1, 8)):
            sid = ids.new()
            seg[sid] = (int(rng.choice(THINGS)), int(rng.random() < 0.2))
            pan[ellipse(h, w, rng)] = sid
    for _ in range(rng.integers(0, 3)):
        pan[rectangle(h, w, rng)] = 0  # VOID
    present = set(np.unique(pan).tolist())
    return pan, {k: v for k, v in seg.items() if k in present}


def pred_image(
    gt: np.ndarray, gt_seg: dict[int, tuple[int, int]], rng: np.random.Generator, ids: Ids
) -> tuple[np.ndarray, dict[int, int]]:
    """(H, W) predicted id map and {id: category} perturbed from the ground truth."""
    h, w = gt.shape
    pan = np.zeros_like(gt)
    seg: dict[int, int] = {}
    merged: int | None = None
    for sid, (cat, _) in sorted(gt_seg.items(), key=lambda kv: STUFF.count(kv[1][0]) == 0):
        r = rng.random()
        if r < 0.1:
            continue  # dropped: an FN (or ignored crowd)
        mask = gt == sid
        if cat in THINGS:
            mask = shifted(mask, int(rng.integers(-4, 5)), int(rng.integers(-4, 5)))
        if r < 0.2 and merged is not None:
            pan[mask] = merged  # two ground-truth segments in one prediction
            continue
        pid = ids.new()
        seg[pid] = cat if rng.random() < 0.85 else int(rng.choice(THINGS + STUFF))
        pan[mask] = pid
        merged = pid
    for _ in range(rng.integers(0, 4)):  # spurious predictions, some on VOID or crowd
        pid = ids.new()
        seg[pid] = int(rng.choice(THINGS + STUFF))
        pan[ellipse(h, w, rng) if rng.random() < 0.5 else rectangle(h, w, rng)] = pid
    if rng.random() < 0.5:
        pan[rectangle(h, w, rng)] = 0  # predicted VOID
    present = set(np.unique(pan).tolist())
    return pan, {k: v for k, v in seg.items() if k in present}


def write_dataset(
    root: Path, seed: int, kinds: list[str], size: tuple[int, int] = (40, 56)
) -> tuple[Path, Path]:
    """gt.json + gt/, pred.json + pred/ under ``root``; returns the two JSON paths."""
    rng = np.random.default_rng(seed)
    ids = Ids(rng)
    (root / "gt").mkdir(parents=True)
    (root / "pred").mkdir()
    images, gt_anns, pred_anns = [], [], []
    for i, kind in enumerate(kinds):
        h, w = size if i % 3 else (size[0] + 7, size[1] - 5)
        image_id = 100 + i
        name = f"{image_id:06d}.png"
        gt, gt_seg = gt_image(h, w, kind, rng, ids)
        if kind == "empty_pred":
            pred, pred_seg = np.zeros_like(gt), {}
        else:
            pred, pred_seg = pred_image(gt, gt_seg, rng, ids)
        Image.fromarray(encode(gt)).save(root / "gt" / name)
        Image.fromarray(encode(pred)).save(root / "pred" / name)
        images.append(
            {"id": image_id, "file_name": name.replace("png", "jpg"), "width": w, "height": h}
        )
        infos = [
            {
                "id": sid,
                "category_id": c,
                "iscrowd": crowd,
                "area": int((gt == sid).sum()),
                "bbox": [0, 0, 1, 1],
            }
            for sid, (c, crowd) in gt_seg.items()
        ]
        rng.shuffle(infos)  # panopticapi's "last crowd of the category" follows the file order
        gt_anns.append({"image_id": image_id, "file_name": name, "segments_info": infos})
        pred_infos = [{"id": sid, "category_id": c} for sid, c in pred_seg.items()]
        pred_anns.append({"image_id": image_id, "file_name": name, "segments_info": pred_infos})
    categories = [{"id": c, "name": f"thing{c}", "isthing": 1} for c in THINGS]
    categories += [{"id": c, "name": f"stuff{c}", "isthing": 0} for c in (*STUFF, UNUSED)]
    rng.shuffle(categories)
    gt_json, pred_json = root / "gt.json", root / "pred.json"
    gt_json.write_text(
        json.dumps({"images": images, "annotations": gt_anns, "categories": categories})
    )
    rng.shuffle(pred_anns)
    pred_json.write_text(json.dumps({"annotations": pred_anns}))
    return gt_json, pred_json


KINDS = [
    "mixed",
    "mixed",
    "stuff",
    "things",
    "mixed",
    "empty_pred",
    "mixed",
    "things",
    "stuff",
    "mixed",
]


# ---- the references -----------------------------------------------------------------------


def panopticapi_pq(
    gt_json: Path, pred_json: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """panopticapi's pq_compute, its worker pool replaced by its single-core function."""
    evaluation = pytest.importorskip("panopticapi.evaluation")

    def single(
        matched: list[Any], gt_folder: str, pred_folder: str, categories: dict[int, Any]
    ) -> Any:
        return evaluation.pq_compute_single_core(0, matched, gt_folder, pred_folder, categories)

    monkeypatch.setattr(evaluation, "pq_compute_multi_core", single)
    with contextlib.redirect_stdout(io.StringIO()):
        return evaluation.pq_compute(
            str(gt_json), str(pred_json), str(gt_json)[:-5], str(pred_json)[:-5]
        )  # type: ignore[no-any-return]


def assert_same(ours: PanopticResult, ref: dict[str, Any]) -> None:
    for name in ("All", "Things", "Stuff"):
        assert ours[name]["n"] == ref[name]["n"], name
        for key in ("pq", "sq", "rq"):
            assert abs(ours[name][key] - ref[name][key]) <= TOL, (name, key, ours[name], ref[name])
    assert set(ours["per_class"]) == set(ref["per_class"])
    for cat, values in ref["per_class"].items():
        for key in ("pq", "sq", "rq"):
            assert abs(ours["per_class"][cat][key] - values[key]) <= TOL, (cat, key)


# ---- COCO panoptic files vs panopticapi ---------------------------------------------------


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_files_equal_panopticapi(
    tmp_path: Path, seed: int, decoder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gt_json, pred_json = write_dataset(tmp_path, seed, KINDS)
    ref = panopticapi_pq(gt_json, pred_json, monkeypatch)
    ours = panoptic_quality(gt_json, pred_json, workers=1, decoder=decoder)
    assert_same(ours, ref)
    again = panoptic_quality(gt_json, pred_json, workers=3, decoder=decoder)
    assert ours.to_dict() == again.to_dict()
    # without Pillow's Arrow export (Pillow < 11.2) the pixels are counted from tobytes()
    monkeypatch.delattr(Image.Image, "__arrow_c_array__", raising=False)
    assert (
        ours.to_dict()
        == panoptic_quality(gt_json, pred_json, workers=1, decoder="pillow").to_dict()
    )
    assert ours.num_images == len(KINDS)
    assert ours["per_class"][UNUSED] == {"pq": 0.0, "sq": 0.0, "rq": 0.0}


def test_statistics_equal_panopticapi_bit_for_bit(tmp_path: Path) -> None:
    """tp / fp / fn and the IoU sums of pq_compute_single_core, per category, exactly."""
    evaluation = pytest.importorskip("panopticapi.evaluation")
    gt_json, pred_json = write_dataset(tmp_path, 7, KINDS * 2)
    gt, pred = json.loads(gt_json.read_text()), json.loads(pred_json.read_text())
    by_image = {a["image_id"]: a for a in pred["annotations"]}
    matched = [(a, by_image[a["image_id"]]) for a in gt["annotations"]]
    categories = {c["id"]: c for c in gt["categories"]}
    with contextlib.redirect_stdout(io.StringIO()):
        stat = evaluation.pq_compute_single_core(
            0, matched, str(tmp_path / "gt"), str(tmp_path / "pred"), categories
        )
    ours = panoptic_quality(gt_json, pred_json)
    assert ours.category_ids.tolist() == [c["id"] for c in gt["categories"]]
    for k, cat in enumerate(ours.category_ids.tolist()):
        ref = stat.pq_per_cat[cat]
        assert (ours.tp[k], ours.fp[k], ours.fn[k]) == (ref.tp, ref.fp, ref.fn), cat
        assert ours.iou_sum[k] == ref.iou, cat
    assert ours.tp.sum() > 10 and ours.fp.sum() > 5 and ours.fn.sum() > 5


def test_crowd_and_void_absorb_false_positives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hand-built: a prediction mostly on a crowd region is no FP, one on another crowd
    category is; one mostly on VOID is no FP; the last-listed crowd of a category counts."""
    h, w = 10, 20
    gt = np.zeros((h, w), dtype=np.int64)
    gt[:, :5] = 11  # crowd, category 1 (listed first)
    gt[:, 5:10] = 12  # crowd, category 1 (listed last: the one panopticapi uses)
    gt[:, 10:15] = 13  # crowd, category 2
    pred = np.zeros_like(gt)
    pred[:, 0:4] = 21  # category 1, on the first crowd: an FP (panopticapi looks at the last one)
    pred[:, 6:10] = 22  # category 1, on the last crowd: ignored
    pred[:, 11:15] = 23  # category 1 on a category-2 crowd: an FP
    pred[:4, 15:20] = 24  # category 2 on VOID: ignored
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    Image.fromarray(encode(gt)).save(tmp_path / "gt" / "1.png")
    Image.fromarray(encode(pred)).save(tmp_path / "pred" / "1.png")
    seg = [
        {"id": 11, "category_id": 1, "iscrowd": 1, "area": 50},
        {"id": 13, "category_id": 2, "iscrowd": 1, "area": 50},
        {"id": 12, "category_id": 1, "iscrowd": 1, "area": 50},
    ]
    cats = [{"id": 1, "isthing": 1}, {"id": 2, "isthing": 1}, {"id": 3, "isthing": 0}]
    (tmp_path / "gt.json").write_text(
        json.dumps(
            {
                "categories": cats,
                "annotations": [{"image_id": 1, "file_name": "1.png", "segments_info": seg}],
            }
        )
    )
    pseg = [{"id": i, "category_id": c} for i, c in ((21, 1), (22, 1), (23, 1), (24, 2))]
    (tmp_path / "pred.json").write_text(
        json.dumps({"annotations": [{"image_id": 1, "file_name": "1.png", "segments_info": pseg}]})
    )
    ours = panoptic_quality(tmp_path / "gt.json", tmp_path / "pred.json")
    assert ours.fp.tolist() == [2, 0, 0] and ours.fn.tolist() == [0, 0, 0]
    assert ours["Stuff"]["n"] == 0 and math.isnan(ours["Stuff"]["pq"])
    with pytest.raises(ZeroDivisionError):  # panopticapi: no stuff category present
        panopticapi_pq(tmp_path / "gt.json", tmp_path / "pred.json", monkeypatch)


def test_things_only_dataset_differs_from_panopticapi_only_where_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gt_json, pred_json = write_dataset(tmp_path, 11, ["things"] * 4)
    data = json.loads(gt_json.read_text())
    data["categories"] = [c for c in data["categories"] if c["isthing"]]
    gt_json.write_text(json.dumps(data))

    def things_only(d: dict[str, Any]) -> None:
        for a in d["annotations"]:
            for s in a["segments_info"]:
                s["category_id"] = s["category_id"] if s["category_id"] in THINGS else 1

    _edit(pred_json, things_only)
    ours = panoptic_quality(gt_json, pred_json)
    evaluation = pytest.importorskip("panopticapi.evaluation")
    with pytest.raises(ZeroDivisionError):
        panopticapi_pq(gt_json, pred_json, monkeypatch)
    # the groups panopticapi can compute, from its own averaging over its statistics
    matched = [
        (
            a,
            {p["image_id"]: p for p in json.loads(pred_json.read_text())["annotations"]}[
                a["image_id"]
            ],
        )
        for a in data["annotations"]
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        stat = evaluation.pq_compute_single_core(
            0,
            matched,
            str(tmp_path / "gt"),
            str(tmp_path / "pred"),
            {c["id"]: c for c in data["categories"]},
        )
    for name, isthing in (("All", None), ("Things", True)):
        ref, _ = stat.pq_average({c["id"]: c for c in data["categories"]}, isthing=isthing)
        assert ours[name]["n"] == ref["n"]
        for key in ("pq", "sq", "rq"):
            assert abs(ours[name][key] - ref[key]) <= TOL
    stuff = ours["Stuff"]
    assert stuff["n"] == 0 and all(math.isnan(stuff[k]) for k in ("pq", "sq", "rq"))


def test_result_structure_and_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gt_json, pred_json = write_dataset(tmp_path, 5, KINDS)
    full = panoptic_quality(gt_json, pred_json)
    gt, pred = json.loads(gt_json.read_text()), json.loads(pred_json.read_text())
    halves = []
    for part in (gt["annotations"][:4], gt["annotations"][4:]):
        halves.append(
            panoptic_quality({**gt, "annotations": part}, pred, tmp_path / "gt", tmp_path / "pred")
        )
    merged = halves[0].merge(halves[1])
    assert merged.tp.tolist() == full.tp.tolist() and merged.fp.tolist() == full.fp.tolist()
    assert np.allclose(merged.iou_sum, full.iou_sum, rtol=0, atol=1e-12)
    assert list(full) == ["All", "Things", "Stuff", "per_class"] and len(full) == 4
    assert set(full.to_dict()) == {"All", "Things", "Stuff", "per_class"}
    json.dumps(full.to_dict())  # plain Python values
    ref = panopticapi_pq(gt_json, pred_json, monkeypatch)
    assert full.summary().splitlines()[2] == "{:10s}| {:5.1f}  {:5.1f}  {:5.1f} {:5d}".format(
        "All",
        100 * ref["All"]["pq"],
        100 * ref["All"]["sq"],
        100 * ref["All"]["rq"],
        ref["All"]["n"],
    )
    assert "PanopticResult(PQ=" in repr(full)
    with pytest.raises(ParameterError, match="other: expected the same categories"):
        full.merge(panoptic_quality_maps([[[1, 0]]], [[[1, 0]]], things={1}, stuffs=set()))


# ---- bad input through panoptic_quality ---------------------------------------------------


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, Path]:
    return write_dataset(tmp_path, 21, ["mixed", "mixed", "mixed"])


def _edit(path: Path, fn: Any) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def _first_pred_png(gt_json: Path) -> tuple[Path, dict[str, Any]]:
    pred = json.loads(gt_json.with_name("pred.json").read_text())
    ann = next(a for a in pred["annotations"] if a["image_id"] == 100)
    return gt_json.parent / "pred" / ann["file_name"], ann


@pytest.mark.parametrize("decoder", DECODERS)
def test_png_id_not_in_segments_info(small: tuple[Path, Path], decoder: Any) -> None:
    gt_json, pred_json = small
    png, ann = _first_pred_png(gt_json)
    sid = ann["segments_info"][0]["id"]
    _edit(
        pred_json,
        lambda d: [a["segments_info"].pop(0) for a in d["annotations"] if a["image_id"] == 100],
    )
    before = pred_json.read_text()
    with pytest.raises(
        DataFormatError,
        match=rf"{png}: pixel \(x=\d+, y=\d+\) has segment id {sid} \(RGB \d+, \d+, \d+\), "
        r"which is not in .*pred.json: annotations\[\d\].segments_info",
    ):
        panoptic_quality(gt_json, pred_json, decoder=decoder)
    assert pred_json.read_text() == before  # nothing written


@pytest.mark.parametrize("decoder", DECODERS)
def test_gt_png_id_not_in_segments_info(small: tuple[Path, Path], decoder: Any) -> None:
    gt_json, pred_json = small
    _edit(gt_json, lambda d: d["annotations"][1]["segments_info"].pop())
    with pytest.raises(
        DataFormatError,
        match=r"gt/000101.png: pixel .* which is not in .*gt.json: annotations\[1\].segments_info",
    ):
        panoptic_quality(gt_json, pred_json, decoder=decoder)


@pytest.mark.parametrize("decoder", DECODERS)
def test_predicted_segment_without_pixels(small: tuple[Path, Path], decoder: Any) -> None:
    gt_json, pred_json = small
    _edit(
        pred_json,
        lambda d: d["annotations"][0]["segments_info"].append({"id": 5, "category_id": 1}),
    )
    with pytest.raises(
        DataFormatError,
        match=r"pred.json: annotations\[0\].segments_info\[\d+\].id: segment 5 has no pixel in "
        r".*pred/\d+.png",
    ):
        panoptic_quality(gt_json, pred_json, decoder=decoder)


def test_duplicate_segment_id(small: tuple[Path, Path]) -> None:
    gt_json, pred_json = small
    _edit(
        pred_json,
        lambda d: d["annotations"][2]["segments_info"].append(
            dict(d["annotations"][2]["segments_info"][0])
        ),
    )
    with pytest.raises(
        DataFormatError,
        match=r"pred.json: annotations\[2\].segments_info\[\d+\].id: \d+ appears more than once "
        r"\(also segments_info\[0\]\)",
    ):
        panoptic_quality(gt_json, pred_json)


@pytest.mark.parametrize("which", ["gt", "pred"])
def test_category_missing_from_categories(small: tuple[Path, Path], which: str) -> None:
    gt_json, pred_json = small
    path = gt_json if which == "gt" else pred_json

    def change(d: dict[str, Any]) -> None:
        d["annotations"][1]["segments_info"][0]["category_id"] = 99

    _edit(path, change)
    with pytest.raises(
        DataFormatError,
        match=rf"{which}.json: annotations\[1\].segments_info\[0\].category_id: 99 is not in "
        r".*gt.json: categories",
    ):
        panoptic_quality(gt_json, pred_json)


@pytest.mark.parametrize("decoder", DECODERS)
def test_png_of_another_size_than_its_image_entry(small: tuple[Path, Path], decoder: Any) -> None:
    gt_json, pred_json = small

    def change(d: dict[str, Any]) -> None:
        d["images"][0]["width"] += 1

    _edit(gt_json, change)
    with pytest.raises(
        DataFormatError,
        match=r"gt/000100.png: expected 52x47 pixels \(.*gt.json: images entry of image_id 100\), "
        r"got 51x47",
    ):
        panoptic_quality(gt_json, pred_json, decoder=decoder)


@pytest.mark.parametrize("decoder", DECODERS)
def test_prediction_png_of_another_size(small: tuple[Path, Path], decoder: Any) -> None:
    gt_json, pred_json = small
    png, _ = _first_pred_png(gt_json)
    Image.fromarray(np.zeros((3, 4, 3), dtype=np.uint8)).save(png)
    with pytest.raises(
        DataFormatError, match=rf"{png}: expected 51x47 pixels \(.*gt/000100.png\), got 4x3"
    ):
        panoptic_quality(gt_json, pred_json, decoder=decoder)


@pytest.mark.parametrize("decoder", DECODERS)
def test_non_png_and_missing_files(small: tuple[Path, Path], decoder: Any) -> None:
    gt_json, pred_json = small
    png, _ = _first_pred_png(gt_json)
    Image.open(png).convert("RGB").save(png, format="JPEG")
    with pytest.raises(DataFormatError, match=rf"{png}: expected a PNG file, got JPEG"):
        panoptic_quality(gt_json, pred_json, decoder=decoder)
    png.write_bytes(b"not an image")
    with pytest.raises(DataFormatError, match=rf"{png}: cannot read the PNG"):
        panoptic_quality(gt_json, pred_json, decoder=decoder)
    png.unlink()
    with pytest.raises(DataFormatError, match=rf"{png}: cannot read the file \(no such file\)"):
        panoptic_quality(gt_json, pred_json, decoder=decoder)
    with pytest.raises(DataFormatError, match=r"nope.json: cannot read the file"):
        panoptic_quality(gt_json.with_name("nope.json"), pred_json)
    with pytest.raises(
        DataFormatError,
        match=r"missing: expected the folder of .*pred.json's PNG files \(pred_folder\)",
    ):
        panoptic_quality(gt_json, pred_json, pred_folder=gt_json.parent / "missing")


def test_missing_prediction_record_and_bad_options(small: tuple[Path, Path]) -> None:
    gt_json, pred_json = small
    _edit(pred_json, lambda d: d["annotations"].pop())
    with pytest.raises(
        DataFormatError,
        match=r"pred.json: annotations: no record for image_id \d+ "
        r"\(.*gt.json: annotations\[\d\]\)",
    ):
        panoptic_quality(gt_json, pred_json)
    with pytest.raises(ParameterError, match="workers: expected a positive integer"):
        panoptic_quality(gt_json, pred_json, workers=0)
    with pytest.raises(ParameterError, match="gt_folder: required"):
        panoptic_quality(json.loads(gt_json.read_text()), pred_json)


@pytest.mark.parametrize("decoder", DECODERS)
def test_errors_follow_file_order_with_threads(small: tuple[Path, Path], decoder: Any) -> None:
    gt_json, pred_json = small
    for name in ("000101.png", "000102.png"):
        (gt_json.parent / "gt" / name).write_bytes(b"x")
    with pytest.raises(DataFormatError, match=r"000101\.png"):
        panoptic_quality(gt_json, pred_json, workers=4, decoder=decoder)


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import`` of ``modules`` (and their submodules) fail, as when not installed."""
    import builtins

    real_import = builtins.__import__

    def hidden(name: str, *args: Any, **kwargs: Any) -> Any:
        if any(name == m or name.startswith(m + ".") for m in modules):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", hidden)


def test_missing_pillow_names_the_extra(
    small: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "PIL", "pyspng")
    with pytest.raises(MissingDependencyError, match=r'pip install "ioukit\[panoptic\]"'):
        panoptic_quality(*small)


def test_decoder_option(small: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        ParameterError, match=r"decoder: expected one of 'auto', 'pyspng', 'pillow', got 'png'"
    ):
        panoptic_quality(*small, decoder="png")  # type: ignore[arg-type]
    expected = panoptic_quality(*small, decoder="pillow").to_dict()
    _hide(monkeypatch, "pyspng")
    assert panoptic_quality(*small).to_dict() == expected  # "auto" falls back to Pillow
    with pytest.raises(MissingDependencyError, match=r'decoder="pyspng" needs pyspng'):
        panoptic_quality(*small, decoder="pyspng")


@pytest.mark.skipif(not HAVE_PYSPNG, reason="no pyspng")
def test_pyspng_needs_pillow_only_for_what_it_leaves_to_pillow(
    small: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    gt_json, pred_json = small
    expected = panoptic_quality(gt_json, pred_json, decoder="pillow").to_dict()
    _hide(monkeypatch, "PIL")
    assert panoptic_quality(gt_json, pred_json, decoder="pyspng").to_dict() == expected
    png, _ = _first_pred_png(gt_json)
    png.write_bytes(b"GIF89a" + bytes(20))  # not a PNG: Pillow would say what it is
    with pytest.raises(MissingDependencyError, match=r'pip install "ioukit\[panoptic\]"'):
        panoptic_quality(gt_json, pred_json, decoder="pyspng")


# ---- (category, instance) maps ------------------------------------------------------------


def _maps(seed: int, n: int = 6, h: int = 24, w: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """(n, h, w, 2) pred and gt: categories 0, 1 (things), 6, 7 (stuff), 9 (unknown: VOID)."""
    rng = np.random.default_rng(seed)
    gt = np.zeros((n, h, w, 2), dtype=np.int64)
    for b in range(n):
        gt[b, ..., 0] = rng.choice([6, 7])
        gt[b, h // 2 :, :, 0] = rng.choice([6, 7])
        gt[b, ..., 1] = rng.integers(0, 3)  # stuff instance ids: torchmetrics sets them to 0
        for k in range(rng.integers(1, 6)):
            m = ellipse(h, w, rng)
            gt[b, m] = [rng.choice([0, 1]), k + 1]
        gt[b, rectangle(h, w, rng)] = [9, 0]
    pred = gt.copy()
    for b in range(n):
        for _ in range(rng.integers(1, 5)):
            m = shifted(ellipse(h, w, rng), 1, -1)
            pred[b, m] = [rng.choice([0, 1, 6, 7]), rng.integers(0, 5)]
        pred[b, rectangle(h, w, rng)] = [9, 0]
        src = gt[b, ..., :].copy()
        dy, dx = rng.integers(-2, 3, size=2)
        moved = np.roll(src, (dy, dx), axis=(0, 1))
        keep = rng.random((h, w)) < 0.5
        pred[b][keep] = moved[keep]
    return pred, gt


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_maps_equal_torchmetrics(seed: int) -> None:
    torch = pytest.importorskip("torch")
    detection = pytest.importorskip("torchmetrics.detection")
    pred, gt = _maps(seed)
    metric = detection.PanopticQuality(
        things={0, 1},
        stuffs={6, 7},
        allow_unknown_preds_category=True,
        return_per_class=True,
        return_sq_and_rq=True,
    )
    metric.update(torch.from_numpy(pred), torch.from_numpy(gt))
    per_class = metric.compute().numpy()  # (K, 3): pq, sq, rq
    overall = detection.PanopticQuality(
        things={0, 1}, stuffs={6, 7}, allow_unknown_preds_category=True, return_sq_and_rq=True
    )
    overall.update(torch.from_numpy(pred), torch.from_numpy(gt))
    ref = overall.compute().numpy()
    ours = panoptic_quality_maps(
        torch.from_numpy(pred),
        torch.from_numpy(gt),
        things={0, 1},
        stuffs={6, 7},
        compat="torchmetrics",
        allow_unknown_pred_categories=True,
    )
    assert np.abs(np.stack([ours.pq, ours.sq, ours.rq], axis=-1) - per_class).max() <= TOL
    a = ours["All"]
    assert np.abs(np.array([a["pq"], a["sq"], a["rq"]]) - ref).max() <= TOL
    assert metric.true_positives.tolist() == ours.tp.tolist()
    assert metric.false_positives.tolist() == ours.fp.tolist()
    assert metric.false_negatives.tolist() == ours.fn.tolist()
    assert ours.iou_sum.tolist() == metric.iou_sum.tolist()  # bit for bit (float32 IoUs)


@pytest.mark.parametrize("seed", [0, 1])
def test_maps_default_equals_panopticapi_on_the_same_segments(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each (category, instance) pair written as a COCO panoptic segment (category 9 as VOID)."""
    pred, gt = _maps(seed)
    root = tmp_path
    (root / "gt").mkdir()
    (root / "pred").mkdir()
    gt_anns, pred_anns = [], []
    for b in range(len(gt)):
        for maps, folder, anns in ((gt[b], "gt", gt_anns), (pred[b], "pred", pred_anns)):
            keys = maps[..., 0] * 1000 + maps[..., 1] + 1  # segment id per pair, 0 stays unused
            keys[maps[..., 0] == 9] = 0
            Image.fromarray(encode(keys)).save(root / folder / f"{b}.png")
            infos = [
                {
                    "id": int(k),
                    "category_id": int(k - 1) // 1000,
                    "iscrowd": 0,
                    "area": int((keys == k).sum()),
                }
                for k in np.unique(keys)
                if k
            ]
            anns.append({"image_id": b, "file_name": f"{b}.png", "segments_info": infos})
    cats = [{"id": c, "isthing": int(c < 6)} for c in (0, 1, 6, 7)]
    (root / "gt.json").write_text(json.dumps({"categories": cats, "annotations": gt_anns}))
    (root / "pred.json").write_text(json.dumps({"annotations": pred_anns}))
    ref = panopticapi_pq(root / "gt.json", root / "pred.json", monkeypatch)
    ours = panoptic_quality_maps(
        list(pred), list(gt), things=[0, 1], stuffs=[6, 7], allow_unknown_pred_categories=True
    )
    assert_same(ours, ref)
    files = panoptic_quality(root / "gt.json", root / "pred.json")
    assert files.tp.tolist() == ours.tp.tolist() and files.fp.tolist() == ours.fp.tolist()


def test_maps_conventions_differ_where_documented() -> None:
    """Stuff instances, VOID in the prediction: the two compat modes part exactly there."""
    gt = np.array([[[6, 0], [6, 1], [6, 1], [0, 1], [0, 1], [0, 1], [0, 1]]])
    pred = np.array([[[6, 0], [6, 0], [6, 0], [0, 1], [0, 1], [9, 0], [9, 0]]])
    kw: dict[str, Any] = {"things": {0}, "stuffs": {6}, "allow_unknown_pred_categories": True}
    pa = panoptic_quality_maps(pred, gt, **kw)
    tm = panoptic_quality_maps(pred, gt, compat="torchmetrics", **kw)
    # torchmetrics: stuff 6 is one segment (IoU 1); the thing loses its 2 predicted-VOID pixels
    assert tm.tp.tolist() == [1, 1] and tm.iou_sum.tolist() == [1.0, 1.0]
    # panopticapi: stuff (6, 1) is a segment of its own (IoU 2/3 with the merged prediction,
    # (6, 0) an FN); the thing's union keeps the predicted-VOID pixels: IoU 2/4 = 0.5, no match
    assert pa.tp.tolist() == [0, 1] and pa.fn.tolist() == [1, 1] and pa.fp.tolist() == [1, 0]
    assert abs(pa.iou_sum[1] - 2 / 3) <= TOL


def test_torchmetrics_published_vectors() -> None:
    """The numbers of torchmetrics' own tests (tests/data/panoptic/torchmetrics_vectors.json)."""
    vectors = json.loads((DATA / "torchmetrics_vectors.json").read_text())
    for case in vectors["cases"]:
        kw = dict(case["args"])
        r = panoptic_quality_maps(
            np.array(case["preds"]),
            np.array(case["target"]),
            things=kw.pop("things"),
            stuffs=kw.pop("stuffs"),
            compat="torchmetrics",
            allow_unknown_pred_categories=kw.pop("allow_unknown_preds_category", False),
        )
        expected = case["expected"]
        if case.get("per_class"):
            assert np.allclose(r.pq, expected, rtol=0, atol=case["atol"]), case["name"]
        elif expected is None:
            assert math.isnan(r["All"]["pq"]), case["name"]
        else:
            assert abs(r["All"]["pq"] - expected) <= case["atol"], (case["name"], r["All"]["pq"])


def test_torchmetrics_docstring_vector_equals_torchmetrics() -> None:
    torch = pytest.importorskip("torch")
    detection = pytest.importorskip("torchmetrics.detection")
    vectors = json.loads((DATA / "torchmetrics_vectors.json").read_text())
    case = vectors["cases"][0]
    metric = detection.PanopticQuality(things={0, 1}, stuffs={6, 7})
    ref = float(metric(torch.tensor(case["preds"]), torch.tensor(case["target"])))
    ours = panoptic_quality_maps(
        case["preds"], case["target"], things={0, 1}, stuffs={6, 7}, compat="torchmetrics"
    )
    assert abs(ours["All"]["pq"] - ref) <= TOL


def test_maps_bad_input() -> None:
    good = np.zeros((1, 3, 3, 2), dtype=np.int64)
    kw: dict[str, Any] = {"things": {0}, "stuffs": {6}}
    with pytest.raises(
        MaskError, match=r"pred\[0\]: point 0 has category 9, which is in neither things nor stuffs"
    ):
        panoptic_quality_maps(good + np.array([9, 0]), good, **kw)
    with pytest.raises(MaskError, match=r"pred\[0\], gt\[0\]: expected the same shape"):
        panoptic_quality_maps(good[:, :2], good, **kw)
    with pytest.raises(MaskError, match=r"gt\[0\]: expected shape \(\*spatial, 2\)"):
        panoptic_quality_maps(good, good[..., 0], **kw)
    with pytest.raises(MaskError, match=r"pred\[0\]: expected integer"):
        panoptic_quality_maps(good.astype(float), good, **kw)
    with pytest.raises(MaskError, match="the same number of images"):
        panoptic_quality_maps(good, np.concatenate([good, good]), **kw)
    with pytest.raises(ParameterError, match="things, stuffs: expected disjoint sets"):
        panoptic_quality_maps(good, good, things={0}, stuffs={0})
    with pytest.raises(ParameterError, match="at least one category"):
        panoptic_quality_maps(good, good, things=set(), stuffs=())
    with pytest.raises(ParameterError, match="things: expected integer"):
        panoptic_quality_maps(good, good, things={0.5}, stuffs={6})
    with pytest.raises(ParameterError, match="compat: expected one of"):
        panoptic_quality_maps(good, good, compat="detectron2", **kw)  # type: ignore[arg-type]
    before = good.copy()
    panoptic_quality_maps(good, good, **kw)
    assert np.array_equal(good, before)


# ---- real COCO panoptic ground truth (panopticapi's sample_data) --------------------------


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("shift", [(0, 0), (3, -2), (9, 14)])
def test_coco_sample_data_equals_panopticapi(
    tmp_path: Path, shift: tuple[int, int], decoder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """COCO's own PNGs and JSON (ids, areas, crowd, 133 categories) against predictions
    derived from them: every segment moved by ``shift``, some relabelled, one dropped."""
    evaluation = pytest.importorskip("panopticapi.evaluation")
    source = DATA / "coco_examples"
    gt_json = source / "panoptic_examples.json"
    gt = json.loads(gt_json.read_text())
    rng = np.random.default_rng(sum(shift))
    (tmp_path / "pred").mkdir()
    pred_anns = []
    for ann in gt["annotations"]:
        rgb = np.array(Image.open(source / "panoptic_examples" / ann["file_name"]), dtype=np.int64)
        ids = rgb[..., 0] + 256 * rgb[..., 1] + 65536 * rgb[..., 2]
        ids = np.roll(ids, shift, axis=(0, 1))
        dropped = ann["segments_info"][int(rng.integers(len(ann["segments_info"])))]["id"]
        ids[ids == dropped] = 0
        cats = [c["id"] for c in gt["categories"]]
        infos = []
        for s in ann["segments_info"]:
            if s["id"] != dropped and (ids == s["id"]).any():
                cat = s["category_id"] if rng.random() < 0.8 else int(rng.choice(cats))
                infos.append({"id": s["id"], "category_id": cat})
        Image.fromarray(encode(ids)).save(tmp_path / "pred" / ann["file_name"])
        pred_anns.append(
            {"image_id": ann["image_id"], "file_name": ann["file_name"], "segments_info": infos}
        )
    pred_json = tmp_path / "pred.json"
    pred_json.write_text(json.dumps({"annotations": pred_anns}))
    ours = panoptic_quality(
        gt_json, pred_json, source / "panoptic_examples", tmp_path / "pred", decoder=decoder
    )
    single = evaluation.pq_compute_single_core
    monkeypatch.setattr(
        evaluation, "pq_compute_multi_core", lambda m, g, p, c: single(0, m, g, p, c)
    )
    with contextlib.redirect_stdout(io.StringIO()):
        ref = evaluation.pq_compute(
            str(gt_json), str(pred_json), str(source / "panoptic_examples"), str(tmp_path / "pred")
        )
    assert_same(ours, ref)
    if shift == (0, 0):
        assert ours.tp.sum() > 20
