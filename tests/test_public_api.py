"""Every public module declares ``__all__``; it names exactly the public functions and classes
the module defines, and nothing that does not exist."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import types
from pathlib import Path

import pytest

import ioukit
from ioukit.errors import MissingDependencyError

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(ioukit.__path__, "ioukit.")
    if not any(part.startswith("_") for part in info.name.split(".")[1:])
)


@pytest.mark.parametrize("name", MODULES)
def test_all_matches_defined_public_names(name: str) -> None:
    if name.startswith("ioukit.metrics.") or name == "ioukit.diagnostics":
        pytest.skip("deprecated alias module (tests/metrics/test_shim.py)")
    try:
        module = importlib.import_module(name)
    except MissingDependencyError as error:  # an optional face (torchmetrics needs torch)
        pytest.skip(str(error))
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what does not exist: {missing}"
    defined = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_")
        and (inspect.isfunction(v) or inspect.isclass(v))
        and v.__module__ == name
    }
    undeclared = defined - set(module.__all__)
    assert not undeclared, f"{name} defines public names missing from __all__: {sorted(undeclared)}"


def test_top_level_exports_are_importable() -> None:
    for n in ioukit.__all__:
        value = getattr(ioukit, n)
        assert value is not None
        if isinstance(value, types.ModuleType):
            assert value.__name__.startswith("ioukit.")


def test_the_facade_names_are_written_once_in_its_stub() -> None:
    # __init__.py's loader reads __init__.pyi with a line reader; ast must read the same table
    stub = Path(ioukit.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text(encoding="utf-8"))
    table = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            assert node.module is not None
            for alias in node.names:
                assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"
                table[alias.name] = (node.module, alias.name)
        else:  # the docstring and __version__ only
            assert isinstance(node, ast.Expr | ast.AnnAssign), ast.dump(node)
    assert table == ioukit._EXPORTS
    assert sorted([*table, "__version__"]) == ioukit.__all__
    source = Path(ioukit.__file__).read_text(encoding="utf-8")
    assert "TYPE_CHECKING" not in source  # no second list of the names for type checkers
