"""Analyses of an :class:`~ioukit.analysis.result.EvaluationResult`: they read the outcome the
evaluation kept and never match again.

Module map (module -> job)::

    analysis.result       EvaluationResult (the protocol's numbers + the outcome), ClassRow
    analysis.curves       precision / recall / F1 against confidence, PR curves
    analysis.confusion    the confusion matrix (class x class plus background)
    analysis.errors       TIDE error analysis (dAP per error type)
    analysis.keypoints    keypoint error breakdown (jitter, inversion, swap, miss)
    analysis.lrp          LRP and optimal LRP
    analysis.per_image    per-image precision / recall / AP
    analysis.thresholds   per-class optimal confidence thresholds
    analysis.diagnostics  dataset findings (``ioukit check``)
    analysis.trust        trust notes: provenance, confidence floor, detections per image
    analysis.label_errors label-error candidates (wrong label, missing annotation, loose box)
    analysis.calibration  ECE / MCE / ACE / D-ECE and reliability bins of the kept detections
"""

__all__: list[str] = []
