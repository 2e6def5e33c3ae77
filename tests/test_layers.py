"""Layers use each other's public names only.

A module of one layer (a top-level module or sub-package of ``ioukit``: ``masks``, ``engine``,
``evaluation``, ``metrics``, ``io``, ``cli``...) must not import, or reach through an attribute,
a private name (``_x``) of another layer. The private shared modules (``ioukit._array``,
``ioukit._host``, ``ioukit._kernels``) are meant for every layer and are not checked.
``KNOWN`` lists the crossings that remain (each a candidate for a public name); the test fails
on any new one, and on a listed one that is gone (so the list only shrinks). It is empty now:
helpers shared by several layers live in private shared modules (``ioukit._box_formats``,
``ioukit._rotated_corners``, ``ioukit._evaluate_inputs``, ``ioukit._process_group``...).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "ioukit"

KNOWN: set[tuple[str, str]] = set()


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def crossings() -> set[tuple[str, str]]:
    """(file relative to src/ioukit, the private name of another layer it uses)."""
    found: set[tuple[str, str]] = set()
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        module = ".".join(("ioukit", *rel.with_suffix("").parts)).removesuffix(".__init__")
        own = _layer(module)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ioukit"):
                assert node.module is not None
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    bound[alias.asname or alias.name] = target
                    layer = _layer(target if node.module == "ioukit" else node.module)
                    if _private(alias.name) and layer != own and not layer.startswith("_"):
                        found.add((rel.as_posix(), target))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                target = bound.get(node.value.id, "")
                layer = _layer(target)
                if target and _private(node.attr) and layer != own and not layer.startswith("_"):
                    found.add((rel.as_posix(), f"{target}.{node.attr}"))
    return found


def test_no_new_private_names_across_layers() -> None:
    found = crossings()
    new = sorted(found - KNOWN)
    assert not new, "private names of another layer (give them a public name):\n" + "\n".join(
        f"  {f}: {n}" for f, n in new
    )
    gone = sorted(KNOWN - found)
    assert not gone, "fixed crossings still listed in KNOWN (remove them):\n" + "\n".join(
        f"  {f}: {n}" for f, n in gone
    )


def test_masks_has_no_private_users() -> None:
    assert not [c for c in crossings() if c[1].startswith("ioukit.masks.")]
