"""``yolo predict`` labels with a class the ground truth has no instance of (#23 item 20):
under ``--protocol yolo`` they are false positives of a class without AP, as ``yolo val``
(Ultralytics' ``ap_per_class`` averages over the classes with ground truth); elsewhere the
error names ``--skip-unknown``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioukit.cli import main

_GT = {"a": ["0 0.3 0.3 0.2 0.2", "1 0.7 0.7 0.2 0.3"], "b": ["0 0.5 0.5 0.4 0.4"]}
_PRED = {
    "a": ["0 0.31 0.3 0.2 0.2 0.9", "1 0.7 0.72 0.2 0.3 0.8", "0 0.6 0.1 0.1 0.1 0.4"],
    "b": ["0 0.52 0.5 0.4 0.4 0.7", "1 0.2 0.2 0.1 0.1 0.6"],
}
_UNSEEN = {
    "a": ["10 0.5 0.5 0.3 0.3 0.95"],
    "b": ["10 0.3 0.6 0.2 0.2 0.5", "7 0.1 0.1 0.1 0.1 0.3"],
}


def _folder(path: Path, rows: dict[str, list[str]]) -> Path:
    path.mkdir(parents=True)
    for stem, lines in rows.items():
        (path / f"{stem}.txt").write_text("".join(f"{line}\n" for line in lines))
    return path


def _stats(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    assert main(["eval", *argv, "--json", str(out)]) == 0
    err = capsys.readouterr().err
    return json.loads(out.read_text()), err


def test_unseen_classes_are_false_positives_without_ap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = _folder(tmp_path / "labels" / "val", _GT)
    both = {s: _PRED[s] + _UNSEEN[s] for s in _PRED}
    pred = _folder(tmp_path / "runs" / "detect" / "predict" / "labels", both)
    clean = _folder(tmp_path / "clean", _PRED)
    base = ["--gt", str(gt), "--protocol", "yolo", "--image-size", "640x480"]
    report, err = _stats([*base, "--pred", str(pred)], tmp_path / "r1.json", capsys)
    assert "3 prediction(s) of class(es) 7, 10 without a ground-truth instance" in err
    assert "--skip-unknown" in err
    skipped, _ = _stats(
        [*base, "--pred", str(pred), "--skip-unknown"], tmp_path / "r2.json", capsys
    )
    without, _ = _stats([*base, "--pred", str(clean)], tmp_path / "r3.json", capsys)
    # mAP, precision and recall are those of the classes with ground truth
    assert report["stats"] == skipped["stats"] == without["stats"]
    rows = {row["category_id"]: row for row in report["per_class"]}
    assert sorted(rows) == [0, 1, 7, 10]
    # no ground truth: null in the JSON (#29 item 5; --missing -1 gives pycocotools' -1)
    assert (rows[10]["num_gt"], rows[10]["num_pred"], rows[10]["AP50"]) == (0, 2, None)
    assert (rows[7]["num_gt"], rows[7]["num_pred"]) == (0, 1)


def test_other_protocols_name_skip_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = _folder(tmp_path / "gt", _GT)
    pred = _folder(tmp_path / "pred", {s: _PRED[s] + _UNSEEN[s] for s in _PRED})
    argv = ["eval", "--gt", str(gt), "--pred", str(pred), "--image-size", "640x480"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "class 10 is not a ground-truth class" in line and "--skip-unknown" in line


def test_an_unknown_image_is_still_an_error_under_yolo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = _folder(tmp_path / "gt", _GT)
    pred = _folder(tmp_path / "pred", {**_PRED, "c": ["10 0.5 0.5 0.1 0.1 0.9"]})
    argv = ["eval", "--gt", str(gt), "--pred", str(pred), "--protocol", "yolo"]
    assert main([*argv, "--image-size", "640x480"]) == 2
    assert "image 'c' is not in the ground truth" in capsys.readouterr().err
