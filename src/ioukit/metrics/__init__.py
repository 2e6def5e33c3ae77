"""Evaluation protocols (COCO, Pascal VOC, Ultralytics), AP formulas, curves, confusion matrix."""

__all__: list[str] = []
