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

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError

__all__ = ["check_writable", "name_problem"]

_LABEL = {"yolo": "YOLO", "voc": "VOC", "coco": "COCO"}


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
    label = _LABEL[format]
    images = dataset.images
    categories = dataset.categories
    ids = images.ids.tolist()
    stems_matter = format != "coco" or dataset.scores is None
    if stems_matter:
        # VOC devkit lines are "stem score x1 y1 x2 y2": no white space inside a stem
        spaces = not (format == "voc" and dataset.scores is not None)
        seen: dict[str, int] = {}
        for row, stem in enumerate(images.stems):
            problem = _stem_problem(stem, spaces=spaces)
            if problem is not None:
                raise DataFormatError(
                    f"images: image id {ids[row]}: stem {stem!r} cannot be written as {label}: "
                    f"{problem}"
                )
            if format == "coco":
                continue
            key = stem.casefold()  # a.txt and A.txt are one file on many file systems
            if key in seen:
                first = seen[key]
                suffix = ".xml" if format == "voc" and dataset.scores is None else ".txt"
                other = images.stems[first]
                where = f"stem {stem!r}" if stem == other else f"stems {other!r} and {stem!r}"
                verb = "is" if stem == other else "are"
                raise DataFormatError(
                    f"images: {where} {verb} shared by image ids {ids[first]} and {ids[row]}: "
                    f"{label} output would write {stem}{suffix} twice (rename one image)"
                )
            if format == "yolo" and key == "classes":
                raise DataFormatError(
                    f"images: image id {ids[row]}: stem {stem!r} would overwrite classes.txt in "
                    f"{label} output (rename the image)"
                )
            seen[key] = row
    if format == "coco":
        return
    names: dict[str, int] = {}
    for cid, name in zip(categories.ids.tolist(), categories.names, strict=True):
        problem = name_problem(name)
        if problem is None and format == "voc" and ("/" in name or name in {".", ".."}):
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
