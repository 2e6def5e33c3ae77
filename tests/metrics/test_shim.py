"""The deprecated ``ioukit.metrics`` modules resolve every old public name to its new place,
warn once per name, and refuse names that never existed."""

from __future__ import annotations

import importlib
import warnings

import pytest

import ioukit.metrics as shim
from ioukit.metrics import MOVED, moved_attribute


@pytest.mark.parametrize("module", sorted(MOVED))
def test_every_old_name_resolves_to_the_object_at_its_new_place(module: str) -> None:
    path = "ioukit.diagnostics" if module == "diagnostics" else f"ioukit.metrics.{module}"
    old = importlib.import_module(path)
    for name, target in MOVED[module].items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = getattr(old, name)
        assert value is getattr(importlib.import_module(target), name)
        assert target.startswith(("ioukit.evaluation.", "ioukit.analysis.", "ioukit.engine"))
        assert all(issubclass(w.category, DeprecationWarning) for w in caught)


def test_warns_once_per_name_and_names_the_new_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shim, "_WARNED", set())
    with pytest.warns(
        DeprecationWarning, match=r"ioukit\.evaluation\.protocols\.voc\.evaluate_voc"
    ):
        from ioukit.metrics.voc import evaluate_voc  # noqa: F401
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        moved_attribute("ioukit.metrics.voc", "evaluate_voc")  # second use: silent


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'evaluate_nothing'"):
        moved_attribute("ioukit.metrics.voc", "evaluate_nothing")
    with pytest.raises(ImportError):
        from ioukit.metrics.voc import _private_helper  # noqa: F401
