# Type stub of the compiled module coco_gt_json.pyx.
import numpy as np

OK: int
INVALID: int
MISSING_KEY: int
TOO_MANY: int
UNSUPPORTED: int

def scan_annotations(
    buf: np.ndarray,
    start: int,
    end: int,
    ids: np.ndarray,
    image_id: np.ndarray,
    category_id: np.ndarray,
    bbox: np.ndarray,
    area: np.ndarray,
    iscrowd: np.ndarray,
) -> tuple[int, int]: ...
def has_digit_run(buf: bytes | np.ndarray, length: int) -> bool: ...
def box_corners(bbox: np.ndarray, box_wh: np.ndarray, area: np.ndarray) -> None: ...

RESULT_KEYS: tuple[str, str, str, str]

def plain_result_forms(buf: bytes | np.ndarray, integer_bits: np.ndarray) -> int: ...
