"""Report writers: JSON, CSV and self-contained HTML files (atomic: temporary file, then
rename) and text blocks. The HTML report is :func:`write_html` (module ``ioukit.report.html``).

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> rows = [{"category_id": 1, "name": "cat", "AP": 0.5}]
>>> print(write_csv(d / "per_class.csv", rows).read_text(), end="")
category_id,name,AP
1,cat,0.5
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ioukit._text_table import aligned_table, escape_text
from ioukit.io._text import atomic_write_bytes, atomic_write_text

# the HTML report (NumPy, the page assets) loads on first use: every command imports this
# module for its text helpers
if TYPE_CHECKING:
    from ioukit.report.compare_html import compare_data, compare_html_text, write_compare_html
    from ioukit.report.html import html_text, report_data, write_html

__all__ = [
    "compare_data",
    "compare_html_text",
    "csv_bytes",
    "escape_text",
    "format_findings",
    "html_text",
    "json_text",
    "per_class_table",
    "report_data",
    "safe_cell",
    "to_jsonable",
    "write_compare_html",
    "write_csv",
    "write_html",
    "write_json",
]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet will not run as a formula.

    Text starting with ``= + - @``, a tab or a carriage return gets a leading ``'`` (the
    OWASP advice against CSV formula injection); numbers are left alone.

    >>> safe_cell("=HYPERLINK(1)"), safe_cell("cat"), safe_cell(-1.5)
    ("'=HYPERLINK(1)", 'cat', -1.5)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return escape_text(str(value))


def per_class_table(rows: Sequence[Mapping[str, Any]], /) -> str:
    """Per-class rows as an aligned text table, floats with 3 decimals, names escaped.

    >>> print(per_class_table([{"category_id": 1, "name": "c\\x1bat", "AP": 0.5}]))
    category_id  name     AP
    1            c\\x1bat  0.500
    """
    if not rows:
        return "(no classes)"
    header = list(rows[0])
    return aligned_table(
        header, [[_cell(to_jsonable(row.get(h, ""))) for h in header] for row in rows]
    )


def to_jsonable(value: Any) -> Any:
    """Plain JSON types: NumPy scalars and arrays become Python numbers and lists, NaN None.

    >>> import numpy as np
    >>> to_jsonable({"a": np.float64("nan"), "b": np.arange(2)})
    {'a': None, 'b': [0, 1]}
    """
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        return to_jsonable(tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(path: str | os.PathLike[str], document: Any, /) -> Path:
    """Write ``document`` as indented JSON to ``path`` atomically.

    Parameters
    ----------
    path : path
    document : JSON-like
        NumPy values are converted; NaN becomes ``null``.

    Returns
    -------
    Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = write_json(pathlib.Path(tempfile.mkdtemp()) / "r.json", {"AP": 0.5})
    >>> p.read_text()
    '{\\n  "AP": 0.5\\n}\\n'
    """
    return atomic_write_text(path, json_text(document))


def json_text(document: Any, /) -> str:
    """The text :func:`write_json` writes.

    >>> json_text({"AP": float("nan")})
    '{\\n  "AP": null\\n}\\n'
    """
    return json.dumps(to_jsonable(document), indent=2, allow_nan=False) + "\n"


def write_csv(path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]], /) -> Path:
    """Write rows of dicts as CSV (columns in first-seen key order) to ``path`` atomically.

    Parameters
    ----------
    path : path
    rows : sequence of dict
        E.g. ``EvaluationResult.per_class``; missing cells stay empty, NaN becomes empty.

    Returns
    -------
    Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = write_csv(pathlib.Path(tempfile.mkdtemp()) / "x.csv", [])
    >>> p.read_text()
    ''
    """
    return atomic_write_bytes(path, csv_bytes(rows))


def csv_bytes(rows: Sequence[Mapping[str, Any]], /) -> bytes:
    """The CSV text of :func:`write_csv` as UTF-8 bytes (text cells made formula-safe).

    >>> csv_bytes([{"name": "=1+1", "AP": 0.5}])
    b"name,AP\\n'=1+1,0.5\\n"
    """
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    if not columns:
        return b""
    names = list(columns)
    if any(
        "\r" in c
        for c in (*map(str, names), *(v for r in rows for v in r.values() if type(v) is str))
    ):
        return _csv_bytes_python(rows, names)  # csv.writer leaves a lone CR unquoted
    # the standard library's writer (C) with one cheap conversion per cell: 2.3x faster than
    # joining fields in Python (benchmarks/bench_csv.py); the same bytes
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    writer.writerows(zip(*(_csv_column([row.get(c) for row in rows]) for c in names), strict=True))
    return out.getvalue().encode("utf-8")


def _csv_column(values: list[Any]) -> list[Any]:
    """:func:`_csv_cell` of every value of one column, a column of one plain type at once.

    >>> _csv_column([0.5, float("nan")]), _csv_column(["=x", "y"]), _csv_column([1, None])
    ([0.5, ''], ["'=x", 'y'], [1, ''])
    """
    kinds = set(map(type, values))
    if kinds <= {int, bool}:
        return values
    if kinds == {float}:
        return [v if v - v == 0 else "" for v in values]
    if kinds == {str}:
        start = _FORMULA_START
        return ["'" + v if v.startswith(start) else v for v in values]
    return list(map(_csv_cell, values))


def _csv_bytes_python(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> bytes:
    """:func:`csv_bytes` field by field in Python (text holding a carriage return)."""
    lines = [",".join(_csv_field(c) for c in columns)]
    for row in rows:
        cells = to_jsonable(dict(row))
        lines.append(
            ",".join(
                _csv_field("" if cells.get(c) is None else safe_cell(cells[c])) for c in columns
            )
        )
    return ("\n".join(lines) + "\n").encode("utf-8")


def _csv_cell(value: Any) -> Any:
    """One CSV cell: text made formula-safe, NaN/inf and None empty, NumPy values plain."""
    kind = type(value)
    if kind is str:
        return "'" + value if value.startswith(_FORMULA_START) else value
    if kind is float:
        return value if value - value == 0 else ""
    if kind is int or kind is bool:
        return value
    if value is None:
        return ""
    plain = to_jsonable(value)
    if plain is None:
        return ""
    return safe_cell(plain) if isinstance(plain, str) else plain


def _csv_field(value: Any) -> str:
    """One RFC 4180 field: quoted when it holds a comma, a quote, a CR or a LF."""
    text = str(value)
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def format_findings(findings: Iterable[Any]) -> str:
    """Diagnostics as text, one block per finding (empty string when there are none).

    >>> from ioukit.analysis.diagnostics import Finding
    >>> print(format_findings([Finding("empty", "warning", "no predictions", "check --pred")]))
    warning [empty]: no predictions
      fix: check --pred
    """
    return "\n".join(str(f) for f in findings)


_HTML_NAMES = {
    "html_text": "ioukit.report.html",
    "report_data": "ioukit.report.html",
    "write_html": "ioukit.report.html",
    "compare_data": "ioukit.report.compare_html",
    "compare_html_text": "ioukit.report.compare_html",
    "write_compare_html": "ioukit.report.compare_html",
}


def __getattr__(name: str) -> Any:
    """The HTML report's names, imported on first use (PEP 562)."""
    if name in _HTML_NAMES:
        import importlib

        return getattr(importlib.import_module(_HTML_NAMES[name]), name)
    raise AttributeError(f"module 'ioukit.report' has no attribute {name!r}")
