"""What the YOLO-family label folders share: detection, pose and OBB (private to ioukit.io).

One ``<stem>.txt`` per image, a line per object starting with a class index, coordinates
normalized by the image size, class names in ``classes.txt`` / ``data.yaml`` next to the
folder. The three readers differ only in what follows the class index; they share here:

- finding the label files (one per stem) and, for ground truth, the images: the stems of the
  label files plus those of ``images_dir`` (images without objects), their sizes from
  ``image_size``, the image headers of ``images_dir`` or of an Ultralytics ``images/``
  sibling of a ``labels/`` folder;
- the class names (``classes``, else ``classes.txt`` / ``data.yaml`` in the folder or, for
  ground truth, its parent) and the rule that a class token is an index, always (ground
  truth: :func:`~ioukit.io._build.ground_truth_categories` with ``indices=True``;
  predictions: :func:`~ioukit.io._build.index_lookup`);
- walking the records of every file with its image row (predictions: ``None`` for an image
  the ground truth lacks, decided by :func:`~ioukit.io._build.prediction_category`);
- normalized -> pixel coordinates, and the writers' common part (image sizes required,
  ``class values... [conf]`` lines, ``classes.txt``, an atomic folder).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ioukit.dataset import Dataset, ImageTable
from ioukit.errors import DataFormatError
from ioukit.io._build import (
    IMAGE_SUFFIXES,
    ClassSource,
    find_class_file,
    index_lookup,
    load_class_names,
    resolve_image_sizes,
    stem_rows,
    unique_stems,
)
from ioukit.io._progress import track
from ioukit.io._text import (
    atomic_directory,
    check_exists,
    iter_records,
    parse_class_index,
    parse_number,
    read_text,
)

__all__ = [
    "TOLERANCE",
    "LabelFolder",
    "Record",
    "label_files",
    "parse_box_label",
    "parse_label",
    "pixel_box",
    "pixel_index_line",
    "pixel_points",
    "prediction_files",
    "prediction_folder",
    "read_label_folder",
    "records",
    "require_image_sizes",
    "sibling_images",
    "write_label_folder",
]

Record = tuple[Path, int | None, int, list[str]]
"""(file, image row or None, line number, tokens) of one label line."""


def label_files(folder: Path, what: str) -> list[Path]:
    """The ``.txt`` label files of ``folder`` (not ``classes.txt``), one per stem, by stem."""
    if not folder.is_dir():
        raise DataFormatError(f"{what} {folder}: expected a folder of YOLO .txt files, got a file")
    return unique_stems(
        [
            p
            for p in folder.iterdir()
            if p.suffix.lower() == ".txt" and p.name.lower() != "classes.txt"
        ]
    )


def pixel_index_line(folder: Path, *, files: int = 20) -> tuple[Path, int, float] | None:
    """``(file, line, value)`` of the first line of a ``.txt`` folder that looks like a YOLO
    line in pixels: an integer class index, then numbers of which one is above 1.5.

    Only the first ``files`` label files are read (the sniffing budget of format detection).
    """
    import re

    index = re.compile(r"\+?\d+(\.0*)?\Z")
    for file in label_files(folder, "labels")[:files]:
        for line, tokens in iter_records(read_text(file)):
            if len(tokens) < 5 or not index.match(tokens[0]):
                return None
            try:
                values = [float(t) for t in tokens[1:]]
            except ValueError:
                return None
            big = [v for v in values if abs(v) > 1.5]
            if big:
                return file, line, big[0]
    return None


def sibling_images(folder: Path) -> Path | None:
    """The Ultralytics ``.../images/<split>`` folder of a ``.../labels/<split>`` folder."""
    parts = folder.resolve().parts
    if "labels" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("labels")
    candidate = Path(*parts[:i], "images", *parts[i + 1 :])
    return candidate if candidate.is_dir() else None


@dataclass(frozen=True, slots=True)
class LabelFolder:
    """A ground-truth label folder: its files, the image table and the class names."""

    folder: Path
    files: list[Path]
    images: ImageTable
    rows: list[int]
    names: dict[int, str] | None


def read_label_folder(
    path: str | os.PathLike[str],
    *,
    image_size: str | Sequence[float] | None,
    images_dir: str | os.PathLike[str] | None,
    classes: ClassSource,
) -> LabelFolder:
    """Files, images (ids 1..I in sorted stem order, with sizes) and class names of a folder."""
    folder = check_exists(path, "ground truth")
    files = label_files(folder, "ground truth")
    names = load_class_names(
        classes if classes is not None else find_class_file(folder, ground_truth=True)
    )
    if images_dir is None and image_size is None:
        images_dir = sibling_images(folder)
    stems = [p.stem for p in files]
    if images_dir is not None and image_size is None:
        image_dir = check_exists(images_dir, "--images")
        extra = {p.stem for p in image_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES}
        stems = sorted(set(stems) | extra)
    widths, heights = resolve_image_sizes(stems, image_size=image_size, images_dir=images_dir)
    row_of = {s: i for i, s in enumerate(stems)}
    images = ImageTable(np.arange(1, len(stems) + 1, dtype=np.int64), tuple(stems), widths, heights)
    return LabelFolder(folder, files, images, [row_of[p.stem] for p in files], names)


def records(
    files: Sequence[Path], rows: Sequence[int | None], description: str
) -> Iterator[Record]:
    """Every record of every file, with the file's image row."""
    for file, row in track(
        list(zip(files, rows, strict=True)), total=len(files), description=description
    ):
        for line, tokens in iter_records(read_text(file)):
            yield file, row, line, tokens


