"""The compiled scanner of segm results files (compressed RLE masks, #27) against the general
parser: every shape reads to the same Dataset (segmentation dicts equal and in the file's key
order), and every bad record gets the general path's message, word for word."""

from __future__ import annotations

import json
import mmap
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit.errors import DataFormatError
from ioukit.io import coco
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.masks import RleStrings

GT = {
    "images": [{"id": 1, "width": 100, "height": 100}, {"id": 2, "width": 64, "height": 48}],
    "categories": [{"id": 1, "name": "cat"}, {"id": 7, "name": "dog"}],
    "annotations": [],
}
A = {"size": [100, 100], "counts": "\\g45o200000dd4"}  # a '\' in the string: escaped in JSON
B = {"counts": "V\\17Y100000j]1", "size": [48, 64]}  # counts first


def _record(**fields: Any) -> dict[str, Any]:
    return {"image_id": 1, "category_id": 1, "score": 0.5, "segmentation": A, **fields}


SHAPES: dict[str, list[dict[str, Any]]] = {
    "plain": [_record(bbox=[1, 2, 3, 4]), _record(image_id=2, category_id=7, segmentation=B)],
    "no_bbox_first": [_record(), _record(bbox=[0.5, 1e-3, 2, 3])],
    "extra_keys": [_record(bbox=[1, 2, 3, 4], id=9, area=3.5, note='caf\u00e9 \\ "q"')],
    "unicode_escape": [_record(segmentation={"size": [100, 100], "counts": "\\g45o2@0000dd4"})],
    "polygons": [_record(bbox=[1, 2, 3, 4], segmentation=[[1, 1, 5, 1, 5, 5]])],
    "uncompressed": [
        _record(bbox=[1, 2, 3, 4], segmentation={"size": [100, 100], "counts": [10000]})
    ],
    "null_bbox": [_record(bbox=[1, 2, 3, 4]), _record(bbox=None)],
    "empty_bbox": [_record(bbox=[1, 2, 3, 4]), _record(bbox=[])],
    "extra_rle_key": [_record(segmentation={**A, "x": 1})],
    "empty": [],
}
BAD: dict[str, list[dict[str, Any]]] = {
    "unknown_image": [_record(), _record(image_id=5)],
    "negative_box": [_record(bbox=[1, 2, 3, 4]), _record(bbox=[1, 2, -3, 4])],
    "wrong_size": [_record(bbox=[1, 2, 3, 4]), _record(segmentation=B)],
    "bad_string": [_record(), _record(segmentation={"size": [100, 100], "counts": "!!"})],
    "negative_side": [_record(segmentation={"size": [-1, 100], "counts": "0"})],
    "missing_segmentation": [_record(), {"image_id": 1, "category_id": 1, "score": 0.5}],
    "string_score": [_record(score="0.5")],
    "float_size": [_record(segmentation={"size": [100.0, 100], "counts": A["counts"]})],
}


def _write(tmp_path: Path, records: list[dict[str, Any]], indent: int | None) -> str:
    path = tmp_path / "results.json"
    # '@' stands for a \u escape of '0' (json.dumps writes ASCII as it is)
    path.write_text(json.dumps(records, indent=indent).replace("@", "\\u0030"))
    return str(path)


def _read_general(path: str, gt: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(coco, "_scan_segm_file", lambda *args, **kwargs: None)
        return read_coco_results(path, gt, iou_type="segm")


@pytest.mark.parametrize("indent", [None, 1])
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_shape_reads_as_the_general_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, indent: int | None
) -> None:
    gt = read_coco_ground_truth(GT)
    path = _write(tmp_path, SHAPES[name], indent)
    ours = read_coco_results(path, gt, iou_type="segm")
    general = _read_general(path, gt, monkeypatch)
    for column in ("boxes", "scores", "image_index", "category_id", "area", "annotation_id"):
        np.testing.assert_array_equal(getattr(ours, column), getattr(general, column))
    assert ours.segmentation is not None and general.segmentation is not None
    assert tuple(ours.segmentation) == general.segmentation
    assert [list(s) if isinstance(s, dict) else s for s in ours.segmentation or ()] == [
        list(s) if isinstance(s, dict) else s for s in general.segmentation or ()
    ]  # key order too


