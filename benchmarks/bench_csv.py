"""The CSV writer (``ioukit.report.csv_bytes``) against the standard library's ``csv`` (#29).

Rows: the per-class table of 80 classes and a per-image table of ``--rows`` rows (default
320 000: one row per prediction of a 5 000-image, 80-class evaluation), 12 columns of ints,
floats (with NaN), class names (some starting with ``=``) and file names. The reference is
``csv.DictWriter`` into a ``StringIO`` with the same formula-injection prefix
(``ioukit.report.safe_cell``) and NaN as an empty cell; both outputs are checked to parse to
the same rows. Prints the best of ``--repeat`` rounds and the ratio (goal: <= 1.0).

Usage: ``python benchmarks/bench_csv.py [--rows 320000] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import time
from typing import Any

import numpy as np

from ioukit.report import csv_bytes, safe_cell


def make_rows(n: int, n_classes: int = 80, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` rows of a per-prediction table over ``n_classes`` classes."""
    rng = np.random.default_rng(seed)
    names = [f"=class{k}" if k % 20 == 0 else f"class {k}" for k in range(n_classes)]
    cls = rng.integers(0, n_classes, n).tolist()
    img = rng.integers(0, 5000, n).tolist()
    score = rng.uniform(0, 1, n).tolist()
    iou = np.where(rng.uniform(0, 1, n) < 0.3, np.nan, rng.uniform(0, 1, n)).tolist()
    boxes = rng.uniform(0, 640, (n, 4)).round(2).tolist()
    return [
        {
            "image_id": img[i],
            "file_name": f"img_{img[i]:05d}.jpg",
            "category_id": cls[i],
            "name": names[cls[i]],
            "score": score[i],
            "iou": iou[i],
            "tp": int(score[i] > 0.5),
            "x1": boxes[i][0],
            "y1": boxes[i][1],
            "x2": boxes[i][2],
            "y2": boxes[i][3],
            "note": "",
        }
        for i in range(n)
    ]


def stdlib_csv(rows: list[dict[str, Any]]) -> bytes:
    """The reference: ``csv.DictWriter`` with the same cell rules."""
    out = io.StringIO()
    columns = list(dict.fromkeys(k for row in rows for k in row))
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {
                k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else safe_cell(v))
                for k, v in row.items()
            }
        )
    return out.getvalue().encode("utf-8")


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=320_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for label, rows in (
        ("per-class (80)", make_rows(80)),
        (f"rows ({args.rows})", make_rows(args.rows)),
    ):
        ours, ref = csv_bytes(rows), stdlib_csv(rows)
        parsed = list(csv.reader(io.StringIO(ours.decode())))
        assert parsed == list(csv.reader(io.StringIO(ref.decode()))), "outputs differ"
        t_ours = _best(lambda rows=rows: csv_bytes(rows), args.repeat)
        t_ref = _best(lambda rows=rows: stdlib_csv(rows), args.repeat)
        print(
            f"{label:>16}: csv_bytes {t_ours * 1e3:9.2f} ms  stdlib csv {t_ref * 1e3:9.2f} ms  "
            f"ratio {t_ours / t_ref:5.2f}"
        )


if __name__ == "__main__":
    main()
