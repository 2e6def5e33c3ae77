# Type stub of the compiled module coco_json.pyx.
import numpy as np

OK: int
BAD_SYNTAX: int
MISSING_KEY: int
TOO_MANY: int

def scan_results(
    buf: np.ndarray,
    image_id: np.ndarray,
    category_id: np.ndarray,
    bbox: np.ndarray,
    score: np.ndarray,
    slow_start: np.ndarray,
    slow_end: np.ndarray,
    slow_slot: np.ndarray,
) -> tuple[int, int, int]: ...
