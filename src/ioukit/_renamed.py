"""Renamed keyword arguments: one name for one thing, the old name kept one release with a
:class:`DeprecationWarning` (once per function and name, as ``ioukit.metrics``' moved names).

Shared by every layer (a private shared module, like ``ioukit._array``).

Examples
--------
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     renamed_keyword("f", "box_format", "fmt", "xywh", "xyxy", "xyxy")
'xywh'
>>> str(caught[0].message)
'f(box_format=...) is renamed f(fmt=...); the old name goes in the next release'
>>> renamed_keyword("f", "box_format", "fmt", None, "cxcywh", "xyxy")
'cxcywh'
"""

from __future__ import annotations

import warnings
from typing import TypeVar

from ioukit.errors import ParameterError

__all__ = ["RENAMED_FUNCTIONS", "RENAMED_KEYWORDS", "renamed_keyword", "warn_renamed"]

T = TypeVar("T")

RENAMED_KEYWORDS: dict[str, tuple[tuple[str, str], ...]] = {
    "ioukit.Evaluator": (("box_format", "fmt"),),
    "ioukit.io.read_ground_truth": (("box_format", "fmt"),),
    "ioukit.io.read_predictions": (("box_format", "fmt"),),
    "ioukit.io.plain_txt.read_txt_ground_truth": (("box_format", "fmt"),),
    "ioukit.io.plain_txt.read_txt_predictions": (("box_format", "fmt"),),
    "ioukit.weighted_boxes_fusion": (("skip_box_threshold", "score_threshold"),),
}
"""Every renamed keyword: function -> ((old name, new name), ...) (the docs' table)."""

RENAMED_FUNCTIONS: dict[str, str] = {
    "ioukit.io.formats.box_formats": "ioukit.io.formats.file_formats",
}
"""Every renamed function: old name -> new name (the old one warns through
:func:`warn_renamed`; the docs' table)."""

_WARNED: set[str] = set()


def renamed_keyword(
    where: str, old: str, new: str, old_value: T | None, new_value: T, default: T
) -> T:
    """The value of keyword ``new`` of ``where``, given either as ``new`` or as its old name.

    Parameters
    ----------
    where : str
        The function, as the message names it.
    old, new : str
        The old and the new keyword.
    old_value : object or None
        What the caller passed under the old name (None: not given).
    new_value : object
        What the caller passed under the new name (its default when not given).
    default : object
        The new keyword's default.

    Returns
    -------
    object

    Raises
    ------
    ParameterError
        Both names given (the new one with another value than its default).
    """
    if old_value is None:
        return new_value
    if new_value is not default and new_value != default:
        raise ParameterError(
            f"{old}: {where}() got both {new}= and its old name {old}=; pass {new}= only"
        )
    warn_renamed(f"{where}({old}=...)", f"{where}({new}=...)", stacklevel=4)
    return old_value


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn (a :class:`DeprecationWarning`, once per ``old``) that ``old`` is renamed ``new``."""
    if old not in _WARNED:
        _WARNED.add(old)
        warnings.warn(
            f"{old} is renamed {new}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
