"""``ioukit.report.csv_bytes`` (the ``--csv`` / ``--per-image`` writer): the rows the standard
library's ``csv`` module reads back, the formula-injection prefix kept, NaN and None empty,
hostile text (commas, quotes, CR, LF) quoted as RFC 4180 says."""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import numpy as np
import pytest

from ioukit.report import csv_bytes

HOSTILE = ["a,b", 'q"uote', "line\nbreak", "=1+1", "-3", "@x", "\tt", "", " sp ", "é", "+1"]


def _expected(value: Any) -> str:
    """The cell the stdlib reader must see, written from the rules, not from the writer."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, np.generic):
        value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return ""
    if isinstance(value, str):
        return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
    return str(value)


def _rows(n: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        row: dict[str, Any] = {
            "name": HOSTILE[i % len(HOSTILE)],
            "AP": float(rng.choice([np.nan, np.inf, 0.1, -1.0, 1e-300, 0.30000000000000004])),
            "f32": np.float32(0.5),
            "i64": np.int64(i),
            "none": None,
            "flag": bool(i % 2),
            "nan64": np.float64(np.nan),
        }
        if i % 7 == 0:
            del row["f32"]
        if i % 11 == 0:
            row["late"] = "z"
        rows.append(row)
    return rows


@pytest.mark.parametrize("carriage_return", [False, True])
def test_the_stdlib_reader_reads_back_every_cell(carriage_return: bool) -> None:
    rows = _rows(500)
    if carriage_return:
        rows[3]["name"] = "cr\ronly"
    text = csv_bytes(rows).decode("utf-8")
    columns = list(dict.fromkeys(k for r in rows for k in r))
    parsed = list(csv.reader(io.StringIO(text, newline="")))
    assert parsed[0] == columns
    want = [[_expected(r.get(c)) for c in columns] for r in rows]
    assert parsed[1:] == want
    assert text.endswith("\n") and "\r\n" not in text.replace('"cr\ronly"', "")


def test_the_same_bytes_as_the_stdlib_writer_with_the_same_cells() -> None:
    rows = [{"name": f"class {k}", "AP": k / 7, "num_gt": k} for k in range(80)]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["name", "AP", "num_gt"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    assert csv_bytes(rows) == out.getvalue().encode("utf-8")
    assert csv_bytes([]) == b""


def test_whole_columns_convert_as_cell_by_cell() -> None:
    """``csv_bytes`` converts a column of one plain type at once (#29: faster than the standard
    library's writer); every column, of one type or mixed, gives what ``_csv_cell`` gives."""
    from ioukit.report import _csv_cell, _csv_column

    rng = np.random.default_rng(3)
    pool: list[Any] = [
        0,
        7,
        True,
        False,
        0.5,
        -0.0,
        math.nan,
        math.inf,
        "=x",
        "+1",
        "a,b",
        "plain",
        None,
        np.float64(0.25),
        np.int64(3),
        np.float32(math.nan),
    ]
    columns = [[0, 1, True], [0.5, math.nan, -math.inf, -0.0], ["=a", "b", "@c", "\tx"], []]
    columns += [[pool[i] for i in rng.integers(0, len(pool), 8)] for _ in range(200)]
    for column in columns:
        got = _csv_column(list(column))
        want = [_csv_cell(v) for v in column]
        assert [(type(g), str(g)) for g in got] == [(type(w), str(w)) for w in want], column
