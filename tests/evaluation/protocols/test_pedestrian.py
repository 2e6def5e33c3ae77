"""The pedestrian protocols (``citypersons``, ``crowdhuman``, ``caltech``): MR⁻² side by side
with a fresh transcription of Pedestron's ``eval_MR_multisetup.py`` (tests/pedestron_reference.py)
and with brambox 5's ``mr_fppi`` / ``lamr`` on the same matches; hand-built FPPI fixtures; the
readers; bad input (#26 item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.protocols import pedestrian as ped
from ioukit.evaluation.registry import make_protocol, protocol_names
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.io.pedestrian import PedestrianDataset, read_citypersons, read_crowdhuman
from tests.pedestron_reference import pedestron_mr

SETUPS = ["Reasonable", "Reasonable_small", "Reasonable_occ=heavy", "All"]


def generate(
    seed: int, n_images: int = 40, *, integer: bool = True
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """CityPersons-style ground truth and COCO results: heights on the setups' bounds (20, 50,
    75, 62.5 = 50 * 1.25), visibilities on theirs (0.2, 0.65), ignore flags, ignore regions
    over several people, a second category, images without ground truth, tied scores."""
    rng = np.random.default_rng(seed)
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    dets: list[dict[str, Any]] = []
    for img in rng.permutation(np.arange(1, n_images + 1) * 3).tolist():  # ids not in order
        images.append({"id": img, "height": 1024, "width": 2048})
        people = []
        for _ in range(int(rng.integers(0, 8))):
            h = float(rng.choice([rng.uniform(15, 200), 50, 75, 20, 40, 62.5]))
            x, y, w = rng.uniform(0, 1900), rng.uniform(0, 800), h * 0.41
            if integer:
                x, y, w, h = float(round(x)), float(round(y)), float(max(round(w), 1)), round(h)
            vis = float(rng.choice([rng.uniform(0, 1), 0.65, 0.2, 1.0]))
            cat = 1 if rng.random() < 0.9 else 2
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": img,
                    "category_id": cat,
                    "iscrowd": 0,
                    "ignore": int(rng.random() < 0.25),
                    "bbox": [x, y, w, float(h)],
                    "height": float(h),
                    "vis_ratio": vis,
                }
            )
            people.append((x, y, w, float(h), cat))
            if rng.random() < 0.15:  # an ignore region over this person and the next ones
                anns.append(
                    {
                        "id": len(anns) + 1,
                        "image_id": img,
                        "category_id": 1,
                        "iscrowd": 0,
                        "ignore": 1,
                        "bbox": [x - 20, y - 10, w * 4, h * 1.5],
                        "height": h * 1.5,
                        "vis_ratio": 1.0,
                    }
                )
        for x, y, w, h, cat in people:
            for _ in range(int(rng.integers(0, 3))):
                j = rng.normal(0, 0.08 * h, 4)
                box = [x + j[0], y + j[1], max(w + j[2], 1.0), max(h + j[3], 1.0)]
                box = [float(round(v)) for v in box] if integer else [float(v) for v in box]
                dets.append(
                    {
                        "image_id": img,
                        "category_id": cat,
                        "bbox": box,
                        "score": float(np.round(rng.uniform(0, 1), 2)),
                    }
                )
        for _ in range(int(rng.integers(0, 4))):  # false positives, some small
            h = rng.uniform(20, 150)
            box = [
                round(rng.uniform(0, 1900)),
                round(rng.uniform(0, 800)),
                round(h * 0.41),
                round(h),
            ]
            dets.append(
                {
                    "image_id": img,
                    "category_id": 1,
                    "bbox": [float(v) for v in box],
                    "score": float(np.round(rng.uniform(0, 1), 2)),
                }
            )
    categories = [{"id": 1, "name": "pedestrian"}, {"id": 2, "name": "rider"}]
    return {"images": images, "annotations": anns, "categories": categories}, dets  # fmt: skip


def test_the_protocols_are_registered() -> None:
    assert {"caltech", "citypersons", "crowdhuman"} <= set(protocol_names())
    p = make_protocol("crowdhuman")
    assert [s.name for s in p.setups] == ["All"] and p.clip is None
    assert make_protocol("caltech").sampling == "caltech"


@pytest.mark.parametrize("seed", range(6))
def test_citypersons_equals_the_pedestron_script(seed: int) -> None:
    gt, dets = generate(seed, integer=seed % 2 == 0)
    r = ioukit.evaluate(gt, dets, protocol="citypersons")
    assert list(r.stats) == SETUPS
    for k, name in enumerate(SETUPS):
        ref = pedestron_mr(gt, dets, k)
        assert abs(r.stats[name] - ref) <= 1e-12, (name, r.stats[name], ref)


@pytest.mark.parametrize("seed", range(4))
def test_crowdhuman_equals_its_pedestron_script(seed: int) -> None:
    gt, dets = generate(seed + 10)
    r = ioukit.evaluate(gt, dets, protocol="crowdhuman")
    ref = pedestron_mr(gt, dets, 0, crowdhuman=True)
    assert abs(r.stats["All"] - ref) <= 1e-12
    # the script's four labels give one number: no ground-truth filter, one height filter
    assert {pedestron_mr(gt, dets, k, crowdhuman=True) for k in range(4)} == {ref}


def test_setups_read_the_ranges_as_data() -> None:
    gt, dets = generate(3)
    one = ioukit.evaluate(gt, dets, protocol="citypersons", setups=["All"])
    assert list(one.stats) == ["All"]
    assert one.stats["All"] == pedestron_mr(gt, dets, 3)
    custom = ped.Setup("tall", (100.0, ped.BIG), None)
    r = ioukit.evaluate(gt, dets, protocol="citypersons", setups=[custom])
    assert list(r.stats) == ["tall"]
    with pytest.raises(ParameterError, match=r"setups: protocol 'citypersons' has 'Reasonable'"):
        ioukit.evaluate(gt, dets, protocol="citypersons", setups=["Medium"])


# brambox 5.0 reads DataFrame._data, deprecated in pandas 2 (and gone in 3): its warning
@pytest.mark.filterwarnings("ignore:DataFrame._data is deprecated:DeprecationWarning")
def test_brambox_lamr_on_the_same_matches() -> None:
    pd = pytest.importorskip("pandas")
    bb = pytest.importorskip("brambox")
    for seed in range(4):
        gt, dets = generate(seed + 20, integer=False)
        gt_ds = read_citypersons(gt)
        pred = read_coco_results(dets, gt_ds)
        protocol = make_protocol("citypersons", sampling="brambox")
        prepared = ped._prepare(gt_ds, pred, protocol)
        ours = ioukit.evaluate(gt_ds, pred, protocol="citypersons", sampling="brambox")
        for setup in protocol.setups:
            tp, fp, scores, n_gt = ped._match_setup(prepared, setup, protocol)
            ignore = ped._ignored(prepared, setup, protocol)
            images = [str(i) for i in range(len(gt_ds.images))]
            det = pd.DataFrame(
                {
                    "image": pd.Categorical(["0"] * len(tp), categories=images),
                    "class_label": "person",
                    "confidence": scores,
                    "tp": tp,
                    "fp": fp,
                }
            )
            anno = pd.DataFrame({"image": pd.Categorical(["0"] * len(ignore), categories=images),
                                 "class_label": "person", "ignore": ignore})  # fmt: skip
            with np.errstate(divide="ignore"):
                want = bb.stat.lamr(bb.stat.mr_fppi(det, anno, ignore=True))
            assert n_gt == int((~ignore).sum())
            got = ours.stats[setup.name]
            assert got == pytest.approx(want, abs=1e-12, nan_ok=True), (seed, setup.name)


def test_hand_built_fppi_fixture() -> None:
    # 10 images, 2 pedestrians; ranked: a false positive (FPPI 0.1), then a true positive
    tp = np.array([False, True])
    scores = np.array([0.9, 0.8])
    mr, _, miss = ped.log_average_miss_rate(tp, ~tp, scores, 2, 10)
    # Pedestron: below FPPI 0.1 no detection; its index -1 reads the last recall (0.5)
    assert miss.tolist() == [0.5] * 9 and mr == pytest.approx(0.5, abs=1e-15)
    mr, _, miss = ped.log_average_miss_rate(tp, ~tp, scores, 2, 10, sampling="caltech")
    # Caltech: recall 0 below 0.1 (10^-2 .. 10^-1.25), 0.5 from 10^-1 on
    assert miss.tolist() == [1.0] * 4 + [0.5] * 5
    assert mr == pytest.approx(0.5 ** (5 / 9), abs=1e-15)
    mr, _, miss = ped.log_average_miss_rate(tp, ~tp, scores, 2, 10, sampling="brambox")
    # brambox: the curve (0.1, 1.0), (0.1, 0.5): 1 below its first FPPI, 0 above its last;
    # brambox samples np.logspace(-2, 0, 9), whose 10^-1 is 0.09999999999999999 on some
    # NumPy builds (1.26 with SIMD power): then that point lies below the first FPPI too
    at_tenth = 0.5 if np.logspace(-2.0, 0.0, 9)[4] >= 0.1 else 1.0
    assert miss.tolist() == [1.0] * 4 + [at_tenth] + [0.0] * 4 and mr == 0.0
    # every detection a true positive at FPPI 0: CityPersons clips recall to 1 - 1e-6
    mr, *_ = ped.log_average_miss_rate(np.ones(2, bool), np.zeros(2, bool), scores, 2, 10,
                                       clip=1 - 1e-6)  # fmt: skip
    assert mr == pytest.approx(1e-6, rel=1e-9)
    assert ped.log_average_miss_rate(tp, ~tp, scores, 0, 10)[0] == -1.0


def test_one_image_by_hand() -> None:
    # a pedestrian matched (IoU 0.8), a detection in an ignore region (IoA 1: ignored), one
    # too small for Reasonable's height filter (dropped), one false positive
    gt = {"images": [{"id": 1}, {"id": 2}], "categories": [{"id": 1, "name": "pedestrian"}],
          "annotations": [
              {"id": 1, "image_id": 1, "category_id": 1, "ignore": 0, "bbox": [0, 0, 40, 100],
               "height": 100, "vis_ratio": 1.0},
              {"id": 2, "image_id": 1, "category_id": 1, "ignore": 1, "bbox": [500, 0, 300, 200],
               "height": 200, "vis_ratio": 1.0}]}  # fmt: skip
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 40, 80], "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [550, 10, 40, 100], "score": 0.8},
        {"image_id": 1, "category_id": 1, "bbox": [200, 0, 10, 30], "score": 0.7},
        {"image_id": 2, "category_id": 1, "bbox": [0, 0, 40, 100], "score": 0.6},
    ]
    r = ioukit.evaluate(gt, dets, protocol="citypersons", setups=["Reasonable"])
    curve = r.result.arrays
    assert curve["fppi/Reasonable"].tolist() == [0.0, 0.5]  # 2 images
    assert curve["miss_rate/Reasonable"].tolist() == [0.0, 0.0]
    assert r.stats["Reasonable"] == pytest.approx(1e-6, rel=1e-9)  # recall clipped
    assert r.stats["Reasonable"] == pedestron_mr(gt, dets, 0)


def test_dataset_route_and_path_route_agree(tmp_path: Path) -> None:
    gt, dets = generate(5)
    path = tmp_path / "val_gt.json"
    path.write_text(json.dumps(gt))
    a = ioukit.evaluate(path, dets, protocol="citypersons")
    gt_ds = read_citypersons(path)
    assert isinstance(gt_ds, PedestrianDataset)
    b = ioukit.evaluate(gt_ds, read_coco_results(dets, gt_ds), protocol="citypersons")
    assert a.stats == b.stats


def test_missing_visibility_names_the_setup() -> None:
    gt, dets = generate(1)
    for ann in gt["annotations"][3:5]:
        del ann["vis_ratio"]
    with pytest.raises(
        DataFormatError,
        match=r"setup 'Reasonable' of protocol 'citypersons' "
        r"needs each annotation's visibility .* got none for annotation row 3",
    ):
        ioukit.evaluate(gt, dets, protocol="citypersons")
    plain = read_coco_ground_truth(gt)  # a Dataset without the column
    pred = read_coco_results(dets, plain)
    with pytest.raises(DataFormatError, match=r"setup 'Reasonable_occ=heavy' .* got none;"):
        ioukit.evaluate(plain, pred, protocol="citypersons", setups=["Reasonable_occ=heavy"])
    # setups without a visibility range need none
    r = ioukit.evaluate(plain, pred, protocol="caltech", setups=["Scale=near", "Scale=far"])
    assert set(r.stats) == {"Scale=near", "Scale=far"}


def test_bad_options_name_the_option() -> None:
    gt, dets = generate(2)
    with pytest.raises(ParameterError, match="sampling: expected one of 'pedestron'"):
        ioukit.evaluate(gt, dets, protocol="citypersons", sampling="linear")
    with pytest.raises(ParameterError, match="iou_threshold: expected a number in"):
        ioukit.evaluate(gt, dets, protocol="caltech", iou_threshold=2)
    with pytest.raises(ParameterError, match="height_ratio: expected a number >= 1"):
        ioukit.evaluate(gt, dets, protocol="crowdhuman", height_ratio=0.5)
    with pytest.raises(ParameterError, match="unexpected keyword argument 'area_ranges'"):
        ioukit.evaluate(gt, dets, protocol="citypersons", area_ranges={"small": (0, 1)})


def _odgt(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "annotation_val.odgt"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_crowdhuman_odgt_reader(tmp_path: Path) -> None:
    path = _odgt(tmp_path, [
        {"ID": "273271,c9db000d5146c15", "gtboxes": [
            {"tag": "person", "fbox": [10, 20, 40, 100], "vbox": [10, 20, 40, 50], "extra": {}},
            {"tag": "person", "fbox": [100, 20, 40, 100], "vbox": [100, 20, 40, 100],
             "extra": {"ignore": 1}},
            {"tag": "mask", "fbox": [300, 0, 200, 200], "vbox": [300, 0, 200, 200],
             "extra": {"ignore": 1}}]},
        {"ID": "empty", "gtboxes": []},
    ])  # fmt: skip
    gt = read_crowdhuman(path)
    assert gt.images.stems == ("273271,c9db000d5146c15", "empty")
    assert gt.ignore.tolist() == [False, True, True]
    assert gt.visibility.tolist() == [0.5, 1.0, 1.0] and gt.height.tolist() == [100.0, 100.0, 200.0]
    dets = [{"image_id": 1, "category_id": 1, "bbox": [10, 20, 40, 100], "score": 0.9},
            {"image_id": 1, "category_id": 1, "bbox": [320, 10, 40, 100], "score": 0.8},
            {"image_id": 2, "category_id": 1, "bbox": [0, 0, 40, 100], "score": 0.5}]  # fmt: skip
    r = ioukit.evaluate(path, dets, protocol="crowdhuman")
    assert r.result.arrays["fppi/All"].tolist() == [0.0, 0.5]


def test_crowdhuman_reader_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.odgt"
    path.write_text('{"ID": "a", "gtboxes": []}\nnot json\n')
    with pytest.raises(DataFormatError, match=r"bad.odgt:2: expected a JSON record"):
        read_crowdhuman(path)
    path.write_text('{"ID": "a", "gtboxes": [{"tag": "person", "fbox": [1, 2, 3]}]}\n')
    with pytest.raises(DataFormatError, match=r"bad.odgt:1: gtboxes\[0\].fbox: expected"):
        read_crowdhuman(path)
