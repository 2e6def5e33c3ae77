"""Drop-in faces of other evaluators over ioukit's pipeline.

:func:`init_as_pycocotools` makes ``import pycocotools`` (and ``pycocotools.coco``,
``pycocotools.cocoeval``, ``pycocotools.mask``) resolve to :mod:`ioukit.compat.pycocotools`,
so a framework's evaluator runs on ioukit without editing it; :func:`init_as_lvis` does the
same for lvis-api (``lvis``, ``lvis.lvis``, ``lvis.results``, ``lvis.eval``:
:mod:`ioukit.compat.lvis`). :mod:`ioukit.compat.torchmetrics` holds torchmetrics'
``MeanAveragePrecision`` (import it from there: ``torchmetrics.detection`` also holds other
metrics, so it is not replaced).

Examples
--------
>>> import sys
>>> from ioukit import compat
>>> saved = {k: sys.modules.get(k) for k in compat.PYCOCOTOOLS_MODULES}
>>> compat.init_as_pycocotools()
>>> from pycocotools.cocoeval import COCOeval
>>> COCOeval.__module__
'ioukit.compat.pycocotools.cocoeval'
>>> for k, v in saved.items():  # put the real package back
...     _ = sys.modules.pop(k, None) if v is None else sys.modules.__setitem__(k, v)
"""

from __future__ import annotations

import importlib.util
import sys
import types

__all__ = ["LVIS_MODULES", "PYCOCOTOOLS_MODULES", "init_as_lvis", "init_as_pycocotools"]

PYCOCOTOOLS_MODULES = (
    "pycocotools",
    "pycocotools.coco",
    "pycocotools.cocoeval",
    "pycocotools.mask",
)
"""The module names :func:`init_as_pycocotools` binds."""

LVIS_MODULES = ("lvis", "lvis.lvis", "lvis.results", "lvis.eval")
"""The module names :func:`init_as_lvis` binds."""


def init_as_pycocotools() -> None:
    """Bind ``pycocotools``, ``pycocotools.coco|cocoeval|mask`` to ioukit's drop-in.

    Call it before the framework imports pycocotools (modules that already did
    ``from pycocotools.coco import COCO`` keep the class they imported).
    """
    from ioukit.compat import pycocotools

    sys.modules["pycocotools"] = pycocotools
    sys.modules["pycocotools.coco"] = pycocotools.coco
    sys.modules["pycocotools.cocoeval"] = pycocotools.cocoeval
    # the mask module is bound now and loaded on first use: a box evaluation never calls it
    sys.modules["pycocotools.mask"] = _loaded_on_first_use("ioukit.compat.pycocotools.mask")


def _loaded_on_first_use(name: str) -> types.ModuleType:
    """``sys.modules[name]``; where it is not imported yet, the module object registered
    there (and as its package's attribute) by :class:`importlib.util.LazyLoader`: it runs its
    code on the first attribute read, and is the one module object everywhere."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:  # pragma: no cover - a broken install
        raise ImportError(f"{name}: not found (a broken ioukit install?)", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    package, _, attribute = name.rpartition(".")
    setattr(sys.modules[package], attribute, module)
    return module


def init_as_lvis() -> None:
    """Bind ``lvis``, ``lvis.lvis|results|eval`` to ioukit's lvis-api drop-in.

    Call it before the framework imports lvis (modules that already did
    ``from lvis import LVISEval`` keep the class they imported). ``lvis.vis`` (drawing) is
    not provided.

    Examples
    --------
    >>> import sys
    >>> from ioukit import compat
    >>> saved = {k: sys.modules.get(k) for k in compat.LVIS_MODULES}
    >>> compat.init_as_lvis()
    >>> from lvis import LVISEval
    >>> LVISEval.__module__
    'ioukit.compat.lvis.eval'
    >>> for k, v in saved.items():  # put the real package back
    ...     _ = sys.modules.pop(k, None) if v is None else sys.modules.__setitem__(k, v)
    """
    from ioukit.compat import lvis

    sys.modules["lvis"] = lvis
    sys.modules["lvis.lvis"] = lvis.lvis
    sys.modules["lvis.results"] = lvis.results
    sys.modules["lvis.eval"] = lvis.eval
