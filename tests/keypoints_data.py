"""Generated COCO person-keypoint sets for the keypoint tests (ground truth + results).

``make_keypoint_set`` is :func:`ioukit.synthetic.make_keypoints` (same arguments, same random
stream), kept under its old name for the tests that import it.
"""

from __future__ import annotations

from ioukit.synthetic import make_keypoints

make_keypoint_set = make_keypoints

__all__ = ["make_keypoint_set"]
