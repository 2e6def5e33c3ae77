"""Plain txt folders in the widespread ``class [conf] left top width height`` layout.

One ``<stem>.txt`` per image, as used by Padilla's Object-Detection-Metrics and many export
scripts. Ground truth lines: ``class x y w h``; predictions: ``class conf x y w h``. The class
is a name (no spaces) or an index. Coordinates are absolute pixels, or *relative* (divided
by the image size; then the box is the YOLO-style centre form ``cx cy w h``, as Padilla's
tool expects). ``fmt`` (the box format) changes the four numbers (``"xywh"``, ``"xyxy"``,
``"cxcywh"``).

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "00001.txt").write_text("person 25 16 38 56\\n")
>>> gt = read_txt_ground_truth(d)
>>> gt.boxes.tolist(), gt.categories.names
([[25.0, 16.0, 63.0, 72.0]], ('person',))
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from ioukit._renamed import renamed_keyword
from ioukit.dataset import Dataset, ImageTable
from ioukit.errors import DataFormatError, ParameterError
from ioukit.io._build import (
    ClassSource,
    Columns,
    Unknowns,
    check_box,
    ground_truth_categories,
    load_class_names,
    prediction_category_lookup,
    resolve_image_sizes,
    stem_rows,
    unique_stems,
)
from ioukit.io._progress import track
from ioukit.io._text import check_exists, iter_records, parse_number, read_text

__all__ = ["read_txt_ground_truth", "read_txt_predictions"]

BoxFormat = Literal["xywh", "xyxy", "cxcywh"]
Coordinates = Literal["auto", "absolute", "relative"]
_Record = tuple[Path, int, str, tuple[float, float, float, float], float | None]


def _txt_files(folder: Path, what: str) -> list[Path]:
    if not folder.is_dir():
        raise DataFormatError(f"{what} {folder}: expected a folder of .txt files, got a file")
    return unique_stems(
        [
            p
            for p in folder.iterdir()
            if p.suffix.lower() == ".txt" and p.name.lower() != "classes.txt"
        ]
    )


def _parse(files: list[Path], *, prediction: bool) -> list[_Record]:
    expected = 6 if prediction else 5
    layout = "class conf x y w h" if prediction else "class x y w h"
    records: list[_Record] = []
    for file in track(files, total=len(files), description="reading txt"):
        for line, tokens in iter_records(read_text(file)):
            if len(tokens) != expected:
                raise DataFormatError(
                    f"{file}: line {line}: expected {expected} values ({layout}), got {len(tokens)}"
                )
            score = parse_number(tokens[1], file, line, "conf") if prediction else None
            values = tokens[-4:]
            a, b, c, d = (
                parse_number(t, file, line, f"coordinate {k + 1}") for k, t in enumerate(values)
            )
            records.append((file, line, tokens[0], (a, b, c, d), score))
    return records


def _relative(records: list[_Record], coordinates: Coordinates) -> bool:
    if coordinates == "auto":
        if not records:
            return False
        values = np.asarray([r[3] for r in records])
        return bool(np.all((values >= 0) & (values <= 1)) and np.any(values != np.round(values)))
    if coordinates not in {"absolute", "relative"}:
        raise ParameterError(
            f"coordinates: expected 'auto', 'absolute' or 'relative', got {coordinates!r}"
        )
    return coordinates == "relative"


def _to_xyxy(
    record: _Record, fmt: str, scale: tuple[float, float]
) -> tuple[float, float, float, float]:
    file, line, _, (a, b, c, d), _ = record
    if fmt == "xyxy":
        box = (a, b, c, d)
    else:
        if c < 0 or d < 0:
            raise DataFormatError(
                f"{file}: line {line}: expected width >= 0 and height >= 0, got {c:g}, {d:g}"
            )
        box = (
            (a, b, a + c, b + d) if fmt == "xywh" else (a - c / 2, b - d / 2, a + c / 2, b + d / 2)
        )
    hint = " (are these x y w h boxes? pass fmt='xywh' / --txt-box-format xywh)"
    check_box(box, file, f"line {line}", hint=hint if fmt == "xyxy" else "")
    sx, sy = scale
    return (box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy)


def _format(box_format: BoxFormat | None, relative: bool) -> str:
    fmt = box_format or ("cxcywh" if relative else "xywh")
    if fmt not in {"xywh", "xyxy", "cxcywh"}:
        raise ParameterError(f"fmt: expected 'xywh', 'xyxy' or 'cxcywh', got {box_format!r}")
    return fmt


def _scale(relative: bool, width: float, height: float) -> tuple[float, float]:
    if not relative or width != width:
        return (1.0, 1.0)
    return (width, height)


def _read(
    path: str | os.PathLike[str], what: str, coordinates: Coordinates
) -> tuple[Path, list[Path], list[_Record], bool]:
    """The folder, its files, their records and whether they are relative, of the input
    ``what`` (ground truth or predictions)."""
    folder = check_exists(path, what)
    files = _txt_files(folder, what)
    records = _parse(files, prediction=what == "predictions")
    return folder, files, records, _relative(records, coordinates)


def read_txt_ground_truth(
    path: str | os.PathLike[str],
    /,
    *,
    fmt: BoxFormat | None = None,
    coordinates: Coordinates = "auto",
    image_size: str | Sequence[float] | None = None,
    images_dir: str | os.PathLike[str] | None = None,
    classes: ClassSource = None,
    box_format: BoxFormat | None = None,
) -> Dataset:
    """Read a folder of ``class x y w h`` files as ground truth.

    Parameters
    ----------
    path : path
        Folder of ``<stem>.txt`` files.
    fmt : {"xywh", "xyxy", "cxcywh"}, optional
        The box format of the four numbers; default ``"xywh"`` (absolute) or ``"cxcywh"``
        (relative). The old name ``box_format`` still works with a DeprecationWarning.
    coordinates : {"auto", "absolute", "relative"}
        ``"auto"``: relative when every number lies in [0, 1] and some are fractional.
    image_size, images_dir
        Image sizes (see :func:`ioukit.io.yolo.read_yolo_ground_truth`); relative boxes stay
        in normalized units without them.
    classes : path, list of str or mapping, optional
        Class list fixing the ids; default ids 1..K in sorted name order (integer labels keep
        their value).
    box_format : str, optional
        Deprecated name of ``fmt``.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("cat 0.5 0.5 0.5 0.5\\n")
    >>> read_txt_ground_truth(d, image_size=(100, 100)).boxes.tolist()
    [[25.0, 25.0, 75.0, 75.0]]
    """
    folder, files, records, relative = _read(path, "ground truth", coordinates)
    layout = _format(
        renamed_keyword(
            "ioukit.io.plain_txt.read_txt_ground_truth", "box_format", "fmt", box_format, fmt, None
        ),
        relative,
    )
    stems = [p.stem for p in files]
    widths, heights = resolve_image_sizes(
        stems, image_size=image_size, images_dir=images_dir if relative else None
    )
    table, ids = ground_truth_categories((r[2] for r in records), load_class_names(classes), folder)
    row_of = {s: i for i, s in enumerate(stems)}
    cols = Columns()
    for record in records:
        row = row_of[record[0].stem]
        scale = _scale(relative, float(widths[row]), float(heights[row]))
        cols.add(row, ids[record[2]], _to_xyxy(record, layout, scale))
    images = ImageTable(np.arange(1, len(stems) + 1), tuple(stems), widths, heights)
    return cols.to_dataset(images, table, predictions=False)


def read_txt_predictions(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    fmt: BoxFormat | None = None,
    coordinates: Coordinates = "auto",
    classes: ClassSource = None,
    unknowns: Unknowns | None = None,
    box_format: BoxFormat | None = None,
) -> Dataset:
    """Read a folder of ``class conf x y w h`` files as predictions against a ground truth.

    Relative coordinates are scaled by the ground truth's image sizes.

    Parameters
    ----------
    path : path
        Folder of ``<stem>.txt`` files matched to ``ground_truth`` by stem.
    ground_truth : Dataset
    fmt, coordinates, box_format
        As in :func:`read_txt_ground_truth`.
    classes : path, list of str or mapping, optional
        Names of integer labels.
    unknowns : Unknowns, optional
        Collects predictions for unknown images/classes instead of raising.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("cat 10 10 20 20\\n")
    >>> gt = read_txt_ground_truth(d)
    >>> _ = (d / "a.txt").write_text("cat .9 10 10 20 20\\n")
    >>> read_txt_predictions(d, gt).boxes.tolist()
    [[10.0, 10.0, 30.0, 30.0]]
    """
    _, _, records, relative = _read(path, "predictions", coordinates)
    layout = _format(
        renamed_keyword(
            "ioukit.io.plain_txt.read_txt_predictions", "box_format", "fmt", box_format, fmt, None
        ),
        relative,
    )
    rows = stem_rows(ground_truth.images)
    lookup = prediction_category_lookup(ground_truth.categories, load_class_names(classes))
    widths, heights = ground_truth.images.widths, ground_truth.images.heights
    cols = Columns()
    for record in records:
        file, line, label = record[0], record[1], record[2]
        row = rows.get(file.stem)
        category = lookup.get(label)
        if row is None or category is None:
            if unknowns is None:
                what = f"image {file.stem!r}" if row is None else f"class {label!r}"
                raise DataFormatError(f"{file}: line {line}: {what} is not in the ground truth")
            if row is None:
                unknowns.add_image(file.stem)
            else:
                unknowns.add_class(label)
            continue
        scale = _scale(relative, float(widths[row]), float(heights[row]))
        cols.add(row, category, _to_xyxy(record, layout, scale), record[4])
    return cols.to_dataset(ground_truth.images, ground_truth.categories, predictions=True)
