"""Every malformed or hostile input: exit status 2, one stderr line naming the file and place,
no traceback, no partial output file."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from ioukit.cli import main

DATA = Path(__file__).parents[1] / "data" / "bad_inputs"
GOOD = DATA / "good"

# case -> (arguments after "eval", text the one stderr line must contain)
GT_CASES: dict[str, tuple[list[str], str]] = {
    "coco_truncated.json": ([], "coco_truncated.json"),
    "coco_empty.json": ([], "coco_empty.json"),
    "coco_binary.json": ([], "coco_binary.json"),
    "coco_top_level_list.json": ([], "coco_top_level_list.json"),
    "coco_annotation_missing_bbox.json": ([], "annotations[0]"),
    "coco_missing_images_key.json": ([], "coco_missing_images_key.json"),
    "coco_bbox_three_numbers.json": ([], "annotations[0].bbox"),
    "coco_nan_coordinate.json": ([], "coco_nan_coordinate.json"),
    "coco_infinite_coordinate.json": ([], "coco_infinite_coordinate.json"),
    "coco_negative_size.json": ([], "annotations[0].bbox"),
    "coco_duplicate_annotation_ids.json": ([], "coco_duplicate_annotation_ids.json"),
    "coco_bbox_not_a_list.json": ([], "annotations[0].bbox"),
    "yolo_pixel_coordinates": (["--gt-format", "yolo", "--image-size", "640x480"], "line 2"),
    "yolo_four_values": (["--gt-format", "yolo"], "img1.txt: line 1"),
    "yolo_class_name": (["--gt-format", "yolo"], "img1.txt: line 1: class"),
    "yolo_nan": (["--gt-format", "yolo"], "img1.txt: line 1: cx"),
    "yolo_negative_width": (["--gt-format", "yolo"], "img1.txt: line 1"),
    "yolo_binary": (["--gt-format", "yolo"], "img1.txt: line 1"),
    "yolo_not_utf8": (["--gt-format", "yolo"], "img1.txt: line 2"),
    "voc_malformed": ([], "img1.xml: line 1"),
    "voc_entity_bomb": ([], "img1.xml"),
    "voc_external_entity": ([], "img1.xml"),
    "voc_missing_bndbox": ([], "annotation/object[1]/bndbox"),
    "voc_x2_less_than_x1": ([], "annotation/object[1]/bndbox"),
    "voc_string_coordinate": ([], "annotation/object[1]/bndbox/xmin"),
    "voc_wrong_root": ([], "img1.xml"),
    "voc_empty_file": ([], "img1.xml"),
    "voc_bad_difficult": ([], "annotation/object[1]/difficult"),
    "voc_negative_size": ([], "annotation/size/width"),
    "txt_wrong_count": ([], "img1.txt: line 1"),
    "txt_infinite": ([], "img1.txt: line 1"),
    "data_yaml_bad_names/labels": (
        ["--classes", str(DATA / "data_yaml_bad_names/data.yaml")],
        "data.yaml",
    ),
    "unreadable_folder_as_file.json": ([], "unreadable_folder_as_file.json"),
    "does_not_exist.json": ([], "does_not_exist.json"),
}

PRED_CASES: dict[str, tuple[list[str], str]] = {
    "pred_coco_string_score.json": (["--gt", str(GOOD / "gt.json")], "[0].score"),
    "pred_coco_unknown_image.json": (["--gt", str(GOOD / "gt.json")], "[0].image_id"),
    "pred_coco_top_level_dict.json": (
        ["--gt", str(GOOD / "gt.json")],
        "pred_coco_top_level_dict.json",
    ),
    "pred_yolo_missing_conf": (
        ["--gt", str(GOOD / "yolo_gt"), "--image-size", "100x100", "--pred-format", "yolo"],
        "img1.txt: line 1",
    ),
    "pred_yolo_string_score": (
        ["--gt", str(GOOD / "yolo_gt"), "--image-size", "100x100", "--pred-format", "yolo"],
        "img1.txt: line 1: conf",
    ),
    "pred_txt_string_score": (
        ["--gt", str(GOOD / "txt_gt"), "--pred-format", "txt"],
        "img1.txt: line 1",
    ),
    "pred_voc_det_x2_less_than_x1": (
        ["--gt", str(GOOD / "voc_gt")],
        "comp4_det_test_cat.txt: line 1",
    ),
    "pred_voc_det_unknown_image": (
        ["--gt", str(GOOD / "voc_gt")],
        "comp4_det_test_cat.txt: line 1",
    ),
    "pred_voc_det_wrong_count": (["--gt", str(GOOD / "voc_gt")], "comp4_det_test_cat.txt: line 1"),
}

OPTION_CASES: dict[str, tuple[list[str], str]] = {
    "bad_image_size": (
        [
            "--gt",
            str(GOOD / "yolo_gt"),
            "--pred",
            str(GOOD / "pred.json"),
            "--image-size",
            "640by480",
        ],
        "image_size",
    ),
    "missing_classes_file": (
        ["--gt", str(GOOD / "yolo_gt"), "--pred", str(GOOD / "pred.json"), "--classes", "nope.txt"],
        "nope.txt",
    ),
    "missing_pred": (
        ["--gt", str(GOOD / "gt.json"), "--pred", str(DATA / "missing.json")],
        "missing.json",
    ),
}


def _run(args: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["eval", *args, "--json", str(out / "report.json"), "--csv", str(out / "t.csv")])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _check(status: int, err: str, expected: str, out: Path) -> None:
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert expected in lines[0], lines[0]
    assert lines[0].startswith("ioukit eval: error: ")
    assert not any(out.iterdir()), "a partial output file was written"


def test_corpus_is_large_enough() -> None:
    files = [p for p in DATA.rglob("*") if p.is_file() and GOOD not in p.parents]
    assert len(files) >= 30
    assert len(GT_CASES) + len(PRED_CASES) + len(OPTION_CASES) >= 40


@pytest.mark.parametrize("case", sorted(GT_CASES))
def test_bad_ground_truth(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra, expected = GT_CASES[case]
    args = ["--gt", str(DATA / case), "--pred", str(GOOD / "pred.json"), *extra]
    status, _, err = _run(args, tmp_path, capsys)
    _check(status, err, expected, tmp_path)


@pytest.mark.parametrize("case", sorted(PRED_CASES))
def test_bad_predictions(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra, expected = PRED_CASES[case]
    status, _, err = _run(["--pred", str(DATA / case), *extra], tmp_path, capsys)
    _check(status, err, expected, tmp_path)


@pytest.mark.parametrize("case", sorted(OPTION_CASES))
def test_bad_options(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args, expected = OPTION_CASES[case]
    status, _, err = _run(args, tmp_path, capsys)
    _check(status, err, expected, tmp_path)


def test_entity_bomb_is_refused_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    start = time.perf_counter()
    status, _, err = _run(
        ["--gt", str(DATA / "voc_entity_bomb"), "--pred", str(GOOD / "pred.json")], tmp_path, capsys
    )
    assert status == 2
    assert "entit" in err
    assert time.perf_counter() - start < 5  # generous: a real expansion would take minutes


def test_good_inputs_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(
        ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")], tmp_path, capsys
    )
    assert status == 0, err
    assert (tmp_path / "report.json").is_file()
    assert "Average Precision" in out


def test_real_entry_point_has_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ioukit",
            "eval",
            "--gt",
            str(DATA / "yolo_nan"),
            "--gt-format",
            "yolo",
            "--pred",
            str(GOOD / "pred.json"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr
