"""LVIS through the public routes: ``ioukit.evaluate(protocol="lvis")``, the result's summary
and per-class table, ``ioukit eval --protocol lvis [--fixed-ap]``, masks (segm) against
lvis-api, and the errors for bad arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.cli import main
from ioukit.engine import evaluate
from ioukit.errors import DataFormatError
from ioukit.evaluation.protocols.lvis import evaluate_lvis, format_summary
from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results
from tests.lvis_reference import STAT_KEYS, compare, generate, run_lvis_api

CONFORMANCE = Path(__file__).parents[2] / "data" / "conformance" / "lvis"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    gt, results = generate(7, n_images=15, n_cats=12, dets_per_image=(5, 40))
    folder = tmp_path_factory.mktemp("lvis")
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "res.json").write_text(json.dumps(results))
    return folder / "gt.json", folder / "res.json"


def test_every_route_gives_the_same_numbers(files: tuple[Path, Path]) -> None:
    gt_path, res_path = files
    gt_json = json.loads(gt_path.read_text())
    results = json.loads(res_path.read_text())
    lvis_gt = read_lvis_ground_truth(gt_path)
    pred = read_lvis_results(res_path, lvis_gt)
    want = evaluate_lvis(lvis_gt, pred).stats
    for gt_arg, res_arg in (
        (gt_path, res_path),
        (str(gt_path), str(res_path)),
        (gt_json, results),
        (lvis_gt, pred),
    ):
        r = evaluate(gt_arg, res_arg, protocol="lvis")  # type: ignore[arg-type]
        assert r.stats == want
        assert r.protocol == "lvis"
    assert list(want) == list(STAT_KEYS)


def test_summary_and_per_class(files: tuple[Path, Path]) -> None:
    r = evaluate(*files, protocol="lvis")
    assert r.summary() == format_summary(r.result)
    lines = r.summary().splitlines()
    assert len(lines) == 13
    assert lines[6].endswith(f"catIds=  r] = {r.stats['APr']:0.3f}")
    rows = r.per_class
    assert [row["category_id"] for row in rows] == sorted(row["category_id"] for row in rows)
    assert {row["frequency"] for row in rows} <= {"r", "c", "f"}
    assert "frequency" in r.per_class_table().splitlines()[0]
    with_gt = [row for row in rows if row["num_gt"] > 0]
    assert all(row["AP"] >= 0 for row in with_gt)
    assert all(row["AP"] == -1 for row in rows if row["num_gt"] == 0)
    # AP is the mean of the per-class APs of classes with ground truth
    assert r.stats["AP"] == pytest.approx(np.mean([row["AP"] for row in with_gt]), abs=1e-12)
    assert r.to_dict()["protocol"] == "lvis"


def test_fixed_ap_keys_and_summary(files: tuple[Path, Path]) -> None:
    r = evaluate(*files, protocol="lvis", fixed_ap=True)
    assert list(r.stats)[9:] == ["AR@10000/cat", "ARs@10000/cat", "ARm@10000/cat", "ARl@10000/cat"]
    assert "maxDets=10000/cat catIds=all]" in r.summary()
    assert r.params["max_dets_per_image"] == -1
    assert r.params["max_dets_per_category"] == 10_000


def test_max_dets_option(files: tuple[Path, Path]) -> None:
    r = evaluate(*files, protocol="lvis", max_dets=5)
    assert "AR@5" in r.stats
    assert r.params["num_results_evaluated"] <= 5 * 15


def test_cli(files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt_path, res_path = files
    out = tmp_path / "report.json"
    code = main(
        ["eval", "--gt", str(gt_path), "--pred", str(res_path), "--protocol", "lvis", "--quiet",
         "--json", str(out)]
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    want = evaluate(*files, protocol="lvis")
    assert printed.startswith(want.summary())
    assert json.loads(out.read_text())["stats"]["APr"] == pytest.approx(want.stats["APr"])
    code = main(
        ["eval", "--gt", str(gt_path), "--pred", str(res_path), "--protocol", "lvis",
         "--fixed-ap", "--quiet"]
    )  # fmt: skip
    assert code == 0
    assert "maxDets=10000/cat" in capsys.readouterr().out


def test_cli_errors(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    gt_path, res_path = files
    assert main(["eval", "--gt", str(gt_path), "--pred", str(res_path), "--fixed-ap"]) != 0
    assert "--fixed-ap: expected --protocol lvis" in capsys.readouterr().err
    argv = ["eval", "--gt", str(gt_path), "--pred", str(res_path), "--protocol", "lvis"]
    assert main([*argv, "--plots", str(gt_path.parent / "plots")]) != 0
    assert "--plots: not available with --protocol lvis" in capsys.readouterr().err
    assert main([*argv, "--errors"]) != 0
    assert "--errors: expected --protocol coco" in capsys.readouterr().err
    coco_file = (
        Path(__file__).parents[2] / "data" / "conformance" / "coco" / "mmdet_dummy" / "gt.json"
    )
    assert (
        main(["eval", "--gt", str(coco_file), "--pred", str(res_path), "--protocol", "lvis"]) != 0
    )
    assert "neg_category_ids: missing" in capsys.readouterr().err


def test_cli_per_image_reads_the_lvis_match(files: tuple[Path, Path], tmp_path: Path) -> None:
    """``--per-image`` with LVIS counts the evaluation's own match (cap, federated filter,
    not-exhaustive rule): its totals are the outcome's at IoU 0.5, area "all"."""
    import csv

    from ioukit.analysis.per_image import per_image
    from ioukit.evaluation.outcome import FALSE_POSITIVE

    gt_path, res_path = files
    out = tmp_path / "pi.csv"
    argv = ["eval", "--gt", str(gt_path), "--pred", str(res_path), "--protocol", "lvis"]
    assert main([*argv, "--quiet", "--per-image", str(out)]) == 0
    rows = list(csv.DictReader(out.read_text().splitlines()))
    r = evaluate(*files, protocol="lvis")
    o = r.outcome
    assert o is not None
    t = int(np.flatnonzero(o.thresholds == 0.5)[0])
    total = {k: sum(int(row[k]) for row in rows) for k in ("tp", "fp", "fn", "num_gt")}
    assert total["tp"] == int(o.true_positive(t).sum()) > 0
    assert total["fp"] == int((o.status_at(t) == FALSE_POSITIVE).sum())
    assert total["num_gt"] == int(o.gt_count[:, 0].sum())
    assert total["fn"] == total["num_gt"] - total["tp"]
    # the library route: the same table; a request the LVIS match cannot serve is refused
    assert repr(per_image(r).rows()) == repr(per_image(r, max_dets=5).rows())  # NaN cells
    with pytest.raises(ValueError, match="LVIS evaluation holds"):
        per_image(r, iou_threshold=0.33)


