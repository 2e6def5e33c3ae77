"""Exceptions raised by ioukit.

Every message names the argument (or file and place), what was expected and what arrived.
All exceptions derive from :class:`IoukitError`; those about bad values also derive from
:class:`ValueError` so ``except ValueError`` keeps working for callers who expect it.

Examples
--------
>>> from ioukit.errors import BoxError, IoukitError, ParameterError
>>> issubclass(BoxError, ValueError) and issubclass(BoxError, IoukitError)
True
>>> issubclass(ParameterError, ValueError)
True
"""

from __future__ import annotations

__all__ = [
    "BoxError",
    "DataFormatError",
    "IoukitError",
    "MaskError",
    "MissingDependencyError",
    "ParameterError",
]


class IoukitError(Exception):
    """Base class of every error ioukit raises on purpose."""


class BoxError(IoukitError, ValueError):
    """A box array has the wrong shape, a non-finite coordinate or a negative size."""


class MaskError(IoukitError, ValueError):
    """A mask or label array has the wrong shape, dtype or values (e.g. not binary)."""


class DataFormatError(IoukitError, ValueError):
    """A dataset or prediction file (or dict) does not follow its format.

    The message starts with the file (or argument) and the place inside it, e.g.
    ``gt.json: annotations[17].bbox: expected 4 numbers, got 3``.
    """


class ParameterError(IoukitError, ValueError):
    """An option or argument has a value the function does not accept.

    Raised for options (``protocol``, ``iou_type``, ``iou_thresholds``, ``area_ranges``,
    ``max_dets``, ``sigmas``...), never for the content of a data file (that is
    :class:`DataFormatError`). The message starts with the argument's name, then what was
    expected and what arrived, e.g. ``iou_type: expected one of 'bbox', 'segm', got 'box'``.
    """


class MissingDependencyError(IoukitError, ImportError):
    """An optional dependency is needed; the message gives the install command."""
