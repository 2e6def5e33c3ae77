"""#29: one name for one thing. Every renamed keyword still works under its old name, with one
DeprecationWarning per name, gives what the new name gives, and refuses both names at once; the
docs' renames table lists exactly :data:`ioukit._renamed.RENAMED_KEYWORDS`."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit import _renamed
from ioukit.errors import ParameterError
from ioukit.io import read_ground_truth, read_predictions
from ioukit.io.plain_txt import read_txt_ground_truth, read_txt_predictions

DOCS = Path(__file__).parents[1] / "docs" / "names.md"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees the first use of each old name."""
    monkeypatch.setattr(_renamed, "_WARNED", set())


def _txt(tmp_path: Path) -> tuple[Path, Path]:
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    (gt / "a.txt").write_text("cat 10 10 30 40\ndog 50 50 70 90\n")
    (pred / "a.txt").write_text("cat 0.9 10 10 30 40\ndog 0.8 52 50 70 90\n")
    return gt, pred


def _old_and_new(call: Any, old: dict[str, Any], new: dict[str, Any]) -> tuple[Any, Any, list]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got_old = call(**old)
        call(**old)  # once per name
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got_new = call(**new)
    return got_old, got_new, deprecations


def _one_warning(deprecations: list, old: str, new: str) -> None:
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
    message = str(deprecations[0].message)
    assert f"({old}=...) is renamed" in message and f"({new}=...)" in message, message
    assert deprecations[0].filename == __file__  # points at the caller


@pytest.mark.parametrize("reader", [read_ground_truth, read_txt_ground_truth])
def test_readers_box_format_is_fmt(reader: Any, tmp_path: Path) -> None:
    gt_dir, _ = _txt(tmp_path)
    old, new, dep = _old_and_new(
        lambda **kw: reader(gt_dir, **kw), {"box_format": "xyxy"}, {"fmt": "xyxy"}
    )
    _one_warning(dep, "box_format", "fmt")
    np.testing.assert_array_equal(old.boxes, new.boxes)
    np.testing.assert_array_equal(new.boxes[0], [10, 10, 30, 40])  # xyxy, not xywh
    with pytest.raises(ParameterError, match="got both fmt= and its old name box_format="):
        reader(gt_dir, fmt="xyxy", box_format="xyxy")


@pytest.mark.parametrize("reader", [read_predictions, read_txt_predictions])
def test_prediction_readers_box_format_is_fmt(reader: Any, tmp_path: Path) -> None:
    gt_dir, pred_dir = _txt(tmp_path)
    gt = read_ground_truth(gt_dir, fmt="xyxy")
    old, new, dep = _old_and_new(
        lambda **kw: reader(pred_dir, gt, **kw), {"box_format": "xyxy"}, {"fmt": "xyxy"}
    )
    _one_warning(dep, "box_format", "fmt")
    np.testing.assert_array_equal(old.boxes, new.boxes)
    np.testing.assert_array_equal(new.boxes[1], [52, 50, 70, 90])


def test_evaluator_box_format_is_fmt() -> None:
    preds = [{"boxes": [[0, 0, 10, 9]], "scores": [0.9], "labels": [1]}]
    target = [{"boxes": [[0, 0, 10, 10]], "labels": [1]}]

    def run(**kw: Any) -> Any:
        ev = ioukit.Evaluator(iou_thresholds=[0.5], **kw)
        ev.update(preds, target)
        return ev

    old, new, dep = _old_and_new(run, {"box_format": "xywh"}, {"fmt": "xywh"})
    _one_warning(dep, "box_format", "fmt")
    assert old.compute().stats == new.compute().stats
    assert new.fmt == "xywh"
    with pytest.warns(DeprecationWarning, match=r"Evaluator\.box_format is renamed"):
        assert new.box_format == "xywh"
    with pytest.raises(ParameterError, match="got both fmt= and its old name box_format="):
        ioukit.Evaluator(fmt="xywh", box_format="xywh")
    # the old name is validated as the new one is
    _renamed._WARNED.clear()
    with pytest.raises(ParameterError, match="fmt"), pytest.warns(DeprecationWarning, match="fmt"):
        ioukit.Evaluator(box_format="ltrb")


def test_fusion_skip_box_threshold_is_score_threshold() -> None:
    boxes = [[[0.1, 0.1, 0.5, 0.5], [0.6, 0.6, 0.9, 0.9]], [[0.12, 0.1, 0.5, 0.52]]]
    scores = [[0.9, 0.1], [0.8]]
    labels = [[0, 0], [0]]

    def run(**kw: Any) -> Any:
        return ioukit.weighted_boxes_fusion(boxes, scores, labels, **kw)

    old, new, dep = _old_and_new(run, {"skip_box_threshold": 0.2}, {"score_threshold": 0.2})
    _one_warning(dep, "skip_box_threshold", "score_threshold")
    for a, b in zip(old, new, strict=True):
        np.testing.assert_array_equal(a, b)
    assert len(new[0]) == 1  # the 0.1 box was dropped
    assert len(run()[0]) == 2
    with pytest.raises(ParameterError, match="got both score_threshold="):
        run(score_threshold=0.3, skip_box_threshold=0.2)


def test_docs_table_lists_every_rename() -> None:
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \|", DOCS.read_text(), re.M)
    documented = {(where, old, new) for where, old, new in rows}
    table = {
        (where, old, new)
        for where, pairs in _renamed.RENAMED_KEYWORDS.items()
        for old, new in pairs
    }
    assert table <= documented, sorted(table - documented)


def test_box_formats_is_file_formats() -> None:
    from ioukit.io import formats

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = formats.box_formats()
        formats.box_formats()  # once per name
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
    message = str(deprecations[0].message)
    assert "box_formats() is renamed ioukit.io.formats.file_formats()" in message, message
    assert deprecations[0].filename == __file__  # points at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert formats.file_formats() == old
    assert old[:4] == ("coco", "yolo", "voc", "txt")


def test_docs_table_lists_every_renamed_function() -> None:
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \| [^|]+\|$", DOCS.read_text(), re.M)
    assert set(_renamed.RENAMED_FUNCTIONS.items()) <= set(rows), rows
