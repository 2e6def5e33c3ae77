"""Shared fixtures: the array backends every generic geometry test runs on."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

DATA = Path(__file__).parent / "data"
CONFORMANCE = DATA / "conformance"

BACKENDS = ["numpy", "array_api_strict", "torch"]


def load_conformance(name: str) -> Any:
    """A JSON file from tests/data/conformance."""
    return json.loads((CONFORMANCE / name).read_text())


class Backend:
    """Creates arrays of one library and turns results back into NumPy."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "numpy":
            self.xp: Any = np
        elif name == "array_api_strict":
            self.xp = pytest.importorskip("array_api_strict")
        else:
            self.xp = pytest.importorskip("torch")

    def asarray(self, values: Any, dtype: str = "float64") -> Any:
        if self.name == "torch":
            return self.xp.asarray(np.asarray(values, dtype=dtype))
        return self.xp.asarray(np.asarray(values, dtype=dtype), dtype=getattr(self.xp, dtype))

    def to_numpy(self, array: Any) -> np.ndarray:
        if self.name == "torch":
            return array.detach().numpy()
        if self.name == "array_api_strict":
            return np.from_dlpack(array)
        return np.asarray(array)

    def is_native(self, array: Any) -> bool:
        if self.name == "torch":
            return bool(self.xp.is_tensor(array))
        if self.name == "array_api_strict":
            return type(array).__module__.startswith("array_api_strict")
        return isinstance(array, np.ndarray)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    """Every generic test runs once per array library."""
    return Backend(request.param)


# CI runs must be reproducible: the same examples every run. Locally, hypothesis explores.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
