"""The compiled results scanners accept exactly what the strict JSON parsers accept (#16).

The scanners (``coco_json``, ``keypoint_json``) share one strict lexer (``_json_lex.pxd``).
Their twin is the strict parser: ``json.loads`` without NaN/Infinity, and ``orjson``. A
document the scanner calls ``INVALID`` must be refused by both; one it reads (``OK``) must be
accepted by both, with the same values. Documents are generated (derandomized, so every run
sees the same ones) from JSON values, token soup and one-character mutations.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioukit._kernels import coco_json, keypoint_json

orjson = pytest.importorskip("orjson")

_SETTINGS = settings(
    derandomize=True,
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _strict_accepts(data: bytes) -> bool | None:
    """Both strict parsers accept ``data``; None when they disagree (infinity, lone surrogates)."""
    try:
        json.loads(data, parse_constant=_no_constant)
        json_ok = True
    except (ValueError, RecursionError):
        json_ok = False
    try:
        orjson.loads(data)
        orjson_ok = True
    except orjson.JSONDecodeError:
        orjson_ok = False
    return json_ok if json_ok == orjson_ok else None


def _scan(data: bytes) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    cap = max(data.count(b"{"), 1)
    ids = np.zeros(cap, np.int64)
    cats = np.zeros(cap, np.int64)
    boxes = np.zeros((cap, 4))
    scores = np.zeros(cap)
    code, n = coco_json.scan_results(np.frombuffer(data, np.uint8), ids, cats, boxes, scores)
    return int(code), int(n), ids[:n], cats[:n], boxes[:n], scores[:n]


def _scan_keypoints(data: bytes, k: int = 1) -> tuple[int, int, np.ndarray]:
    cap = max(data.count(b"{"), 1)
    flat = np.zeros(cap * 3 * k)
    code, n = keypoint_json.scan_keypoint_results(
        np.frombuffer(data, np.uint8), 3 * k, np.zeros(cap, np.int64), np.zeros(cap, np.int64),
        np.zeros(cap), flat, np.zeros(4 * cap), np.zeros(cap, np.uint8), np.zeros(4 * cap),
        np.zeros(cap), np.zeros(cap, np.uint8),
    )  # fmt: skip
    return int(code), int(n), flat[: n * 3 * k]


def _record(extra: bytes, score: bytes = b"0.5") -> bytes:
    return (
        b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": '
        + score
        + b', "x": '
        + extra
        + b"}]"
    )


def _keypoint_record(extra: bytes, value: bytes = b"1.5") -> bytes:
    return (
        b'[{"image_id": 1, "category_id": 2, "score": 0.5, "keypoints": [1, '
        + value
        + b', 2], "x": '
        + extra
        + b"}]"
    )


def _check_agreement(data: bytes) -> None:
    accepted = _strict_accepts(data)
    code = _scan(data)[0]
    found = coco_json.locate_error(np.frombuffer(data, np.uint8))
    if accepted is None:  # the strict parser in use decides
        assert code == coco_json.UNSUPPORTED, data
        assert _scan_keypoints(data)[0] == keypoint_json.UNSUPPORTED, data
        assert found is None, data
        return
    assert (code == coco_json.OK) <= accepted, data
    assert (code == coco_json.INVALID) <= (not accepted), data
    k_code = _scan_keypoints(data)[0]
    assert (k_code == keypoint_json.OK) <= accepted, data
    assert (k_code == keypoint_json.INVALID) <= (not accepted), data
    assert (found is None) >= accepted, data
    if coco_json.INVALID in (code, k_code):  # the reader words the error from `found`
        assert found is not None, data
        _check_place(data, *found)


def _check_place(data: bytes, byte: int, line: int, column: int, expected: str) -> None:
    """``locate_error``'s place: the first byte that cannot continue the document, at or
    after the start of the token orjson names; line and column counted as Python counts."""
    before = data[:byte].decode("utf-8")  # valid: the lexer checks UTF-8 as it goes
    assert line == before.count("\n") + 1, data
    assert column == len(before) - before.rfind("\n"), data
    assert expected, data
    with pytest.raises(orjson.JSONDecodeError) as strict:
        orjson.loads(data)
    assert strict.value.pos <= len(before), (data, byte, str(strict.value))
    prefix = coco_json.locate_error(np.frombuffer(data[:byte], np.uint8))
    assert prefix is None or prefix[0] == byte, (data, byte, prefix)  # nothing wrong before


# JSON values without what the strict parsers disagree on (lone surrogates, deep nesting)
_strings = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | _strings,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_strings, inner, max_size=4),
    max_leaves=12,
)  # fmt: skip

_TOKENS = [
    b"[", b"]", b"{", b"}", b",", b":", b" ", b"\n", b"\t", b'"a"', b'"\\n"', b'"\\u00e9"',
    b'"\\ud83d\\ude00"', b'"\\q"', b'"\\u12"', b'"\x01"', b'"\xc3\xa9"', b'"\xff"',
    b'"\xed\xa0\x80"', b'"\xc0\x80"', b"'a'", b"0", b"-0", b"01", b"-01", b".5", b"1.", b"1e",
    b"1e+5", b"-", b"+1", b"1.5E-3", b"123456789012345678901234", b"0.1e400", b"true",
    b"false", b"null", b"tru", b"nul", b"nulls", b"NaN", b"Infinity", b"-Infinity", b"x", b"\x0c",
]  # fmt: skip


@_SETTINGS
@given(st.lists(st.sampled_from(_TOKENS), max_size=12))
def test_token_soup_in_a_skipped_value(tokens: list[bytes]) -> None:
    _check_agreement(_record(b"".join(tokens)))
    _check_agreement(_keypoint_record(b"".join(tokens)))


@_SETTINGS
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=16))
def test_token_soup_as_a_whole_file(tokens: list[bytes]) -> None:
    _check_agreement(b"".join(tokens))


@_SETTINGS
@given(_values, st.sampled_from([None, 0, 2]), st.booleans())
def test_valid_values_are_skipped(value: Any, indent: int | None, ascii_only: bool) -> None:
    extra = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()
    data = _record(extra)
    assert _scan(data)[0] == coco_json.OK
    assert _scan_keypoints(_keypoint_record(extra))[0] == keypoint_json.OK


@_SETTINGS
@given(_values, st.integers(0, 10_000), st.sampled_from([*_TOKENS, b""]))
def test_one_mutation(value: Any, where: int, token: bytes) -> None:
    extra = json.dumps(value).encode()
    at = where % (len(extra) + 1)
    _check_agreement(_record(extra[:at] + token + extra[at + 1 :]))  # replace one character
    _check_agreement(_record(extra[:at] + token + extra[at:]))  # insert


_NUMBER = st.from_regex(
    r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
)


@_SETTINGS
@given(_NUMBER)
def test_numbers_convert_as_the_strict_parser(text: str) -> None:
    data = _record(b"[]", score=text.encode())
    code, n, _, _, _, scores = _scan(data)
    if np.isinf(float(text)):
        assert code == coco_json.UNSUPPORTED  # orjson refuses it, json gives inf
        return
    assert code == coco_json.OK and n == 1
    want = np.float64(json.loads(data)[0]["score"])
    assert scores[0].tobytes() == want.tobytes(), text  # -0.0 and +0.0 told apart
    code, n, flat = _scan_keypoints(_keypoint_record(b"[]", value=text.encode()))
    assert code == keypoint_json.OK
    assert flat[1].tobytes() == np.float64(json.loads(text)).tobytes(), text


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        (b"[1 2]", coco_json.INVALID),
        (b'{"a" 1}', coco_json.INVALID),
        (b"[1}", coco_json.INVALID),
        (b"[1,]", coco_json.INVALID),
        (b'{"a": 1,}', coco_json.INVALID),
        (b"001", coco_json.INVALID),
        (b".9", coco_json.INVALID),
        (b"'a'", coco_json.INVALID),
        (b"[nul]", coco_json.INVALID),
        (b"[true false]", coco_json.INVALID),
        (b'"\xe2\x82"', coco_json.INVALID),  # truncated UTF-8
        (b'"\\ud800"', coco_json.UNSUPPORTED),  # json accepts a lone surrogate, orjson not
        (b"[1e400]", coco_json.UNSUPPORTED),  # json: inf; orjson refuses
        (b"[" * 600 + b"]" * 600, coco_json.UNSUPPORTED),  # deeper than the scanner goes
        (b"[" * 100 + b"]" * 100, coco_json.OK),
        (b'{"a": [1, {"b": "\\"]}"}], "c": null}', coco_json.OK),
    ],
)
def test_the_brief_cases(extra: bytes, code: int) -> None:
    assert _scan(_record(extra))[0] == code


def test_the_smallest_records_fit_the_capacity() -> None:
    from ioukit.io import coco, coco_keypoints
    from ioukit.io.coco_keypoints import read_coco_keypoints

    gt = coco.read_coco_ground_truth(
        {"images": [{"id": 1}], "annotations": [], "categories": [{"id": 1}]}
    )
    for count in (1, 2, 57, 1000):
        data = (
            b"["
            + b",".join([b'{"image_id":1,"category_id":1,"bbox":[1,1,1,1],"score":1}'] * count)
            + b"]"
        )
        assert coco._scan_file(data, "r.json", gt) is not None
    kp_gt = read_coco_keypoints(
        {
            "images": [{"id": 1}],
            "annotations": [],
            "categories": [{"id": 1, "keypoints": ["a", "b"]}],
        }
    )
    head = b'{"image_id":1,"category_id":1,"score":1,"keypoints":'
    for k, record in ((1, head + b"[1,1,1]}"), (2, head + b"[1,1,1,1,1,1]}")):
        for count in (1, 2, 1000):
            data = b"[" + b",".join([record] * count) + b"]"
            assert coco_keypoints._scan_file(data, k, "r.json", kp_gt) is not None


def _scan_numbers(texts: list[str]) -> np.ndarray:
    """The numbers ``texts`` as the keypoint scanner converts them (one record, K = len / 3)."""
    texts = texts + ["0"] * (-len(texts) % 3)
    data = (
        '[{"image_id": 1, "category_id": 1, "score": 1, "keypoints": [' + ", ".join(texts) + "]}]"
    ).encode()
    code, n, flat = _scan_keypoints(data, k=len(texts) // 3)
    assert code == keypoint_json.OK and n == 1
    return flat


# halfway cases, the edges of the subnormal and normal ranges, the largest double, the
# numbers Clinger's fast path, Eisel-Lemire and PyOS_string_to_double share between them
_HARD_NUMBERS = [
    "9007199254740993", "9007199254740992", "9007199254740994", "9007199254740995",
    "0.1", "0.3", "0.30000000000000004", "1.0000000000000002", "1e23", "1e22", "1e-22",
    "2.2250738585072011e-308", "2.2250738585072014e-308", "2.225073858507201e-308",
    "4.9406564584124654e-324", "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
    "1e-342", "1e-343", "8.98846567431158e307", "1.7976931348623157e308",
    "1.7976931348623158e308", "9.999999999999999e307", "1e308", "18446744073709551615",
    "1844674407370955161", "7.2057594037927933e16", "123456789012345678e-5",
    "3.4028234663852886e38", "1.5e-45", "398.6570739746094", "0.7951935655656966",
    "9999999999999999999", "9999999999999999999e-20", "1000000000000000000e-18",
    "4503599627370497.5", "2.0000000000000004", "5.0000000000000011e-1",
    # more than 19 digits (float() converts them): 2**64 wraps a 64-bit significand to 0
    "18446744073709551616", "36893488147419103232e-1", "0.000000000000000000000000",
    "100000000000000000000000000000e-10", "0e99999999", "1e-99999999", "0.1000000000000000000001",
]  # fmt: skip


def test_hard_numbers_convert_as_float() -> None:
    texts = _HARD_NUMBERS + ["-" + t for t in _HARD_NUMBERS]
    got = _scan_numbers(texts)[: len(texts)]
    want = np.array([float(t) for t in texts])
    assert got.tobytes() == want.tobytes()


def _random_number(rng: Any) -> str:
    kind = rng.randrange(6)
    if kind == 0:  # 17 significant digits, any exponent
        return f"{rng.randrange(10**16, 10**17)}e{rng.randrange(-345, 290)}"
    if kind == 1:  # 1 to 19 digits, any exponent
        return f"{rng.randrange(1, 10 ** rng.randrange(1, 20))}e{rng.randrange(-345, 290)}"
    if kind == 2:  # odd integers above 2**53: halfway cases between doubles
        return f"{(rng.randrange(2**53, 10**19) | 1)}e{rng.randrange(-30, 30)}"
    if kind == 3:  # shortest repr of a random double
        x = np.frombuffer(rng.getrandbits(64).to_bytes(8, "little"), np.float64)[0]
        return repr(abs(float(x))) if np.isfinite(x) else "1.5"
    if kind == 4:  # long mantissas with leading zeros in the fraction
        zeros = "0" * rng.randrange(0, 12)
        return f"{rng.randrange(0, 10**9)}.{zeros}{rng.randrange(1, 10 ** rng.randrange(1, 20))}"
    return f"{rng.randrange(1, 10**19)}e{rng.randrange(-345, -300)}"  # subnormal


def test_random_numbers_convert_as_float() -> None:
    import random

    rng = random.Random(20261130)
    texts = [_random_number(rng) for _ in range(30000)]
    texts = [("-" if rng.random() < 0.3 else "") + t for t in texts if np.isfinite(float(t))]
    got = _scan_numbers(texts)[: len(texts)]
    want = np.array([float(t) for t in texts])
    bad = np.flatnonzero(got.view(np.uint64) != want.view(np.uint64))
    assert not len(bad), [texts[i] for i in bad[:5]]


# Go's strconv table (src/strconv/eisel_lemire.go, detailedPowersOfTen, golang/go, BSD
# licence), entries {low, high} as published there, copied here for the q below
_GO_POW10 = {
    -342: (0x113FAA2906A13B3F, 0xEEF453D6923BD65A),
    -300: (0x6DBD630A48AAF406, 0xAB70FE17C79AC6CA),
    -200: (0xBEDBFC4411068A9C, 0xC3F490AA77BD60FC),
    -100: (0x59787E2B93BC56F7, 0xDFF9772470297EBD),
    -48: (0x5560C018580D5D52, 0xBB127C53B17EC159),
    32: (0xF020000000000000, 0x9DC5ADA82B70B59D),
    55: (0xFFF4B4E3F741CF6D, 0xD0CF4B50CFE20765),
    100: (0x593C2626705F9C56, 0x924D692CA61BE758),
    200: (0xB428F8AC016561DB, 0xA738C6BEBB12D16C),
    300: (0xE0470A63E6BD56C3, 0xBF21E44003ACDD2C),
    308: (0x570F09EAA7EA7648, 0x8E679C2F5E44FF8F),
}


def test_pow10_table_equals_go() -> None:
    """Eisel-Lemire's 128-bit powers of ten, computed at import, equal Go's published table."""
    for q, (low, high) in _GO_POW10.items():
        assert coco_json.pow10_128(q) == (high, low), q


def test_pow10_table_is_each_power_truncated() -> None:
    """Every entry is 10**q scaled into [2**127, 2**128) and truncated: v <= 10**q * 2**k
    < v + 1 for the one k that puts it there."""
    for q in range(-342, 309):
        high, low = coco_json.pow10_128(q)
        v = (high << 64) | low
        assert 1 << 127 <= v < 1 << 128, q
        if q >= 0:  # v * 2**s <= 10**q < (v + 1) * 2**s, or exact when 10**q is small
            s = (10**q).bit_length() - 128
            assert (v << s <= 10**q < (v + 1) << s) if s > 0 else v == 10**q << -s, q
        else:  # v <= 2**e / 10**-q < v + 1
            e = 127 + (10**-q).bit_length()
            assert v * 10**-q <= 1 << e < (v + 1) * 10**-q, q
    with pytest.raises(ValueError, match=r"q: expected -342\.\.308, got 309"):
        coco_json.pow10_128(309)


def test_errors_after_a_scan_of_a_mapped_file(tmp_path: Any) -> None:
    """The scanners read a memory map of the file; an error found after the scan (an unknown
    id, a bad box) is the one raised (the map is closed, no view of it is left)."""
    from ioukit.errors import DataFormatError
    from ioukit.io.coco import read_coco_ground_truth, read_coco_results

    gt = read_coco_ground_truth(
        {"images": [{"id": 1}], "annotations": [], "categories": [{"id": 1}]}
    )
    path = tmp_path / "r.json"
    path.write_bytes(b'[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 0.5}]')
    assert read_coco_results(path, gt).boxes.tolist() == [[1.0, 1.0, 3.0, 3.0]]
    path.write_bytes(b'[{"image_id": 7, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 0.5}]')
    with pytest.raises(DataFormatError, match=r"results\[0\]\.image_id: 7 is not"):
        read_coco_results(path, gt)
    path.write_bytes(b'[{"image_id": 1, "category_id": 1, "bbox": [1, 1, -2, 2], "score": 1}]')
    with pytest.raises(DataFormatError, match=r"results\[0\]\.bbox"):
        read_coco_results(path, gt)


# --- the results scanner's inlined short numbers and known keys (#27) -----------------------


def _box_numbers(texts: list[str]) -> np.ndarray:
    """``texts`` as the COCO results scanner converts them: 4 per record in ``bbox``, where
    every number goes first through the inlined short path (``lex_short_number``). The twin
    is the strict parser's value as a float (``float()`` bit for bit, but ``-0`` is JSON's
    integer 0)."""
    texts = texts + ["0"] * (-len(texts) % 4)
    records = [
        '{"image_id":1,"category_id":1,"bbox":[' + ",".join(texts[k : k + 4]) + '],"score":1}'
        for k in range(0, len(texts), 4)
    ]
    code, n, _, _, boxes, _ = _scan(("[" + ",".join(records) + "]").encode())
    assert code == coco_json.OK and n == len(records)
    return boxes.ravel()


# the edges of the short path (15 digits, no exponent) and of what it hands on
_SHORT_EDGES = [
    "0", "-0", "0.0", "-0.0", "-0.000", "5", "-5", "0.1", "0.2", "0.3", "0.7", "1.1", "2.675",
    "417.59", "0.099", "123456789012345", "999999999999999", "99999999999999.9",
    "0.00000000000001", "0.000000000000001", "0.0000000000000001", "1234567890123456",
    "9007199254740993", "9999999999999999", "0.99999999999999999", "1e2", "1E-2", "1.5e3",
    "4503599627370497.5", "100000000000000.0", "0.30000000000000004", "1.0000000000000002",
    "3.141592653589793", "12345678.9012345", "123456789.012345", "1234567890.12345",
]  # fmt: skip


def test_short_number_edges_convert_as_float() -> None:
    texts = _SHORT_EDGES + _HARD_NUMBERS
    texts = texts + ["-" + t for t in texts if not t.startswith("-")]
    texts = [t for t in texts if np.isfinite(float(t))]
    got = _box_numbers(texts)[: len(texts)]
    want = np.array([float(json.loads(t)) for t in texts])  # '-0' is int 0
    bad = np.flatnonzero(got.view(np.uint64) != want.view(np.uint64))
    assert not len(bad), [(texts[i], got[i], want[i]) for i in bad[:5]]


def _short_decimal(rng: Any) -> str:
    digits = rng.randrange(1, 19)  # around the 15-digit edge of the short path
    whole = rng.randrange(0, digits + 1)
    text = str(rng.randrange(10 ** (digits - 1), 10**digits)).rjust(digits, "0")
    head = text[:whole].lstrip("0") or "0"
    tail = text[whole:]
    return head + ("." + tail if tail else "")


def test_random_short_decimals_convert_as_float() -> None:
    import random

    rng = random.Random(20261203)
    texts = [("-" if rng.random() < 0.3 else "") + _short_decimal(rng) for _ in range(40000)]
    texts += [repr(round(rng.uniform(0, 1000), rng.randrange(0, 6))) for _ in range(20000)]
    got = _box_numbers(texts)[: len(texts)]
    want = np.array([float(json.loads(t)) for t in texts])  # '-0' is int 0
    bad = np.flatnonzero(got.view(np.uint64) != want.view(np.uint64))
    assert not len(bad), [texts[i] for i in bad[:5]]


@_SETTINGS
@given(st.from_regex(r"-?(0|[1-9][0-9]{0,16})(\.[0-9]{1,17})?", fullmatch=True))
def test_short_decimals_convert_as_the_strict_parser(text: str) -> None:
    got = _box_numbers([text])[0]
    assert got.tobytes() == np.float64(orjson.loads(text)).tobytes(), text


@pytest.mark.parametrize(
    "number", [b"01", b"-", b"-01", b"1.", b"-.5", b".5", b"1.e2", b"--1", b"+1", b"0x1", b"1e"]
)
def test_short_path_refusals_are_the_lexers(number: bytes) -> None:
    # what the short path does not take goes to lex_number, which refuses it as JSON does
    data = b'[{"image_id":1,"category_id":1,"bbox":[1,' + number + b',3,4],"score":1}]'
    assert _strict_accepts(data) is False
    assert _scan(data)[0] == coco_json.INVALID


@pytest.mark.parametrize(
    "key",
    [b"image_idx", b"image_i", b"bbox2", b"bbo", b"scores", b"categoryid", b"category_id ",
     b"Score", b"image_id\\u0000", b"sc\\u006fre", b"bbox\\\\"],
)  # fmt: skip
def test_near_known_keys_are_other_keys(key: bytes) -> None:
    # a key that only starts like image_id/category_id/bbox/score is another member: skipped
    # (an escaped one goes to the general parser, which decides what it names)
    data = b'[{"' + key + b'":[1,2],"image_id":3,"category_id":4,"bbox":[1,2,3,4],"score":0.5}]'
    code, n, ids, cats, boxes, scores = _scan(data)
    if b"\\" in key:
        assert code == coco_json.UNSUPPORTED
        return
    assert code == coco_json.OK and n == 1
    assert (ids[0], cats[0], scores[0]) == (3, 4, 0.5)
    assert boxes[0].tolist() == [1, 2, 3, 4]
