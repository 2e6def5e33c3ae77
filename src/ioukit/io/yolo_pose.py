"""Ultralytics pose labels (YOLO txt with keypoints) -> :class:`~ioukit.dataset.Dataset`.

One ``<stem>.txt`` per image. Labels: ``class cx cy w h x1 y1 v1 ... xK yK vK`` (or ``x y``
pairs when ``kpt_shape`` is ``[K, 2]``), every coordinate normalized by the image width and
height; ``v`` is 0 (not labelled), 1 (occluded) or 2 (visible). Predictions (``save_txt`` +
``save_conf``): ``class cx cy w h x1 y1 [c1] ... conf``, a keypoint confidence after each
pair when the model has one. ``kpt_shape`` comes from the argument, else from the
``data.yaml`` next to the folder (or its parent), else from the first line.

Keypoints in pixels need the image sizes, as boxes do (see :mod:`ioukit.io.yolo`); without
them both stay normalized, which leaves OKS unchanged only with ``oks_area="box"`` (area and
distances scale alike). Ground truth ``area`` is the box's ``w * h``; a ground truth without a
visible keypoint is marked ``ignore`` (pycocotools' ``num_keypoints == 0`` rule). Keypoints
with ``kpt_shape [K, 2]`` count as visible.

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.txt").write_text("0 0.5 0.5 0.5 0.5 0.4 0.4 2 0 0 0\\n")
>>> gt = read_yolo_pose_ground_truth(d, kpt_shape=(2, 3), image_size=(100, 200))
>>> gt.keypoints.tolist()
[[[40.0, 80.0, 2.0], [0.0, 0.0, 0.0]]]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.io._build import (
    ClassSource,
    Columns,
    Unknowns,
    ground_truth_categories,
    load_yaml,
    prediction_category,
)
from ioukit.io._text import read_text
from ioukit.io._yolo_folder import (
    parse_box_label,
    pixel_box,
    prediction_folder,
    read_label_folder,
    records,
)
from ioukit.io.coco_keypoints import _with_columns

__all__ = ["read_kpt_shape", "read_yolo_pose_ground_truth", "read_yolo_pose_predictions"]


def read_kpt_shape(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """``kpt_shape`` ``(K, D)`` of an Ultralytics ``data.yaml``; None when it has none.

    Raises
    ------
    DataFormatError
        ``kpt_shape`` is not ``[K, 2]`` or ``[K, 3]`` with K >= 1.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "data.yaml"
    >>> _ = p.write_text("kpt_shape: [17, 3]\\nnames: [person]\\n")
    >>> read_kpt_shape(p)
    (17, 3)
    """
    path = Path(path)
    text = read_text(path)
    value: object = None
    try:
        doc = load_yaml(text, path)
    except ImportError:  # pragma: no cover - pyyaml is in the yaml extra
        for line in text.splitlines():
            key, _, rest = line.partition(":")
            if key.strip() == "kpt_shape":
                value = [int(t) for t in rest.strip(" []\t").split(",") if t.strip()]
    else:
        value = doc.get("kpt_shape") if isinstance(doc, dict) else None
    if value is None:
        return None
    return _check_kpt_shape(value, f"{path}: kpt_shape")


def _check_kpt_shape(value: object, name: str) -> tuple[int, int]:
    try:
        k, d = (int(v) for v in value)  # type: ignore[attr-defined]
        ok = k >= 1 and d in (2, 3) and all(float(v) == int(v) for v in value)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DataFormatError(f"{name}: expected [K, 2] or [K, 3] with K >= 1, got {value!r}")
    return k, d


def _find_kpt_shape(folder: Path) -> tuple[int, int] | None:
    for candidate in (folder, folder.parent):
        for name in ("data.yaml", "data.yml"):
            if (candidate / name).is_file():
                shape = read_kpt_shape(candidate / name)
                if shape is not None:
                    return shape
    return None


def _keypoints(
    tokens: list[str], path: Path, line: int, k: int, d: int, width: float, height: float
) -> np.ndarray:
    """(K, 3) pixel keypoints of ``tokens`` (K * d numbers); v = 2 when d is 2."""
    values = np.empty(k * d)
    for j, token in enumerate(tokens):
        field = f"keypoint {j // d + 1} {'xyv'[j % d] if d == 3 else 'xy'[j % d]}"
        try:
            values[j] = float(token)
        except ValueError:
            raise DataFormatError(
                f"{path}: line {line}: {field}: expected a number, got {token!r}"
            ) from None
        if not np.isfinite(values[j]):
            raise DataFormatError(
                f"{path}: line {line}: {field}: expected a finite number, got {token!r}"
            )
    kp = values.reshape(k, d)
    out = np.empty((k, 3))
    scale_x, scale_y = (1.0, 1.0) if width != width else (width, height)
    out[:, 0] = kp[:, 0] * scale_x
    out[:, 1] = kp[:, 1] * scale_y
    out[:, 2] = kp[:, 2] if d == 3 else 2.0
    return out


def _check_visibility(kp: np.ndarray, path: Path, line: int) -> None:
    """v >= 0: 0 not labelled, any v > 0 labelled (0.187: a COCO-WholeBody confidence
    converted from COCO JSON reads back, #23 item 21)."""
    bad = kp[:, 2] < 0
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise DataFormatError(
            f"{path}: line {line}: keypoint {j + 1} v: expected a visibility >= 0 (0 not "
            f"labelled, > 0 labelled), got {kp[j, 2]:g}"
        )


def read_yolo_pose_ground_truth(
    path: str | os.PathLike[str],
    /,
    *,
    kpt_shape: Sequence[int] | None = None,
    image_size: str | Sequence[float] | None = None,
    images_dir: str | os.PathLike[str] | None = None,
    classes: ClassSource = None,
) -> Dataset:
    """Read a folder of Ultralytics pose label files as keypoint ground truth.

    Parameters
    ----------
    path : path
        Folder of ``<stem>.txt`` files: ``class cx cy w h`` then K keypoints, normalized.
    kpt_shape : (K, D), optional
        D = 3 (``x y v``) or 2 (``x y``); default from ``data.yaml``, else the first line
        (D = 3 when its count allows).
    image_size, images_dir, classes
        As :func:`ioukit.io.yolo.read_yolo_ground_truth`.

    Returns
    -------
    Dataset
        ``keypoints`` (N, K, 3) in pixels, boxes xyxy, ``area`` the box area, ``ignore`` where
        no keypoint is visible.

    Raises
    ------
    DataFormatError
        Naming file and line: a count other than ``5 + K * D``, a non-finite value, a
        negative visibility, a bad ``kpt_shape``.
    """
    labels = read_label_folder(path, image_size=image_size, images_dir=images_dir, classes=classes)
    shape = (
        _check_kpt_shape(kpt_shape, "kpt_shape")
        if kpt_shape is not None
        else _find_kpt_shape(labels.folder)
    )
    images = labels.images
    parsed: list[tuple[int, int, tuple[float, float, float, float], np.ndarray]] = []
    for file, row, line, tokens in records(labels.files, labels.rows, "reading labels"):
        assert row is not None
        w, h = float(images.widths[row]), float(images.heights[row])
        if shape is None:
            n = len(tokens) - 5
            d = 3 if n > 0 and n % 3 == 0 else 2
            if n <= 0 or n % d:
                raise DataFormatError(
                    f"{file}: line {line}: expected class cx cy w h and then x y [v] per "
                    f"keypoint, got {len(tokens)} values (pass kpt_shape)"
                )
            shape = (n // d, d)
        k, d = shape
        if len(tokens) != 5 + k * d:
            layout = "x y v" if d == 3 else "x y"
            raise DataFormatError(
                f"{file}: line {line}: expected {5 + k * d} values (class cx cy w h, then "
                f"{layout} for each of {k} keypoints: kpt_shape [{k}, {d}]), got {len(tokens)}"
            )
        # pose boxes (a keypoint extent) may reach outside the image: no [0, 1] check
        cls, box, _ = parse_box_label(tokens[:5], file, line, prediction=False, range_hint=None)
        kp = _keypoints(tokens[5:], file, line, k, d, w, h)
        _check_visibility(kp, file, line)
        parsed.append((row, cls, pixel_box(box, w, h), kp))
    table, ids = ground_truth_categories(
        (str(c) for _, c, _, _ in parsed), labels.names, labels.folder, indices=True
    )
    cols = Columns()
    for row, cls, box, _ in parsed:
        cols.add(row, ids[str(cls)], box)
    ds = cols.to_dataset(images, table, predictions=False)
    k = shape[0] if shape is not None else 0
    keypoints = np.array([p[3] for p in parsed]).reshape(len(parsed), k, 3)
    hidden = ~(keypoints[:, :, 2] > 0).any(axis=1)
    return _with_columns(ds, keypoints=keypoints, ignore=ds.ignore | hidden)


def read_yolo_pose_predictions(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    classes: ClassSource = None,
    unknowns: Unknowns | None = None,
) -> Dataset:
    """Read Ultralytics pose predictions (``class cx cy w h x y [c] ... conf``).

    Parameters
    ----------
    path : path
        Folder of ``<stem>.txt`` files, matched to the ground truth's images by stem.
    ground_truth : Dataset
        Gives the images (and sizes), categories and K (its ``keypoints``).
    classes, unknowns
        As :func:`ioukit.io.yolo.read_yolo_predictions`.

    Returns
    -------
    Dataset
        Predictions with ``keypoints`` (N, K, 3) in pixels (third value: the keypoint
        confidence, or 1 when the file has none) and ``area`` the box area.

    Raises
    ------
    DataFormatError
        Naming file and line: a count other than ``6 + 2K`` or ``6 + 3K``, a non-finite value,
        (without ``unknowns``) an unknown image or class.
    """
    gt_kp = getattr(ground_truth, "keypoints", None)
    if gt_kp is None:
        raise DataFormatError("ground_truth: expected keypoints (read it as YOLO pose labels)")
    k = int(gt_kp.shape[1])
    lookup, lines = prediction_folder(path, ground_truth, classes)
    widths, heights = ground_truth.images.widths, ground_truth.images.heights
    cols = Columns()
    kps: list[np.ndarray] = []
    for file, row, line, tokens in lines:
        n = len(tokens) - 6
        if n not in (2 * k, 3 * k):
            raise DataFormatError(
                f"{file}: line {line}: expected {6 + 2 * k} or {6 + 3 * k} values (class cx cy "
                f"w h, x y [conf] for each of the ground truth's {k} keypoints, conf), got "
                f"{len(tokens)}"
            )
        d = n // k if k else 2
        box_part = [*tokens[:5], tokens[-1]]
        cls, box, score = parse_box_label(box_part, file, line, prediction=True, range_hint=None)
        category = prediction_category(row, cls, lookup, unknowns, file, line)
        if category is None or row is None:  # row None: category None (skipped or raised)
            continue
        w, h = float(widths[row]), float(heights[row])
        kp = _keypoints(tokens[5:-1], file, line, k, d, w, h)
        if d == 2:
            kp[:, 2] = 1.0
        kps.append(kp)
        cols.add(row, category, pixel_box(box, w, h), score)
    ds = cols.to_dataset(ground_truth.images, ground_truth.categories, predictions=True)
    return _with_columns(ds, keypoints=np.array(kps).reshape(len(kps), k, 3))
