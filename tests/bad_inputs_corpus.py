"""The hostile-input corpus (issue #16): every case a file or folder under
``tests/data/bad_inputs/hostile/<case>/`` and one entry of ``cases.json`` there.

Run ``python -m tests.bad_inputs_corpus`` to (re)write the files;
``tests/io/test_hostile_corpus.py``
checks that the files on disk are exactly what this module describes, then runs every case
through ``ioukit eval`` (or ``convert``/``check``) and expects exit status 2 (unless the case
says otherwise), one stderr line naming the file and the place, nothing written, no hang.

Each case: ``role`` says where its path goes (``gt``, ``pred``, ``classes``, ``convert``),
``target`` is the path inside the case folder (``""``: the folder), ``args`` are the other
arguments (``{good}`` is ``tests/data/bad_inputs/good``), ``expect`` is text the one stderr
line must contain.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).parent / "data" / "bad_inputs" / "hostile"

_IMAGE = {"id": 1, "file_name": "img1.jpg", "width": 100, "height": 100}
_CATEGORY = {"id": 1, "name": "cat"}
_ANN = {
    "id": 1,
    "image_id": 1,
    "category_id": 1,
    "bbox": [10, 10, 20, 20],
    "area": 400,
    "iscrowd": 0,
}
_RESULT = {"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9}
_VOC_SIZE = "<size><width>100</width><height>100</height></size>"
_VOC_BOX = "<bndbox><xmin>10</xmin><ymin>10</ymin><xmax>30</xmax><ymax>30</ymax></bndbox>"


@dataclass
class Case:
    """One hostile input and what ioukit must answer."""

    name: str
    role: str
    files: dict[str, str | bytes]
    expect: str
    target: str = ""
    args: list[str] = field(default_factory=list)
    status: int = 2


def _coco(**parts: object) -> str:
    doc: dict[str, object] = {
        "images": [_IMAGE],
        "annotations": [_ANN],
        "categories": [_CATEGORY],
    }
    for key, value in parts.items():
        if value is _DROP:
            doc.pop(key)
        else:
            doc[key] = value
    return json.dumps(doc)


_DROP = object()


def _ann(**changes: object) -> list[dict[str, object]]:
    ann = dict(_ANN)
    for key, value in changes.items():
        if value is _DROP:
            ann.pop(key)
        else:
            ann[key] = value
    return [ann]


def _image(**changes: object) -> list[dict[str, object]]:
    return [{**_IMAGE, **changes}]


def _result(**changes: object) -> str:
    rec = dict(_RESULT)
    for key, value in changes.items():
        if value is _DROP:
            rec.pop(key)
        else:
            rec[key] = value
    return json.dumps([rec])


def _voc(objects: str, *, size: str = _VOC_SIZE, head: str = "") -> str:
    return f"{head}<annotation>{size}{objects}</annotation>"


def _obj(inner: str = f"<name>cat</name>{_VOC_BOX}") -> str:
    return f"<object>{inner}</object>"


def _alias_bomb() -> str:
    """A 9-level "billion laughs" YAML: 9**9 strings once aliases are expanded."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefgh", "bcdefghn", strict=True):
        key = "names" if name == "n" else name
        lines.append(f"{key}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return "\n".join(lines) + "\n"


def cases() -> list[Case]:
    """Every case of the corpus."""
    out: list[Case] = []

    def gt_json(name: str, text: str | bytes, expect: str) -> None:
        out.append(Case(f"coco_{name}", "gt", {"gt.json": text}, expect, target="gt.json"))

    def pred_json(name: str, text: str | bytes, expect: str) -> None:
        out.append(
            Case(
                f"results_{name}",
                "pred",
                {"pred.json": text},
                expect,
                target="pred.json",
                args=["--gt", "{good}/gt.json"],
            )
        )

    # --- COCO ground truth: ids, types, sizes, sections --------------------------------------
    for tag, value in [
        ("null", None),
        ("list", [1]),
        ("2pow63", 2**63),
        ("string", "abc"),
        ("float", 1.5),
        ("bool", True),
    ]:
        gt_json(f"annotation_id_{tag}", _coco(annotations=_ann(id=value)), "annotations[0].id")
    for tag, value in [("null", None), ("string", "1"), ("2pow70", 2**70), ("float", 1.0)]:
        gt_json(
            f"image_id_{tag}", _coco(annotations=_ann(image_id=value)), "annotations[0].image_id"
        )
    for tag, value in [("null", None), ("string", "cat"), ("bool", False)]:
        gt_json(
            f"category_id_{tag}",
            _coco(annotations=_ann(category_id=value)),
            "annotations[0].category_id",
        )
    for tag, value in [
        ("strings", ["1", "2", "3", "4"]),
        ("nested", [[1], 2, 3, 4]),
        ("five", [1, 2, 3, 4, 5]),
        ("null", None),
        ("object", {"x": 1}),
        ("negative_height", [0, 0, 5, -1]),
        ("bool", [True, 0, 1, 1]),
    ]:
        gt_json(f"bbox_{tag}", _coco(annotations=_ann(bbox=value)), "annotations[0].bbox")
    gt_json(
        "bbox_overflow",
        _coco(annotations=_ann(bbox=[0, 0, 1, 1])).replace("[0, 0, 1, 1]", "[0, 0, 1e400, 1]"),
        "gt.json",
    )
    gt_json("area_string", _coco(annotations=_ann(area="400")), "annotations[0].area")
    gt_json("iscrowd_string", _coco(annotations=_ann(iscrowd="no")), "annotations[0].iscrowd")
    for tag, value in [
        ("negative", -1e308),
        ("zero", 0),
        ("string", "640"),
        ("bool", True),
        ("huge", 2**40),
        ("list", [640]),
    ]:
        gt_json(f"image_width_{tag}", _coco(images=_image(width=value)), "images[0].width")
    gt_json("image_height_negative", _coco(images=_image(height=-1)), "images[0].height")
    gt_json("image_table_id_duplicate", _coco(images=[_IMAGE, _IMAGE]), "images[1].id")
    gt_json("image_not_object", _coco(images=[5]), "images[0]")
    gt_json("image_table_id_missing", _coco(images=[{"file_name": "a.jpg"}]), "images[0].id")
    gt_json("images_not_list", _coco(images={"1": _IMAGE}), "images")
    gt_json("categories_not_list", _coco(categories="cat"), "categories")
    gt_json("category_id_duplicate", _coco(categories=[_CATEGORY, _CATEGORY]), "categories[1].id")
    gt_json(
        "category_table_id_string",
        _coco(categories=[{"id": "1", "name": "cat"}]),
        "categories[0].id",
    )
    gt_json("annotations_missing", _coco(annotations=_DROP), "annotations: missing")
    gt_json("annotations_not_list", _coco(annotations={"0": _ANN}), "annotations")
    gt_json("annotation_not_object", _coco(annotations=["x"]), "annotations[0]")
    gt_json(
        "annotation_unknown_image", _coco(annotations=_ann(image_id=7)), "annotations[0].image_id"
    )
    gt_json(
        "annotation_unknown_category",
        _coco(annotations=_ann(category_id=7)),
        "annotations[0].category_id",
    )
    gt_json("top_level_string", json.dumps("gt"), "gt.json")
    gt_json("top_level_number", "42", "gt.json")
    gt_json("top_level_null", "null", "gt.json")
    gt_json("empty_object", "{}", "gt.json")
    gt_json("deep_nesting", "[" * 100_000 + "]" * 100_000, "gt.json")
    gt_json("trailing_garbage", _coco() + "garbage", "gt.json")
    gt_json("nan_literal", _coco().replace("400", "NaN"), "gt.json")
    gt_json("single_quotes", _coco().replace('"', "'"), "gt.json")
    gt_json("nul_bytes", b"{\x00\x00}", "gt.json")
    gt_json("utf16", _coco().encode("utf-16"), "gt.json")
    gt_json(
        "latin1_name",
        json.dumps(
            {**json.loads(_coco()), "categories": [{"id": 1, "name": "caf\xe9"}]},
            ensure_ascii=False,
        ).encode("latin-1"),
        "gt.json",
    )
    gt_json("whitespace_only", "  \n\t ", "gt.json")

    # --- COCO results --------------------------------------------------------------------------
    for tag, text in [
        ("leading_zero", _result().replace('"image_id": 1', '"image_id": 001')),
        ("no_integer_digits", _result().replace("0.9", ".9")),
        ("no_fraction_digits", _result().replace("0.9", "1.")),
        ("bare_word", _result().replace("0.9", "high")),
        ("nan", _result().replace("0.9", "NaN")),
        ("infinity", _result().replace("0.9", "Infinity")),
        ("minus_infinity", _result().replace("0.9", "-Infinity")),
        ("single_quotes", _result().replace('"', "'")),
        ("plus_sign", _result().replace("0.9", "+0.9")),
        ("empty_exponent", _result().replace("0.9", "9e")),
        ("trailing_comma", _result()[:-1] + ",]"),
        ("missing_comma", _result().replace(', "score"', ' "score"')),
        ("comment", "// results\n" + _result()),
        ("control_character", _result(note="a\x01b").replace("\\u0001", "\x01")),
        ("bad_escape", _result(note="x").replace('"x"', '"\\q"')),
        ("extra_key_bare_word", _result(note="x").replace('"x"', "maybe")),
        ("extra_key_bad_list", _result(note="x").replace('"x"', "[1,,2]")),
        ("extra_key_nan", _result(note="x").replace('"x"', "[NaN]")),
        ("invalid_utf8", _result(note="x").encode().replace(b'"x"', b'"\xff"')),
        ("truncated", _result()[:-10]),
        ("empty_file", ""),
        ("score_overflow", _result().replace("0.9", "1e400")),
    ]:
        pred_json(tag, text, "pred.json")
    for tag, value, place in [
        ("score_string", "0.9", "[0].score"),
        ("score_null", None, "[0].score"),
        ("score_bool", True, "[0].score"),
        ("image_id_float", 1.5, "[0].image_id"),
        ("image_id_unknown", 99, "[0].image_id"),
        ("image_id_2pow70", 2**70, "[0].image_id"),
        ("category_unknown", 99, "[0].category_id"),
    ]:
        key = place.split(".")[1]
        pred_json(tag, _result(**{key: value}), place)
    pred_json("bbox_three", _result(bbox=[1, 2, 3]), "[0].bbox")
    pred_json("bbox_strings", _result(bbox=["1", "2", "3", "4"]), "[0].bbox")
    pred_json("bbox_negative_width", _result(bbox=[1, 2, -3, 4]), "[0].bbox")
    pred_json("score_missing", _result(score=_DROP), "[0].score")
    pred_json("record_not_object", "[1, 2]", "[0]")
    pred_json("image_id_string", _result(image_id="1"), "[0].image_id")

    def segm(name: str, seg: object, expect: str) -> None:
        out.append(
            Case(
                f"segm_results_{name}",
                "pred",
                {"pred.json": _result(bbox=_DROP, segmentation=seg)},
                expect,
                target="pred.json",
                args=["--gt", "{good}/gt_segm.json", "--iou-type", "segm"],
            )
        )

    segm("rle_malformed", {"size": [100, 100], "counts": "zz"}, "[0].segmentation")
    segm("rle_size_mismatch", {"size": [20, 20], "counts": "0"}, "[0].segmentation.size")
    segm("rle_size_float", {"size": [100.0, 100.0], "counts": "0"}, "[0].segmentation.size")
    segm("rle_size_2pow40", {"size": [2**20, 2**20], "counts": "0"}, "[0].segmentation.size")
    segm("rle_size_missing", {"counts": "0"}, "[0].segmentation.size")
    segm("polygon_odd", [[1, 1, 5, 1, 5]], "[0].segmentation[0]")
    segm("polygon_strings", [["1", "1", "5", "1", "5", "5"]], "[0].segmentation[0]")
    segm("polygon_far_away", [[0, 0, 1e300, 0, 1e300, 1e300]], "[0].segmentation[0]")
    segm("polygon_not_list", [5], "[0].segmentation[0]")
    segm("number", 5, "[0].segmentation")
    segm("null", None, "[0].segmentation")
    gt_segm = json.loads(_coco())
    gt_segm["annotations"][0]["segmentation"] = {"size": [5, 5], "counts": "0"}
    out.append(
        Case(
            "segm_gt_rle_size_mismatch",
            "gt",
            {"gt.json": json.dumps(gt_segm)},
            "annotations[0].segmentation.size",
            target="gt.json",
            args=["--iou-type", "segm"],
        )
    )
    del gt_segm["annotations"][0]["segmentation"]
    out.append(
        Case(
            "segm_gt_missing",
            "gt",
            {"gt.json": json.dumps(gt_segm)},
            "annotations[0].segmentation: missing",
            target="gt.json",
            args=["--iou-type", "segm"],
        )
    )
    pred_json("annotations_not_list", json.dumps({"annotations": 5}), "pred.json")

    # --- YOLO labels -----------------------------------------------------------------------------
    def yolo(
        name: str,
        text: str | bytes,
        expect: str,
        *,
        extra: dict[str, str | bytes] | None = None,
        args: list[str] | None = None,
    ) -> None:
        files: dict[str, str | bytes] = {"img1.txt": text, **(extra or {})}
        out.append(
            Case(
                f"yolo_{name}",
                "gt",
                files,
                expect,
                args=["--gt-format", "yolo", *(args or [])],
            )
        )

    for tag, line, expect in [
        ("class_negative", "-1 0.5 0.5 0.2 0.2", "line 1: class"),
        ("class_1e20", "1e20 0.5 0.5 0.2 0.2", "line 1: class"),
        ("class_2pow70", f"{2**70} 0.5 0.5 0.2 0.2", "line 1: class"),
        ("class_fraction", "1.5 0.5 0.5 0.2 0.2", "line 1: class"),
        ("class_hash", "#cat 0.5 0.5 0.2 0.2", "line 1: class"),
        ("class_inf", "inf 0.5 0.5 0.2 0.2", "line 1: class"),
        ("coordinate_1_002", "0 0.5 0.5 0.2 0.2\n0 1.002 0.5 0.2 0.2", "line 2: cx"),
        ("pixels_in_normalized_file", "0 0.5 0.5 0.2 0.2\n0 50 50 20 20", "line 2"),
        ("negative_height", "0 0.5 0.5 0.2 -0.2", "line 1"),
        ("infinite", "0 inf 0.5 0.2 0.2", "line 1: cx"),
        ("six_values", "0 0.5 0.5 0.2 0.2 0.9", "line 1"),
        ("three_values", "0 0.5 0.5", "line 1"),
        ("commas_only", "0 0.5 0.5 0.2 0.2\n,,,,,", "line 2"),
        ("string_coordinate", "0 0.5 half 0.2 0.2", "line 1: cy"),
        ("nul_byte", b"0 0.5 0.5 0.2 0.2\n\x00", "line 2"),
        ("latin1", "0 0.5 0.5 0.2 0.2\n# caf\xe9".encode("latin-1"), "line 2"),
        ("utf16", "0 0.5 0.5 0.2 0.2".encode("utf-16"), "line 1"),
    ]:
        yolo(tag, line + "\n" if isinstance(line, str) else line, expect)
    yolo(
        "class_not_in_classes_txt",
        "3 0.5 0.5 0.2 0.2\n",
        "class index 3",
        extra={"classes.txt": "cat\ndog\n"},
    )
    yolo(
        "duplicate_class_names",
        "0 0.5 0.5 0.2 0.2\n",
        "name 'cat' is also class 0",
        extra={"classes.txt": "cat\ncat\n"},
    )
    for tag, yaml_text, expect in [
        (
            "alias_bomb",
            _alias_bomb(),
            "anchors",
        ),
        ("deep_nesting", "names: " + "[" * 5000 + "]" * 5000 + "\n", "nested"),
        ("names_fraction_key", "names: {0.5: cat}\n", "names.0.5"),
        ("names_negative_key", "names: {-1: cat}\n", "names.-1"),
        ("names_duplicate", "names: [cat, cat]\n", "name 'cat' is also class 0"),
        ("names_nested_list", "names: [[cat, dog]]\n", "names[0]"),
        ("names_missing", "path: x\n", "names"),
        ("names_scalar", "names: cat\n", "names"),
        ("names_bool_key", "names: {true: cat}\n", "names.True"),
        ("malformed", "names: [cat\n", "data.yaml"),
        ("million_classes", "names: {" + f"{2**21}: cat" + "}\n", "names."),
    ]:
        yolo(f"yaml_{tag}", "0 0.5 0.5 0.2 0.2\n", expect, extra={"data.yaml": yaml_text})
    out.append(
        Case(
            "yolo_same_stem_two_cases",
            "gt",
            {"img1.txt": "0 0.5 0.5 0.2 0.2\n", "img1.TXT": "0 0.5 0.5 0.2 0.2\n"},
            "img1",
            args=["--gt-format", "yolo"],
        )
    )
    for tag, size, expect in [
        ("zero", "0x0", "image_size"),
        ("negative", "-1x5", "image_size"),
        ("overflow", "1e400x5", "image_size"),
        ("half", "640x", "image_size"),
    ]:
        yolo(f"image_size_{tag}", "0 0.5 0.5 0.2 0.2\n", expect, args=[f"--image-size={size}"])

    # --- YOLO predictions ------------------------------------------------------------------------
    def yolo_pred(
        name: str, text: str, expect: str, *, extra: dict[str, str | bytes] | None = None
    ) -> None:
        out.append(
            Case(
                f"yolo_pred_{name}",
                "pred",
                {"img1.txt": text, **(extra or {})},
                expect,
                args=[
                    "--gt",
                    "{good}/yolo_gt",
                    "--image-size",
                    "100x100",
                    "--pred-format",
                    "yolo",
                ],
            )
        )

    yolo_pred("conf_nan", "0 0.5 0.5 0.2 0.2 nan\n", "line 1: conf")
    yolo_pred("seven_values", "0 0.5 0.5 0.2 0.2 0.9 1\n", "line 1")
    yolo_pred("class_unknown", "5 0.5 0.5 0.2 0.2 0.9\n", "line 1: class 5")
    yolo_pred("class_name", "cat 0.5 0.5 0.2 0.2 0.9\n", "line 1: class")
    yolo_pred("pixels", "0 50 50 20 20 0.9\n", "line 1: cx")
    out.append(
        Case(
            "yolo_pred_unknown_image",
            "pred",
            {"other.txt": "0 0.5 0.5 0.2 0.2 0.9\n"},
            "other.txt: line 1",
            args=["--gt", "{good}/yolo_gt", "--image-size", "100x100", "--pred-format", "yolo"],
        )
    )

    # --- plain txt -----------------------------------------------------------------------------
    def txt(name: str, text: str | bytes, expect: str, role: str = "gt") -> None:
        args = (
            ["--gt-format", "txt"]
            if role == "gt"
            else ["--gt", "{good}/txt_gt", "--pred-format", "txt"]
        )
        out.append(Case(f"txt_{role}_{name}", role, {"img1.txt": text}, expect, args=args))

    txt("string_coordinate", "cat 10 ten 20 20\n", "line 1: coordinate 2")
    txt("negative_width", "cat 10 10 -20 20\n", "line 1")
    txt("nan", "cat nan 10 20 20\n", "line 1")
    txt("three_values", "cat 10 10\n", "line 1")
    txt("commas_only", ",,,,,\n", "line 1")
    txt("binary", b"\x00\x01\x02", "line 1")
    txt("conf_string", "cat high 10 10 20 20\n", "line 1: conf", role="pred")
    txt("unknown_class", "dog 0.9 10 10 20 20\n", "line 1: class 'dog'", role="pred")
    txt("five_values", "cat 10 10 20 20\n", "line 1", role="pred")

    # --- Pascal VOC XML --------------------------------------------------------------------------
    def voc(name: str, text: str | bytes, expect: str) -> None:
        out.append(
            Case(f"voc_{name}", "gt", {"img1.xml": text}, expect, args=["--gt-format", "voc"])
        )

    voc("doctype", _voc(_obj(), head="<!DOCTYPE annotation>"), "DTD")
    voc(
        "entity_declaration",
        _voc(_obj(), head='<!DOCTYPE annotation [<!ENTITY a "cat">]>'),
        "DTD",
    )
    voc(
        "parameter_entity",
        _voc(_obj(), head='<!DOCTYPE annotation [<!ENTITY % p SYSTEM "http://x/p.dtd"> %p;]>'),
        "DTD",
    )
    voc(
        "external_dtd",
        _voc(_obj(), head='<!DOCTYPE annotation SYSTEM "http://example.com/a.dtd">'),
        "DTD",
    )
    voc("undefined_entity", _voc(_obj("<name>&cat;</name>" + _VOC_BOX)), "undefined entity")
    voc("unknown_encoding", '<?xml version="1.0" encoding="x-klingon"?>' + _voc(_obj()), "img1.xml")
    voc("two_bndbox", _voc(_obj(f"<name>cat</name>{_VOC_BOX}{_VOC_BOX}")), "object[1]/bndbox[2]")
    voc("two_names", _voc(_obj(f"<name>cat</name><name>dog</name>{_VOC_BOX}")), "object[1]/name[2]")
    voc(
        "two_xmin",
        _voc(
            _obj(
                "<name>cat</name><bndbox><xmin>1</xmin><xmin>2</xmin><ymin>1</ymin><xmax>3</xmax><ymax>3</ymax></bndbox>"
            )
        ),
        "bndbox/xmin[2]",
    )
    voc("missing_name", _voc(_obj(_VOC_BOX)), "object[1]/name")
    voc(
        "xmin_overflow",
        _voc(_obj(f"<name>cat</name>{_VOC_BOX.replace('>10<', '>1e400<', 1)}")),
        "bndbox/xmin",
    )
    voc(
        "xmin_nan",
        _voc(_obj(f"<name>cat</name>{_VOC_BOX.replace('>10<', '>nan<', 1)}")),
        "bndbox/xmin",
    )
    voc(
        "difficult_yes",
        _voc(_obj(f"<name>cat</name><difficult>yes</difficult>{_VOC_BOX}")),
        "difficult",
    )
    voc(
        "truncated_two",
        _voc(_obj(f"<name>cat</name><truncated>2</truncated>{_VOC_BOX}")),
        "truncated",
    )
    voc(
        "width_string",
        _voc(_obj(), size="<size><width>wide</width><height>1</height></size>"),
        "size/width",
    )
    voc("root_html", "<html><body/></html>", "<html>")
    voc("unclosed", "<annotation><object>", "line 1")
    voc("two_roots", "<annotation/><annotation/>", "line 1")
    voc("nul_byte", b"<annotation>\x00</annotation>", "img1.xml")
    voc(
        "latin1_undeclared",
        _voc(_obj("<name>caf\xe9</name>" + _VOC_BOX)).encode("latin-1"),
        "img1.xml",
    )
    voc("text_only", "cat 10 10 20 20", "img1.xml")

    # --- VOC devkit detections -------------------------------------------------------------------
    def det(name: str, text: str, expect: str, extra: dict[str, str | bytes] | None = None) -> None:
        out.append(
            Case(
                f"voc_det_{name}",
                "pred",
                {"comp4_det_test_cat.txt": text, **(extra or {})},
                expect,
                args=["--gt", "{good}/voc_gt"],
            )
        )

    det("score_nan", "img1 nan 1 1 5 5\n", "line 1: score")
    det("score_string", "img1 high 1 1 5 5\n", "line 1: score")
    det("coordinate_inf", "img1 0.9 1 1 inf 5\n", "line 1: x2")
    det("five_values", "img1 0.9 1 1 5\n", "line 1")
    det("commas_only", ",,,,,\n", "line 1")
    det("stray_xml", "img1 0.9 10 10 30 30\n", "both", extra={"img1.xml": _voc(_obj())})

    # --- class lists given with --classes --------------------------------------------------------
    def classes(name: str, filename: str, text: str | bytes, expect: str) -> None:
        out.append(
            Case(
                f"classes_{name}",
                "classes",
                {filename: text},
                expect,
                target=filename,
                args=["--gt", "{good}/yolo_gt", "--pred", "{good}/pred.json"],
            )
        )

    classes("duplicate_txt", "classes.txt", "cat\ncat\n", "name 'cat' is also class 0")
    classes("empty_txt", "classes.txt", "\n\n", "expected class names")
    classes("binary_txt", "classes.txt", b"\x00cat", "line 1")
    classes("yaml_alias", "data.yaml", "x: &x [a]\nnames: *x\n", "anchors")
    classes("yaml_fraction_key", "data.yaml", "names: {0.5: cat}\n", "names.0.5")
    classes("yaml_duplicate", "data.yaml", "names: {0: cat, 1: cat}\n", "also class 0")

    # --- convert: outputs that would not read back ------------------------------------------------
    def convert(name: str, doc: dict[str, object], to: str, expect: str) -> None:
        out.append(
            Case(
                f"convert_{name}_to_{to}",
                "convert",
                {"gt.json": json.dumps(doc)},
                expect,
                target="gt.json",
                args=["--to", to],
            )
        )

    def two_images(a: str, b: str) -> list[dict[str, object]]:
        return [
            {"id": 1, "file_name": a, "width": 100, "height": 100},
            {"id": 2, "file_name": b, "width": 100, "height": 100},
        ]

    base = {"images": [_IMAGE], "annotations": [_ANN], "categories": [_CATEGORY]}
    for to in ("yolo", "voc"):
        convert(
            "same_stem",
            {**base, "images": two_images("train/a.jpg", "val/a.jpg")},
            to,
            "stem 'a'",
        )
        convert(
            "same_stem_case",
            {**base, "images": two_images("a.jpg", "A.jpg")},
            to,
            "stems 'a' and 'A'",
        )
        convert(
            "duplicate_category_names",
            {**base, "categories": [_CATEGORY, {"id": 2, "name": "cat"}]},
            to,
            "share the class name 'cat'",
        )
        convert(
            "newline_in_name",
            {**base, "categories": [{"id": 1, "name": "cat\ndog"}]},
            to,
            "control character",
        )
        convert(
            "empty_name",
            {**base, "categories": [{"id": 1, "name": ""}]},
            to,
            "it is empty",
        )
        convert(
            "padded_name",
            {**base, "categories": [{"id": 1, "name": " cat"}]},
            to,
            "white space",
        )
        convert(
            "control_character_stem",
            {**base, "images": [{**_IMAGE, "file_name": "a\x07b.jpg"}]},
            to,
            "control character",
        )
    convert(
        "image_named_classes",
        {**base, "images": [{**_IMAGE, "file_name": "classes.jpg"}]},
        "yolo",
        "classes.txt",
    )
    names = [c.name for c in out]
    assert len(set(names)) == len(names), sorted({n for n in names if names.count(n) > 1})
    return out


def write(root: Path = ROOT) -> None:
    """(Re)write the corpus files and ``cases.json`` under ``root``."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    manifest = []
    for case in cases():
        folder = root / case.name
        folder.mkdir()
        for rel, content in case.files.items():
            data = content.encode("utf-8") if isinstance(content, str) else content
            (folder / rel).write_bytes(data)
        entry = asdict(case)
        entry.pop("files")
        entry["files"] = sorted(case.files)
        manifest.append(entry)
    (root / "cases.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    write()
    print(f"wrote {len(cases())} cases to {ROOT}")
