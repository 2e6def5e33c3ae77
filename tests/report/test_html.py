"""The HTML report's data and page, checked without a browser (issue #28): counts against
pycocotools' own per-image records, curves against pycocotools' AP, escaping, refused outputs,
missing images, sizes."""

from __future__ import annotations

import base64
import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.errors import ParameterError
from ioukit.report import html_text, report_data, write_html
from ioukit.synthetic import make_detections
from tests.report.conftest import GT_PATH, PRED_PATH, pycocotools_counts

PAGE_DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def page_data(text: str) -> Any:
    """The JSON a written report embeds, its packed columns unpacked as the script does
    (integers over the scale, in double precision)."""
    found = PAGE_DATA.search(text)
    assert found is not None
    data = json.loads(found.group(1))
    for part, key in data.get("packed", []):
        c = data[part][key]
        ints = np.frombuffer(base64.b64decode(c["b64"]), dtype=np.dtype(c["t"]).newbyteorder("<"))
        values = ints.astype(np.float64) / c["scale"] if c["scale"] != 1 else ints
        data[part][key] = values.tolist()
    return data


def unpacked(pred: dict[str, Any]) -> dict[str, dict[int, Any]]:
    """The documented sparse match columns as dicts by prediction row."""
    m = pred["m"]
    return {
        "ignored": dict(zip(pred["ig"]["rows"], pred["ig"]["bits"], strict=True)),
        "matched": {r: (g, b) for r, g, b in zip(m["rows"], m["g"], m["bits"], strict=True)},
    }


def matched_gt(pred: dict[str, Any], sparse: dict[str, dict[int, Any]], p: int, t: int) -> int:
    """The documented decoding of a prediction's matched ground truth at threshold ``t``."""
    exceptions = pred["gx"].get(str(p))
    if exceptions is not None:
        return int(exceptions[t])
    g, bits = sparse["matched"].get(p, (-1, 0))
    return int(g) if (bits >> t) & 1 else -1


def counts_from_data(data: dict[str, Any], t: int) -> dict[int, tuple[int, int, int]]:
    """Per category id: (TP, FP, FN) read from the embedded per-object data at threshold t."""
    pred, gt = data["pred"], data["gt"]
    sparse = unpacked(pred)
    skipped = set(pred["ne"])
    ids = [row["id"] for row in data["classes"]["rows"]]
    tp = [0] * len(ids)
    fp = [0] * len(ids)
    hit = set()
    for p in range(len(pred["img"])):
        if p in skipped:
            continue
        if (pred["tp"][p] >> t) & 1:
            tp[pred["cls"][p]] += 1
            hit.add(matched_gt(pred, sparse, p, t))
        elif not (sparse["ignored"].get(p, 0) >> t) & 1:
            fp[pred["cls"][p]] += 1
    fn = [0] * len(ids)
    for g in range(len(gt["img"])):
        if gt["flag"][g] == 0 and g not in hit:
            fn[gt["cls"][g]] += 1
    return {cid: (tp[k], fp[k], fn[k]) for k, cid in enumerate(ids)}


