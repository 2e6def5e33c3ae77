"""Array plumbing shared by every geometry function (private).

One job: turn whatever the caller passed (Python sequences, NumPy, PyTorch, JAX, CuPy or any
array-API array) into a float array of the caller's library, dtype and device, and check it on
the host when that costs no device round trip.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import array_api_compat
import numpy as np

from ioukit.errors import BoxError, ParameterError

Array = Any  # an array of any array-API library; kept loose on purpose (see DESIGN.md)

_BOX_FORMATS = ("xyxy", "xywh", "cxcywh")


def check_format(fmt: object, name: str = "fmt") -> str:
    """Return ``fmt`` if it is a known box format, else raise ``ParameterError``."""
    if fmt not in _BOX_FORMATS:
        raise ParameterError(
            f"{name}: expected one of {', '.join(map(repr, _BOX_FORMATS))}, got {fmt!r}"
        )
    return str(fmt)


def check_image_size(image_size: object) -> tuple[float, float]:
    """``image_size`` as positive finite floats ``(width, height)``; ParameterError otherwise."""
    try:
        width, height = (float(v) for v in image_size)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise ParameterError(f"image_size: expected (width, height), got {image_size!r}") from None
    if not (math.isfinite(width) and math.isfinite(height) and width > 0 and height > 0):
        raise ParameterError(
            f"image_size: expected positive finite (width, height), got {image_size!r}"
        )
    return width, height


def compat_namespace(xp: Any) -> Any:
    """``xp``, with plain NumPy replaced by array-api-compat's NumPy namespace.

    NumPy before 2.0 lacks ``isdtype``, ``astype`` and the inspection API; the compat namespace
    has them on every supported NumPy (and is NumPy's own functions on NumPy 2).
    """
    return array_api_compat.array_namespace(np.empty(0)) if xp is np else xp


def _is_array(x: object) -> bool:
    return array_api_compat.is_array_api_obj(x) and not isinstance(x, (int, float, bool, complex))


def namespace_of(*arrays: object, names: tuple[str, ...]) -> tuple[Any, list[Array]]:
    """Return the array namespace shared by ``arrays`` and the arrays converted to it.

    Python sequences become NumPy arrays. Arrays from two different libraries are refused.
    """
    foreign = [a for a in arrays if _is_array(a) and not isinstance(a, np.ndarray)]
    if not foreign:
        return array_api_compat.array_namespace(np.empty(0)), [
            _numpy_from_sequence(a, n) for a, n in zip(arrays, names, strict=True)
        ]
    try:
        xp = array_api_compat.array_namespace(*foreign)
    except TypeError as exc:
        kinds = ", ".join(
            f"{n}: {type(a).__module__}.{type(a).__name__}"
            for a, n in zip(arrays, names, strict=True)
        )
        raise TypeError(f"arrays from different libraries cannot be mixed ({kinds})") from exc
    out = []
    for a, n in zip(arrays, names, strict=True):
        if _is_array(a) and not isinstance(a, np.ndarray):
            out.append(a)
        else:
            out.append(
                xp.asarray(_numpy_from_sequence(a, n), device=array_api_compat.device(foreign[0]))
            )
    return xp, out


def refuse_masked(a: object, name: str) -> None:
    """Raise :class:`BoxError` for a NumPy masked array (its mask would be ignored)."""
    # numpy.ma loads lazily (about 20 ms): no masked array exists until it is imported
    masked = sys.modules.get("numpy.ma")
    if masked is not None and isinstance(a, masked.MaskedArray):
        raise BoxError(
            f"{name}: masked arrays are not supported (the mask would be ignored); pass "
            f"the boxes to keep, e.g. {name}[~{name}.mask.any(axis=-1)].data"
        )


def _numpy_from_sequence(a: object, name: str) -> np.ndarray:
    refuse_masked(a, name)
    if isinstance(a, np.ndarray):
        arr = a
    else:
        try:
            arr = np.asarray(a)
        except (ValueError, TypeError) as exc:
            raise BoxError(
                f"{name}: expected an array of numbers with last axis 4, "
                f"got {short_repr(a)} ({exc})"
            ) from None
    if arr.dtype.kind not in "biuf":
        raise BoxError(f"{name}: expected numbers, got dtype {arr.dtype} from {short_repr(a)}")
    return arr


def short_repr(a: object, limit: int = 80) -> str:
    """``repr(a)`` cut to ``limit`` characters, for error messages."""
    text = repr(a)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def float_dtype_for(xp: Any, x: Array) -> Any:
    """The float dtype ioukit computes in for ``x``.

    float32 and float64 are kept; integers and booleans become the library's default float
    (float64 for NumPy, ``torch.get_default_dtype()`` for PyTorch); float16 and bfloat16 are
    computed in float32, as torchvision does, because their range overflows box areas.
    """
    xp = compat_namespace(xp)
    dtype = x.dtype
    if isinstance(dtype, np.dtype) and not dtype.isnative:  # big-endian float64 stays float64
        dtype = dtype.newbyteorder("=")
    if dtype == xp.float64 or dtype == xp.float32:
        return dtype
    if xp.isdtype(dtype, "real floating"):
        return xp.float32
    info = xp.__array_namespace_info__()
    return info.default_dtypes(device=array_api_compat.device(x))["real floating"]


def as_boxes(xp: Any, x: Array, name: str, *, dtype: Any = None, ndim: int | None = None) -> Array:
    """Check the shape of a box array and cast it to its float dtype (never in place).

    Parameters
    ----------
    xp : namespace
        The array namespace of ``x``.
    x : array, shape (..., 4)
    name : str
        Argument name used in error messages.
    dtype : dtype, optional
        Cast to this dtype instead of :func:`float_dtype_for`.
    ndim : int, optional
        Required number of dimensions (2 for ``(N, 4)``).
    """
    xp = compat_namespace(xp)
    shape = tuple(x.shape)
    if (ndim is not None and len(shape) != ndim) or len(shape) == 0 or shape[-1] != 4:
        want = "(N, 4)" if ndim == 2 else "(..., 4)"
        raise BoxError(f"{name}: expected shape {want}, got {shape}")
    if not xp.isdtype(x.dtype, ("bool", "integral", "real floating")):
        raise BoxError(f"{name}: expected a real-valued array, got dtype {x.dtype}")
    target = float_dtype_for(xp, x) if dtype is None else dtype
    return x if x.dtype == target else xp.astype(x, target)


def host_view(x: Array) -> np.ndarray | None:
    """A NumPy view of ``x`` when it lives in host memory and is concrete, else ``None``.

    Tensors on an accelerator and JAX values being traced return ``None``: checking them would
    force a device synchronisation (or fail under ``jit``), so validation is skipped for them.
    """
    if isinstance(x, np.ndarray):
        return x
    if array_api_compat.is_torch_array(x):
        return x.detach().numpy() if x.device.type == "cpu" else None
    if array_api_compat.is_jax_array(x):
        import jax

        if isinstance(x, jax.core.Tracer) or (
            x.devices() and next(iter(x.devices())).platform != "cpu"
        ):
            return None
        return np.asarray(x)
    if array_api_compat.is_cupy_array(x):
        return None
    try:
        return np.from_dlpack(x)
    except (TypeError, ValueError, RuntimeError, BufferError, AttributeError):
        return None


def validate_boxes(x: Array, name: str, fmt: str) -> None:
    """Raise :class:`BoxError` for a non-finite coordinate or a negative width or height.

    ``x`` has shape (..., 4) in format ``fmt``. The check runs on host arrays only (see
    :func:`host_view`); the message shows the first offending box and its index.
    """
    view = host_view(x)
    if view is None or view.size == 0:
        return
    lower = view[..., :2] if fmt == "xyxy" else 0
    if np.isfinite(view).all() and (view[..., 2:] >= lower).all() and _converts(view, fmt):
        return  # the common case: two passes, no per-box temporaries
    finite = np.isfinite(view).all(axis=-1)
    if finite.all() and fmt != "xyxy" and not _converts(view, fmt):
        bad = ~np.isfinite(_corners(view, fmt)).all(axis=-1)
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = name + "".join(f"[{i}]" for i in index)
        raise BoxError(
            f"{where}: invalid {fmt} box {view[index].tolist()}: its corners overflow to "
            f"infinity in {view.dtype} (expected corners within the float range)"
        )
    if fmt == "xyxy":
        ok = finite & (view[..., 2] >= view[..., 0]) & (view[..., 3] >= view[..., 1])
        problem = "x2 < x1 or y2 < y1"
    else:
        ok = finite & (view[..., 2] >= 0) & (view[..., 3] >= 0)
        problem = "negative width or height"
    index = tuple(int(i) for i in np.argwhere(~ok)[0])
    where = name + "".join(f"[{i}]" for i in index)
    box = view[index].tolist()
    reason = "a NaN or infinite coordinate" if not finite[index] else problem
    raise BoxError(f"{where}: invalid {fmt} box {box}: {reason}")


def _corners(view: np.ndarray, fmt: str) -> np.ndarray:
    # the far corners the conversion to xyxy computes (inf where it overflows, no warning)
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt == "xywh":
            return np.asarray(view[..., :2] + view[..., 2:])
        half = view[..., 2:] / 2
        return np.concatenate([view[..., :2] - half, view[..., :2] + half], axis=-1)


def _converts(view: np.ndarray, fmt: str) -> bool:
    """Whether converting finite ``view`` from ``fmt`` to xyxy stays finite (``x + w``)."""
    return fmt == "xyxy" or bool(np.isfinite(_corners(view, fmt)).all())


def stop_gradient(xp: Any, x: Array) -> Array:
    """``x`` without gradient flow (torch ``detach``, JAX ``stop_gradient``), else ``x``."""
    if array_api_compat.is_torch_namespace(xp):
        return x.detach()
    if array_api_compat.is_jax_namespace(xp):
        import jax

        return jax.lax.stop_gradient(x)
    return x
