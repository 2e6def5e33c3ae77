"""The similarities (``iou_type``), one file each; each registers itself when imported.

Module map (module -> iou_types)::

    similarity.box          "bbox" (float64), "bbox-float32"
    similarity.mask         "segm" (RLE mask IoU, crowd as IoA)
    similarity.oks          "keypoints" (object keypoint similarity)
    similarity.rotated      "rotated" (exact polygon IoU), "probiou"
    similarity.ultralytics  Ultralytics' float32 box IoU, OKS and probiou (protocol "yolo")

Every similarity gives each (image, class) group its [P_i, G_i] matrix
(:class:`~ioukit.evaluation.groups.GroupMatrices`). Names map to these modules in
:mod:`ioukit.evaluation.registry`.
"""

__all__: list[str] = []