def test_bad_arguments(files: tuple[Path, Path]) -> None:
    gt_path, res_path = files
    lvis_gt = read_lvis_ground_truth(gt_path)
    pred = read_lvis_results(res_path, lvis_gt)
    with pytest.raises(ValueError, match="iou_type"):
        evaluate(gt_path, res_path, protocol="lvis", iou_type="keypoints")
    with pytest.raises(ValueError, match="max_dets"):
        evaluate_lvis(lvis_gt, pred, max_dets=0)
    with pytest.raises(TypeError, match="needs LVIS's labels"):
        evaluate(lvis_gt.dataset, pred, protocol="lvis")
    with pytest.raises(TypeError, match="gt: expected an LVISGroundTruth"):
        evaluate(3, pred, protocol="lvis")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="predictions"):
        evaluate(lvis_gt, 3, protocol="lvis")  # type: ignore[arg-type]
    with pytest.raises(DataFormatError, match="LVISGroundTruth"):
        evaluate_lvis(lvis_gt.dataset, pred)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="protocol"):
        evaluate(gt_path, res_path, protocol="lvis2")


def test_inputs_are_not_modified(files: tuple[Path, Path]) -> None:
    gt_json = json.loads(files[0].read_text())
    results = json.loads(files[1].read_text())
    before = (json.dumps(gt_json), json.dumps(results))
    evaluate(gt_json, results, protocol="lvis")
    assert (json.dumps(gt_json), json.dumps(results)) == before


def _ellipse(box: list[float], n: int = 12) -> list[float]:
    x, y, w, h = box
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return (
        np.round(np.c_[x + w / 2 * (1 + np.cos(t)), y + h / 2 * (1 + np.sin(t))], 2)
        .ravel()
        .tolist()
    )


