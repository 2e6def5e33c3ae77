# Type stub of the compiled kernel text_rows.pyx.
import numpy as np

FALLBACK: int

def parse_rows(
    data: bytes | memoryview,
    offsets: np.ndarray,
    ncols: int,
    out: np.ndarray,
    counts: np.ndarray,
) -> int: ...
