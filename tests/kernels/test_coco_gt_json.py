"""``coco_gt_json.scan_annotations``: a ground-truth file's annotation columns (#24);
``coco_gt_json.has_digit_run``: the drop-in's guard before orjson.

Its twin is the strict parser: where it answers OK, the columns are the parsed records'
``id, image_id, category_id, bbox, area, iscrowd`` (bit for bit); every shape it does not
take gets a code other than OK (the caller parses the file), and INVALID only where the
parser refuses the text too.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioukit._kernels import coco_gt_json

_SETTINGS = settings(
    derandomize=True, max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

_numbers = st.integers(-(10**6), 10**6) | st.floats(
    -1e9, 1e9, allow_nan=False, allow_infinity=False
)
_extra = st.recursive(
    st.none() | st.booleans() | _numbers | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
    max_size=3),
    max_leaves=12,
)  # fmt: skip
_record = st.fixed_dictionaries(
    {
        "id": st.integers(-(2**52), 2**52),
        "image_id": st.integers(-(2**52), 2**52),
        "category_id": st.integers(0, 100),
        "bbox": st.lists(_numbers, min_size=4, max_size=4),
        "area": _numbers,
        "iscrowd": st.sampled_from([0, 1, 0.0, 2, -0.0]),
    },
    optional={"segmentation": _extra, "ignore": _extra, "attributes": _extra},
)


def _scan(text: bytes) -> tuple[int, int, tuple[np.ndarray, ...]]:
    buf = np.frombuffer(text, dtype=np.uint8)
    cap = len(text) // 20 + 1
    cols = (
        np.zeros(cap, np.int64),
        np.zeros(cap, np.int64),
        np.zeros(cap, np.int64),
        np.zeros((cap, 4)),
        np.zeros(cap),
        np.zeros(cap),
    )
    code, n = coco_gt_json.scan_annotations(buf, 0, len(text), *cols)
    return int(code), int(n), tuple(c[:n] for c in cols)


def _check(records: list[dict[str, Any]], text: bytes) -> None:
    code, n, (ids, image_id, category_id, bbox, area, crowd) = _scan(text)
    assert code == coco_gt_json.OK and n == len(records)
    parsed = json.loads(text)
    for name, column in (("id", ids), ("image_id", image_id), ("category_id", category_id)):
        assert column.tolist() == [r[name] for r in parsed], name
    want = np.array([r["bbox"] for r in parsed], dtype=np.float64).reshape(-1, 4)
    assert bbox.tobytes() == want.tobytes()
    assert area.tobytes() == np.array([r["area"] for r in parsed], dtype=np.float64).tobytes()
    assert (crowd != 0).tolist() == [bool(r["iscrowd"]) for r in parsed]


@_SETTINGS
@given(st.lists(_record, max_size=6), st.sampled_from([None, 1]))
def test_columns_are_the_parsed_records(records: list[dict[str, Any]], indent: Any) -> None:
    text = json.dumps(records, indent=indent).encode()
    _check(records, text)


def test_a_span_inside_a_file_and_number_forms() -> None:
    body = (
        b'[{"iscrowd": 0, "area": 1E2, "bbox": [ -0.0 , 1e-3,2.5E+1, 7 ], "id": 9,'
        b' "segmentation": {"counts": "a\\"b\\u00e9", "size": [2, 3]}, "image_id": -4,'
        b' "category_id": 3, "id": 10}]'  # a repeated key: the last wins, as in a dict
    )
    text = b'{"images": [], "annotations": ' + body + b', "categories": []}'
    start = text.index(b"[{")
    buf = np.frombuffer(text, dtype=np.uint8)
    cols = [np.zeros(2, np.int64) for _ in range(3)] + [np.zeros((2, 4)), np.zeros(2), np.zeros(2)]
    code, n = coco_gt_json.scan_annotations(buf, start, start + len(body), *cols)
    assert (code, n) == (coco_gt_json.OK, 1)
    assert cols[0][0] == 10 and cols[1][0] == -4 and cols[3][0].tolist() == [-0.0, 1e-3, 25.0, 7.0]
    assert np.signbit(cols[3][0, 0]) and cols[4][0] == 100.0
    with pytest.raises(ValueError, match="start, end"):
        coco_gt_json.scan_annotations(buf, 5, len(text) + 1, *cols)


_GOOD = '{"id": 1, "image_id": 2, "category_id": 3, "bbox": [0, 0, 1, 1], "area": 1, "iscrowd": 0}'


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("[]", "OK"),
        (f"[{_GOOD}]", "OK"),
        (_GOOD, "UNSUPPORTED"),  # not an array
        (f"[{_GOOD}, 1]", "UNSUPPORTED"),
        ("[" + _GOOD.replace('"iscrowd": 0', '"iscrowd": true') + "]", "UNSUPPORTED"),
        ("[" + _GOOD.replace('"id": 1', '"id": 1.5') + "]", "UNSUPPORTED"),
        ("[" + _GOOD.replace('"id": 1', '"id": 1.0') + "]", "UNSUPPORTED"),
        ("[" + _GOOD.replace('"id": 1', '"id": 9007199254740993') + "]", "UNSUPPORTED"),
        ("[" + _GOOD.replace('"image_id": 2', '"image_id": "2"') + "]", "UNSUPPORTED"),
        ("[" + _GOOD.replace("[0, 0, 1, 1]", "[0, 0, 1]") + "]", "UNSUPPORTED"),
        ("[" + _GOOD.replace("[0, 0, 1, 1]", "[0, 0, 1, 1, 2]") + "]", "UNSUPPORTED"),
        ("[" + _GOOD.replace('"area"', '"\\u0061rea"') + "]", "UNSUPPORTED"),
        ("[" + _GOOD.replace(', "area": 1', "") + "]", "MISSING_KEY"),
        ("[{}]", "MISSING_KEY"),
        (f"[{_GOOD},]", "INVALID"),
        (f"[{_GOOD}", "INVALID"),
        ("[" + _GOOD.replace('"area": 1', '"area": 01') + "]", "INVALID"),
        (f"[{_GOOD}] x", "INVALID"),
    ],
)
def test_codes(text: str, code: str) -> None:
    got, _, _ = _scan(text.encode())
    assert got == getattr(coco_gt_json, code)
    if code == "INVALID":
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)
    else:
        json.loads(text)


def test_too_many_records() -> None:
    text = f"[{_GOOD}, {_GOOD}]".encode()
    cols = [np.zeros(1, np.int64) for _ in range(3)] + [np.zeros((1, 4)), np.zeros(1), np.zeros(1)]
    code, n = coco_gt_json.scan_annotations(np.frombuffer(text, np.uint8), 0, len(text), *cols)
    assert (code, n) == (coco_gt_json.TOO_MANY, 1)


@_SETTINGS
@given(st.binary(max_size=80) | st.text("0123456789.,e-", max_size=80).map(str.encode),
       st.integers(1, 21))  # fmt: skip
def test_digit_run_is_the_regular_expression(data: bytes, length: int) -> None:
    # the twin: a regular expression search for the run
    want = re.search(rb"[0-9]{%d}" % length, data) is not None
    assert coco_gt_json.has_digit_run(data, length) is want


@pytest.mark.parametrize(
    ("data", "want"),
    [
        (b"", False),
        (b"1" * 18, False),
        (b"1" * 19, True),
        (b"x" + b"1" * 19, True),
        (b"1" * 19 + b"x", True),
        (b"1" * 18 + b"." + b"1" * 18, False),
        (b'{"id": 18446744073709551616}', True),  # 2**64: orjson would make it a float
        (b'{"id": -9223372036854775809}', True),
        (b'{"id": 9223372036854775807, "w": 0.25}', True),  # 19 digits: conservative
        (b"[" + b"123456789012345678," * 1000 + b"0]", False),  # runs of 18 only
    ],
)
def test_digit_run_cases(data: bytes, want: bool) -> None:
    assert coco_gt_json.has_digit_run(data, 19) is want
    assert coco_gt_json.has_digit_run(np.frombuffer(data, np.uint8), 19) is want


def test_digit_run_length_must_be_positive() -> None:
    with pytest.raises(ValueError, match="length: expected at least 1, got 0"):
        coco_gt_json.has_digit_run(b"1", 0)


@_SETTINGS
@given(st.lists(st.lists(_numbers | st.floats(allow_nan=False), min_size=4, max_size=4),
                max_size=20))  # fmt: skip
def test_box_corners_are_numpy_bit_for_bit(rows: list[list[float]]) -> None:
    # the twin: NumPy's copy, in-place sum and product
    bbox = np.array(rows, dtype=np.float64).reshape(-1, 4)
    want_wh = bbox[:, 2:].copy()  # (ascontiguousarray would be a view for one row)
    want = bbox.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        want_area = want_wh[:, 0] * want_wh[:, 1]
        want[:, 2:] += want[:, :2]
    box_wh, area = np.empty((len(bbox), 2)), np.empty(len(bbox))
    coco_gt_json.box_corners(bbox, box_wh, area)
    assert bbox.tobytes() == want.tobytes()
    assert box_wh.tobytes() == want_wh.tobytes() and area.tobytes() == want_area.tobytes()


def test_box_corners_shapes() -> None:
    with pytest.raises(ValueError, match=r"expected shapes \(N, 4\), \(N, 2\), \(N,\)"):
        coco_gt_json.box_corners(np.zeros((2, 4)), np.zeros((3, 2)), np.zeros(2))


_KEYS = ("image_id", "category_id", "bbox", "score")


@_SETTINGS
@given(
    st.lists(st.tuples(st.integers(-(2**53) + 1, 2**53 - 1), st.integers(0, 99),
                       st.lists(_numbers, min_size=4, max_size=4), _numbers),
             min_size=1, max_size=6),
    st.permutations(_KEYS), st.sampled_from([None, 2]),
)  # fmt: skip
def test_result_forms_are_json_s(rows: list[Any], keys: list[str], indent: Any) -> None:
    # the twin: json's objects (the key order, which numbers are ints)
    records = [{k: dict(zip(_KEYS, r, strict=True))[k] for k in keys} for r in rows]
    text = json.dumps(records, indent=indent).encode()
    bits = np.zeros(len(rows), dtype=np.uint8)
    order = coco_gt_json.plain_result_forms(text, bits)
    codes = [_KEYS.index(k) for k in keys]
    assert order == codes[0] * 64 + codes[1] * 16 + codes[2] * 4 + codes[3]
    parsed = json.loads(text)
    want = [sum(type(v) is int and 1 << k for k, v in enumerate([*p["bbox"], p["score"]]))
            for p in parsed]  # fmt: skip
    assert bits.tolist() == want


@pytest.mark.parametrize(
    "text",
    [
        b"[]",
        b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1, "x": 0}]',
        b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4]}]',
        b'[{"image_id": 1, "image_id": 2, "bbox": [1, 2, 3, 4], "score": 1}]',
        b'[{"image_id": 1.0, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1}]',
        b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4, 5], "score": 1}]',
        b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 12345678901234567], "score": 1}]',
        b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1}, '
        b'{"category_id": 2, "image_id": 1, "bbox": [1, 2, 3, 4], "score": 1}]',
        b'{"annotations": []}',
    ],
)
def test_result_forms_refuse_the_rest(text: bytes) -> None:
    assert coco_gt_json.plain_result_forms(text, np.zeros(4, dtype=np.uint8)) == -1
