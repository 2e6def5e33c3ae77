"""Messy input that must give the right result or a clear error (issue #16 items 3, 4, 6, 8,
10, 15 and the fast/strict JSON agreement)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from ioukit.cli import main
from ioukit.errors import DataFormatError
from ioukit.io import detect_format, read_ground_truth, read_predictions
from ioukit.io._build import load_class_names
from ioukit.io.coco import read_coco_results
from tests.conftest import DATA

GOOD = DATA / "bad_inputs" / "good"


def _folder(root: Path, name: str, files: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir()
    for rel, text in files.items():
        (folder / rel).write_text(text)
    return folder


# --- item 3: a YOLO class token is an index, always ------------------------------------------


def test_yolo_numeric_token_is_an_index_even_when_a_name_is_a_number(tmp_path: Path) -> None:
    gt = _folder(
        tmp_path,
        "labels",
        {"classes.txt": "a\n0\n", "img.txt": "0 0.5 0.5 0.2 0.2\n1 0.2 0.2 0.1 0.1\n"},
    )
    ds = read_ground_truth(gt, image_size=(100, 100))
    assert ds.categories.names == ("a", "0")
    assert ds.category_id.tolist() == [0, 1]  # "0" is class 0 ("a"), never the class named "0"
    pred = _folder(tmp_path, "pred", {"img.txt": "1 0.2 0.2 0.1 0.1 0.9\n"})
    p = read_predictions(pred, ds, format="yolo", classes=gt / "classes.txt")
    assert p.category_id.tolist() == [1]


def test_yolo_prediction_classes_map_by_name(tmp_path: Path) -> None:
    gt = _folder(
        tmp_path, "labels", {"classes.txt": "cat\ndog\n", "img.txt": "1 0.5 0.5 0.2 0.2\n"}
    )
    ds = read_ground_truth(gt, image_size=(100, 100))
    pred = _folder(tmp_path, "pred", {"img.txt": "0 0.5 0.5 0.2 0.2 0.9\n"})
    # the prediction side numbers its classes the other way round
    p = read_predictions(pred, ds, format="yolo", classes=["dog", "cat"])
    assert p.category_id.tolist() == [1]


@pytest.mark.parametrize(
    "names",
    [["cat", "cat"], {0: "cat", 1: "cat"}, {0.5: "cat"}, {True: "cat"}, {-1: "cat"}, [["x"]]],
)
def test_bad_class_lists_are_refused(names: object) -> None:
    with pytest.raises(DataFormatError):
        load_class_names(names)  # type: ignore[arg-type]


def test_yaml_names_forms(tmp_path: Path) -> None:
    good = tmp_path / "data.yaml"
    good.write_text("names:\n  0: cat\n  1: dog\n")
    assert load_class_names(good) == {0: "cat", 1: "dog"}
    good.write_text("names: [cat, dog]\n")
    assert load_class_names(good) == {0: "cat", 1: "dog"}


# --- item 4: images sharing a stem -------------------------------------------------------------


def test_same_stem_images_are_refused_for_stem_matched_predictions(tmp_path: Path) -> None:
    doc = {
        "images": [
            {"id": 1, "file_name": "train/a.jpg", "width": 100, "height": 100},
            {"id": 2, "file_name": "val/a.jpg", "width": 100, "height": 100},
        ],
        "annotations": [],
        "categories": [{"id": 0, "name": "cat"}],
    }
    (tmp_path / "gt.json").write_text(json.dumps(doc))
    gt = read_ground_truth(tmp_path / "gt.json")
    pred = _folder(tmp_path, "pred", {"a.txt": "0 0.5 0.5 0.2 0.2 0.9\n"})
    with pytest.raises(DataFormatError, match=r"images 1 and 2 share the file stem 'a'"):
        read_predictions(pred, gt, format="yolo")
    # COCO results are matched by id: no ambiguity, no error
    results = [{"image_id": 2, "category_id": 0, "bbox": [1, 1, 2, 2], "score": 0.5}]
    assert read_coco_results(results, gt).image_index.tolist() == [1]


# --- item 6: the list ----------------------------------------------------------------------------


def test_upper_case_txt_labels_are_read(tmp_path: Path) -> None:
    gt = _folder(
        tmp_path, "labels", {"a.TXT": "0 0.5 0.5 0.2 0.2\n", "b.txt": "0 0.1 0.1 0.1 0.1\n"}
    )
    assert detect_format(gt) == "yolo"
    ds = read_ground_truth(gt, image_size=(10, 10))
    assert ds.images.stems == ("a", "b") and len(ds) == 2


def _eval_json(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    out = tmp_path / "r.json"
    status = main(["eval", *args, "--json", str(out), "--protocol", "voc10", "--force"])
    err = capsys.readouterr().err
    assert status == 0, err
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def test_relative_txt_predictions_follow_a_txt_ground_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``class conf cx cy w h`` relative lines look like YOLO; the txt ground truth decides."""
    gt = _folder(tmp_path, "gt", {"a.txt": "0 0.5 0.5 0.25 0.25\n"})
    pred = _folder(tmp_path, "pred", {"a.txt": "0 0.9 0.5 0.5 0.25 0.25\n"})
    report = _eval_json(
        ["--gt", str(gt), "--gt-format", "txt", "--pred", str(pred)], tmp_path, capsys
    )
    assert report["stats"]["mAP"] == pytest.approx(1.0)


