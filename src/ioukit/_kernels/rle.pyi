# Type stub of the compiled module rle.pyx: NumPy arrays in, NumPy arrays filled in place.
from typing import Any

GROUP_PARALLEL_MIN_PAIRS: int

def __getattr__(name: str) -> Any: ...
def simd(avx2: bool | None = None) -> str: ...
def boundaries(
    counts: Any,
    offsets: Any,
    heights: Any,
    widths: Any,
    dilations: Any,
    wrap_rule: bool,
) -> tuple[Any, Any]: ...
