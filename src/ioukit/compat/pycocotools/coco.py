"""``pycocotools.coco.COCO``: the dataset index frameworks build, with pycocotools' behaviour.

Same attributes (``dataset, anns, cats, imgs, imgToAnns, catToImgs``), same methods, same
prints and the same exceptions (``AssertionError`` for a results list that names unknown
images, ``KeyError`` for an unknown id). :meth:`COCO.loadRes` writes ``area``, ``id``,
``iscrowd``, ``segmentation`` / ``bbox`` into the result dicts, as pycocotools does (frameworks
read them back).

Examples
--------
>>> from ioukit.compat.pycocotools.coco import COCO
>>> gt = COCO()
>>> gt.dataset = {"images": [{"id": 1, "height": 10, "width": 10}],
...               "categories": [{"id": 1, "name": "cat"}],
...               "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
...                                "bbox": [0, 0, 4, 4], "area": 16, "iscrowd": 0}]}
>>> gt.createIndex()
creating index...
index created!
>>> dt = gt.loadRes([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 3], "score": 0.9}])
Loading and preparing results...
DONE (t=0.00s)
creating index...
index created!
>>> dt.anns[1]["area"], dt.anns[1]["iscrowd"], gt.getAnnIds(imgIds=[1])
(12, 0, [1])
"""

from __future__ import annotations

import contextlib
import copy
import gc
import importlib
import io
import itertools
import json
import operator
import os
import sys
import time
from collections import defaultdict
from typing import Any

import numpy as np

from ioukit import MissingDependencyError
from ioukit._kernels import coco_gt_json, coco_json

__all__ = ["COCO"]

_MASK_MODULE = "ioukit.compat.pycocotools.mask"


def _mask_utils() -> Any:
    """pycocotools' ``maskUtils`` (:mod:`ioukit.compat.pycocotools.mask`), loaded on first
    use: it brings :mod:`ioukit.masks` and array-api-compat, which a box evaluation never
    calls (5 ms of every start-up)."""
    return importlib.import_module(_MASK_MODULE)


def __getattr__(name: str) -> Any:
    # ``pycocotools.coco.maskUtils``, as pycocotools' module has it (PEP 562)
    if name == "maskUtils":
        return _mask_utils()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _isArrayLike(obj: object) -> bool:  # noqa: N802 - pycocotools' name
    return hasattr(obj, "__iter__") and hasattr(obj, "__len__")


def _as_list(value: Any) -> Any:
    return value if _isArrayLike(value) else [value]


