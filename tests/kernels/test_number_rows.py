"""The compiled rows and columns of numbers (``number_rows``) equal the general path, or step
aside.

Its twin is the general path of the readers (``_only_types`` + ``np.fromiter``, then the
record-by-record checks): every input is read with the kernel and with the kernel switched off,
and both give the same array, or the same error (type and message).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ioukit._kernels.number_rows import FALLBACK, OK, fill_rows
from ioukit.io import coco, coco_keypoints


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # the comparison is the point
        return (type(exc), str(exc))


def _same(a: Any, b: Any) -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), (a, b)
        assert a.shape == b.shape and a.dtype == b.dtype
        assert a.tobytes() == b.tobytes()  # -0.0 and +0.0 told apart
    else:
        assert a == b


def _both(monkeypatch: pytest.MonkeyPatch, fn: Callable[[], Any]) -> tuple[Any, Any]:
    compiled = _outcome(fn)
    with monkeypatch.context() as m:
        m.setattr(coco, "_number_rows", lambda *args: None)
        m.setattr(coco_keypoints, "_number_rows", lambda *args: None)
        m.setattr(coco, "_number_column", lambda *args: None)
        general = _outcome(fn)
    return compiled, general


_BIG = 10**400  # np.fromiter raises OverflowError on it: so must the compiled path

_VALUES: list[Any] = [
    1, 2.5, 0, -0.0, 0.0, 2**53 + 1, -(2**63), 2**64 + 3, 10**30, 1e308, 5e-324, True, False,
    np.float64(1.5), np.int64(7), np.float32(0.1), "1", None, [1], float("nan"), float("inf"),
    _BIG,
]  # fmt: skip


class _Float(float):
    pass


class _Int(int):
    pass


@pytest.mark.parametrize("value", [*_VALUES, _Float(1.25), _Int(3)], ids=repr)
@pytest.mark.parametrize("where", [0, 1, 5])
def test_one_odd_number_in_results(monkeypatch: pytest.MonkeyPatch, value: Any, where: int) -> None:
    records: list[dict[str, Any]] = [
        {"keypoints": [float(i), i + 0.25, 1, 2.0, 3, 0.5]} for i in range(3)
    ]
    records[1]["keypoints"][where] = value
    compiled, general = _both(
        monkeypatch,
        lambda: coco_keypoints._keypoint_column(
            records, "f.json", "results", num_keypoints=2, visibility=False, required=True,
            reference="the ground truth",
        ),
    )  # fmt: skip
    _same(compiled, general)


@pytest.mark.parametrize(
    "records",
    [
        [{"keypoints": [1, 2, 2]}, {"keypoints": (4.0, 5.5, 0)}],  # a tuple
        [{"keypoints": [1, 2, 2]}, {"keypoints": [4, 5]}],  # short
        [{"keypoints": [1, 2, 2]}, {"keypoints": [4, 5, 1, 1, 1, 1]}],  # another K
        [{"keypoints": [1, 2]}, {"keypoints": [4, 5, 1]}],  # not a multiple of 3 first
        [{"keypoints": [1, 2, 2]}, {}],  # missing: K zeros
        [{"keypoints": [1, 2, 2]}, {"keypoints": None}],
        [{}, {"keypoints": [1, 2, 2]}],  # K from the second record
        [{"keypoints": [1, 2, 2]}, OrderedDict(keypoints=[3, 4, 1])],  # a dict subclass
        [{"keypoints": [1, 2, 2]}, "x"],
        [{"keypoints": [1, 2, 3]}],  # visibility 3
        [{"keypoints": [1, 2, 2]}, {"keypoints": [1, 2, 2.0]}, {"keypoints": [0.5, -0.0, 0]}],
        [{"keypoints": []}, {"keypoints": []}],  # K = 0
        [],
    ],
    ids=repr,
)
def test_ground_truth_shapes(monkeypatch: pytest.MonkeyPatch, records: list[Any]) -> None:
    compiled, general = _both(
        monkeypatch,
        lambda: coco_keypoints._keypoint_column(
            records, "gt.json", "annotations", visibility=True, required=False
        ),
    )
    _same(compiled, general)


@pytest.mark.parametrize("value", _VALUES, ids=repr)
def test_bbox_column(monkeypatch: pytest.MonkeyPatch, value: Any) -> None:
    records = [{"bbox": [1, 2.5, 3, 4]}, {"bbox": [0, 0, value, 1]}]
    compiled, general = _both(monkeypatch, lambda: coco._bbox_column(records, "f.json", "results"))
    _same(compiled, general)


def test_the_kernel_steps_aside() -> None:
    out = np.zeros((2, 3))
    assert fill_rows([{"k": [1, 2, 3]}, {"k": [4, 5, 6.5]}], "k", out) == OK
    assert out.tolist() == [[1, 2, 3], [4, 5, 6.5]]
    assert fill_rows(({"k": [1, 2, 3]}, {"k": (4, 5, 6)}), "k", out) == OK
    for records in (
        [{"k": [1, 2, 3]}],  # another count of records
        iter([{"k": [1, 2, 3]}, {"k": [4, 5, 6]}]),  # not a list
        [{"k": [1, 2, 3]}, {"j": [4, 5, 6]}],
        [{"k": [1, 2, 3]}, {"k": [4, 5, True]}],
        [{"k": [1, 2, 3]}, {"k": [4, 5, 10**400]}],
        [{"k": [1, 2, 3]}, {"k": np.array([4.0, 5.0, 6.0])}],
    ):
        assert fill_rows(records, "k", out) == FALLBACK
    assert fill_rows([{"k": []}], "k", np.zeros((1, 0))) == OK


@pytest.mark.parametrize(
    "value", [*_VALUES, 2**63 - 1, -(2**63), 2**63, _Float(1.25), _Int(3)], ids=repr
)
@pytest.mark.parametrize("default", [None, 0, -1.0, float("nan")], ids=repr)
def test_number_columns(monkeypatch: pytest.MonkeyPatch, value: Any, default: Any) -> None:
    records: list[Any] = [{"v": 1, "w": 2.5}, {"v": value, "w": value}, {"w": 3}]
    for key in ("v", "w"):
        compiled, general = _both(
            monkeypatch,
            lambda key=key: coco._float_column(records, "f.json", "annotations", key, default),
        )
        _same(compiled, general)
        if default is None:
            compiled, general = _both(
                monkeypatch,
                lambda key=key: coco._int_column(records[:2], "f.json", "results", key),
            )
            _same(compiled, general)


def test_the_column_kernels_step_aside() -> None:
    from ioukit._kernels.number_rows import fill_floats, fill_integers

    out, ints = np.zeros(2), np.zeros(2, np.int64)
    assert fill_floats([{"k": 1}, {}], "k", 0.5, out) == OK and out.tolist() == [1.0, 0.5]
    assert fill_floats([{"k": 1}, {}], "k", None, out) == FALLBACK
    assert fill_floats([{"k": 1}, {"k": None}], "k", 0.5, out) == FALLBACK
    assert fill_integers([{"k": 1}, {"k": -(2**63)}], "k", ints) == OK
    assert ints.tolist() == [1, -(2**63)]
    for bad in (2**63, 1.0, True, np.int64(1), None):
        assert fill_integers([{"k": 1}, {"k": bad}], "k", ints) == FALLBACK
    assert fill_integers([{"k": 1}], "k", ints) == FALLBACK  # another count of records
