"""The public surface: __all__ lists exactly the public members; import stays light."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import ioukit
import ioukit.boxes
import ioukit.errors
import ioukit.overlap
import ioukit.overlap.family
import ioukit.overlap.losses

MODULES = [
    ioukit,
    ioukit.boxes,
    ioukit.errors,
    ioukit.overlap,
    ioukit.overlap.family,
    ioukit.overlap.losses,
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_all_lists_public_members(module: types.ModuleType) -> None:
    is_package = hasattr(module, "__path__")
    exported_modules = {
        n for n in module.__all__ if isinstance(getattr(module, n), types.ModuleType)
    }  # touching every name also loads the lazily imported ones (ioukit's PEP 562 exports)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and callable(value)
        and (is_package or getattr(value, "__module__", None) == module.__name__)
    }
    assert set(module.__all__) - {"__version__"} - exported_modules == public


def test_import_loads_nothing_until_used() -> None:
    code = (
        "import sys, ioukit; loaded = [m for m in sys.modules if m.startswith('ioukit.')]; "
        "ioukit.box_iou([[0, 0, 1, 1]], [[0, 0, 1, 1]]); print(loaded, 'ioukit._kernels.rle' "
        "in sys.modules, 'ioukit.engine' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] False False"


def test_import_does_not_load_heavy_dependencies() -> None:
    heavy = "('numba', 'matplotlib', 'torch', 'jax')"
    code = f"import sys, ioukit; print(sorted(m for m in {heavy} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
