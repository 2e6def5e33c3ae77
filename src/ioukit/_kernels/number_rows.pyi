# Type stub of the compiled kernel number_rows.pyx.
from typing import Any

import numpy as np

OK: int
FALLBACK: int

def fill_rows(records: Any, key: str, out: np.ndarray) -> int: ...
def fill_floats(records: Any, key: str, default: Any, out: np.ndarray) -> int: ...
def fill_integers(records: Any, key: str, out: np.ndarray) -> int: ...
