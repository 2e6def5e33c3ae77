"""Evaluation protocols (COCO, Pascal VOC, Ultralytics), AP formulas, curves, confusion matrix."""
