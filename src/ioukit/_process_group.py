"""Whether ioukit runs inside a ``torch.distributed`` job of several ranks (private).

Shared by :mod:`ioukit.distributed` and the metric layers that must refuse, or gather, across
ranks. Never imports torch: a user without it is never made to pay for it.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["process_group"]


def process_group() -> Any:
    """``torch.distributed`` when a process group of more than one rank is initialised.

    Returns
    -------
    module or None
        The ``torch.distributed`` module, or None when torch is not imported, distributed is
        unavailable or uninitialised, or the world has a single rank.

    Examples
    --------
    >>> process_group() is None  # a plain process
    True
    """
    dist = sys.modules.get("torch.distributed")  # never import torch for a user without it
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist if dist.get_world_size() > 1 else None
