"""Checks that a dataset can be written in a format and read back to the same dataset.

``convert`` must never lose data: two images with one stem would write one file twice, an
image named ``classes`` would overwrite ``classes.txt``, two classes with one name would merge,
and a name holding a line break or a control character would not read back. Each writer calls
:func:`check_writable` first and refuses, naming the images or classes, before anything is
written.

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> ds = Dataset.from_arrays(ImageTable.from_lists([1, 2], ["a", "a"]),
...     CategoryTable.from_lists([1], ["cat"]), boxes=[], image_index=[], category_id=[])
>>> check_writable(ds, "yolo")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ioukit.errors.DataFormatError: images: stem 'a' is shared by image ids 1 and 2: YOLO output ...
"""

from __future__ import annotations

from dataclasses import dataclass

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError

__all__ = ["check_writable", "name_problem"]


@dataclass(frozen=True, slots=True)
class _Layout:
    """What a writer's output is made of, which decides what must be unique and printable.

    Attributes
    ----------
    label : str
        The format's name in messages.
    file_per_image : bool
        Each image becomes a file named by its stem (YOLO ``.txt``, VOC ``.xml``): two stems
        that differ only in case would write one file twice; COCO writes one JSON file.
    stems_in_results : bool
        The predictions name their images by stem (YOLO files, VOC devkit lines); COCO
        results name them by id.
    classes_by_name : bool
        The output identifies classes by name (YOLO's class list, VOC's ``<name>``): two
        classes with one name would merge.
    devkit_results : bool
        Predictions are VOC devkit lines ``stem score x1 y1 x2 y2`` in one file per class:
        no white space in a stem, no path in a class name.
    gt_suffix : str
        The suffix of a ground-truth file per image (predictions: ``.txt``).
    reserved : frozenset of str
        Stems (case-folded) that would overwrite another file of the output.
    """

    label: str
    file_per_image: bool = True
    stems_in_results: bool = True
    classes_by_name: bool = True
    devkit_results: bool = False
    gt_suffix: str = ".txt"
    reserved: frozenset[str] = frozenset()


_LAYOUTS = {
    "yolo": _Layout("YOLO", reserved=frozenset({"classes"})),
    "voc": _Layout("VOC", devkit_results=True, gt_suffix=".xml"),
    "coco": _Layout("COCO", file_per_image=False, stems_in_results=False, classes_by_name=False),
}
"""The writers :func:`check_writable` knows, by format name."""


def name_problem(name: str, *, spaces: bool = True) -> str | None:
    """Why ``name`` cannot be a file stem or a line of a class list (``None`` when it can).

    >>> name_problem("cat"), name_problem("a\\nb"), name_problem(" cat")
    (None, 'it holds a control character (\\\\n)', 'it starts or ends with white space')
    """
    if name == "":
        return "it is empty"
    bad = next((c for c in name if not c.isprintable() and c != " "), None)
    if bad is not None:
        return f"it holds a control character ({repr(bad)[1:-1]})"
    if name != name.strip():
        return "it starts or ends with white space"
    if not spaces and any(c.isspace() or c == "," for c in name):
        return "it holds white space or a comma (the separators of a devkit line)"
    return None


def _stem_problem(stem: str, *, spaces: bool) -> str | None:
    problem = name_problem(stem, spaces=spaces)
    if problem is not None:
        return problem
    if "/" in stem or "\\" in stem:
        return "it holds a path separator"
    if stem in {".", ".."}:
        return "it is not a file name"
    return None


def check_writable(dataset: Dataset, format: str, /) -> None:
    """Refuse a dataset that ``format``'s writer could not write losslessly.

    Parameters
    ----------
    dataset : Dataset
    format : {"coco", "yolo", "voc"}

    Raises
    ------
    DataFormatError
        Naming the images (stem and ids) or the classes and what would be lost.
    """
    layout = _LAYOUTS[format]
    label = layout.label
    images = dataset.images
    categories = dataset.categories
    ids = images.ids.tolist()
    predictions = dataset.scores is not None
    if layout.stems_in_results or not predictions:
        # VOC devkit lines are "stem score x1 y1 x2 y2": no white space inside a stem
        spaces = not (layout.devkit_results and predictions)
        seen: dict[str, int] = {}
        for row, stem in enumerate(images.stems):
            problem = _stem_problem(stem, spaces=spaces)
            if problem is not None:
                raise DataFormatError(
                    f"images: image id {ids[row]}: stem {stem!r} cannot be written as {label}: "
                    f"{problem}"
                )
            if not layout.file_per_image:
                continue
            key = stem.casefold()  # a.txt and A.txt are one file on many file systems
            if key in seen:
                first = seen[key]
                suffix = ".txt" if predictions else layout.gt_suffix
                other = images.stems[first]
                where = f"stem {stem!r}" if stem == other else f"stems {other!r} and {stem!r}"
                verb = "is" if stem == other else "are"
                raise DataFormatError(
                    f"images: {where} {verb} shared by image ids {ids[first]} and {ids[row]}: "
                    f"{label} output would write {stem}{suffix} twice (rename one image)"
                )
            if key in layout.reserved:
                raise DataFormatError(
                    f"images: image id {ids[row]}: stem {stem!r} would overwrite {key}.txt in "
                    f"{label} output (rename the image)"
                )
            seen[key] = row
    if not layout.classes_by_name:
        return
    names: dict[str, int] = {}
    for cid, name in zip(categories.ids.tolist(), categories.names, strict=True):
        problem = name_problem(name)
        if problem is None and layout.devkit_results and ("/" in name or name in {".", ".."}):
            problem = "it cannot be part of a devkit file name"
        if problem is not None:
            raise DataFormatError(
                f"categories: id {cid}: class name {name!r} cannot be written as {label}: {problem}"
            )
        if name in names:
            raise DataFormatError(
                f"categories: ids {names[name]} and {cid} share the class name {name!r}: {label} "
                "identifies classes by name, so they would merge (rename one)"
            )
        names[name] = cid