def test_the_scanner_takes_the_common_shapes(tmp_path: Path) -> None:
    gt = read_coco_ground_truth(GT)
    for name in ("plain", "no_bbox_first", "extra_keys", "empty"):
        data = json.dumps(SHAPES[name]).encode()
        assert coco._scan_segm_file(data, "r.json", gt) is not None, name
    for name in ("unicode_escape", "polygons", "uncompressed", "null_bbox", "extra_rle_key"):
        data = json.dumps(SHAPES[name]).replace("@", "\\u0030").encode()
        assert coco._scan_segm_file(data, "r.json", gt) is None, name


def test_the_file_is_released_behind_the_copy_and_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the strings are copied a few records at a time, the map's pages dropped behind them
    gt = read_coco_ground_truth(GT)
    records = [
        _record(bbox=[1, 2, 3, 4], score=i / 50, segmentation=[A, B][i % 2], image_id=1 + i % 2,
                category_id=[1, 7][i % 2])
        for i in range(50)
    ]  # fmt: skip
    path = _write(tmp_path, records, 2)
    released: list[int] = []
    madvise = mmap.mmap.madvise

    class Map(mmap.mmap):
        def madvise(self, option: int, start: int = 0, length: int = 0) -> None:
            released.append(length)
            madvise(self, option, start, length)

    monkeypatch.setattr(coco, "_RELEASE_STEP", 7)

    def map_bytes(name: str, limit: int) -> Map:
        with open(name, "rb") as handle:
            return Map(handle.fileno(), 0, access=mmap.ACCESS_READ)

    monkeypatch.setattr(coco, "map_bytes", map_bytes)
    ours = read_coco_results(path, gt, iou_type="segm")
    assert len(released) == 8 and released == sorted(released) and released[-1] > 0
    assert isinstance(ours.segmentation, RleStrings)
    assert tuple(ours.segmentation) == _read_general(path, gt, monkeypatch).segmentation


def test_the_masks_are_one_flat_column_of_plain_dicts(tmp_path: Path) -> None:
    # no Python object per mask: the strings stay in one buffer, the dicts are built on demand
    gt = read_coco_ground_truth(GT)
    ours = read_coco_results(_write(tmp_path, SHAPES["plain"], None), gt, iou_type="segm")
    assert isinstance(ours.segmentation, RleStrings)
    assert ours.segmentation.counts.dtype == np.uint8
    assert ours.segmentation.counts.tobytes() == (A["counts"] + B["counts"]).encode()
    seg = ours.segmentation[1]
    assert type(seg) is dict and type(seg["size"]) is list and type(seg["counts"]) is str
    assert seg == B and list(seg) == list(B)
    seg["size"].append(1)  # a copy: the column does not change
    assert ours.segmentation[1] == B
    assert tuple(ours.segmentation[::-1]) == (B, A)
    again = pickle.loads(pickle.dumps(ours.segmentation))
    assert tuple(again) == (A, B)


@pytest.mark.parametrize("name", sorted(BAD))
def test_every_bad_record_gets_the_general_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    gt = read_coco_ground_truth(GT)
    path = _write(tmp_path, BAD[name], None)
    with pytest.raises(DataFormatError) as general:
        _read_general(path, gt, monkeypatch)
    with pytest.raises(DataFormatError) as ours:
        read_coco_results(path, gt, iou_type="segm")
    assert str(ours.value) == str(general.value)
    assert str(ours.value).startswith(path)


_BODY_PIECES = st.sampled_from(
    [*"0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmno", " ", "~", "\x7f",
     "\\\\", '\\"', "\\n", "\\u0030", "\u00e9", "\u20ac", "\x1f", "\x00"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_BODY_PIECES, max_size=40), st.integers(0, 9))
def test_counts_strings_read_as_the_general_parser(pieces: list[str], pad: int) -> None:
    """The counts string is read 8 bytes at a time while it is plain printable ASCII (no
    backslash), else by the full lexer: either way the scanner keeps what ``json`` reads or
    leaves the file to the general path (``pad`` moves the string across the 8-byte words)."""
    gt = read_coco_ground_truth(GT)
    body = "".join(pieces)
    text = (
        '[{"image_id": 1, "category_id": 1, "score": 0.5,' + " " * pad
        + '"segmentation": {"size": [100, 100], "counts": "' + body + '"}}]'
    )  # fmt: skip
    data = text.encode("utf-8")
    try:
        want: Any = json.loads(data)[0]["segmentation"]
    except ValueError:
        want = None
    try:
        scanned = coco._scan_segm_file(data, "r.json", gt)
    except DataFormatError:
        assert want is None  # not JSON: refused from where the scanner stopped
        return
    if scanned is not None:
        assert scanned[4] is not None and tuple(scanned[4]) == (want,)