def prediction_files(
    path: str | os.PathLike[str], ground_truth: Dataset, classes: ClassSource
) -> tuple[dict[str, int], list[Path], list[int | None]]:
    """``class index -> category id``, the label files and their image rows (None: an image
    the ground truth lacks) of a prediction folder (see :func:`prediction_folder`)."""
    folder = check_exists(path, "predictions")
    files = label_files(folder, "predictions")
    class_file = classes if classes is not None else find_class_file(folder, ground_truth=False)
    lookup = index_lookup(ground_truth.categories, load_class_names(class_file))
    row_of = stem_rows(ground_truth.images)
    return lookup, files, [row_of.get(p.stem) for p in files]


def prediction_folder(
    path: str | os.PathLike[str], ground_truth: Dataset, classes: ClassSource
) -> tuple[dict[str, int], Iterator[Record]]:
    """``class index -> category id`` and the records of a prediction folder.

    Files are matched to ``ground_truth``'s images by stem (row ``None``: not in the ground
    truth); class names from ``classes``, else ``classes.txt``/``data.yaml`` in the folder,
    else class indices are ground-truth category ids.
    """
    lookup, files, rows = prediction_files(path, ground_truth, classes)
    return lookup, records(files, rows, "reading predictions")


TOLERANCE = 1e-3
"""Exporters round and Ultralytics clips: values up to 1.001 (and down to -0.001) still count
as normalized."""


def parse_label(
    tokens: list[str],
    path: Path,
    line: int,
    fields: Sequence[str],
    *,
    prediction: bool,
    range_hint: str | None,
) -> tuple[int, list[float], float | None]:
    """Class index, the ``fields`` numbers and (predictions) the trailing ``conf`` of a line.

    The line must hold exactly ``class``, ``fields`` and, for predictions, ``conf``. With a
    ``range_hint`` every field must be normalized (within :data:`TOLERANCE` of [0, 1]); the
    hint ends the message (what pixel values suggest). Errors name file and line.

    >>> parse_label(["1", "0.5", "0.25", "0.9"], Path("a.txt"), 3, ("x", "y"), prediction=True,
    ...             range_hint="pixels?")
    (1, [0.5, 0.25], 0.9)
    """
    expected = 1 + len(fields) + int(prediction)
    if len(tokens) != expected:
        layout = " ".join(("class", *fields, *(("conf",) if prediction else ())))
        raise DataFormatError(
            f"{path}: line {line}: expected {expected} values ({layout}), got {len(tokens)}"
        )
    cls = parse_class_index(tokens[0], path, line)
    values = [parse_number(t, path, line, f) for t, f in zip(tokens[1:], fields, strict=False)]
    if range_hint is not None:
        for value, name in zip(values, fields, strict=True):
            if value > 1 + TOLERANCE or value < -TOLERANCE:
                raise DataFormatError(
                    f"{path}: line {line}: {name}: expected a coordinate normalized to [0, 1], "
                    f"got {value:g} ({range_hint})"
                )
    score = parse_number(tokens[-1], path, line, "conf") if prediction else None
    return cls, values, score


