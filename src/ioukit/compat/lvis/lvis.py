"""lvis-api's ``LVIS`` annotation index (``lvis.lvis``).

Examples
--------
>>> from ioukit.compat.lvis import LVIS
>>> gt = LVIS({"images": [{"id": 1}], "categories": [{"id": 3, "frequency": "r"}],
...            "annotations": [{"id": 7, "image_id": 1, "category_id": 3, "area": 4.0,
...                             "bbox": [0, 0, 2, 2]}]})
>>> gt.get_ann_ids(img_ids=[1], cat_ids=[3]), gt.get_cat_ids()
([7], [3])
"""

from __future__ import annotations

import copy
import json
import logging
import os
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from ioukit.compat.pycocotools import mask as mask_utils

__all__ = ["LVIS"]


class LVIS:
    """The LVIS annotation index (lvis-api ``LVIS``).

    Parameters
    ----------
    annotation_path : str, path or dict
        An LVIS JSON file (lvis-api takes only a path; a dict is copied).

    Attributes
    ----------
    dataset : dict
    anns, cats, imgs : dict
        By id.
    img_ann_map, cat_img_map : defaultdict(list)
        Annotations per image id; image ids per category id (one per annotation).
    """

    def __init__(self, annotation_path: str | os.PathLike[str] | Mapping[str, Any]) -> None:
        self.logger = logging.getLogger(__name__)
        self.logger.info("Loading annotations.")
        if isinstance(annotation_path, Mapping):
            self.dataset: Any = copy.deepcopy(dict(annotation_path))
        else:
            self.dataset = self._load_json(annotation_path)
        assert type(self.dataset) is dict, (
            f"Annotation file format {type(self.dataset)} not supported."
        )
        self._create_index()

    @staticmethod
    def _load_json(path: str | os.PathLike[str]) -> Any:
        with open(path) as f:
            return json.load(f)

    def _create_index(self) -> None:
        self.logger.info("Creating index.")
        self.img_ann_map: defaultdict[Any, list[dict[str, Any]]] = defaultdict(list)
        self.cat_img_map: defaultdict[Any, list[Any]] = defaultdict(list)
        self.anns: dict[Any, dict[str, Any]] = {}
        self.cats: dict[Any, dict[str, Any]] = {}
        self.imgs: dict[Any, dict[str, Any]] = {}
        for ann in self.dataset["annotations"]:
            self.img_ann_map[ann["image_id"]].append(ann)
            self.anns[ann["id"]] = ann
        for img in self.dataset["images"]:
            self.imgs[img["id"]] = img
        for cat in self.dataset["categories"]:
            self.cats[cat["id"]] = cat
        for ann in self.dataset["annotations"]:
            self.cat_img_map[ann["category_id"]].append(ann["image_id"])
        self.logger.info("Index created.")

    def get_ann_ids(
        self, img_ids: Any = None, cat_ids: Any = None, area_rng: Any = None
    ) -> list[Any]:
        """Ids of the annotations on ``img_ids``, of ``cat_ids``, with area inside ``area_rng``
        (open interval, default ``(0, inf)`` once a filter is given)."""
        anns: list[dict[str, Any]] = []
        if img_ids is not None:
            for img_id in img_ids:
                anns.extend(self.img_ann_map[img_id])
        else:
            anns = self.dataset["annotations"]
        if cat_ids is None and area_rng is None:
            return [a["id"] for a in anns]
        cats = set(cat_ids)  # lvis-api: area_rng without cat_ids is a TypeError too
        lo, hi = (0, float("inf")) if area_rng is None else area_rng
        return [a["id"] for a in anns if a["category_id"] in cats and lo < a["area"] < hi]

    def get_cat_ids(self) -> list[Any]:
        """Every category id, in file order."""
        return list(self.cats.keys())

    def get_img_ids(self) -> list[Any]:
        """Every image id, in file order."""
        return list(self.imgs.keys())

    @staticmethod
    def _load_helper(table: dict[Any, Any], ids: Any) -> list[Any]:
        return list(table.values()) if ids is None else [table[i] for i in ids]

    def load_anns(self, ids: Any = None) -> list[dict[str, Any]]:
        """The annotations with ``ids`` (all if None)."""
        return self._load_helper(self.anns, ids)

    def load_cats(self, ids: Any) -> list[dict[str, Any]]:
        """The categories with ``ids`` (all if None)."""
        return self._load_helper(self.cats, ids)

    def load_imgs(self, ids: Any) -> list[dict[str, Any]]:
        """The images with ``ids`` (all if None)."""
        return self._load_helper(self.imgs, ids)

    def download(self, save_dir: str, img_ids: Any = None) -> None:
        """Not available: ioukit makes no network access (``RuntimeError``, as
        :meth:`ioukit.compat.pycocotools.coco.COCO.download`)."""
        raise RuntimeError(
            "LVIS.download: ioukit does not download images (no network access); "
            "fetch the images listed in coco_url yourself"
        )

    def ann_to_rle(self, ann: dict[str, Any]) -> Any:
        """The annotation's segmentation as a compressed RLE (polygons merged)."""
        img = self.imgs[ann["image_id"]]
        h, w = img["height"], img["width"]
        segm = ann["segmentation"]
        if isinstance(segm, list):
            parts = mask_utils.frPyObjects(segm, h, w)
            return mask_utils.merge(parts if isinstance(parts, list) else [parts])
        if isinstance(segm["counts"], list):
            return mask_utils.frPyObjects(segm, h, w)
        return segm

    def ann_to_mask(self, ann: dict[str, Any]) -> np.ndarray:
        """The annotation's mask, (H, W) uint8."""
        return np.asarray(mask_utils.decode(self.ann_to_rle(ann)))
