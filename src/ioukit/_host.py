"""Moving arrays between the caller's library and NumPy for host-side algorithms (private).

NMS and box fusion are sequential algorithms that run in compiled kernels on NumPy arrays. These
helpers take whatever the caller passed (Python sequences, NumPy, PyTorch, CuPy, JAX, any
array-API array), give a NumPy view or copy to work on, validate it, and turn the result back
into an array of the caller's library on the caller's device.
"""

from __future__ import annotations

import math
from typing import Any

import array_api_compat
import numpy as np

from ioukit._array import Array, compat_namespace, refuse_masked, short_repr
from ioukit.boxes import prepare_boxes
from ioukit.errors import BoxError, DataFormatError, ParameterError

__all__ = ["check_number", "from_host", "host_boxes", "host_float64", "host_vector", "to_host"]


def to_host(x: Any, name: str) -> tuple[np.ndarray, Any]:
    """``x`` as a NumPy array plus the array it came from (``None`` for NumPy/sequences).

    Accelerator arrays are copied to the host; host arrays are viewed, never copied.
    """
    refuse_masked(x, name)
    if isinstance(x, np.ndarray) or not array_api_compat.is_array_api_obj(x):
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise BoxError(
                f"{name}: expected an array of numbers, got {short_repr(x)} ({exc})"
            ) from None
        return arr, None
    if array_api_compat.is_torch_array(x):
        import torch

        tensor = x.detach()
        if tensor.dtype == torch.bfloat16:
            tensor = tensor.float()
        return tensor.cpu().numpy(), x
    if array_api_compat.is_cupy_array(x):
        return x.get(), x
    try:
        return np.asarray(x), x
    except (TypeError, ValueError, RuntimeError):
        return np.from_dlpack(x), x


def from_host(result: np.ndarray, like: Any) -> Array:
    """``result`` as an array of ``like``'s library on ``like``'s device (NumPy if ``None``)."""
    if like is None:
        return result
    xp = array_api_compat.array_namespace(like)
    return xp.asarray(result, device=array_api_compat.device(like))


def host_boxes(boxes: np.ndarray, name: str, fmt: str) -> np.ndarray:
    """Validated, contiguous float xyxy boxes (n, 4) on the host (never the caller's buffer)."""
    if boxes.dtype.kind not in "biuf":
        raise BoxError(f"{name}: expected numbers, got dtype {boxes.dtype}")
    xyxy = prepare_boxes(compat_namespace(np), boxes, name, fmt, ndim=2)
    return np.ascontiguousarray(xyxy)


def host_vector(
    values: np.ndarray, name: str, n: int, *, integer: bool = False, finite: bool = False
) -> np.ndarray:
    """Check a per-box vector: shape (n,), numeric, no NaN (no inf when ``finite``).

    With ``integer=True`` the values must be integers (floats holding whole numbers are
    accepted, as ensemble-boxes returns them) and come back as int64.
    """
    if values.ndim != 1 or values.shape[0] != n:
        raise BoxError(f"{name}: expected shape ({n},) to match the boxes, got {values.shape}")
    if values.dtype.kind not in "biuf":
        raise BoxError(f"{name}: expected a real-valued array, got dtype {values.dtype}")
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values) if finite or integer else np.isnan(values)
        if integer:
            bad |= values != np.round(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "integers" if integer else "finite numbers" if finite else "numbers, not NaN"
            raise BoxError(f"{name}[{i}]: expected {what}, got {values[i]}")
    return values.astype(np.int64) if integer else values


def check_number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name}: expected a number, got {value!r}")
    number = float(value)
    if math.isnan(number):
        raise ParameterError(f"{name}: expected a number, got NaN")
    return number


def host_float64(value: object, name: str) -> np.ndarray:
    """``value`` (a sequence, NumPy array or torch tensor) as a new float64 NumPy array.

    DataFormatError naming ``name`` when it does not hold numbers.
    """
    detach = getattr(value, "detach", None)
    if detach is not None:  # torch tensor: no torch import needed
        value = detach().cpu().numpy()
    try:
        return np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataFormatError(f"{name}: expected numbers, got {type(value).__name__}") from exc
