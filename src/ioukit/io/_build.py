"""Private building blocks of the text/XML readers: class lists, image sizes, columns -> Dataset,
and the bookkeeping of predictions for images or classes the ground truth does not have.

Examples
--------
>>> parse_image_size("640x480")
(640.0, 480.0)
>>> cols = Columns()
>>> cols.add(0, 3, (0.0, 0.0, 2.0, 2.0))
>>> images = ImageTable.from_lists([1], ["a"])
>>> cats = CategoryTable.from_lists([3], ["cat"])
>>> len(cols.to_dataset(images, cats, predictions=False))
1
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError
from ioukit.io._image_header import image_header, image_size, turns_sideways
from ioukit.io._text import read_text

__all__ = [
    "CLASS_FILES",
    "IMAGE_SUFFIXES",
    "VOC_DETECTION_FILE",
    "ClassSource",
    "Columns",
    "Unknowns",
    "class_file_candidates",
    "companion_inputs",
    "find_class_file",
    "image_files",
    "image_sizes_from_folder",
    "index_lookup",
    "load_class_names",
    "load_yaml",
    "parse_image_size",
    "prediction_category",
    "resolve_image_sizes",
    "sideways_images",
    "unique_stems",
]

ClassSource = str | os.PathLike[str] | Sequence[str] | Mapping[int, str] | None
VOC_DETECTION_FILE = re.compile(r"comp\d+_det_(?:test|val|trainval|train)_(.+)\.txt\Z")
"""Names of Pascal VOC devkit detection files; group 1 is the class name."""
IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp"})


def parse_image_size(value: str | Sequence[float]) -> tuple[float, float]:
    """``"WxH"`` (or a ``(W, H)`` pair) as two positive finite floats.

    >>> parse_image_size((1280, 720))
    (1280.0, 720.0)
    """
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*[xX,]\s*(\d+(?:\.\d*)?)\s*", value)
        if match is None:
            raise DataFormatError(
                f"image_size: expected WIDTHxHEIGHT such as 640x480, got {value!r}"
            )
        width, height = float(match.group(1)), float(match.group(2))
    else:
        try:
            width, height = (float(v) for v in value)
        except (TypeError, ValueError):
            raise DataFormatError(f"image_size: expected (width, height), got {value!r}") from None
    if not (0 < width < float("inf") and 0 < height < float("inf")):
        raise DataFormatError(f"image_size: expected positive sizes, got {value!r}")
    return width, height


CLASS_FILES = ("classes.txt", "data.yaml", "data.yml")
"""Names of the class-name files the YOLO-family readers look for."""


def class_file_candidates(folder: Path, *, ground_truth: bool) -> list[Path]:
    """Where a reader of ``folder`` looks for class names, first match wins.

    Predictions: the folder itself. Ground truth: the folder, its parent, and for
    ``data.yaml`` the grandparent too (the Ultralytics layout ``dataset/data.yaml`` with
    ``dataset/labels/val``).

    >>> [p.as_posix() for p in class_file_candidates(Path("d/labels/val"), ground_truth=True)][-2:]
    ['d/data.yaml', 'd/data.yml']
    """
    found = [folder / name for name in CLASS_FILES]
    if ground_truth:
        found += [folder.parent / name for name in CLASS_FILES]
        found += [folder.parent.parent / name for name in CLASS_FILES[1:]]
    return found


def find_class_file(folder: Path, *, ground_truth: bool) -> Path | None:
    """The first existing file of :func:`class_file_candidates`."""
    for candidate in class_file_candidates(folder, ground_truth=ground_truth):
        if candidate.is_file():
            return candidate
    return None


def companion_inputs(path: str | os.PathLike[str]) -> list[Path]:
    """Files and folders a reader of ``path`` may read besides ``path`` itself.

    The class-name files found next to a folder (:func:`class_file_candidates`, ground truth's
    superset) and an Ultralytics ``images/`` sibling of a ``labels/`` folder: outputs must not
    land on them (#23 item 12).
    """
    folder = Path(path)
    if not folder.is_dir():
        return []
    found = [p for p in class_file_candidates(folder, ground_truth=True) if p.exists()]
    parts = folder.resolve().parts
    if "labels" in parts:
        i = len(parts) - 1 - parts[::-1].index("labels")
        images = Path(*parts[:i], "images", *parts[i + 1 :])
        if images.is_dir():
            found.append(images)
    return found


_MAX_YAML_DEPTH = 20
_MAX_CLASSES = 1 << 20


def _check_yaml_tokens(yaml: Any, text: str, path: Path) -> None:
    """Refuse anchors/aliases (the "billion laughs" of YAML) and deep nesting before loading."""
    depth = 0
    starts = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken)
    flow_starts = (yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)
    ends = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            line = token.start_mark.line + 1
            if isinstance(token, yaml.AliasToken | yaml.AnchorToken):
                raise DataFormatError(
                    f"{path}: line {line}: refused: YAML anchors and aliases (&, *) are not "
                    "needed in a data.yaml and can expand without bound"
                )
            if isinstance(token, starts + flow_starts):
                depth += 1
                if depth > _MAX_YAML_DEPTH:
                    raise DataFormatError(
                        f"{path}: line {line}: refused: YAML nested deeper than "
                        f"{_MAX_YAML_DEPTH} levels"
                    )
            elif isinstance(token, ends):
                depth -= 1
    except yaml.YAMLError as exc:
        raise DataFormatError(f"{path}: malformed YAML: {exc}".replace("\n", " ")) from None


def _class_index(key: object, path: Path | str, place: str) -> int:
    """A class index: a non-negative int (or a string of digits), never a bool or a float."""
    if isinstance(key, str) and key.strip().isdigit():
        key = int(key.strip())
    if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key < _MAX_CLASSES:
        raise DataFormatError(
            f"{path}: {place}: expected an integer class index in [0, {_MAX_CLASSES}), got {key!r}"
        )
    return key


def _class_name(value: object, path: Path | str, place: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise DataFormatError(f"{path}: {place}: expected a class name, got {value!r}"[:300])
    return str(value)


def load_yaml(text: str, path: Path) -> Any:
    """The document of an Ultralytics ``data.yaml``, parsed safely.

    PyYAML's safe loader, after refusing anchors/aliases and deep nesting; a syntax error is a
    :class:`DataFormatError` naming ``path``. Raises ``ImportError`` without PyYAML (the
    callers then read the one key they need line by line).
    """
    import yaml

    _check_yaml_tokens(yaml, text, path)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DataFormatError(f"{path}: malformed YAML: {exc}".replace("\n", " ")) from None


def _parse_yaml_names(text: str, path: Path) -> dict[int, str]:
    """The ``names`` entry of an Ultralytics ``data.yaml`` (list or ``{index: name}`` forms)."""
    try:
        doc = load_yaml(text, path)
    except ImportError:
        names = _tiny_yaml_names(text, path)
    else:
        names = doc.get("names") if isinstance(doc, dict) else None
    if isinstance(names, list):
        if len(names) > _MAX_CLASSES:
            raise DataFormatError(
                f"{path}: names: expected at most {_MAX_CLASSES} classes, got {len(names)}"
            )
        return {i: _class_name(n, path, f"names[{i}]") for i, n in enumerate(names)}
    if isinstance(names, dict):
        out: dict[int, str] = {}
        for key, name in names.items():
            index = _class_index(key, path, f"names.{key}")
            out[index] = _class_name(name, path, f"names.{key}")
        return out
    raise DataFormatError(
        f"{path}: names: expected a list or a mapping of class names, got {names!r}"[:300]
    )


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _tiny_yaml_names(text: str, path: Path) -> list[str] | dict[int, str] | None:
    """``names`` of a data.yaml without PyYAML: ``names: [a, b]``, a ``- a`` list or ``0: a`` "
    "map."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not re.match(r"names\s*:", line):
            continue
        rest = line.split(":", 1)[1].split(" #")[0].strip()
        if rest.startswith("["):
            inner = rest.strip("[]")
            return [_unquote(v) for v in inner.split(",") if v.strip()]
        as_list: list[str] = []
        as_map: dict[int, str] = {}
        for sub in lines[i + 1 :]:
            if not sub.strip() or sub.lstrip().startswith("#"):
                continue
            if not sub[0].isspace():
                break
            item = sub.strip()
            if item.startswith("- "):
                as_list.append(_unquote(item[2:]))
            elif ":" in item:
                key, name = item.split(":", 1)
                if not key.strip().isdigit():
                    raise DataFormatError(f"{path}: names: expected 'INDEX: name', got {item!r}")
                as_map[int(key)] = _unquote(name)
        return as_list if as_list else as_map
    return None


def load_class_names(source: ClassSource) -> dict[int, str] | None:
    """Class index -> name from a ``classes.txt`` / ``data.yaml`` path, a list or a mapping.

    >>> load_class_names(["cat", "dog"])
    {0: 'cat', 1: 'dog'}
    """
    if source is None:
        return None
    label: Path | str = "classes"
    if isinstance(source, Mapping):
        names = {
            _class_index(k, label, f"[{k!r}]"): _class_name(v, label, f"[{k!r}]")
            for k, v in source.items()
        }
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        label = path
        if not path.exists():
            raise FileNotFoundError(f"classes {path}: no such file")
        text = read_text(path)
        if path.suffix.lower() in {".yaml", ".yml"}:
            names = _parse_yaml_names(text, path)
        else:
            names = {
                i: line.strip()
                for i, line in enumerate(ln for ln in text.splitlines() if ln.strip())
            }
            if len(names) > _MAX_CLASSES:
                raise DataFormatError(
                    f"{path}: expected at most {_MAX_CLASSES} classes, got {len(names)}"
                )
        if not names:
            raise DataFormatError(f"{path}: expected class names, got none")
    else:
        names = {i: _class_name(n, label, f"[{i}]") for i, n in enumerate(source)}
    first: dict[str, int] = {}
    for index, name in sorted(names.items()):
        if name in first:
            raise DataFormatError(
                f"{label}: class {index}: name {name!r} is also class {first[name]}: expected "
                "unique class names (duplicates would merge or move classes)"
            )
        first[name] = index
    return names


def image_sizes_from_folder(folder: Path, stems: Iterable[str]) -> dict[str, tuple[float, float]]:
    """``stem -> (width, height)`` read from image headers (no pixel decoding, no pixel limit);
    the shown size of a JPEG turned sideways by its EXIF orientation."""

    files = image_files(folder)
    sizes: dict[str, tuple[float, float]] = {}
    for stem in stems:
        file = files.get(stem)
        if file is None:
            continue
        width, height = image_size(file)
        sizes[stem] = (float(width), float(height))
    return sizes


def image_files(folder: Path) -> dict[str, Path]:
    """``stem -> image file`` of ``folder`` (one image per stem, else an error)."""
    if not folder.is_dir():
        raise FileNotFoundError(f"--images {folder}: no such folder")
    files: dict[str, Path] = {}
    for p in sorted(folder.iterdir()):
        if p.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        if p.stem in files:
            raise DataFormatError(
                f"--images {folder}: {files[p.stem].name} and {p.name} share the stem "
                f"{p.stem!r}: expected one image per stem"
            )
        files[p.stem] = p
    return files


def sideways_images(folder: Path, stems: Iterable[str]) -> list[tuple[Path, int, int]]:
    """The images of ``stems`` in ``folder`` whose EXIF orientation swaps width and height:
    ``(file, stored width, stored height)`` each (their shown size is height x width)."""

    files = image_files(folder)
    found = []
    for stem in stems:
        file = files.get(stem)
        if file is None:
            continue
        width, height, orientation = image_header(file)
        if turns_sideways(orientation):
            found.append((file, width, height))
    return found


def resolve_image_sizes(
    stems: Sequence[str],
    *,
    image_size: str | Sequence[float] | None,
    images_dir: str | os.PathLike[str] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Widths and heights of ``stems`` (NaN where unknown) from a fixed size or an images folder."""
    n = len(stems)
    widths = np.full(n, np.nan)
    heights = np.full(n, np.nan)
    if image_size is not None:
        w, h = parse_image_size(image_size)
        widths[:] = w
        heights[:] = h
    elif images_dir is not None:
        sizes = image_sizes_from_folder(Path(images_dir), stems)
        missing = [s for s in stems if s not in sizes]
        if missing:
            raise DataFormatError(
                f"--images {images_dir}: no image found for {len(missing)} label file(s), "
                f"e.g. {missing[0]!r} (images are matched by file stem)"
            )
        for i, stem in enumerate(stems):
            widths[i], heights[i] = sizes[stem]
    return widths, heights


@dataclass
class Unknowns:
    """Predictions skipped because the ground truth lacks their image or class (for diagnostics).

    Attributes
    ----------
    images : dict of str to int
        Unknown image (stem or id) -> number of predictions skipped.
    classes : dict of str to int
        Unknown class (name or id) -> number of predictions skipped.
    """

    images: dict[str, int] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)

    def add_image(self, key: object) -> None:
        """Count one prediction of an unknown image."""
        self.images[str(key)] = self.images.get(str(key), 0) + 1

    def add_class(self, key: object) -> None:
        """Count one prediction of an unknown class."""
        self.classes[str(key)] = self.classes.get(str(key), 0) + 1

    def __bool__(self) -> bool:
        return bool(self.images or self.classes)


@dataclass
class Columns:
    """Growing per-box columns of one dataset, turned into a :class:`Dataset` at the end."""

    image_index: list[int] = field(default_factory=list)
    category_id: list[int] = field(default_factory=list)
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    difficult: list[bool] = field(default_factory=list)
    crowd: list[bool] = field(default_factory=list)

    def add(
        self,
        image: int,
        category: int,
        box: tuple[float, float, float, float],
        score: float | None = None,
        *,
        difficult: bool = False,
        crowd: bool = False,
    ) -> None:
        """Append one box (absolute xyxy)."""
        self.image_index.append(image)
        self.category_id.append(category)
        self.boxes.append(box)
        if score is not None:
            self.scores.append(score)
        self.difficult.append(difficult)
        self.crowd.append(crowd)

    def to_dataset(
        self, images: ImageTable, categories: CategoryTable, *, predictions: bool
    ) -> Dataset:
        """The finished dataset (boxes absolute xyxy float64)."""
        n = len(self.boxes)
        boxes = np.asarray(self.boxes, dtype=np.float64).reshape(n, 4)
        return Dataset.from_arrays(
            images,
            categories,
            boxes=boxes,
            image_index=np.asarray(self.image_index, dtype=np.int64),
            category_id=np.asarray(self.category_id, dtype=np.int64),
            scores=np.asarray(self.scores, dtype=np.float64) if predictions else None,
            difficult=np.asarray(self.difficult, dtype=bool),
            crowd=np.asarray(self.crowd, dtype=bool),
        )


def check_box(
    box: tuple[float, float, float, float], path: str | Path, place: str, *, hint: str = ""
) -> None:
    """Refuse inverted boxes (``x2 < x1`` or ``y2 < y1``), naming the file and place."""
    x1, y1, x2, y2 = box
    if x2 < x1 or y2 < y1:
        axis = "x2 < x1" if x2 < x1 else "y2 < y1"
        raise DataFormatError(
            f"{path}: {place}: expected x1 <= x2 and y1 <= y2, got {axis} in "
            f"({x1:g}, {y1:g}, {x2:g}, {y2:g}){hint}"
        )


def _is_index(label: str) -> bool:
    return label.isdigit()


def ground_truth_categories(
    labels: Iterable[str],
    classes: dict[int, str] | None,
    source: str | Path,
    *,
    indices: bool = False,
) -> tuple[CategoryTable, dict[str, int]]:
    """Category table of a ground truth and ``label -> category id`` for every label seen.

    Labels are the class tokens of the files (YOLO indices, VOC names, plain-txt names or
    indices). With a class list, ids are its indices and every label must be one of its indices
    or names. Without one, integer labels are their own ids (names ``"0"``, ``"1"``...), and
    named labels get ids 1..K in sorted name order. ``indices=True`` (YOLO): every label is a
    class index, never looked up as a name.

    >>> table, ids = ground_truth_categories(["dog", "cat"], None, "gt")
    >>> table.names, ids
    (('cat', 'dog'), {'dog': 2, 'cat': 1})
    """
    seen = list(dict.fromkeys(labels))
    if classes is not None:
        by_name = {name: i for i, name in sorted(classes.items(), reverse=True)}
        mapping: dict[str, int] = {}
        for label in seen:
            if indices:
                if not (_is_index(label) and int(label) in classes):
                    raise DataFormatError(
                        f"{source}: class index {label} is not in the class list "
                        f"(indices 0..{max(classes)})"
                    )
                mapping[label] = int(label)
            elif label in by_name:
                mapping[label] = by_name[label]
            elif _is_index(label) and int(label) in classes:
                mapping[label] = int(label)
            else:
                raise DataFormatError(
                    f"{source}: class {label!r} is not in the class list "
                    f"({len(classes)} classes: {', '.join(list(classes.values())[:5])}...)"
                )
        ordered = sorted(classes.items())
        return CategoryTable.from_lists([i for i, _ in ordered], [n for _, n in ordered]), mapping
    if all(_is_index(label) for label in seen):
        ids = sorted({int(label) for label in seen})
        return CategoryTable.from_lists(ids, [str(i) for i in ids]), {s: int(s) for s in seen}
    names = sorted(set(seen))
    table = CategoryTable.from_lists(list(range(1, len(names) + 1)), names)
    return table, {name: names.index(name) + 1 for name in seen}


def prediction_category_lookup(
    categories: CategoryTable, classes: dict[int, str] | None
) -> dict[str, int]:
    """``label -> ground-truth category id`` for prediction files (names first, then indices).

    A label matches a ground-truth class name; an integer label goes through the prediction
    side's class list (``classes``) to a name when one is given, else it is taken as a
    category id of the ground truth.

    >>> cats = CategoryTable.from_lists([1, 2], ["cat", "dog"])
    >>> prediction_category_lookup(cats, {0: "cat", 1: "dog"})["0"]
    1
    """
    lookup: dict[str, int] = {}
    by_name = {
        name: int(i) for i, name in zip(categories.ids.tolist(), categories.names, strict=True)
    }
    if classes is not None:
        for index, name in classes.items():
            if name in by_name:
                lookup[str(index)] = by_name[name]
    else:
        for i in categories.ids.tolist():
            lookup[str(int(i))] = int(i)
    lookup.update(by_name)
    return lookup


def unique_stems(files: list[Path]) -> list[Path]:
    """``files`` (sorted by stem), refusing two files with one stem (``a.txt`` and ``a.TXT``).

    >>> [p.name for p in unique_stems([Path("b.txt"), Path("a.txt")])]
    ['a.txt', 'b.txt']
    """
    ordered = sorted(files, key=lambda p: (p.stem, p.name))
    for first, second in pairwise(ordered):
        if first.stem == second.stem:
            raise DataFormatError(
                f"{second}: the image stem {second.stem!r} also has {first.name}: expected one "
                "label file per image"
            )
    return ordered


def index_lookup(categories: CategoryTable, classes: dict[int, str] | None) -> dict[str, int]:
    """``class index -> ground-truth category id`` for YOLO prediction files.

    A YOLO class token is an index, always: through the prediction side's class list to a
    ground-truth name when ``classes`` is given, else it is a category id of the ground truth.

    >>> cats = CategoryTable.from_lists([0, 1], ["a", "0"])
    >>> index_lookup(cats, None)
    {'0': 0, '1': 1}
    >>> index_lookup(cats, {0: "0", 1: "a"})
    {'0': 1, '1': 0}
    """
    if classes is None:
        return {str(int(i)): int(i) for i in categories.ids.tolist()}
    by_name = {
        name: int(i) for i, name in zip(categories.ids.tolist(), categories.names, strict=True)
    }
    return {str(index): by_name[name] for index, name in classes.items() if name in by_name}


def stem_rows(images: ImageTable, source: str | Path = "ground truth") -> dict[str, int]:
    """``stem -> row`` of an image table; a stem shared by two images is an error.

    Predictions in YOLO, plain txt and VOC files find their image by file stem, so two images
    ``train/a.jpg`` and ``val/a.jpg`` would silently receive each other's predictions.

    >>> stem_rows(ImageTable.from_lists([1, 2], ["a", "b"]))
    {'a': 0, 'b': 1}
    >>> stem_rows(ImageTable.from_lists([1, 2], ["a", "a"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: ground truth: images 1 and 2 share the file stem 'a' ...
    """
    rows: dict[str, int] = {}
    for row, stem in enumerate(images.stems):
        first = rows.setdefault(stem, row)
        if first != row:
            ids = images.ids
            raise DataFormatError(
                f"{source}: images {int(ids[first])} and {int(ids[row])} share the file stem "
                f"{stem!r} (e.g. train/{stem}.jpg and val/{stem}.jpg): predictions matched by "
                "stem would be ambiguous; rename one or use COCO results (matched by image id)"
            )
    return rows


def prediction_category(
    row: int | None,
    cls: int,
    lookup: Mapping[str, int],
    unknowns: Unknowns | None,
    file: Path,
    line: int,
) -> int | None:
    """Category id of a prediction line of image ``row`` (matched by ``file``'s stem) and class
    index ``cls``; None when the line is skipped into ``unknowns``.

    Without ``unknowns`` an image or class the ground truth lacks is an error naming the file
    and line (the YOLO and YOLO pose readers share this rule).

    >>> prediction_category(0, 1, {"1": 7}, None, Path("a.txt"), 3)
    7
    >>> prediction_category(None, 1, {"1": 7}, Unknowns(), Path("a.txt"), 3) is None
    True
    """
    if row is None:
        if unknowns is None:
            raise DataFormatError(
                f"{file}: line {line}: image {file.stem!r} is not in the ground truth "
                "(images are matched by file stem)"
            )
        unknowns.add_image(file.stem)
        return None
    category = lookup.get(str(cls))
    if category is None:
        if unknowns is None:
            raise DataFormatError(
                f"{file}: line {line}: class {cls} is not a ground-truth class (pass the class "
                "list with --classes, or --skip-unknown to leave such predictions out)"
            )
        unknowns.add_class(cls)
        return None
    return category
