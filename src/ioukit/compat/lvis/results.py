"""lvis-api's ``LVISResults`` (``lvis.results``).

Examples
--------
>>> from ioukit.compat.lvis import LVIS, LVISResults
>>> gt = LVIS({"images": [{"id": 1}], "categories": [{"id": 3, "frequency": "r"}],
...            "annotations": []})
>>> dt = LVISResults(gt, [{"image_id": 1, "category_id": 3, "bbox": [0, 0, 2, 3],
...                        "score": 0.5}])
>>> dt.anns[1]["area"], dt.anns[1]["segmentation"]
(6, [[0, 0, 0, 3, 2, 3, 2, 0]])
"""

from __future__ import annotations

import copy
import logging
from collections import defaultdict
from typing import Any

from ioukit.compat.lvis.lvis import LVIS
from ioukit.compat.pycocotools import mask as mask_utils

__all__ = ["LVISResults"]


class LVISResults(LVIS):
    """Results on an LVIS ground truth (lvis-api ``LVISResults``).

    Parameters
    ----------
    lvis_gt : LVIS or str
        The ground truth (its dataset is deep-copied) or its file.
    results : str or list of dict
        A results file or the list; lvis-api writes ``area``, ``id`` (1, 2, ...) and, for
        boxes, a box polygon ``segmentation`` into the caller's dicts, and so does this.
    max_dets : int
        The per-image cap (top scores, stable); negative: none.
    """

    def __init__(self, lvis_gt: LVIS | str, results: Any, max_dets: int = 300) -> None:
        if isinstance(lvis_gt, LVIS):
            self.dataset = copy.deepcopy(lvis_gt.dataset)
        elif isinstance(lvis_gt, str):
            self.dataset = self._load_json(lvis_gt)
        else:
            raise TypeError(f"Unsupported type {lvis_gt} of lvis_gt.")
        self.logger = logging.getLogger(__name__)
        self.logger.info("Loading and preparing results.")
        if isinstance(results, str):
            result_anns = self._load_json(results)
        else:
            self.logger.warning("Assuming user provided the results in correct format.")
            result_anns = results
        assert isinstance(result_anns, list), "results is not a list."
        if max_dets >= 0:
            result_anns = self.limit_dets_per_image(result_anns, max_dets)
        # what ioukit's reader reads: the records as given, before the fields written below
        self._raw_results = [dict(a) for a in result_anns]
        if "bbox" in result_anns[0]:
            for i, ann in enumerate(result_anns):
                x1, y1, w, h = ann["bbox"]
                x2, y2 = x1 + w, y1 + h
                if "segmentation" not in ann:
                    ann["segmentation"] = [[x1, y1, x1, y2, x2, y2, x2, y1]]
                ann["area"] = w * h
                ann["id"] = i + 1
        elif "segmentation" in result_anns[0]:
            for i, ann in enumerate(result_anns):
                ann["area"] = mask_utils.area(ann["segmentation"])
                if "bbox" not in ann:
                    ann["bbox"] = mask_utils.toBbox(ann["segmentation"])
                ann["id"] = i + 1
        self.dataset["annotations"] = result_anns
        self._create_index()
        in_results = {ann["image_id"] for ann in result_anns}
        assert in_results == in_results & set(self.get_img_ids()), (
            "Results do not correspond to current LVIS set."
        )

    def limit_dets_per_image(self, anns: list[dict[str, Any]], max_dets: int) -> list[Any]:
        """Each image's top ``max_dets`` by score (stable), grouped by image in first-seen order."""
        by_image: defaultdict[Any, list[dict[str, Any]]] = defaultdict(list)
        for ann in anns:
            by_image[ann["image_id"]].append(ann)
        for img_id, group in by_image.items():
            if len(group) > max_dets:
                by_image[img_id] = sorted(group, key=lambda a: a["score"], reverse=True)[:max_dets]
        return [ann for group in by_image.values() for ann in group]

    def get_top_results(self, img_id: Any, score_thrs: float) -> list[dict[str, Any]]:
        """The image's results scoring above ``score_thrs``."""
        anns = self.load_anns(self.get_ann_ids(img_ids=[img_id]))
        return [a for a in anns if a["score"] > score_thrs]
