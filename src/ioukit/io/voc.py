"""Pascal VOC: XML annotation folders and devkit detection files <-> ``Dataset``.

Annotations: one ``<stem>.xml`` per image with ``size/width``, ``size/height`` and one
``object`` per box (``name``, ``bndbox/xmin ymin xmax ymax``, ``difficult``, ``truncated``);
parsed with the standard library's expat (no extra dependency), and any DTD, entity
declaration (the "billion laughs" bomb) or external entity is refused before anything is
expanded. Detections: devkit files
``comp4_det_test_<class>.txt`` with lines ``image_stem score x1 y1 x2 y2``.

Pixel convention. VOC numbers pixels from 1 and its boxes include both end pixels: the devkit
computes widths as ``xmax - xmin + 1``. ioukit keeps the numbers exactly as written
(``x1 = xmin`` ... ``y2 = ymax``), as pycocotools-style converters do, so boxes compare
directly with detections written in the same convention, and writing them back is lossless.
Evaluate with ``pixel_inclusive=True`` (VOC protocols) to get the devkit's +1 areas, and pass
``one_based=True`` here to turn boxes into 0-based continuous coordinates
(``[xmin - 1, ymin - 1, xmax, ymax]``, the same areas without +1 at evaluation time).
``truncated`` is read for validation only: the canonical dataset has no column for it.

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.xml").write_text(
...     "<annotation><size><width>100</width><height>80</height></size>"
...     "<object><name>cat</name><difficult>1</difficult><bndbox><xmin>1</xmin>"
...     "<ymin>2</ymin><xmax>30</xmax><ymax>40</ymax></bndbox></object></annotation>")
>>> gt = read_voc_ground_truth(d)
>>> gt.boxes.tolist(), gt.difficult.tolist(), gt.categories.names
([[1.0, 2.0, 30.0, 40.0]], [True], ('cat',))
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from xml.parsers import expat

import numpy as np

from ioukit.dataset import Dataset, ImageTable
from ioukit.errors import DataFormatError
from ioukit.io._build import (
    VOC_DETECTION_FILE,
    ClassSource,
    Columns,
    Unknowns,
    check_box,
    ground_truth_categories,
    load_class_names,
    prediction_category_lookup,
    stem_rows,
)
from ioukit.io._names import check_writable
from ioukit.io._progress import track
from ioukit.io._text import (
    atomic_directory,
    check_exists,
    iter_records,
    parse_number,
    read_bytes,
    read_text,
)

__all__ = [
    "DETECTION_FILE",
    "read_voc_detections",
    "read_voc_ground_truth",
    "read_voc_predictions",
    "read_voc_results",
    "write_voc",
]

DETECTION_FILE = VOC_DETECTION_FILE
"""Names of devkit detection files; group 1 is the class name."""

_MAX_XML_BYTES = 64 << 20


class _RefusedError(Exception):
    """Raised from inside the expat callbacks to stop at a DTD or an entity declaration."""


def _refuse(what: str) -> Any:
    def handler(*_: Any) -> Any:
        raise _RefusedError(what)

    return handler


def _parse_xml(path: Path) -> Any:
    """The root element of a VOC annotation, parsed with the standard library's expat.

    Any DTD (``<!DOCTYPE``), entity declaration or external entity reference is refused
    before it can be expanded (VOC annotations never need one), so the "billion laughs" and
    external-entity attacks stop at the declaration; undefined entities are malformed XML.
    """
    data = read_bytes(path, limit=_MAX_XML_BYTES)
    if not data.strip():
        raise DataFormatError(f"{path}: expected a VOC XML annotation, got an empty file")
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse("a DTD (<!DOCTYPE ...>)")
    parser.EntityDeclHandler = _refuse("an entity declaration")
    parser.UnparsedEntityDeclHandler = _refuse("an entity declaration")
    parser.ExternalEntityRefHandler = _refuse("an external entity reference")
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        parser.Parse(data, True)
    except _RefusedError as exc:
        raise DataFormatError(
            f"{path}: line {parser.CurrentLineNumber}: refused: the XML holds {exc}; VOC "
            "annotations never need DTDs or entities (possible entity-expansion attack)"
        ) from None
    except LookupError as exc:  # <?xml encoding="..."?> names a codec Python lacks
        raise DataFormatError(f"{path}: line 1: malformed XML: {exc}") from None
    except expat.ExpatError as exc:
        reason = expat.errors.messages.get(exc.code, str(exc))
        raise DataFormatError(
            f"{path}: line {exc.lineno}, column {exc.offset + 1}: malformed XML: {reason}"
        ) from None
    return builder.close()


def _text(element: Any, tag: str, path: Path, place: str, *, required: bool = True) -> str | None:
    child = element.find(tag)
    if child is None or child.text is None or not child.text.strip():
        if required:
            raise DataFormatError(f"{path}: {place}/{tag}: expected an element with text, got none")
        return None
    return str(child.text).strip()


def _required(element: Any, tag: str, path: Path, place: str) -> str:
    text = _text(element, tag, path, place, required=False)
    if text is None:
        raise DataFormatError(f"{path}: {place}/{tag}: expected an element with text, got none")
    return text


def _number(element: Any, tag: str, path: Path, place: str) -> float:
    text = _required(element, tag, path, place)
    try:
        value = float(text)
    except ValueError:
        raise DataFormatError(f"{path}: {place}/{tag}: expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise DataFormatError(f"{path}: {place}/{tag}: expected a finite number, got {text!r}")
    return value


def _flag(element: Any, tag: str, path: Path, place: str) -> bool:
    text = _text(element, tag, path, place, required=False)
    if text is None:
        return False
    if text not in {"0", "1"}:
        raise DataFormatError(f"{path}: {place}/{tag}: expected 0 or 1, got {text!r}")
    return text == "1"


def _size(root: Any, path: Path) -> tuple[float, float]:
    size = root.find("size")
    if size is None:
        return math.nan, math.nan
    out = []
    for tag in ("width", "height"):
        if size.find(tag) is None:
            return math.nan, math.nan
        value = _number(size, tag, path, "annotation/size")
        if value < 0:
            raise DataFormatError(
                f"{path}: annotation/size/{tag}: expected a size >= 0, got {value:g}"
            )
        out.append(value if value > 0 else math.nan)
    return out[0], out[1]


def _objects(
    root: Any, path: Path, *, prediction: bool, one_based: bool
) -> list[tuple[str, tuple[float, float, float, float], float | None, bool, bool]]:
    if root.tag != "annotation":
        raise DataFormatError(f"{path}: expected root element <annotation>, got <{root.tag}>")
    found = []
    for k, obj in enumerate(root.findall("object"), start=1):
        place = f"annotation/object[{k}]"
        for tag in ("name", "bndbox", "difficult", "score"):
            if len(obj.findall(tag)) > 1:
                raise DataFormatError(
                    f"{path}: {place}/{tag}[2]: expected one <{tag}> per object, got "
                    f"{len(obj.findall(tag))} (one object per box)"
                )
        name = _required(obj, "name", path, place)
        box_el = obj.find("bndbox")
        if box_el is None:
            raise DataFormatError(f"{path}: {place}/bndbox: expected an element, got none")
        for tag in ("xmin", "ymin", "xmax", "ymax"):
            if len(box_el.findall(tag)) > 1:
                raise DataFormatError(
                    f"{path}: {place}/bndbox/{tag}[2]: expected one <{tag}>, got "
                    f"{len(box_el.findall(tag))}"
                )
        bp = f"{place}/bndbox"
        x1, y1, x2, y2 = (_number(box_el, t, path, bp) for t in ("xmin", "ymin", "xmax", "ymax"))
        check_box((x1, y1, x2, y2), path, bp)
        if one_based:
            x1, y1 = x1 - 1, y1 - 1
        difficult = _flag(obj, "difficult", path, place)
        _flag(obj, "truncated", path, place)
        crowd = _flag(obj, "iscrowd", path, place)
        score: float | None = None
        if prediction:
            tag = "score" if obj.find("score") is not None else "confidence"
            if obj.find(tag) is None:
                raise DataFormatError(
                    f"{path}: {place}/score: expected a <score> (or <confidence>) in a "
                    "prediction, got none"
                )
            score = _number(obj, tag, path, place)
        found.append((name, (x1, y1, x2, y2), score, difficult, crowd))
    return found


def _xml_files(folder: Path, what: str) -> list[Path]:
    if not folder.is_dir():
        raise DataFormatError(f"{what} {folder}: expected a folder of VOC .xml files, got a file")
    return sorted((p for p in folder.iterdir() if p.suffix.lower() == ".xml"), key=lambda p: p.stem)


def read_voc_ground_truth(
    path: str | os.PathLike[str], /, *, classes: ClassSource = None, one_based: bool = False
) -> Dataset:
    """Read a folder of Pascal VOC XML annotations as ground truth.

    Parameters
    ----------
    path : path
        Folder of ``<stem>.xml`` files.
    classes : path, list of str or mapping, optional
        Class list fixing the category ids (index in the list); default ids 1..K in sorted
        name order.
    one_based : bool
        Subtract 1 from ``xmin`` and ``ymin`` (see the module notes on pixel conventions).

    Returns
    -------
    Dataset
        Images numbered 1..I in sorted stem order, sizes from ``<size>``, ``difficult`` set.

    Raises
    ------
    DataFormatError
        Malformed XML (line and column), an entity declaration, a missing or non-numeric
        element (named by its path, e.g. ``annotation/object[2]/bndbox/xmax``), x2 < x1.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "empty.xml").write_text("<annotation><size><width>10</width>"
    ...                                  "<height>10</height></size></annotation>")
    >>> gt = read_voc_ground_truth(d)
    >>> len(gt), gt.images.stems
    (0, ('empty',))
    """
    folder = check_exists(path, "ground truth")
    files = _xml_files(folder, "ground truth")
    stems: list[str] = []
    widths: list[float] = []
    heights: list[float] = []
    parsed: list[tuple[Any, ...]] = []
    for row, file in enumerate(track(files, total=len(files), description="reading XML")):
        root = _parse_xml(file)
        objects = _objects(root, file, prediction=False, one_based=one_based)
        w, h = _size(root, file)
        stems.append(file.stem)
        widths.append(w)
        heights.append(h)
        parsed.extend((row, *obj) for obj in objects)
    table, ids = ground_truth_categories((p[1] for p in parsed), load_class_names(classes), folder)
    images = ImageTable(
        np.arange(1, len(stems) + 1), tuple(stems), np.asarray(widths), np.asarray(heights)
    )
    cols = Columns()
    for row, name, box, _, difficult, crowd in parsed:
        cols.add(row, ids[name], box, difficult=difficult, crowd=crowd)
    return cols.to_dataset(images, table, predictions=False)


def read_voc_predictions(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    one_based: bool = False,
    unknowns: Unknowns | None = None,
) -> Dataset:
    """Read a folder of VOC XML files with a ``<score>`` per object as predictions.

    Parameters
    ----------
    path : path
        Folder of ``<stem>.xml`` files matched to ``ground_truth`` images by stem.
    ground_truth : Dataset
    one_based : bool
        As in :func:`read_voc_ground_truth`.
    unknowns : Unknowns, optional
        Collects predictions for unknown images/classes instead of raising.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.xml").write_text("<annotation><object><name>cat</name><score>0.7</score>"
    ...     "<bndbox><xmin>1</xmin><ymin>2</ymin><xmax>3</xmax><ymax>4</ymax></bndbox>"
    ...     "</object></annotation>")
    >>> gt = read_voc_ground_truth(d)
    >>> read_voc_predictions(d, gt).scores.tolist()
    [0.7]
    """
    folder = check_exists(path, "predictions")
    files = _xml_files(folder, "predictions")
    rows = stem_rows(ground_truth.images)
    lookup = prediction_category_lookup(ground_truth.categories, None)
    cols = Columns()
    for file in track(files, total=len(files), description="reading XML"):
        objects = _objects(_parse_xml(file), file, prediction=True, one_based=one_based)
        row = rows.get(file.stem)
        for k, (name, box, score, _, _) in enumerate(objects, start=1):
            if row is None:
                if unknowns is None:
                    raise DataFormatError(
                        f"{file}: image {file.stem!r} is not in the ground truth (matched by file "
                        "stem)"
                    )
                unknowns.add_image(file.stem)
                continue
            category = lookup.get(name)
            if category is None:
                if unknowns is None:
                    raise DataFormatError(
                        f"{file}: annotation/object[{k}]/name: class {name!r} is not a "
                        "ground-truth class"
                    )
                unknowns.add_class(name)
                continue
            cols.add(row, category, box, score)
    return cols.to_dataset(ground_truth.images, ground_truth.categories, predictions=True)


def _detection_files(path: Path) -> list[tuple[Path, str]]:
    if path.is_file():
        files = [path]
    else:
        files = sorted(p for p in path.iterdir() if DETECTION_FILE.match(p.name))
    out = []
    for file in files:
        match = DETECTION_FILE.match(file.name)
        if match is None:
            raise DataFormatError(
                f"{file}: expected a devkit detection file named comp4_det_test_<class>.txt"
            )
        out.append((file, match.group(1)))
    return out


def read_voc_detections(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    one_based: bool = False,
    unknowns: Unknowns | None = None,
) -> Dataset:
    """Read VOC devkit detection files ``comp4_det_test_<class>.txt`` against a ground truth.

    Parameters
    ----------
    path : path
        One detection file, or a folder holding one per class.
    ground_truth : Dataset
        Images are matched by stem, classes by name.
    one_based : bool
        As in :func:`read_voc_ground_truth`.
    unknowns : Unknowns, optional
        Collects detections for unknown images/classes instead of raising.

    Returns
    -------
    Dataset
        Predictions in file order (files sorted by name, then line order).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ioukit.dataset import CategoryTable
    >>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["img"]),
    ...     CategoryTable.from_lists([1], ["cat"]), boxes=[[0, 0, 9, 9]], image_index=[0],
    ...     category_id=[1])
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "comp4_det_test_cat.txt").write_text("img 0.9 1 1 8 8\\n")
    >>> read_voc_detections(d, gt).boxes.tolist()
    [[1.0, 1.0, 8.0, 8.0]]
    """
    source = check_exists(path, "predictions")
    rows = stem_rows(ground_truth.images)
    lookup = prediction_category_lookup(ground_truth.categories, None)
    cols = Columns()
    for file, name in _detection_files(source):
        category = lookup.get(name)
        for line, tokens in iter_records(read_text(file)):
            if len(tokens) != 6:
                raise DataFormatError(
                    f"{file}: line {line}: expected 6 values (image_stem score x1 y1 x2 y2), got "
                    f"{len(tokens)}"
                )
            score = parse_number(tokens[1], file, line, "score")
            x1, y1, x2, y2 = (
                parse_number(t, file, line, f)
                for t, f in zip(tokens[2:], ("x1", "y1", "x2", "y2"), strict=True)
            )
            check_box(
                (x1, y1, x2, y2),
                file,
                f"line {line}",
                hint=" (devkit files hold corners x1 y1 x2 y2, not x y w h)",
            )
            row = rows.get(tokens[0])
            if row is None or category is None:
                if unknowns is None:
                    what = (
                        f"image {tokens[0]!r}"
                        if row is None
                        else f"class {name!r} (from the file name)"
                    )
                    raise DataFormatError(f"{file}: line {line}: {what} is not in the ground truth")
                if row is None:
                    unknowns.add_image(tokens[0])
                else:
                    unknowns.add_class(name)
                continue
            if one_based:
                x1, y1 = x1 - 1, y1 - 1
            cols.add(row, category, (x1, y1, x2, y2), score)
    return cols.to_dataset(ground_truth.images, ground_truth.categories, predictions=True)


def _fmt(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def read_voc_results(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    one_based: bool = False,
    unknowns: Unknowns | None = None,
) -> Dataset:
    """VOC predictions of either kind: devkit detection files (a file or a folder of them,
    :func:`read_voc_detections`) or a folder of XML with ``<score>``
    (:func:`read_voc_predictions`).

    Raises
    ------
    DataFormatError
        A folder holding both kinds, or a file that is not a devkit detection file.
    """
    p = Path(path)
    if p.is_dir():
        entries = sorted(p.iterdir())
        xml = [e for e in entries if e.suffix.lower() == ".xml"]
        det = [e for e in entries if DETECTION_FILE.match(e.name)]
        if xml and det:
            raise DataFormatError(
                f"{p}: holds both devkit detection files ({det[0].name}) and XML files "
                f"({xml[0].name}): expected one kind of VOC predictions (move the other "
                "files away)"
            )
        if xml:
            return read_voc_predictions(p, ground_truth, one_based=one_based, unknowns=unknowns)
    if p.is_file() and not DETECTION_FILE.match(p.name):
        raise DataFormatError(f"{p}: expected a devkit detection file comp4_det_test_<class>.txt")
    return read_voc_detections(p, ground_truth, one_based=one_based, unknowns=unknowns)


def write_voc(dataset: Dataset, path: str | os.PathLike[str], /) -> Path:
    """Write ``dataset`` in Pascal VOC form into the folder ``path`` (atomically).

    Ground truth becomes one ``<stem>.xml`` per image (coordinates as stored, see the module
    notes; a crowd box gets a non-standard ``<iscrowd>1</iscrowd>`` that the reader
    understands); predictions become devkit files ``comp4_det_test_<class>.txt``.

    Parameters
    ----------
    dataset : Dataset
    path : path
        Output folder; must not exist or be empty.

    Returns
    -------
    Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ioukit.dataset import CategoryTable
    >>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["a"], [100], [50]),
    ...     CategoryTable.from_lists([1], ["cat"]), boxes=[[0, 0, 50, 50.5]], image_index=[0],
    ...     category_id=[1])
    >>> out = write_voc(gt, pathlib.Path(tempfile.mkdtemp()) / "voc")
    >>> read_voc_ground_truth(out).boxes.tolist()
    [[0.0, 0.0, 50.0, 50.5]]
    """
    check_writable(dataset, "voc")
    names = dict(zip(dataset.categories.ids.tolist(), dataset.categories.names, strict=True))
    boxes = dataset.boxes.tolist()
    image_index = dataset.image_index.tolist()
    category = dataset.category_id.tolist()
    with atomic_directory(path) as tmp:
        if dataset.scores is not None:
            per_class: dict[int, list[str]] = {int(c): [] for c in names}
            scores = dataset.scores.tolist()
            for i, box in enumerate(boxes):
                stem = dataset.images.stems[image_index[i]]
                coords = " ".join(_fmt(v) for v in box)
                per_class[category[i]].append(f"{stem} {scores[i]!r} {coords}\n")
            for cid, lines in per_class.items():
                (tmp / f"comp4_det_test_{names[cid]}.txt").write_text(
                    "".join(lines), encoding="utf-8"
                )
            return Path(path)
        objects: list[list[int]] = [[] for _ in range(len(dataset.images))]
        for i, row in enumerate(image_index):
            objects[row].append(i)
        images = dataset.images
        for row, stem in enumerate(images.stems):
            root = ET.Element("annotation")
            ET.SubElement(root, "filename").text = f"{stem}.jpg"
            width, height = float(images.widths[row]), float(images.heights[row])
            if math.isfinite(width) and math.isfinite(height):
                size = ET.SubElement(root, "size")
                ET.SubElement(size, "width").text = _fmt(width)
                ET.SubElement(size, "height").text = _fmt(height)
                ET.SubElement(size, "depth").text = "3"
            for i in objects[row]:
                obj = ET.SubElement(root, "object")
                ET.SubElement(obj, "name").text = names[category[i]]
                ET.SubElement(obj, "truncated").text = "0"
                ET.SubElement(obj, "difficult").text = "1" if dataset.difficult[i] else "0"
                if dataset.crowd[i]:
                    ET.SubElement(obj, "iscrowd").text = "1"
                bndbox = ET.SubElement(obj, "bndbox")
                for tag, value in zip(("xmin", "ymin", "xmax", "ymax"), boxes[i], strict=True):
                    ET.SubElement(bndbox, tag).text = _fmt(value)
            ET.indent(root)
            ET.ElementTree(root).write(tmp / f"{stem}.xml", encoding="utf-8", xml_declaration=False)
    return Path(path)