def test_yolo_predictions_with_a_coco_ground_truth_get_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred = _folder(tmp_path, "pred", {"img1.txt": "1 0.2 0.2 0.2 0.2 0.9\n"})
    status = main(["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(pred)])
    err = capsys.readouterr().err
    assert status == 0, err
    assert "read as YOLO" in err and "--pred-format txt" in err


def test_one_rounded_coordinate_does_not_flip_a_folder_to_pixels(tmp_path: Path) -> None:
    lines = "".join(f"0 0.{k}5 0.5 0.1 0.1\n" for k in range(1, 9))
    gt = _folder(tmp_path, "labels", {"a.txt": lines, "b.txt": "0 1.002 0.5 0.1 0.1\n"})
    assert detect_format(gt) == "yolo"
    with pytest.raises(DataFormatError, match=r"b.txt: line 1: cx"):
        read_ground_truth(gt)


def test_pixel_txt_with_integer_classes_stays_txt(tmp_path: Path) -> None:
    gt = _folder(tmp_path, "gt", {"a.txt": "0 50 50 20 20\n1 10 10 5 5\n"})
    assert detect_format(gt) == "txt"


@pytest.mark.parametrize("option", [["--image-size", "640x480"], ["--images", "."]])
def test_image_size_options_with_coco_ground_truth_are_an_error(
    option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json"), *option]
    )
    err = capsys.readouterr().err
    assert status == 2
    assert "only for YOLO or relative txt" in err and "gt.json" in err


def test_hash_class_names_are_names_not_comments(tmp_path: Path) -> None:
    gt = _folder(tmp_path, "gt", {"a.txt": "#cat 10 10 20 20\ndog 1 1 5 5\n"})
    ds = read_ground_truth(gt)
    assert ds.categories.names == ("#cat", "dog") and len(ds) == 2


def test_second_bndbox_is_an_error(tmp_path: Path) -> None:
    box = "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox>"
    xml = f"<annotation><object><name>cat</name>{box}{box}</object></annotation>"
    gt = _folder(tmp_path, "voc", {"a.xml": xml})
    with pytest.raises(DataFormatError, match=r"object\[1\]/bndbox\[2\]"):
        read_ground_truth(gt)


def test_stray_xml_next_to_devkit_files_is_an_error(tmp_path: Path) -> None:
    gt = read_ground_truth(GOOD / "voc_gt")
    pred = _folder(
        tmp_path,
        "results",
        {"comp4_det_test_cat.txt": "img1 0.9 10 10 30 30\n", "notes.xml": "<annotation/>"},
    )
    with pytest.raises(DataFormatError, match="both devkit detection files"):
        read_predictions(pred, gt)


# --- item 8 -----------------------------------------------------------------------------------


def test_empty_annotations_list_is_a_warning_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((GOOD / "gt.json").read_text())
    doc["annotations"] = []
    (tmp_path / "gt.json").write_text(json.dumps(doc))
    status = main(["eval", "--gt", str(tmp_path / "gt.json"), "--pred", str(GOOD / "pred.json")])
    captured = capsys.readouterr()
    assert status in (0, 1), captured.err  # 1 only if a diagnostic calls it an error
    assert "Traceback" not in captured.err
    del doc["annotations"]
    (tmp_path / "gt.json").write_text(json.dumps(doc))
    status = main(["eval", "--gt", str(tmp_path / "gt.json"), "--pred", str(GOOD / "pred.json")])
    assert status == 2
    assert "annotations: missing" in capsys.readouterr().err


# --- fast scanner vs strict parser --------------------------------------------------------------

_VALID = [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9}]
_INVALID = {
    "leading_zero": '[{"image_id": 001, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9}]',
    "no_int_digits": '[{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": .9}]',
    "bare_word": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 0.9, "x": y}]',
    "nan": '[{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": NaN}]',
    "single_quotes": "[{'image_id': 1, 'category_id': 1, 'bbox': [10, 10, 20, 20], 'score': 0.9}]",
    "nested_nan": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "k": [NaN]}]',
    "bare_word_n": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "x": nope}]',
    "bare_word_t": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "x": [tru]}]',
    "no_fraction": '[{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 1.}]',
    # deep inside skipped values, where no linear pre-check could see them (#16)
    "missing_comma": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 1, '
    '"x": [1 2]}]',
    "missing_colon": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 1, '
    '"x": {"a" 1}}]',
    "mismatched": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 1, '
    '"x": [[1}]}]',
    "trailing_comma": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 1, '
    '"x": {"a": [1,]}}]',
    "bad_escape": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 1, '
    '"x": "\\q"}]',
    "control_char": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 1, '
    '"x": "a\tb"}]',
    "exponent_without_digits": '[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2e], '
    '"score": 1}]',
}


