"""The file formats ``ioukit.io`` reads and writes: one table, name → reader/writer module.

This is the one lazy point of ``ioukit.io`` (as :mod:`ioukit.evaluation.registry` is for the
protocols): a format's module loads when a file of that format is read or written, so a COCO
JSON evaluation in a fresh process imports no text-format reader.
:func:`ioukit.io.read_ground_truth`, :func:`~ioukit.io.read_predictions`,
:func:`~ioukit.io.write_dataset`, the command line's
``--gt-format`` / ``--pred-format`` / ``--to`` choices and the conversion notes all read this
table instead of comparing format names. Adding a format = its module + one line here.

Examples
--------
>>> file_format("yolo").module
'ioukit.io.yolo'
>>> file_format("coco").sizes_in_file, file_format("yolo").sizes_in_file
(True, False)
>>> "yolo_obb" in writable_formats()
True
>>> keypoint_file_format("yolo").module
'ioukit.io.yolo_pose'
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ioukit._renamed import warn_renamed
from ioukit.errors import ParameterError

if TYPE_CHECKING:
    from pathlib import Path

    from ioukit.dataset import Dataset

__all__ = [
    "FileFormat",
    "box_formats",
    "file_format",
    "file_formats",
    "keypoint_file_format",
    "keypoint_formats",
    "writable_formats",
]


@dataclass(frozen=True, slots=True)
class FileFormat:
    """One format: where its reader and writer functions live and what they take.

    Attributes
    ----------
    name : str
        The name of ``format=`` and ``--gt-format`` (``"coco"``, ``"yolo"``...).
    module : str
        The module that defines the functions (imported on first use).
    ground_truth, predictions : str
        The names of its ground-truth and predictions readers.
    writer : str or None
        The name of its writer (``None``: read only); ``"module:function"`` when it lives in
        another module.
    options, prediction_options : frozenset of str
        The reading options its ground-truth reader takes among ``image_size``,
        ``images_dir``, ``classes``, ``fmt``, ``one_based``, and those its predictions
        reader takes among ``classes``, ``fmt``, ``one_based``, ``unknowns``; the
        others are not passed.
    sizes_in_file : bool
        The file gives the image sizes: ``image_size`` / ``images_dir`` are refused.
    oriented : bool
        Oriented boxes (8 corners): an axis-aligned format loses the angle.
    names_classes : bool
        The written files carry the class names (COCO, VOC, DOTA); YOLO writes indices.
    single_file : bool
        It is written as one file (COCO JSON); the others as a folder.
    label : str
        Its name in messages (``"YOLO OBB"``); default: the name in capitals.
    leaves_out : frozenset of str
        Ground-truth flags (``crowd``, ``ignore``, ``difficult``) whose rows its writer leaves
        out (the format has no such flag and the box would count as an object to find).
    drops : frozenset of str
        Ground-truth flags its writer drops, writing the rows as ordinary boxes.
    clips_to_image : bool
        Normalized ``cx cy w h``: a box whose centre or size lies outside the image is
        clipped to it.
    holds_masks : bool
        It writes masks (``segmentation``).
    pixel_twin : str or None
        The format whose lines read the same in pixels (YOLO's ``class cx cy w h`` against
        plain txt's ``class x y w h``): one side auto-detected as each is refused as mixed, and
        normalized 6-value lines are read as whichever of the two the other side is.
    val_json : str or None
        The format of the predictions file that ``yolo val save_json=True`` writes for labels
        of this format (COCO results naming images by file stem, classes by index + 1).
    """

    name: str
    module: str
    ground_truth: str
    predictions: str
    writer: str | None = None
    options: frozenset[str] = frozenset()
    prediction_options: frozenset[str] = frozenset()
    sizes_in_file: bool = False
    oriented: bool = False
    names_classes: bool = True
    single_file: bool = False
    label: str = ""
    leaves_out: frozenset[str] = frozenset()
    drops: frozenset[str] = frozenset()
    clips_to_image: bool = False
    holds_masks: bool = False
    pixel_twin: str | None = None
    val_json: str | None = None

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name.upper().replace("_", " "))

    def function(self, attribute: str) -> Callable[..., Any]:
        """The function named by ``attribute`` (``"ground_truth"``, ``"predictions"``,
        ``"writer"``), its module imported on first use."""
        name = getattr(self, attribute)
        if name is None:
            raise ParameterError(f"format: {self.name!r} cannot be written")
        module, _, name = name.rpartition(":")
        function: Callable[..., Any] = getattr(importlib.import_module(module or self.module), name)
        return function

    def read_ground_truth(self, path: str | os.PathLike[str], **options: Any) -> Dataset:
        """Read ground truth, passing the options this format takes."""
        given = {k: v for k, v in options.items() if k in self.options}
        dataset: Dataset = self.function("ground_truth")(path, **given)
        return dataset

    def read_predictions(
        self, path: str | os.PathLike[str], ground_truth: Dataset, **options: Any
    ) -> Dataset:
        """Read predictions against ``ground_truth``, passing the options this format takes."""
        given = {k: v for k, v in options.items() if k in self.prediction_options}
        dataset: Dataset = self.function("predictions")(path, ground_truth, **given)
        return dataset

    def write(self, dataset: Dataset, path: str | os.PathLike[str]) -> Path:
        """Write ``dataset`` to ``path``."""
        written: Path = self.function("writer")(dataset, path)
        return written


_IMAGES = frozenset({"image_size", "images_dir", "classes"})

_BOX_FORMATS: dict[str, FileFormat] = {
    f.name: f
    for f in (
        FileFormat(
            "coco",
            "ioukit.io.coco",
            "read_coco_dataset",
            "read_coco_predictions",
            "ioukit.io.coco_writer:write_coco",
            frozenset(),
            frozenset({"unknowns"}),
            sizes_in_file=True,
            single_file=True,
            holds_masks=True,
        ),
        FileFormat(
            "yolo",
            "ioukit.io.yolo",
            "read_yolo_ground_truth",
            "read_yolo_predictions",
            "write_yolo",
            _IMAGES,
            frozenset({"classes", "unknowns"}),
            names_classes=False,
            leaves_out=frozenset({"crowd", "ignore", "difficult"}),
            clips_to_image=True,
            pixel_twin="txt",
            val_json="coco",
        ),
        FileFormat(
            "voc",
            "ioukit.io.voc",
            "read_voc_ground_truth",
            "read_voc_results",
            "write_voc",
            frozenset({"classes", "one_based"}),
            frozenset({"one_based", "unknowns"}),
            sizes_in_file=True,
            drops=frozenset({"ignore"}),
        ),
        FileFormat(
            "txt",
            "ioukit.io.plain_txt",
            "read_txt_ground_truth",
            "read_txt_predictions",
            None,
            _IMAGES | {"fmt"},
            frozenset({"fmt", "classes", "unknowns"}),
        ),
        FileFormat(
            "dota",
            "ioukit.io.dota",
            "read_dota_ground_truth",
            "read_dota_predictions",
            "write_dota",
            frozenset({"classes", "images_dir"}),
            frozenset({"unknowns"}),
            oriented=True,
            drops=frozenset({"crowd", "ignore"}),
        ),
        FileFormat(
            "yolo_obb",
            "ioukit.io.yolo_obb",
            "read_yolo_obb_ground_truth",
            "read_yolo_obb_predictions",
            "write_yolo_obb",
            _IMAGES,
            frozenset({"classes", "unknowns"}),
            oriented=True,
            names_classes=False,
            label="YOLO OBB",
            leaves_out=frozenset({"crowd", "ignore"}),
            drops=frozenset({"difficult"}),
        ),
        FileFormat(
            "coco_rotated",
            "ioukit.io.coco_rotated",
            "read_coco_rotated_ground_truth",
            "read_coco_rotated_results",
            "write_coco_rotated",
            oriented=True,
            single_file=True,
        ),
    )
}

_KEYPOINT_FORMATS: dict[str, FileFormat] = {
    f.name: f
    for f in (
        FileFormat(
            "coco",
            "ioukit.io.coco_keypoints",
            "read_coco_keypoints",
            "read_coco_keypoint_results",
            "ioukit.io.keypoint_writers:write_coco_keypoints",
            sizes_in_file=True,
            single_file=True,
        ),
        FileFormat(
            "yolo",
            "ioukit.io.yolo_pose",
            "read_yolo_pose_ground_truth",
            "read_yolo_pose_predictions",
            "ioukit.io.keypoint_writers:write_yolo_pose",
            _IMAGES,
            frozenset({"classes"}),
            names_classes=False,
        ),
    )
}


def file_formats() -> tuple[str, ...]:
    """The names of the file formats of boxes (``format=``, ``--gt-format``), in the table's
    order.

    >>> file_formats()[:4]
    ('coco', 'yolo', 'voc', 'txt')
    """
    return tuple(_BOX_FORMATS)


def box_formats() -> tuple[str, ...]:
    """Deprecated: :func:`file_formats` (the names are file formats, not box formats); warns
    once (``DeprecationWarning``), goes in the next release."""
    warn_renamed("ioukit.io.formats.box_formats()", "ioukit.io.formats.file_formats()")
    return file_formats()


def keypoint_formats() -> tuple[str, ...]:
    """The names of the keypoint formats (COCO keypoint JSON, Ultralytics pose labels)."""
    return tuple(_KEYPOINT_FORMATS)


def writable_formats() -> tuple[str, ...]:
    """The box formats :func:`ioukit.io.write_dataset` writes."""
    return tuple(n for n, f in _BOX_FORMATS.items() if f.writer is not None)


def file_format(name: str) -> FileFormat:
    """The box format ``name``.

    Raises
    ------
    ParameterError
        ``name`` is not a format (the message lists them).
    """
    try:
        return _BOX_FORMATS[name]
    except (KeyError, TypeError):
        raise ParameterError(
            f"format: expected 'auto' or one of {', '.join(_BOX_FORMATS)}, got {name!r}"
        ) from None


def keypoint_file_format(name: str) -> FileFormat:
    """The keypoint format ``name`` (``"coco"`` or ``"yolo"``)."""
    try:
        return _KEYPOINT_FORMATS[name]
    except (KeyError, TypeError):
        raise ParameterError(
            f"format: expected one of {', '.join(_KEYPOINT_FORMATS)} for keypoints, got {name!r}"
        ) from None
