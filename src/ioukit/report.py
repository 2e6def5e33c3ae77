"""Report writers: JSON and CSV files (atomic: temporary file, then rename) and text blocks.

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
from typing import Any

from ioukit.io._text import atomic_write_bytes, atomic_write_text

__all__ = ["format_findings", "to_jsonable", "write_csv", "write_json"]


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
    text = json.dumps(to_jsonable(document), indent=2, allow_nan=False) + "\n"
    return atomic_write_text(path, text)


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
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    buffer = io.StringIO()
    if columns:
        writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in to_jsonable(dict(row)).items()})
    return atomic_write_bytes(path, buffer.getvalue().encode("utf-8"))


def format_findings(findings: Iterable[Any]) -> str:
    """Diagnostics as text, one block per finding (empty string when there are none).

    >>> from ioukit.diagnostics import Finding
    >>> print(format_findings([Finding("empty", "warning", "no predictions", "check --pred")]))
    warning [empty]: no predictions
      fix: check --pred
    """
    return "\n".join(str(f) for f in findings)
