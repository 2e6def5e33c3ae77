"""Readers and writers: COCO JSON, YOLO txt, Pascal VOC XML, plain txt <-> :class:`ioukit.dataset.Dataset`."""