class COCO:
    """The COCO annotation index (pycocotools ``COCO``).

    Parameters
    ----------
    annotation_file : str or path, optional
        A COCO JSON file; ``None`` gives an empty index (fill ``dataset`` and call
        :meth:`createIndex`).

    Attributes
    ----------
    dataset : dict
        The parsed file.
    anns, cats, imgs : dict
        By id.
    imgToAnns, catToImgs : defaultdict(list)
        Annotations per image id, image ids per category id (one entry per annotation).
    """

    def __init__(self, annotation_file: str | os.PathLike[str] | None = None) -> None:
        self._results: _Results | None = None  # a results file not yet turned into dicts
        self._ground_truth: _GroundTruth | None = None  # a ground-truth file, likewise
        self._index: dict[str, Any] = {
            "dataset": {},
            "anns": {},
            "imgToAnns": defaultdict(list),
            "catToImgs": defaultdict(list),
        }
        self.cats: dict[Any, dict[str, Any]] = {}
        self.imgs: dict[Any, dict[str, Any]] = {}
        if annotation_file is not None:
            print("loading annotations into memory...")
            tic = time.time()
            with open(annotation_file, "rb") as fb:
                raw = fb.read()
            if type(self).createIndex is COCO.createIndex and self._columnar_file(raw, tic):
                return
            dataset = _parse_file(raw, annotation_file)
            del raw
            assert type(dataset) is dict, (
                f"annotation file format {type(dataset)} not supported "
                f"({os.fspath(annotation_file)}: expected a JSON object at the top level)"
            )
            print(f"Done (t={time.time() - tic:0.2f}s)")
            self.dataset = dataset
            self.createIndex()

    def _columnar_file(self, raw: bytes, tic: float) -> bool:
        # a ground-truth file whose annotations the scanner reads: kept as its bytes and
        # columns, the annotation dicts built when someone reads dataset, anns, imgToAnns or
        # catToImgs (COCOeval evaluates the columns while nobody has); False (nothing
        # changed) where the file is parsed whole, as pycocotools does
        found = _GroundTruth.scan(raw)
        if found is None:
            return False
        gt, sections = found
        try:
            imgs = _by_id(sections["images"]) if "images" in sections else {}
            cats = _by_id(sections["categories"]) if "categories" in sections else {}
        except Exception:  # pycocotools' createIndex raises it, on the dicts
            return False
        print(f"Done (t={time.time() - tic:0.2f}s)")
        print("creating index...")
        self._index["dataset"] = sections
        self._ground_truth = gt
        self.imgs, self.cats = imgs, cats
        print("index created!")
        return True

    # the annotation dicts of a results file are built when someone reads them: ``loadRes``
    # of a file keeps its bytes and its columns, which COCOeval evaluates directly
    def _lazy(self, name: str) -> Any:
        if self._results is not None or self._ground_truth is not None:
            self._materialize()
        return self._index[name]

    def _set(self, name: str, value: Any) -> None:
        if self._results is not None or self._ground_truth is not None:
            self._materialize()
        self._index[name] = value

    def _section(self, name: str) -> Any:
        """``self.dataset[name]``, without building the annotation dicts for another name."""
        if self._ground_truth is not None and name != "annotations":
            return self._index["dataset"][name]
        return self.dataset[name]

    def _has_section(self, name: str) -> bool:
        if self._ground_truth is not None and name != "annotations":
            return name in self._index["dataset"]
        return name in self.dataset

    dataset = property(lambda self: self._lazy("dataset"), lambda self, v: self._set("dataset", v))
    anns = property(lambda self: self._lazy("anns"), lambda self, v: self._set("anns", v))
    imgToAnns = property(  # noqa: N815 - pycocotools' name
        lambda self: self._lazy("imgToAnns"), lambda self, v: self._set("imgToAnns", v)
    )
    catToImgs = property(  # noqa: N815
        lambda self: self._lazy("catToImgs"), lambda self, v: self._set("catToImgs", v)
    )

    def _materialize(self) -> None:
        if self._ground_truth is not None:
            self._materialize_ground_truth()
            return
        # pycocotools' loadRes of the file, silently (its prints came out at loadRes)
        results, self._results = self._results, None
        assert results is not None
        anns = results.dicts()
        _complete_boxes(anns)
        self._index["dataset"]["annotations"] = anns
        with contextlib.redirect_stdout(io.StringIO()):
            self.createIndex()

    def _materialize_ground_truth(self) -> None:
        # what COCO(path) would have built: the annotations parsed into the dataset (at their
        # place among the file's members), anns, imgToAnns and catToImgs; imgs, cats and the
        # other members stay the objects handed out (they may have been edited since)
        gt, self._ground_truth = self._ground_truth, None
        assert gt is not None
        anns = gt.annotations()
        dataset = self._index["dataset"]
        dataset["annotations"] = anns
        by_id: dict[Any, dict[str, Any]] = {}
        img_to_anns: defaultdict[Any, list[dict[str, Any]]] = defaultdict(list)
        cat_to_imgs: defaultdict[Any, list[Any]] = defaultdict(list)
        for ann in anns:
            img_to_anns[ann["image_id"]].append(ann)
            by_id[ann["id"]] = ann
        if "categories" in dataset:
            for ann in anns:
                cat_to_imgs[ann["category_id"]].append(ann["image_id"])
        self._index.update(anns=by_id, imgToAnns=img_to_anns, catToImgs=cat_to_imgs)

    def createIndex(self) -> None:  # noqa: N802
        """Build ``anns, cats, imgs, imgToAnns, catToImgs`` from ``dataset``."""
        print("creating index...")
        anns: dict[Any, dict[str, Any]] = {}
        cats: dict[Any, dict[str, Any]] = {}
        imgs: dict[Any, dict[str, Any]] = {}
        img_to_anns: defaultdict[Any, list[dict[str, Any]]] = defaultdict(list)
        cat_to_imgs: defaultdict[Any, list[Any]] = defaultdict(list)
        dataset = self.dataset
        if "annotations" in dataset:
            for ann in dataset["annotations"]:
                img_to_anns[ann["image_id"]].append(ann)
                anns[ann["id"]] = ann
        if "images" in dataset:
            imgs = _by_id(dataset["images"])
        if "categories" in dataset:
            cats = _by_id(dataset["categories"])
        if "annotations" in dataset and "categories" in dataset:
            for ann in dataset["annotations"]:
                cat_to_imgs[ann["category_id"]].append(ann["image_id"])
        print("index created!")
        self.anns = anns
        self.imgToAnns = img_to_anns
        self.catToImgs = cat_to_imgs
        self.imgs = imgs
        self.cats = cats

    def info(self) -> None:
        """Print the ``info`` block, one ``key: value`` per line."""
        for key, value in self._section("info").items():
            print(f"{key}: {value}")

    def getAnnIds(  # noqa: N802
        self,
        imgIds: Any = (),
        catIds: Any = (),
        areaRng: Any = (),
        iscrowd: bool | None = None,
    ) -> list[Any]:
        """Annotation ids on ``imgIds``, of ``catIds``, with area strictly inside ``areaRng``
        and the given ``iscrowd`` (each filter skipped when empty / None)."""
        img_ids = _as_list(imgIds)
        cat_ids = _as_list(catIds)
        if len(img_ids) == len(cat_ids) == len(areaRng) == 0:
            anns = self.dataset["annotations"]
        else:
            if len(img_ids):
                index = self.imgToAnns
                anns = list(itertools.chain.from_iterable(index[i] for i in img_ids if i in index))
            else:
                anns = self.dataset["annotations"]
            if len(cat_ids):
                wanted = set(cat_ids)
                anns = [a for a in anns if a["category_id"] in wanted]
            if len(areaRng):
                lo, hi = areaRng[0], areaRng[1]
                anns = [a for a in anns if lo < a["area"] < hi]
        if iscrowd is not None:
            return [a["id"] for a in anns if a["iscrowd"] == iscrowd]
        return [a["id"] for a in anns]

    def getCatIds(self, catNms: Any = (), supNms: Any = (), catIds: Any = ()) -> list[Any]:  # noqa: N802
        """Category ids with the given names, supercategories and ids (filters skipped when
        empty)."""
        names, sups, ids = _as_list(catNms), _as_list(supNms), _as_list(catIds)
        cats = self._section("categories")
        if len(names):
            cats = [c for c in cats if c["name"] in names]
        if len(sups):
            cats = [c for c in cats if c["supercategory"] in sups]
        if len(ids):
            cats = [c for c in cats if c["id"] in ids]
        return [c["id"] for c in cats]

    def getImgIds(self, imgIds: Any = (), catIds: Any = ()) -> list[Any]:  # noqa: N802
        """Image ids among ``imgIds`` holding every category of ``catIds``."""
        img_ids, cat_ids = _as_list(imgIds), _as_list(catIds)
        if len(img_ids) == len(cat_ids) == 0:
            return list(self.imgs.keys())
        ids = set(img_ids)
        for i, cat in enumerate(cat_ids):
            if i == 0 and len(ids) == 0:
                ids = set(self.catToImgs[cat])
            else:
                ids &= set(self.catToImgs[cat])
        return list(ids)

    @staticmethod
    def _load(table: dict[Any, dict[str, Any]], ids: Any) -> list[dict[str, Any]] | None:
        if _isArrayLike(ids):
            return [table[i] for i in ids]
        if type(ids) is int:
            return [table[ids]]
        return None

    def loadAnns(self, ids: Any = ()) -> list[dict[str, Any]] | None:  # noqa: N802
        """The annotations with ``ids`` (a list, or one int); ``KeyError`` for an unknown id."""
        return self._load(self.anns, ids)

    def loadCats(self, ids: Any = ()) -> list[dict[str, Any]] | None:  # noqa: N802
        """The categories with ``ids``."""
        return self._load(self.cats, ids)

    def loadImgs(self, ids: Any = ()) -> list[dict[str, Any]] | None:  # noqa: N802
        """The images with ``ids``."""
        return self._load(self.imgs, ids)

    def showAnns(self, anns: list[dict[str, Any]], draw_bbox: bool = False) -> int | None:  # noqa: N802
        """Draw ``anns`` on the current matplotlib axes (captions are printed)."""
        if len(anns) == 0:
            return 0
        if "segmentation" in anns[0] or "keypoints" in anns[0]:
            kind = "instances"
        elif "caption" in anns[0]:
            kind = "captions"
        else:
            raise Exception("datasetType not supported")
        if kind == "captions":
            for ann in anns:
                print(ann["caption"])
            return None
        try:
            import matplotlib.pyplot as plt
            from matplotlib.collections import PatchCollection
            from matplotlib.patches import Polygon
        except ImportError as exc:
            raise MissingDependencyError(
                "COCO.showAnns needs matplotlib: pip install matplotlib"
            ) from exc
        ax = plt.gca()
        ax.set_autoscale_on(False)
        polygons, colors = [], []
        rng = np.random.default_rng()
        for ann in anns:
            c = (rng.random(3) * 0.6 + 0.4).tolist()
            seg = ann.get("segmentation")
            if type(seg) is list:
                for poly in seg:
                    polygons.append(Polygon(np.array(poly).reshape(len(poly) // 2, 2)))
                    colors.append(c)
            elif seg is not None:
                m = self.annToMask(ann)
                img = np.ones((m.shape[0], m.shape[1], 3))
                color = np.array([2.0, 166.0, 101.0]) / 255 if ann.get("iscrowd") else rng.random(3)
                img[:, :, :] = color
                ax.imshow(np.dstack((img, m * 0.5)))
            if "keypoints" in ann and type(ann["keypoints"]) is list:
                sks = np.array(self.cats[ann["category_id"]]["skeleton"]) - 1
                kp = np.array(ann["keypoints"])
                x, y, v = kp[0::3], kp[1::3], kp[2::3]
                for sk in sks:
                    if np.all(v[sk] > 0):
                        plt.plot(x[sk], y[sk], linewidth=3, color=c)
                plt.plot(x[v > 0], y[v > 0], "o", markersize=8, markerfacecolor=c,
                         markeredgecolor="k", markeredgewidth=2)  # fmt: skip
                plt.plot(x[v > 1], y[v > 1], "o", markersize=8, markerfacecolor=c,
                         markeredgecolor=c, markeredgewidth=2)  # fmt: skip
            if draw_bbox:
                bx, by, bw, bh = ann["bbox"]
                corners = [[bx, by], [bx, by + bh], [bx + bw, by + bh], [bx + bw, by]]
                polygons.append(Polygon(np.array(corners)))
                colors.append(c)
        ax.add_collection(PatchCollection(polygons, facecolor=colors, linewidths=0, alpha=0.4))
        ax.add_collection(
            PatchCollection(polygons, facecolor="none", edgecolors=colors, linewidths=2)
        )
        return None

    def loadRes(self, resFile: Any) -> COCO:  # noqa: N802
        """A results index on this ground truth's images (pycocotools ``loadRes``).

        Parameters
        ----------
        resFile : str or path, list of dict, or ndarray (N, 7)
            A results JSON file, result dicts (``image_id``, ``category_id``, ``score`` and
            ``bbox``, ``segmentation`` or ``keypoints``) or rows
            ``[image_id, x, y, w, h, score, category_id]``. The dicts are completed in place
            as pycocotools does: ``id`` 1..N, ``area``, ``iscrowd`` 0, and ``segmentation``
            (the box as a polygon) or ``bbox`` (the mask's box) where missing. Also callable
            unbound, ``COCO.loadRes(gt, results)``.

        Returns
        -------
        COCO

        Raises
        ------
        AssertionError
            Not a list of dicts, or a result on an image the ground truth does not have.
        """
        res = COCO()
        res.dataset["info"] = copy.deepcopy(
            self._section("info") if self._has_section("info") else {}
        )
        res.dataset["images"] = list(self._section("images"))
        print("Loading and preparing results...")
        tic = time.time()
        if isinstance(resFile, str | os.PathLike):
            with open(resFile, "rb") as fb:
                raw = fb.read()
            results = _Results.scan(raw)
            if results is not None and self._columnar(res, results, tic):
                return res
            anns = json.loads(raw)
        elif type(resFile) is np.ndarray:
            anns = self.loadNumpyAnnotations(resFile)
        else:
            anns = resFile
        assert type(anns) is list, (
            f"results in not an array of objects (resFile: expected a list of result dicts, "
            f"got {type(anns).__name__})"
        )
        # pycocotools checks against set(self.getImgIds()): the keys of imgs, unless a
        # subclass answers otherwise
        known = self.imgs if type(self).getImgIds is COCO.getImgIds else set(self.getImgIds())
        for i, ann in enumerate(anns):
            if not isinstance(ann, dict) or "image_id" not in ann:
                raise KeyError(
                    f"results[{i}]['image_id']: expected a dict with an image_id, got "
                    f"{type(ann).__name__}"
                    + (f" with keys {sorted(ann)}" if isinstance(ann, dict) else "")
                )
            if ann["image_id"] not in known:
                raise AssertionError(
                    "Results do not correspond to current coco set "
                    f"(results[{i}]['image_id'] = {ann['image_id']!r} is not an image id of "
                    "the ground truth)"
                )
        if anns:
            self._complete_results(res, anns)
        print(f"DONE (t={time.time() - tic:0.2f}s)")
        res.dataset["annotations"] = anns
        res.createIndex()
        return res

    def _columnar(self, res: COCO, results: _Results, tic: float) -> bool:
        # a file of plain box results: kept as columns (dicts built when read); False when
        # the dict path must run (it raises pycocotools' errors)
        try:
            ids = np.asarray(list(self.imgs), dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            return False
        on_gt = np.isin(results.image_id, ids)
        if not on_gt.all():
            i = int(np.flatnonzero(~on_gt)[0])
            raise AssertionError(
                "Results do not correspond to current coco set "
                f"(results[{i}]['image_id'] = {int(results.image_id[i])!r} is not an image id "
                "of the ground truth)"
            )
        res.dataset["categories"] = _copy_records(self._section("categories"))
        print(f"DONE (t={time.time() - tic:0.2f}s)")
        print("creating index...")
        dataset = res._index["dataset"]
        dataset["annotations"] = None  # built from the bytes when read
        res.imgs = {img["id"]: img for img in dataset["images"]}
        res.cats = {cat["id"]: cat for cat in dataset["categories"]}
        res._results = results
        print("index created!")
        return True

    def _complete_results(self, res: COCO, anns: list[dict[str, Any]]) -> None:
        # pycocotools' loadRes: the first result decides the kind of all of them
        first = anns[0]
        if "caption" in first:
            ids = {img["id"] for img in res.dataset["images"]} & {a["image_id"] for a in anns}
            res.dataset["images"] = [img for img in res.dataset["images"] if img["id"] in ids]
            for i, ann in enumerate(anns):
                ann["id"] = i + 1
            return
        if "bbox" in first and first["bbox"] != []:
            res.dataset["categories"] = _copy_records(self._section("categories"))
            _complete_boxes(anns)
        elif "segmentation" in first:
            res.dataset["categories"] = _copy_records(self._section("categories"))
            for i, ann in enumerate(anns):
                seg = _field(ann, "segmentation", i)
                ann["area"] = _mask_utils().area(seg)
                if "bbox" not in ann:
                    ann["bbox"] = _mask_utils().toBbox(seg)
                ann["id"] = i + 1
                ann["iscrowd"] = 0
        elif "keypoints" in first:
            res.dataset["categories"] = _copy_records(self._section("categories"))
            for i, ann in enumerate(anns):
                s = _field(ann, "keypoints", i)
                x, y = s[0::3], s[1::3]
                x0, x1, y0, y1 = np.min(x), np.max(x), np.min(y), np.max(y)
                ann["area"] = (x1 - x0) * (y1 - y0)
                ann["id"] = i + 1
                ann["bbox"] = [x0, y0, x1 - x0, y1 - y0]

    def download(self, tarDir: str | None = None, imgIds: Any = ()) -> int:
        """Not available: ioukit makes no network access.

        Raises
        ------
        RuntimeError
            Always, naming the images' ``coco_url`` field to fetch them with another tool.
        """
        raise RuntimeError(
            "COCO.download: ioukit does not download images (no network access); fetch the "
            "images' 'coco_url' with another tool" + (f" into {tarDir!r}" if tarDir else "")
        )

    def loadNumpyAnnotations(self, data: np.ndarray) -> list[dict[str, Any]]:  # noqa: N802
        """Result dicts from rows ``[image_id, x, y, w, h, score, category_id]``.

        Raises
        ------
        AssertionError
            ``data`` is not an ndarray of shape (N, 7).
        """
        print("Converting ndarray to lists...")
        assert type(data) is np.ndarray, (
            f"data: expected a numpy ndarray of shape (N, 7), got {type(data).__name__}"
        )
        print(data.shape)
        assert data.ndim == 2 and data.shape[1] == 7, (
            "data: expected rows [image_id, x, y, w, h, score, category_id] of shape (N, 7), "
            f"got shape {data.shape}"
        )
        n = data.shape[0]
        out = []
        for i in range(n):
            if i % 1000000 == 0:
                print(f"{i}/{n}")
            row = data[i]
            out.append(
                {
                    "image_id": int(row[0]),
                    "bbox": [row[1], row[2], row[3], row[4]],
                    "score": row[5],
                    "category_id": int(row[6]),
                }
            )
        return out

    def annToRLE(self, ann: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        """The annotation's segmentation as one compressed RLE (polygons merged)."""
        t = self.imgs[ann["image_id"]]
        h, w = t["height"], t["width"]
        segm = ann["segmentation"]
        if type(segm) is list:
            mask_utils = _mask_utils()
            return mask_utils.merge(mask_utils.frPyObjects(segm, h, w))  # type: ignore[no-any-return]
        if type(segm["counts"]) is list:
            return _mask_utils().frPyObjects(segm, h, w)  # type: ignore[no-any-return]
        return segm  # type: ignore[no-any-return]

    def annToMask(self, ann: dict[str, Any]) -> np.ndarray:  # noqa: N802
        """The annotation's binary mask, shape (H, W) uint8."""
        return _mask_utils().decode(self.annToRLE(ann))  # type: ignore[no-any-return]


_SCALARS = (str, int, float, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)
_LONG_INTEGER = 19  # digits: an integer that may lie beyond orjson's 64-bit range
_ORJSON_FROM = 256 << 10  # bytes: below, json parses faster than orjson imports
_KEEP_BYTES_BELOW = 4 << 20  # a results file from this size on: its dicts from its columns


def _utf8_locale() -> bool:
    """Whether ``open(path)`` in text mode decodes UTF-8 (what the bytes routes assume): the
    encoding a text stream without one gets, as ``open`` chooses it (``locale`` not imported)."""
    if sys.flags.utf8_mode:
        return True
    encoding = io.TextIOWrapper(io.BytesIO(), encoding="locale").encoding
    return encoding.lower().replace("-", "").replace("_", "") == "utf8"


def _parse_file(raw: bytes, path: str | os.PathLike[str]) -> Any:
    """pycocotools' ``json.load(open(path))`` of the file whose bytes are ``raw``: the same
    objects (or the same error).

    :func:`_parse_strict` reads the bytes where that gives ``json``'s objects; the rest (a
    locale where ``open()`` would not decode UTF-8, what the fast route refuses) is read by
    ``json`` from the text file, as pycocotools reads it. The garbage collector is paused
    while the objects are created (its passes over them cost more than the parse)."""
    if not _utf8_locale():
        with open(path) as f:
            return json.load(f)
    with _collector_paused():
        value = _parse_strict(raw)
        if value is not _REFUSED:
            return value
        with open(path) as f:  # text mode, as pycocotools: its result or its error
            return json.load(f)


_REFUSED = object()


def _orjson() -> Any:
    """The ``orjson`` module (the fast-json extra), or None; imported on first use."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is in the test extra
        return None
    return orjson


def _parse_strict(raw: bytes) -> Any:
    """``json.loads`` of the UTF-8 text ``raw`` where it succeeds, else ``_REFUSED`` (the
    caller lets ``json`` read the text file, for pycocotools' error).

    Below ``_ORJSON_FROM`` bytes ``json`` itself parses; above, orjson (2-3x faster, when
    installed), which gives ``json``'s objects for strict RFC 8259 JSON and refuses the rest
    (NaN, 1e400, lone surrogates...), except integers beyond 64 bits (it makes them floats):
    a text with a run of 19 digits anywhere (a compiled scan, no copy) goes to ``json``."""
    if len(raw) < _ORJSON_FROM or (orjson := _orjson()) is None:
        try:
            return json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError
            return _REFUSED
    if coco_gt_json.has_digit_run(raw, _LONG_INTEGER):
        return _REFUSED
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _REFUSED


@contextlib.contextmanager
def _collector_paused() -> Any:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _GroundTruth:
    """A ground-truth file whose annotations the compiled scanner read: its bytes, the span
    of its ``annotations`` array and the annotation columns in file order (``id``,
    ``image_id``, ``category_id``, ``bbox`` xywh, ``area``, ``iscrowd != 0``), every id
    distinct (else ``COCO.anns`` keeps one annotation of several: the dict path)."""

    __slots__ = ("_by_image", "area", "bbox", "category_id", "crowd", "ids", "image_id", "raw",
                 "span")  # fmt: skip

    def __init__(self, raw: bytes, span: tuple[int, int], columns: tuple[Any, ...]) -> None:
        self.raw, self.span = raw, span
        self.ids, self.image_id, self.category_id, self.bbox, self.area, self.crowd = columns
        self._by_image: tuple[np.ndarray, np.ndarray] | None = None

    def rows_on(self, image_ids: np.ndarray) -> np.ndarray:
        """The rows whose ``image_id`` is one of ``image_ids`` (distinct), image by image in
        ``image_ids`` order, file order within (``imgToAnns[i]`` for each ``i``): a few
        images cost as few rows (the torchvision merge evaluates two images a call)."""
        if self._by_image is None:
            order = np.argsort(self.image_id, kind="stable")
            self._by_image = order, self.image_id[order]
        order, ordered = self._by_image
        lo = np.searchsorted(ordered, image_ids, side="left")
        count = np.searchsorted(ordered, image_ids, side="right") - lo
        total = int(count.sum())
        start = np.repeat(lo - np.cumsum(count) + count, count)
        return order[start + np.arange(total)]

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.raw, self.span, self.ids, self.image_id, self.category_id, self.bbox,
                self.area, self.crowd)  # fmt: skip

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.raw, self.span = state[0], state[1]
        self.ids, self.image_id, self.category_id, self.bbox, self.area, self.crowd = state[2:]
        self._by_image = None

    @classmethod
    def scan(cls, raw: bytes) -> tuple[_GroundTruth, dict[str, Any]] | None:
        """The columns of ``raw`` and its top-level members parsed but ``annotations``
        (None in its place), in document order; None where the file is to be parsed whole
        (not a strict JSON object, no annotations array, a shape the scanner does not take,
        repeated ids, a locale that does not read UTF-8)."""
        if not _utf8_locale():
            return None
        buf = np.frombuffer(raw, dtype=np.uint8)
        code, members = coco_json.top_level_members(buf)
        if code != coco_json.OK:
            return None
        last = {key: (start, end) for key, start, end in members}  # a parser keeps the last
        span = last.get(b"annotations")
        if span is None:
            return None
        lo, hi = span
        capacity = (hi - lo) // 60 + 1  # a record takes at least 60 bytes
        ids = np.empty(capacity, dtype=np.int64)
        image_id = np.empty(capacity, dtype=np.int64)
        category_id = np.empty(capacity, dtype=np.int64)
        bbox = np.empty((capacity, 4), dtype=np.float64)
        area = np.empty(capacity, dtype=np.float64)
        iscrowd = np.empty(capacity, dtype=np.float64)
        code, n = coco_gt_json.scan_annotations(
            buf, lo, hi, ids, image_id, category_id, bbox, area, iscrowd
        )
        if code != coco_gt_json.OK or _repeats(ids[:n]):
            return None
        sections: dict[str, Any] = {}
        with _collector_paused():
            for key, (start, end) in last.items():
                if key == b"annotations":
                    sections["annotations"] = None
                    continue
                value = _parse_strict(raw[start:end])
                if value is _REFUSED:
                    return None
                sections[key.decode()] = value
        # document order: the first occurrence of each key places it (as a dict does)
        order = {key.decode(): None for key, _, _ in members}
        sections = {key: sections[key] for key in order}
        columns = (*_shrunk(n, ids, image_id, category_id, bbox, area), iscrowd[:n] != 0)
        return cls(raw, span, columns), sections

    def annotations(self) -> list[dict[str, Any]]:
        """The annotation dicts, as ``json.load`` of the file gives them."""
        lo, hi = self.span
        text = self.raw[lo:hi]
        with _collector_paused():
            anns = _parse_strict(text)
            if anns is _REFUSED:
                anns = json.loads(text.decode("utf-8"))
        return anns  # type: ignore[no-any-return]


def _repeats(ids: np.ndarray) -> bool:
    """Whether some id appears twice (by a sort: ``np.unique`` imports ``numpy.ma``)."""
    ordered = np.sort(ids)
    return bool((ordered[1:] == ordered[:-1]).any())


def _shrunk(n: int, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """The first ``n`` rows of each array (allocated here, at a capacity >= n, and not
    shared), in place: the allocation shrinks (no copy, no peak of two)."""
    for column in columns:
        column.resize((n, *column.shape[1:]), refcheck=False)
    return columns


def _ground_truth_columns(coco: Any) -> _GroundTruth | None:
    """The columns of a ground-truth file whose annotation dicts nobody has built (or read,
    or been able to edit) yet, else None."""
    return getattr(coco, "_ground_truth", None)


_ID = operator.itemgetter("id")


def _by_id(records: Any) -> dict[Any, Any]:
    """``{r["id"]: r for r in records}`` (later duplicates win), at C speed for a list:
    ``loadRes`` indexes every image of the ground truth again for each batch of results."""
    if type(records) is list:
        return dict(zip(map(_ID, records), records, strict=True))
    return {r["id"]: r for r in records}


def _complete_boxes(anns: list[dict[str, Any]]) -> None:
    """pycocotools' ``loadRes`` on box results: ``segmentation`` (the box as a polygon) where
    missing, ``area = w * h``, ``id`` 1..N, ``iscrowd`` 0, written into the dicts."""
    for i, ann in enumerate(anns, 1):
        try:
            bb = ann["bbox"]
        except KeyError:
            bb = _field(ann, "bbox", i - 1)
        x1, y1, w, h = bb[0], bb[1], bb[2], bb[3]
        if "segmentation" not in ann:
            x2, y2 = x1 + w, y1 + h
            ann["segmentation"] = [[x1, y1, x1, y2, x2, y2, x2, y1]]
        ann["area"] = w * h
        ann["id"] = i
        ann["iscrowd"] = 0


class _Results:
    """A results file of plain box records (``image_id, category_id, bbox, score``), as
    the compiled scanner's columns, in file order (record ``i`` is the annotation ``id = i +
    1`` of ``loadRes``), in the form the evaluation takes them: the boxes as corners ``x, y,
    x + w, y + h`` (``boxes``, (N, 4)) and ``w, h`` as read (``box_wh``, (N, 2)), so that an
    evaluation of every record copies none of them (``image_id``: int32 where the ids fit).

    The dicts ``json`` would give are built when someone reads them: from the file's bytes
    (``raw``), or, for a file of at least ``_KEEP_BYTES_BELOW`` bytes whose records hold the
    four keys only, in one order (``coco_gt_json.plain_result_forms``), from the columns,
    that order and each number's form (``integer_bits``: int or float), the bytes dropped."""

    __slots__ = ("box_wh", "boxes", "category_id", "image_id", "integer_bits", "order", "raw",
                 "score")  # fmt: skip

    def __init__(
        self,
        raw: bytes | None,
        columns: tuple[Any, Any, Any, Any],
        forms: tuple[int, Any] = (-1, None),
    ) -> None:
        # columns: image_id, category_id, bbox (N, 4) xywh (turned into the corners in place),
        # score; forms: plain_result_forms' order and integer bits (raw None), or (-1, None)
        self.raw = raw
        image_id, self.category_id, bbox, self.score = columns
        if len(image_id) and image_id.min() >= -(2**31) and image_id.max() < 2**31:
            image_id = image_id.astype(np.int32)  # only looked up: half the bytes
        self.image_id = image_id
        self.order, self.integer_bits = forms
        self.box_wh = np.empty((len(bbox), 2))
        coco_gt_json.box_corners(bbox, self.box_wh, np.empty(0))
        self.boxes = bbox

    def __getstate__(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            setattr(self, name, value)

    @classmethod
    def scan(cls, raw: bytes) -> _Results | None:
        """The columns of ``raw``; None where the file holds anything else (other keys,
        non-integer ids, not JSON...): the dict path reads those."""
        buf = np.frombuffer(raw, dtype=np.uint8)
        capacity = len(buf) // 57 + 1  # a record takes at least 57 bytes
        image_id = np.empty(capacity, dtype=np.int64)
        category_id = np.empty(capacity, dtype=np.int64)
        bbox = np.empty((capacity, 4), dtype=np.float64)
        score = np.empty(capacity, dtype=np.float64)
        code, n = coco_json.scan_results(buf, image_id, category_id, bbox, score)
        if code != coco_json.OK or n == 0:
            return None
        columns = _shrunk(n, image_id, category_id, bbox, score)
        if len(raw) >= _KEEP_BYTES_BELOW:
            bits = np.empty(n, dtype=np.uint8)
            order = coco_gt_json.plain_result_forms(buf, bits)
            if order >= 0:
                return cls(None, columns, (order, bits))  # type: ignore[arg-type]
        return cls(raw, columns)  # type: ignore[arg-type]

    def dicts(self) -> list[dict[str, Any]]:
        """``json.loads`` of the file: the records as dicts (keys in the file's order; ints
        where the file wrote integers)."""
        if self.raw is not None:
            return json.loads(self.raw)  # type: ignore[no-any-return]
        values: dict[str, list[Any]] = {
            "image_id": self.image_id.tolist(),
            "category_id": self.category_id.tolist(),
        }
        numbers = [self.boxes[:, 0], self.boxes[:, 1], self.box_wh[:, 0], self.box_wh[:, 1],
                   self.score]  # fmt: skip
        lists = [column.tolist() for column in numbers]
        for k, column in enumerate(lists):  # the integers the file wrote: ints, as json's
            for row in np.flatnonzero(self.integer_bits & (1 << k)).tolist():
                column[row] = int(column[row])
        values["bbox"] = list(map(list, zip(*lists[:4], strict=True)))
        values["score"] = lists[4]
        keys = [coco_gt_json.RESULT_KEYS[(self.order >> shift) & 3] for shift in (6, 4, 2, 0)]
        with _collector_paused():
            rows = zip(*[values[k] for k in keys], strict=True)
            return [dict(zip(keys, row, strict=True)) for row in rows]


def _results_columns(coco: Any) -> _Results | None:
    """The columns of a ``loadRes`` file whose dicts nobody has built yet, else None."""
    return getattr(coco, "_results", None)


def _copy_records(records: Any) -> Any:
    """``copy.deepcopy(records)``, cheaply for a list of dicts of plain scalars (COCO's
    categories: ``id``, ``name``, ``supercategory``)."""
    if type(records) is list and all(type(r) is dict for r in records):
        values = itertools.chain.from_iterable(map(dict.values, records))
        if set(map(type, values)) <= _SCALAR_TYPES:
            return list(map(dict, records))
    return copy.deepcopy(records)


def _field(ann: dict[str, Any], name: str, index: int) -> Any:
    try:
        return ann[name]
    except KeyError:
        raise KeyError(
            f"results[{index}]['{name}']: missing (results[0] has '{name}', so every result "
            f"needs it; keys here: {sorted(ann)})"
        ) from None
