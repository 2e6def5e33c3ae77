# Type stub of the compiled kernel keypoint_json.pyx.
import numpy as np

OK: int
INVALID: int
MISSING_KEY: int
TOO_MANY: int
WRONG_LENGTH: int
UNSUPPORTED: int

def scan_keypoint_results(
    buf: np.ndarray,
    num_values: int,
    image_ids: np.ndarray,
    category_ids: np.ndarray,
    scores: np.ndarray,
    keypoints: np.ndarray,
    bbox: np.ndarray,
    bbox_count: np.ndarray,
    extent_boxes: np.ndarray,
    extent_areas: np.ndarray,
    negative_zero: np.ndarray,
) -> tuple[int, int]: ...
