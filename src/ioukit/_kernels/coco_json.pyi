# Type stub of the compiled module coco_json.pyx.
import numpy as np

OK: int
INVALID: int
MISSING_KEY: int
TOO_MANY: int
UNSUPPORTED: int

def scan_results(
    buf: np.ndarray,
    image_id: np.ndarray,
    category_id: np.ndarray,
    bbox: np.ndarray,
    score: np.ndarray,
) -> tuple[int, int]: ...
def locate_error(buf: np.ndarray) -> tuple[int, int, int, str] | None: ...
def pow10_128(q: int) -> tuple[int, int]: ...
def top_level_members(buf: np.ndarray) -> tuple[int, list[tuple[bytes, int, int]]]: ...
def scan_segm_results(
    buf: np.ndarray,
    image_id: np.ndarray,
    category_id: np.ndarray,
    bbox: np.ndarray,
    score: np.ndarray,
    has_bbox: np.ndarray,
    rle: np.ndarray,
    order: np.ndarray,
) -> tuple[int, int]: ...
def rle_strings(
    buf: np.ndarray, rle: np.ndarray, counts: np.ndarray, offsets: np.ndarray
) -> int: ...
