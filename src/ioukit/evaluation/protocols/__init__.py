"""The evaluation protocols, one file each; each registers itself when imported.

Module map (module -> protocols)::

    protocols.coco        "coco" (pycocotools' COCOeval)
    protocols.keypoints   "coco" with iou_type "keypoints", "crowdpose", "yolo" pose
    protocols.voc         "voc07", "voc10" (Pascal VOC devkit)
    protocols.rotated     "dota", "mmrotate" (DOTA devkit, mmrotate's eval_map)
    protocols.yolo        "yolo" (Ultralytics' val metrics)
    protocols.lvis        "lvis" (lvis-api)
    protocols.openimages  "openimages", "openimages_challenge" (TF Object Detection API)

Names map to these modules in :mod:`ioukit.evaluation.registry`.
"""

__all__: list[str] = []
