"""Collection of the doctests in src/ioukit: a module that cannot be imported without an
optional dependency is left out when that dependency is missing (its tests skip likewise)."""

from importlib.util import find_spec

collect_ignore: list[str] = []
if find_spec("torch") is None or find_spec("torchmetrics") is None:
    collect_ignore.append("src/ioukit/compat/torchmetrics.py")
