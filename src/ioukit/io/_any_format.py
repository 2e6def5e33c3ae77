"""The format-detecting readers and writer behind :mod:`ioukit.io` (private: import them from
there).

Each format's own reader or writer module loads when it is used (:mod:`ioukit.io.formats`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ioukit._renamed import renamed_keyword
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.io._build import VOC_DETECTION_FILE, Unknowns
from ioukit.io._text import check_exists, iter_records, read_text
from ioukit.io.formats import file_format, file_formats, writable_formats

if TYPE_CHECKING:
    from ioukit.io._build import ClassSource


__all__ = [
    "FORMATS",
    "ambiguous_txt",
    "detect_format",
    "read_ground_truth",
    "read_predictions",
    "write_dataset",
]

FORMATS = file_formats()
"""Formats :func:`read_ground_truth` and :func:`read_predictions` understand."""

Format = Literal["auto", "coco", "yolo", "voc", "txt", "dota", "yolo_obb", "coco_rotated"]
_SNIFF_FILES = 20


def _looks_like_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


_CLASS_INDEX = r"\+?\d+(\.0*)?\Z"  # compiled on first use (re caches it)


def _sniff_txt(files: list[Path]) -> tuple[str, ...]:
    """The formats the lines of the first few files fit, the likelier first: one of them, or
    ``("yolo", "txt")`` when they fit both.

    YOLO when the class tokens are indices and most lines hold only normalized numbers (a
    stray pixel line then fails in the YOLO reader, naming its file and line, instead of
    turning the whole folder into pixels). Both: YOLO predictions ``class cx cy w h conf``
    and relative plain txt ``class conf cx cy w h`` look alike.
    """
    class_index = re.compile(_CLASS_INDEX)
    normalized = pixel = six = 0
    for file in files[:_SNIFF_FILES]:
        for _, tokens in iter_records(read_text(file)):
            if not tokens:
                return ("txt",)
            oriented = _sniff_oriented(tokens)
            if oriented is not None:
                return (oriented,)
            if not class_index.match(tokens[0]):
                return ("txt",)
            numbers = [float(t) for t in tokens[1:] if _looks_like_number(t)]
            if any(not (-0.5 <= v <= 1.5) for v in numbers):
                pixel += 1
            else:
                normalized += 1
                six += len(tokens) == 6
    if normalized >= max(pixel, 1):
        return ("yolo", "txt") if six > 0 else ("yolo",)
    return ("txt",) if pixel else ("yolo",)


def _sniff_oriented(tokens: list[str]) -> str | None:
    """``"dota"``/``"yolo_obb"`` for a line of 8 corners and a class (DOTA header lines too)."""
    if len(tokens) == 1 and tokens[0].startswith(("imagesource:", "gsd:")):
        return "dota"
    corners = len(tokens) in (9, 10) and all(_looks_like_number(t) for t in tokens[:8])
    if corners and not _looks_like_number(tokens[8]):
        return "dota"
    if len(tokens) in (9, 10) and tokens[0].isdigit() and all(map(_looks_like_number, tokens)):
        return "yolo_obb"
    return None


def detect_format(path: str | os.PathLike[str], /, *, prefer: str | None = None) -> str:
    """The format of a dataset path: ``"coco"``, ``"yolo"``, ``"voc"`` or ``"txt"``.

    Parameters
    ----------
    path : path
        A ``.json`` file, a devkit detection file, or a folder of ``.xml``/``.txt`` files.
    prefer : {"yolo", "txt"}, optional
        The answer when normalized 6-value lines could be either YOLO predictions
        (``class cx cy w h conf``) or relative plain txt (``class conf cx cy w h``); usually
        the ground truth's format. Without it such folders are ``"yolo"``.

    Returns
    -------
    str

    Raises
    ------
    DataFormatError
        The path gives no clue (an empty folder, an unknown extension).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "comp4_det_test_cat.txt").write_text("")
    >>> detect_format(d)
    'voc'
    >>> detect_format(d / "gt.json")
    'coco'
    """
    p = Path(path)
    if p.suffix.lower() == ".json":
        return "coco"
    if VOC_DETECTION_FILE.match(p.name):
        return "voc"
    if p.name.startswith("Task1_") and p.suffix == ".txt":
        return "dota"
    if not p.is_dir():
        raise DataFormatError(
            f"{p}: cannot tell the format from the name: expected a .json file or a folder of "
            ".txt/.xml files (or pass --gt-format/--pred-format)"
        )
    entries = sorted(p.iterdir())
    if any(e.suffix.lower() == ".xml" for e in entries):
        return "voc"
    if any(VOC_DETECTION_FILE.match(e.name) for e in entries):
        return "voc"
    if any(e.name.startswith("Task1_") and e.suffix == ".txt" for e in entries):
        return "dota"
    txt = [
        e
        for e in entries
        if e.suffix.lower() == ".txt" and e.name.lower() != "classes.txt" and e.is_file()
    ]
    if txt:
        fits = _sniff_txt(txt)
        return str(prefer) if prefer in fits else fits[0]
    raise DataFormatError(
        f"{p}: expected a folder of .txt or .xml files, found none (pass --gt-format/--pred-format)"
    )


def ambiguous_txt(path: str | os.PathLike[str], /) -> bool:
    """Whether a folder's normalized 6-value lines could be YOLO or relative plain txt.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("0 0.5 0.5 0.2 0.2 0.9\\n")
    >>> ambiguous_txt(d)
    True
    """
    p = Path(path)
    if not p.is_dir():
        return False
    files = sorted(
        e for e in p.iterdir() if e.suffix.lower() == ".txt" and e.name.lower() != "classes.txt"
    )
    return bool(files) and len(_sniff_txt(files)) > 1


def _check_format(format: str, path: Path) -> str:
    return detect_format(path) if format == "auto" else file_format(format).name


def read_ground_truth(
    path: str | os.PathLike[str],
    /,
    *,
    format: Format = "auto",
    image_size: str | Sequence[float] | None = None,
    images_dir: str | os.PathLike[str] | None = None,
    classes: ClassSource = None,
    fmt: Literal["xywh", "xyxy", "cxcywh"] | None = None,
    one_based: bool = False,
    box_format: Literal["xywh", "xyxy", "cxcywh"] | None = None,
) -> Dataset:
    """Read a ground-truth dataset in any supported format.

    Parameters
    ----------
    path : path
        COCO ``.json``, or a folder of YOLO/plain ``.txt`` or VOC ``.xml`` files.
    format : {"auto", "coco", "yolo", "voc", "txt"}
        Detected from the path by default (see the module table).
    image_size : "WxH" or (width, height), optional
        Image size for YOLO / relative txt boxes (all images).
    images_dir : path, optional
        Images matched by stem whose headers give the sizes (read without decoding).
    classes : path, list of str or mapping, optional
        ``classes.txt``, ``data.yaml`` or names (YOLO, VOC, txt).
    fmt : {"xywh", "xyxy", "cxcywh"}, optional
        Plain txt only: the box format of the four numbers of a line (``format`` is the file
        format). The old name ``box_format`` still works with a DeprecationWarning.
    one_based : bool
        VOC only: shift 1-based pixel indices to 0-based continuous coordinates.
    box_format : str, optional
        Deprecated name of ``fmt``.

    Returns
    -------
    Dataset
        Absolute xyxy float64 boxes.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    DataFormatError
        The file breaks its format; the message names the file and the place.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("cat 0 0 10 10\\n")
    >>> read_ground_truth(d).categories.names
    ('cat',)
    """
    p = check_exists(path, "ground truth")
    fmt = renamed_keyword("ioukit.io.read_ground_truth", "box_format", "fmt", box_format, fmt, None)
    kind = file_format(_check_format(format, p))
    if kind.sizes_in_file and (image_size is not None or images_dir is not None):
        given = "image_size" if image_size is not None else "images_dir"
        raise DataFormatError(
            f"{given} (--image-size/--images): only for YOLO or relative txt ground truth; "
            f"{p} is {kind.name.upper()}, whose image sizes come from the file itself"
        )
    return kind.read_ground_truth(
        p,
        image_size=image_size,
        images_dir=images_dir,
        classes=classes,
        fmt=fmt,
        one_based=one_based,
    )


def read_predictions(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    format: Format = "auto",
    classes: ClassSource = None,
    fmt: Literal["xywh", "xyxy", "cxcywh"] | None = None,
    one_based: bool = False,
    unknowns: Unknowns | None = None,
    box_format: Literal["xywh", "xyxy", "cxcywh"] | None = None,
) -> Dataset:
    """Read predictions in any supported format against a ground truth.

    Parameters
    ----------
    path : path
        COCO results ``.json``; a folder of YOLO (``class cx cy w h conf``) or plain
        (``class conf x y w h``) ``.txt`` files; VOC devkit ``comp4_det_test_<class>.txt``
        files (or a folder of them), or VOC XML with ``<score>``.
    ground_truth : Dataset
        Images are matched by id (COCO) or stem, classes by id or name; relative boxes use
        its image sizes.
    format : {"auto", "coco", "yolo", "voc", "txt"}
    classes : path, list of str or mapping, optional
        Names of integer class labels of the predictions.
    fmt : {"xywh", "xyxy", "cxcywh"}, optional
        Plain txt only: the box format (``box_format``, its old name, still works with a
        DeprecationWarning).
    one_based : bool
        VOC only.
    unknowns : Unknowns, optional
        When given, predictions for images or classes the ground truth lacks are counted here
        and left out (for diagnostics) instead of raising.
    box_format : str, optional
        Deprecated name of ``fmt``.

    Returns
    -------
    Dataset
        Predictions with ``scores``, sharing ``ground_truth``'s tables.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> g, p = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
    >>> _ = (g / "a.txt").write_text("cat 0 0 10 10\\n")
    >>> _ = (p / "a.txt").write_text("cat 0.8 0 0 10 10\\ndog 0.7 1 1 2 2\\n")
    >>> from ioukit.io import Unknowns
    >>> skipped = Unknowns()
    >>> pred = read_predictions(p, read_ground_truth(g), unknowns=skipped)
    >>> len(pred), skipped.classes
    (1, {'dog': 1})
    """
    p = check_exists(path, "predictions")
    fmt = renamed_keyword("ioukit.io.read_predictions", "box_format", "fmt", box_format, fmt, None)
    return file_format(_check_format(format, p)).read_predictions(
        p,
        ground_truth,
        classes=classes,
        fmt=fmt,
        one_based=one_based,
        unknowns=unknowns,
    )


def write_dataset(
    dataset: Dataset,
    path: str | os.PathLike[str],
    /,
    *,
    format: Literal["coco", "yolo", "voc", "dota", "yolo_obb", "coco_rotated"],
) -> Path:
    """Write ground truth or predictions as COCO JSON, a YOLO folder or a VOC folder.

    Output is atomic: a temporary file or folder renamed at the end, so a failure leaves
    nothing behind. Folders must not exist or be empty.

    Parameters
    ----------
    dataset : Dataset
    path : path
        ``.json`` file (COCO) or folder (YOLO, VOC).
    format : {"coco", "yolo", "voc"}

    Returns
    -------
    Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["a"], [100], [100]),
    ...     CategoryTable.from_lists([0], ["cat"]), boxes=[[25, 25, 75, 75]], image_index=[0],
    ...     category_id=[0])
    >>> out = write_dataset(gt, pathlib.Path(tempfile.mkdtemp()) / "labels", format="yolo")
    >>> (out / "a.txt").read_text()
    '0 0.5 0.5 0.5 0.5\\n'
    """
    if format not in writable_formats():
        raise ParameterError(
            f"format: expected {', '.join(map(repr, writable_formats()[:-1]))} or "
            f"{writable_formats()[-1]!r}, got {format!r}"
        )
    return file_format(format).write(dataset, path)
