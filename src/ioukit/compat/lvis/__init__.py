"""lvis-api's ``LVIS``, ``LVISResults`` and ``LVISEval`` on ioukit's LVIS protocol.

Import them as ``from ioukit.compat.lvis import LVIS, LVISResults, LVISEval``, or call
:func:`ioukit.compat.init_as_lvis` once so that ``import lvis`` and ``from lvis import
LVISEval`` resolve to them. ``LVISEval.run()`` evaluates with
:func:`ioukit.evaluation.protocols.lvis.evaluate_lvis`; ``eval["precision" | "recall"]``
and ``get_results()`` are lvis-api 0.5.3's (which needs ``np.float``, gone from NumPy 2).
"""

from __future__ import annotations

from ioukit.compat.lvis import eval, lvis, results  # lvis-api's module names
from ioukit.compat.lvis.eval import LVISEval, Params
from ioukit.compat.lvis.lvis import LVIS
from ioukit.compat.lvis.results import LVISResults

__all__ = ["LVIS", "LVISEval", "LVISResults", "Params", "eval", "lvis", "results"]