def _segm_case(seed: int, with_bbox: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    mask_utils = pytest.importorskip("pycocotools.mask")
    gt, results = generate(seed, n_images=10, n_cats=8, dets_per_image=(5, 40), zero_area=0.0)
    for a in gt["annotations"]:
        a["segmentation"] = [_ellipse(a["bbox"])]
    for r in results:
        rle = mask_utils.frPyObjects([_ellipse(r["bbox"])], 480, 640)[0]
        r["segmentation"] = {"size": [480, 640], "counts": rle["counts"].decode("ascii")}
        if not with_bbox:
            del r["bbox"]
    return gt, results


@pytest.mark.parametrize("with_bbox", [True, False])
def test_segm_equals_lvis_api(with_bbox: bool) -> None:
    gt, results = _segm_case(5, with_bbox)
    ref, _ = run_lvis_api(gt, results, iou_type="segm")
    compare(dict(evaluate(gt, results, protocol="lvis", iou_type="segm").stats), ref)


def test_evaluator_lvis_needs_frequencies() -> None:
    from ioukit.evaluator import Evaluator

    # streamed LVIS (tests/evaluation/protocols/test_lvis_evaluator.py) needs the categories'
    # frequencies
    with pytest.raises(ValueError, match="frequencies: Evaluator\\(protocol='lvis'\\) needs"):
        Evaluator(protocol="lvis")


def test_protocol_object_needs_lvis_ground_truth(files: tuple[Path, Path]) -> None:
    from ioukit.evaluation import make_protocol

    lvis_gt = read_lvis_ground_truth(files[0])
    pred = read_lvis_results(files[1], lvis_gt)
    protocol = make_protocol("lvis")
    assert protocol.evaluate(lvis_gt, pred).stats == evaluate(*files, protocol="lvis").stats
    with pytest.raises(DataFormatError, match="read_lvis_ground_truth"):
        protocol.evaluate(lvis_gt.dataset, pred)
    with pytest.raises(ValueError, match="iou_type"):
        make_protocol("lvis", iou_type="keypoints")
    with pytest.raises(ValueError, match="options of protocol 'lvis'"):
        make_protocol("lvis", max_det=3)
    kept_gt, kept = protocol.select(lvis_gt, pred)
    assert kept.sum() == protocol.evaluate(lvis_gt, pred).params["num_results_evaluated"]
    assert kept_gt.shape == (len(lvis_gt.dataset),)


def test_annotation_id_zero_matches() -> None:
    """The one documented difference: lvis-api reads a match to annotation id 0 as no match."""
    gt = {
        "images": [{"id": 1, "neg_category_ids": [], "not_exhaustive_category_ids": []}],
        "categories": [{"id": 1, "name": "a", "frequency": "f"}],
        "annotations": [
            {"id": 0, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100.0},
            {"id": 5, "image_id": 1, "category_id": 1, "bbox": [50, 50, 10, 10], "area": 100.0},
        ],
    }
    res = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]
    ref, _ = run_lvis_api(gt, res)
    assert ref["AR@300"] == 0.0
    assert evaluate(gt, res, protocol="lvis").stats["AR@300"] == 0.5


def test_cli_segm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt, results = _segm_case(6, with_bbox=False)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(results))
    argv = ["eval", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "res.json")]
    assert main([*argv, "--protocol", "lvis", "--iou-type", "segm", "--quiet"]) == 0
    want = evaluate(gt, results, protocol="lvis", iou_type="segm")
    assert capsys.readouterr().out.startswith(want.summary())


def test_outcome_rows_refer_to_the_callers_datasets(files: tuple[Path, Path]) -> None:
    from ioukit.evaluation.outcome import IGNORED, TRUE_POSITIVE

    lvis_gt = read_lvis_ground_truth(files[0])
    pred = read_lvis_results(files[1], lvis_gt)
    r = evaluate_lvis(lvis_gt, pred)
    o = r.outcome
    assert o is not None and len(o) == r.params["num_results_evaluated"] < len(pred)
    np.testing.assert_array_equal(o.score, pred.scores[o.pred_row])
    np.testing.assert_array_equal(o.category_id, pred.category_id[o.pred_row])
    tp = o.status[:, 0, 0] == TRUE_POSITIVE
    gt_rows = o.matched_gt[tp, 0]
    np.testing.assert_array_equal(lvis_gt.dataset.category_id[gt_rows], o.category_id[tp])
    assert (o.status == IGNORED).any()
