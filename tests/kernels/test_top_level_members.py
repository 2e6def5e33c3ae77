"""``coco_json.top_level_members``: the members of a JSON object without parsing them (#27).

Its twin is the strict parser: where it answers OK, every member's text parses to the parsed
document's value of that key (the last of repeated keys), and the keys are the document's;
where it answers INVALID, both strict parsers refuse the document.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioukit._kernels import coco_json

orjson = pytest.importorskip("orjson")

_SETTINGS = settings(
    derandomize=True, max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False,
    allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
    max_size=4),
    max_leaves=20,
)  # fmt: skip


def _members(data: bytes) -> tuple[int, list[tuple[bytes, int, int]]]:
    code, members = coco_json.top_level_members(np.frombuffer(data, np.uint8))
    return int(code), members


def _check(data: bytes) -> None:
    code, members = _members(data)
    try:
        parsed: Any = orjson.loads(data)
    except orjson.JSONDecodeError:
        assert code != coco_json.OK, data
        return
    if code != coco_json.OK:
        assert code != coco_json.INVALID, data
        return
    assert isinstance(parsed, dict)
    last = {key: (start, end) for key, start, end in members}
    assert {k.decode() for k in last} == set(parsed)
    for key, (start, end) in last.items():
        assert orjson.loads(data[start:end]) == parsed[key.decode()]


@_SETTINGS
@given(
    st.dictionaries(st.text(max_size=6), _values, max_size=5), st.sampled_from(["", " ", "\n\t"])
)
def test_members_of_generated_objects_parse_to_the_documents_values(
    document: dict[str, Any], space: str
) -> None:
    data = json.dumps(document, ensure_ascii=False, indent=1 if space else None).encode()
    _check(space.encode() + data + space.encode())


@_SETTINGS
@given(st.dictionaries(st.text(max_size=4), _values, max_size=3), st.data())
def test_one_byte_mutations_are_never_misread(
    document: dict[str, Any], data: st.DataObject
) -> None:
    text = bytearray(json.dumps(document).encode())
    i = data.draw(st.integers(0, len(text) - 1))
    text[i] = data.draw(st.sampled_from(b'{}[],:" 0a\\'))
    _check(bytes(text))


@pytest.mark.parametrize(
    ("data", "code", "keys"),
    [
        (b'{"a": [1, {"b": 2}], "c" :"x" , "a": 3 }', coco_json.OK, [b"a", b"c", b"a"]),
        (b" {} ", coco_json.OK, []),
        (b"[]", coco_json.UNSUPPORTED, []),  # not an object: the strict parser decides
        (b'{"a\\u0062": 1}', coco_json.UNSUPPORTED, []),  # an escaped key
        (b'{"a": 1,}', coco_json.INVALID, []),
        (b'{"a": 1} x', coco_json.INVALID, []),
        (b'{"a": NaN}', coco_json.INVALID, []),
        (b'{"a": 1', coco_json.INVALID, []),
    ],
)
def test_fixed_documents(data: bytes, code: int, keys: list[bytes]) -> None:
    got, members = _members(data)
    assert got == code
    assert [k for k, _, _ in members] == keys