@pytest.fixture(scope="module")
def fixture_page(fixture_result: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    return write_html(fixture_result, path)


@pytest.mark.parametrize("threshold_index", [0, 5, 9])
def test_per_class_counts_equal_pycocotools(fixture_page: Path, threshold_index: int) -> None:
    data = page_data(fixture_page.read_text(encoding="utf-8"))
    results = json.loads(PRED_PATH.read_text())
    expected = pycocotools_counts(GT_PATH, results, threshold_index)
    assert counts_from_data(data, threshold_index) == expected


def test_mean_pr_curves_give_pycocotools_ap(fixture_page: Path) -> None:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coco = COCO(str(GT_PATH))
        ev = COCOeval(coco, coco.loadRes(json.loads(PRED_PATH.read_text())), "bbox")
        ev.evaluate()
        ev.accumulate()
    data = page_data(fixture_page.read_text(encoding="utf-8"))
    curves = data["curves"]
    assert curves["thresholds"] == pytest.approx(list(ev.params.iouThrs))
    for t in range(len(ev.params.iouThrs)):
        reference = ev.eval["precision"][t, :, :, 0, -1]  # [R, K], -1 without ground truth
        ours = [c for c in curves["pr"][t] if c is not None]
        valid = reference[:, reference[0] > -1].T
        assert np.array(ours) == pytest.approx(valid, abs=5e-5)
        assert np.mean(curves["mean"][t]) == pytest.approx(np.mean(valid), abs=1e-4)


def test_summary_shows_the_stats_and_what_was_left_out(
    fixture_result: Any, fixture_page: Path
) -> None:
    text = fixture_page.read_text(encoding="utf-8")
    shown = dict(
        re.findall(r'<tr data-stat="([^"]+)"><th scope="row">[^<]+</th><td [^>]*>([^<]+)', text)
    )
    assert shown == {k: f"{v:.3f}" for k, v in fixture_result.stats.items()}
    crowds = int(np.count_nonzero(fixture_result.ground_truth.crowd))
    assert crowds > 0
    assert f"{crowds} crowd ground truths" in text
    assert "80 classes, 10 without ground truth" in text
    assert "protocol coco" in text and f"ioukit {ioukit.__version__}" in text


def test_classes_without_ground_truth_are_marked_not_minus_one(fixture_page: Path) -> None:
    rows = page_data(fixture_page.read_text(encoding="utf-8"))["classes"]["rows"]
    empty = [r for r in rows if not r["has_gt"]]
    assert len(empty) == 10
    assert all(v is None for r in empty for v in [*r["m"], *r["op"]])
    assert all(v != -1 for r in rows for v in r["m"])


def hostile_result() -> Any:
    gt, results = make_detections(num_images=6, num_classes=3, seed=3)
    gt["categories"][0]["name"] = "</script><script>alert(1)</script>"
    gt["categories"][1]["name"] = "<img src=x onerror=alert(2)>&amp;"
    gt["images"][0]["file_name"] = "<svg onload=alert(3)>.jpg"
    return ioukit.evaluate(gt, results)


def test_html_and_script_in_names_are_escaped() -> None:
    text = html_text(hostile_result(), title="<b>run</b>")
    assert text.count("<script") == 2  # the data block and the page's script
    assert "alert(1)" in text and "</script><script>alert" not in text
    assert "<img src=x" not in text and "<svg onload" not in text
    assert "<title>&lt;b&gt;run&lt;/b&gt;</title>" in text
    names = page_data(text)["class_names"]
    assert names[0] == "</script><script>alert(1)</script>"  # the data keeps the real name


def test_an_output_onto_an_input_is_refused(tmp_path: Path, fixture_result: Any) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text("{}")
    with pytest.raises(ParameterError, match="refusing to write onto the input"):
        write_html(fixture_result, gt, inputs=[gt])
    assert gt.read_text() == "{}"
    images = tmp_path / "images"
    images.mkdir()
    with pytest.raises(ParameterError, match="inside the input folder"):
        write_html(fixture_result, images / "report.html", images=images)
    assert not list(images.iterdir())
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_html(fixture_result, tmp_path / "no" / "report.html")


def test_cli_writes_the_report_and_refuses_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ioukit.cli import main

    out = tmp_path / "report.html"
    args = ["eval", "--gt", str(GT_PATH), "--pred", str(PRED_PATH), "--quiet"]
    assert main([*args, "--html", str(out)]) == 0
    assert page_data(out.read_text(encoding="utf-8"))["summary"]["protocol"] == "coco"
    before = PRED_PATH.read_bytes()
    assert main([*args, "--html", str(PRED_PATH)]) == 2
    assert "refusing to write onto the input" in capsys.readouterr().err
    assert PRED_PATH.read_bytes() == before


def small_images(tmp_path: Path) -> tuple[Any, Path, list[str]]:
    """A result of 6 images; 3 as PNG files, 1 broken, 2 absent."""
    from PIL import Image

    gt, results = make_detections(num_images=6, num_classes=2, seed=1)
    result = ioukit.evaluate(gt, results)
    folder = tmp_path / "imgs"
    folder.mkdir()
    stems = list(result.ground_truth.images.stems)
    for stem in stems[:3]:
        Image.new("RGB", (64, 48), (200, 30, 30)).save(folder / f"{stem}.png")
    (folder / f"{stems[3]}.jpg").write_bytes(b"not a jpeg")
    return result, folder, stems


def test_missing_and_unreadable_images_are_counted(tmp_path: Path) -> None:
    result, folder, stems = small_images(tmp_path)
    data = report_data(result, images=folder, embed_images=True)
    src = data["images"]["src"]
    assert [s is not None and s.startswith("data:image/jpeg;base64,") for s in src] == [
        True, True, True, False, False, False,
    ]  # fmt: skip
    assert data["images"]["missing"] == 3
    linked = report_data(result, images=folder, embed_images=False, output=tmp_path / "r.html")
    assert linked["images"]["src"][:3] == [f"imgs/{s}.png" for s in stems[:3]]
    assert linked["images"]["missing"] == 2  # linked: a broken file is not opened
    with pytest.raises(FileNotFoundError, match="expected a folder"):
        report_data(result, images=tmp_path / "nothing")


def test_protocols_without_a_kept_match_still_report() -> None:
    gt, results = make_detections(num_images=5, num_classes=2, seed=2)
    voc = report_data(ioukit.evaluate(gt, results, protocol="voc10"))
    assert not voc["summary"]["has_match"] and "m" not in voc["pred"]
    yolo = report_data(ioukit.evaluate(gt, results, protocol="yolo"))
    assert yolo["summary"]["has_match"] and len(yolo["thresholds"]) == 10


def test_the_100_image_report_is_small(fixture_page: Path) -> None:
    assert fixture_page.stat().st_size <= 5 * 1024 * 1024


def test_a_failed_write_leaves_nothing(tmp_path: Path, fixture_result: Any) -> None:
    out = tmp_path / "report.html"
    with pytest.raises(FileNotFoundError):
        write_html(fixture_result, out, images=tmp_path / "missing")
    assert not out.exists() and not list(tmp_path.iterdir())


def test_cli_with_yolo_labels_embeds_the_images(tmp_path: Path) -> None:
    from PIL import Image

    from ioukit.cli import main

    labels, preds, images = (tmp_path / n for n in ("labels", "preds", "images"))
    for folder in (labels, preds, images):
        folder.mkdir()
    for i, stem in enumerate(("a", "b", "c")):
        (labels / f"{stem}.txt").write_text("0 0.5 0.5 0.4 0.4\n1 0.2 0.2 0.1 0.1\n")
        (preds / f"{stem}.txt").write_text(f"0 0.5 0.5 0.4 0.4 0.9\n1 0.8 0.8 0.1 0.1 0.{i + 2}\n")
        Image.new("RGB", (80, 60), (20, 90, 200)).save(images / f"{stem}.jpg")
    out = tmp_path / "report.html"
    args = ["eval", "--gt", str(labels), "--pred", str(preds), "--images", str(images)]
    assert main([*args, "--html", str(out), "--quiet", "--no-fail"]) == 0
    data = page_data(out.read_text(encoding="utf-8"))
    assert data["images"]["stem"] == ["a", "b", "c"]
    assert all(s.startswith("data:image/jpeg;base64,") for s in data["images"]["src"])
    assert data["images"]["missing"] == 0 and data["images"]["mode"] == "embedded"
    assert data["images"]["w"] == [80.0] * 3  # the sizes the reader took from the headers
    assert counts_from_data(data, 0) == {0: (3, 0, 0), 1: (0, 3, 3)}


def cells_from_data(data: dict[str, Any]) -> dict[tuple[int, int], int]:
    """The class-agnostic confusion cells as the page counts them (documented decoding:
    each kept prediction at (its class, its ground truth's class or background), each kept
    ground truth no prediction took at (background, its class))."""
    c, pred, gt = data["confusion"], data["pred"], data["gt"]
    k = len(data["class_names"])
    cells: dict[tuple[int, int], int] = {}
    taken = set()
    for p, g in zip(c["p"], c["g"], strict=True):
        key = (pred["cls"][p], gt["cls"][g] if g >= 0 else k)
        cells[key] = cells.get(key, 0) + 1
        if g >= 0:
            taken.add(g)
    left_out = set(c["gx"])
    for g in range(len(gt["img"])):
        if g not in taken and g not in left_out:
            cells[(k, gt["cls"][g])] = cells.get((k, gt["cls"][g]), 0) + 1
    return cells


@pytest.mark.parametrize(("iou", "conf"), [(0.45, 0.25), (0.3, 0.0), (0.6, 0.5)])
def test_class_confusions_equal_ultralytics_transcription(
    fixture_result: Any, iou: float, conf: float
) -> None:
    from tests.report.conftest import ultralytics_cells

    data = page_data(html_text(fixture_result, confusion_iou=iou, confusion_conf=conf))
    expected = ultralytics_cells(GT_PATH, json.loads(PRED_PATH.read_text()), iou, conf)
    got = cells_from_data(data)
    assert got == expected
    k = len(data["class_names"])
    assert sum(n for (i, j), n in got.items() if i != j and k not in (i, j)) > 0  # confusions
    cm = fixture_result.confusion_matrix(iou_threshold=iou, score_threshold=conf)
    assert got == {(i, j): int(cm.matrix[i, j]) for i, j in np.argwhere(cm.matrix)}


@pytest.fixture(scope="module")
def trust_result(fixture_result: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    ids = fixture_result.ground_truth.images.ids.tolist()
    named = {"first 30": ids[:30], "last 50": {"image_ids": ids[50:]}}
    return fixture_result, named, page_data(html_text(fixture_result, bootstrap=40, slices=named))


def test_trust_numbers_are_the_api_values(trust_result: Any) -> None:
    result, named, data = trust_result
    boot = ioukit.bootstrap(result, n=40, seed=0)
    shown = data["trust"]["intervals"]
    assert shown["n"] == 40 and shown["ci"] == 0.95
    for name, lo, hi in zip(boot.stat_names, boot.lower, boot.upper, strict=True):
        assert shown["stats"][name] == pytest.approx([lo, hi], abs=5e-7)
    ids = [row["id"] for row in data["classes"]["rows"]]
    pairs = zip(boot.class_lower, boot.class_upper, strict=True)
    by_id = dict(zip(boot.category_ids.tolist(), pairs, strict=True))
    for cid, pair in zip(ids, shown["classes"], strict=True):
        lo, hi = by_id[cid]
        if np.isfinite(lo):
            assert pair == pytest.approx([lo, hi], abs=5e-7)
        else:
            assert pair is None
    assert sum(p is None for p in shown["classes"]) == 10  # the classes without ground truth
    calibration = result.calibration().to_dict()
    assert data["calibration"] == calibration
    errors = result.label_errors(n=50)
    le = data["label_errors"]
    assert le["p"] == errors.prediction_row.tolist() and le["g"] == errors.gt_row.tolist()
    assert le["kind"] == list(errors.kind) and le["counts"] == errors.counts
    assert le["score"] == pytest.approx(errors.score.tolist(), abs=5e-5)
    table = result.slices(named).rows()
    stats = data["trust"]["slices"]["stats"]
    for want, got in zip(table, data["trust"]["slices"]["rows"], strict=True):
        assert got["name"] == want["slice"]
        assert got["values"] == [None if want[k] == -1 else want[k] for k in stats]
    notes = [(f.code, f.message) for f in result.trust_notes()]
    assert [(n["code"], n["message"]) for n in data["trust"]["notes"]] == notes


def test_summary_shows_the_bootstrap_intervals(trust_result: Any) -> None:
    result, named, _ = trust_result
    text = html_text(result, bootstrap=40, slices=named)
    cells = dict(
        re.findall(r'<tr data-stat="([^"]+)">.*?<td class="ci" data-lower="([^"]+)"', text)
    )
    boot = ioukit.bootstrap(result, n=40, seed=0)
    assert {k: float(v) for k, v in cells.items()} == pytest.approx(
        dict(zip(boot.stat_names, boot.lower.tolist(), strict=True)), abs=5e-7
    )


def test_no_bootstrap_by_default(fixture_page: Path) -> None:
    data = page_data(fixture_page.read_text(encoding="utf-8"))
    assert data["trust"]["intervals"] is None and 'class="ci"' not in fixture_page.read_text()
    assert data["trust"]["notes"][0]["code"] == "provenance"


def test_cli_coco_ground_truth_with_images(tmp_path: Path) -> None:
    from PIL import Image

    from ioukit.cli import main

    gt = json.loads(GT_PATH.read_text())
    images = tmp_path / "val2014"
    (images / "sub").mkdir(parents=True)
    names = [i["file_name"] for i in gt["images"][:3]]
    for k, name in enumerate(names):  # found by file name, in a subfolder too
        Image.new("RGB", (64, 48), (20, 90, 200)).save(images / ("sub" if k else "") / name)
    out = tmp_path / "report.html"
    args = ["eval", "--gt", str(GT_PATH), "--pred", str(PRED_PATH), "--images", str(images)]
    assert main([*args, "--html", str(out), "--quiet", "--html-bootstrap", "5"]) == 0
    data = page_data(out.read_text(encoding="utf-8"))
    src = data["images"]["src"]
    found = [data["images"]["stem"][i] for i, s in enumerate(src) if s is not None]
    assert sorted(found) == sorted(Path(n).stem for n in names)
    assert data["images"]["missing"] == len(gt["images"]) - 3
    assert data["images"]["w"][0] == gt["images"][0]["width"]  # sizes from the file, not the images
    assert data["trust"]["intervals"]["n"] == 5
    # without --html the sizes question stays: the COCO file gives them
    assert main([*args, "--quiet"]) == 2
