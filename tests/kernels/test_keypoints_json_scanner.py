"""The compiled keypoint-results scanner equals the general JSON path, or steps aside."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.errors import DataFormatError
from ioukit.io import coco_keypoints
from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
from tests.keypoints_data import make_keypoint_set


def _both(path: Path, records: list[dict[str, Any]], gt: Any) -> tuple[Any, Any]:
    return read_coco_keypoint_results(path, gt), read_coco_keypoint_results(records, gt)


def _assert_same(a: Any, b: Any) -> None:
    for name in ("keypoints", "boxes", "area", "scores", "image_index", "category_id", "box_wh"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("with_bbox", [False, True])
def test_generated_files(tmp_path: Path, with_bbox: bool) -> None:
    gt_dict, records = make_keypoint_set(8, seed=4, with_bbox=with_bbox)
    gt = read_coco_keypoints(gt_dict)
    path = tmp_path / "res.json"
    path.write_text(json.dumps(records))
    _assert_same(*_both(path, records, gt))
    path.write_text(json.dumps(records, indent=2))  # other whitespace
    _assert_same(*_both(path, records, gt))


def test_hard_numbers_and_other_keys(tmp_path: Path) -> None:
    gt_dict, records = make_keypoint_set(2, seed=5, num_keypoints=3)
    gt = read_coco_keypoints(gt_dict)
    text = json.dumps(records)
    hard = ["1e-30", "0.12345678901234567890123", "123456789012345678901", "-0.0", "2E+2",
            "9007199254740993", "4.9e-324", "1.7976931348623157e308"]  # fmt: skip
    records[0]["keypoints"][:8] = [float(h) for h in hard]
    records[0]["score"] = float("0.30000000000000004441")
    records[1]["extra"] = {"a": [1, {"b": 'x\\"]}'}], "c": None, "d": True}
    records[1]["name"] = 'caf\u00e9 \\ "quoted" [{'

    text = json.dumps(records)
    for h in hard:  # write the literal spellings, not Python's repr
        text = text.replace(json.dumps(float(h)), h, 1)
    text = text.replace("0.30000000000000004", "0.30000000000000004441", 1)
    path = tmp_path / "res.json"
    path.write_text(text)
    a, b = _both(path, json.loads(text), gt)
    _assert_same(a, b)


def test_scanner_used_and_steps_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gt_dict, records = make_keypoint_set(2, seed=6, num_keypoints=2)
    gt = read_coco_keypoints(gt_dict)
    path = tmp_path / "res.json"
    calls: list[bool] = []
    scan = coco_keypoints._scan_file

    def spy(*args: Any) -> Any:
        out = scan(*args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(coco_keypoints, "_scan_file", spy)
    path.write_text(json.dumps(records))
    read_coco_keypoint_results(path, gt)
    assert calls == [True]
    # shapes the scanner does not take: the general parser decides, with its messages
    bad = [dict(r) for r in records]
    bad[1]["keypoints"] = bad[1]["keypoints"][:-3]
    path.write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match=rf"^{path}: results\[1\].keypoints: expected 6"):
        read_coco_keypoint_results(path, gt)
    bad = [dict(r) for r in records]
    bad[0]["image_id"] = "1000"
    path.write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match=rf"^{path}: results\[0\].image_id: expected an int"):
        read_coco_keypoint_results(path, gt)
    bad = [dict(r) for r in records]
    bad[0]["bbox"] = [0, 0, 1, 1]
    path.write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match=rf"^{path}: results\[1\].bbox: missing"):
        read_coco_keypoint_results(path, gt)
    # not JSON: refused by the scanner itself, from where it stopped (no second parse)
    text = json.dumps(records)[:-5]
    path.write_text(text)
    with pytest.raises(DataFormatError, match=rf"^{path}: not valid JSON") as caught:
        read_coco_keypoint_results(path, gt)
    assert f"line 1, column {len(text) + 1}, byte {len(text)}: " in str(caught.value)
    assert str(caught.value).endswith("got the end of the file)")
    assert calls == [True, False, False, False]
    path.write_text("[]")
    assert len(read_coco_keypoint_results(path, gt)) == 0


def _assert_bitwise(a: Any, b: Any) -> None:
    for name in ("keypoints", "boxes", "area", "scores", "box_wh"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and x.tobytes() == y.tobytes(), name  # -0.0 != +0.0 here


@pytest.mark.parametrize(
    "values",
    [
        ["0", "0", "0.0", "0.0", "0", "0"],  # every extent 0 (+0.0)
        ["-0.0", "0", "0.0", "-0.0", "1", "2"],  # signed zeros: NumPy takes the extents
        ["-1e-300", "5e-324", "3", "1e200", "-2", "-2"],
        ["7", "7", "7", "7", "7", "7"],
    ],
)
def test_extents_equal_numpy_bitwise(tmp_path: Path, values: list[str]) -> None:
    gt_dict, records = make_keypoint_set(3, seed=7, num_keypoints=3)
    gt = read_coco_keypoints(gt_dict)
    for r in records:
        r.pop("bbox", None)
    text = json.dumps(records)
    first = json.dumps(records[0]["keypoints"])
    kp = [values[0], values[1], "1", values[2], values[3], "0", values[4], values[5], "2"]
    text = text.replace(first, "[" + ", ".join(kp) + "]", 1)
    path = tmp_path / "res.json"
    path.write_text(text)
    _assert_bitwise(*_both(path, json.loads(text), gt))


def test_an_error_after_the_scan_closes_the_map(tmp_path: Path) -> None:
    gt_dict, records = make_keypoint_set(2, seed=8, num_keypoints=2)
    gt = read_coco_keypoints(gt_dict)
    records[1]["image_id"] = 10**9  # unknown image: named after the scan, the map closed
    path = tmp_path / "res.json"
    path.write_text(json.dumps(records))
    with pytest.raises(DataFormatError, match=r"results\[1\]\.image_id"):
        read_coco_keypoint_results(path, gt)
    path.write_text("")  # an empty file is not mapped: read_bytes and the parser decide
    with pytest.raises(DataFormatError, match="not valid JSON"):
        read_coco_keypoint_results(path, gt)


def test_signed_zeros_in_many_records_equal_numpy_bitwise(tmp_path: Path) -> None:
    """Records with a -0.0 get NumPy's extent (taken on those rows alone), the others the
    scanner's: together bit for bit what NumPy gives on the whole array."""
    gt_dict, records = make_keypoint_set(40, seed=9, num_keypoints=5)
    gt = read_coco_keypoints(gt_dict)
    rng = np.random.default_rng(9)
    choices = ["0.0", "-0.0", "0", "1.5", "-2.25", "-0.0"]
    texts = []
    for r in records:
        r.pop("bbox", None)
        kp = [str(rng.choice(choices)) if (i % 3 != 2) else "1" for i in range(15)]
        head = {k: r[k] for k in ("image_id", "category_id", "score")}
        texts.append(json.dumps(head)[:-1] + ', "keypoints": [' + ", ".join(kp) + "]}")
    text = "[" + ", ".join(texts) + "]"
    path = tmp_path / "res.json"
    path.write_text(text)
    scanned, general = _both(path, json.loads(text), gt)
    assert np.signbit(scanned.boxes[:, :2]).any()  # some -0.0 extents made it through
    _assert_bitwise(scanned, general)