def _scan_code(data: bytes) -> int:
    from ioukit._kernels.coco_json import scan_results

    cap = max(data.count(b"{"), 1)
    out = [np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty((cap, 4)), np.empty(cap)]
    code, _ = scan_results(np.frombuffer(data, np.uint8), *out)
    return int(code)


@pytest.mark.parametrize("name", sorted(_INVALID))
def test_scanner_and_strict_parser_agree_on_invalid_json(name: str, tmp_path: Path) -> None:
    gt = read_ground_truth(GOOD / "gt.json")
    from ioukit._kernels.coco_json import INVALID

    text = _INVALID[name]
    assert _scan_code(text.encode()) == INVALID
    path = tmp_path / "pred.json"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=r"pred\.json") as got:
        read_coco_results(path, gt)
    # worded from where the scanner stopped, without a second parse (#23 item 17): the first
    # byte that cannot continue the document, inside the token the strict parser names (it
    # points at the token's start: a bare word, a leading zero, an escape, a trailing comma)
    found = re.search(r"\(line 1, column (\d+), byte (\d+): expected .+, got .+\)$", str(got.value))
    assert found is not None and str(got.value).startswith(f"{path}: not valid JSON ("), got.value
    column, byte = int(found[1]), int(found[2])
    orjson = pytest.importorskip("orjson")
    with pytest.raises(orjson.JSONDecodeError) as strict:
        orjson.loads(text)
    assert column == byte + 1 and 0 <= byte - strict.value.pos <= 3, (got.value, strict.value)

    def no_constants(name: str) -> float:
        raise ValueError(f"not JSON: {name}")

    # the strict reference (RFC 8259, no NaN) refuses it too
    with pytest.raises(ValueError, match=r"JSON|Expecting|Extra|Invalid|Illegal"):
        json.loads(text, parse_constant=no_constants)


@pytest.mark.parametrize("indent", [None, 0, 2])
def test_valid_results_keep_the_fast_path(indent: int | None, tmp_path: Path) -> None:
    records = [
        {
            **_VALID[0],
            "score": s,
            "bbox": [1.5, 2e-3, 3e2, -0.0 + 4],
            "extra": {"a": [1, None, True]},
        }
        for s in np.linspace(0, 1, 7).tolist()
    ]
    data = json.dumps(records, indent=indent).encode()
    from ioukit._kernels.coco_json import OK

    assert _scan_code(data) == OK
    path = tmp_path / "pred.json"
    path.write_bytes(data)
    gt = read_ground_truth(GOOD / "gt.json")
    fast = read_coco_results(path, gt)
    strict = read_coco_results(json.loads(data), gt)
    assert np.array_equal(fast.boxes, strict.boxes) and np.array_equal(fast.scores, strict.scores)


# --- item 15: VOC with the standard library only --------------------------------------------------


def test_voc_reads_without_defusedxml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "defusedxml", None)
    monkeypatch.setitem(sys.modules, "defusedxml.ElementTree", None)
    ds = read_ground_truth(GOOD / "voc_gt")
    assert ds.boxes.tolist() == [[10.0, 10.0, 30.0, 30.0]]


def test_voc_refuses_any_dtd(tmp_path: Path) -> None:
    box = "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox>"
    xml = f"<!DOCTYPE annotation><annotation><object><name>cat</name>{box}</object></annotation>"
    gt = _folder(tmp_path, "voc", {"a.xml": xml})
    with pytest.raises(DataFormatError, match="DTD"):
        read_ground_truth(gt)


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000 + "]" * 100_000, '[{"image_id": 1, "x": NaN}]', '{"images": [], "a": Infinity}'],
)
def test_standard_json_fallback_is_as_strict_as_orjson(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without orjson the standard ``json`` module parses: no NaN, no RecursionError escapes."""
    monkeypatch.setitem(sys.modules, "orjson", None)
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=r"x\.json: not valid JSON"):
        read_ground_truth(path)
    gt = read_ground_truth(GOOD / "gt.json")
    with pytest.raises(DataFormatError, match=r"x\.json"):
        read_coco_results(path, gt)