def parse_box_label(
    tokens: list[str], path: Path, line: int, *, prediction: bool, range_hint: str | None
) -> tuple[int, tuple[float, float, float, float], float | None]:
    """:func:`parse_label` of ``class cx cy w h [conf]``, also refusing a negative size."""
    cls, (cx, cy, w, h), score = parse_label(
        tokens, path, line, ("cx", "cy", "w", "h"), prediction=prediction, range_hint=range_hint
    )
    if w < 0 or h < 0:
        raise DataFormatError(
            f"{path}: line {line}: expected w >= 0 and h >= 0, got w={w:g} h={h:g}"
        )
    return cls, (cx, cy, w, h), score


def pixel_box(
    box: tuple[float, float, float, float], width: float, height: float
) -> tuple[float, float, float, float]:
    """Normalized ``(cx, cy, w, h)`` -> pixel ``(x1, y1, x2, y2)`` (unknown size: 1 x 1).

    >>> pixel_box((0.5, 0.5, 0.5, 1.0), 100.0, 50.0)
    (25.0, 0.0, 75.0, 50.0)
    """
    cx, cy, w, h = box
    if width != width:  # unknown size: keep normalized units
        width = height = 1.0
    return (
        (cx - w / 2) * width,
        (cy - h / 2) * height,
        (cx + w / 2) * width,
        (cy + h / 2) * height,
    )


def pixel_points(values: list[float], width: float, height: float) -> list[float]:
    """Normalized ``x1 y1 x2 y2 ...`` -> pixels (unknown size: unchanged).

    >>> pixel_points([0.5, 0.5, 1.0, 0.0], 100.0, 50.0)
    [50.0, 25.0, 100.0, 0.0]
    """
    if width != width:  # unknown size: keep normalized units
        return values
    return [v * (width if k % 2 == 0 else height) for k, v in enumerate(values)]


def require_image_sizes(dataset: Dataset, what: str) -> None:
    """Refuse a dataset with an unknown image size (normalized coordinates need it)."""
    images = dataset.images
    unknown = np.flatnonzero(~(np.isfinite(images.widths) & np.isfinite(images.heights)))
    if len(unknown):
        raise DataFormatError(
            f"{what} output needs image sizes, unknown for image "
            f"{images.stems[int(unknown[0])]!r} (pass --image-size WxH or --images DIR when "
            "reading)"
        )


def write_label_folder(dataset: Dataset, path: str | os.PathLike[str], values: np.ndarray) -> Path:
    """Write ``class v1 ... vC [conf]`` lines (``values`` (N, C), normalized) and ``classes.txt``.

    One ``<stem>.txt`` per image (empty for an image without objects), class indices from
    :func:`ioukit.io.yolo.yolo_class_indices`, numbers as their shortest round-trip decimals;
    the folder is written atomically.
    """
    index = yolo_class_indices(dataset)
    lines: list[list[str]] = [[] for _ in range(len(dataset.images))]
    classes = [index[int(c)] for c in dataset.category_id.tolist()]
    scores = dataset.scores.tolist() if dataset.scores is not None else None
    for k, (row, row_values) in enumerate(
        zip(dataset.image_index.tolist(), values.tolist(), strict=True)
    ):
        fields = [str(classes[k]), *(repr(v) for v in row_values)]
        if scores is not None:
            fields.append(repr(scores[k]))
        lines[row].append(" ".join(fields))
    names = dict(zip(dataset.categories.ids.tolist(), dataset.categories.names, strict=True))
    with atomic_directory(path) as tmp:
        for stem, body in zip(dataset.images.stems, lines, strict=True):
            (tmp / f"{stem}.txt").write_text("".join(f"{r}\n" for r in body), encoding="utf-8")
        by_index = sorted((i, names[c]) for c, i in index.items())
        (tmp / "classes.txt").write_text("".join(f"{n}\n" for _, n in by_index), encoding="utf-8")
    return Path(path)


def yolo_class_indices(dataset: Dataset) -> dict[int, int]:
    """Category id -> YOLO class index: ids already 0..K-1 stay, others go by sorted position.

    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> yolo_class_indices(Dataset.from_arrays(ImageTable.from_lists([], []),
    ...     CategoryTable.from_lists([3, 1], ["b", "a"]), boxes=[], image_index=[], category_id=[]))
    {1: 0, 3: 1}
    """
    ids = sorted(int(i) for i in dataset.categories.ids.tolist())
    if ids == list(range(len(ids))):
        return {i: i for i in ids}
    return {cid: index for index, cid in enumerate(ids)}
