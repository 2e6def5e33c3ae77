"""COCO panoptic readers: id encoding vs panopticapi's utils, PNG decoding, JSON checks."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.errors import DataFormatError, MissingDependencyError, ParameterError
from ioukit.io.coco_panoptic import (
    MAX_SEGMENT_ID,
    decode_panoptic_png,
    id_to_rgb,
    read_coco_panoptic,
    read_panoptic_png,
    resolve_decoder,
    rgb_to_id,
)

Image = pytest.importorskip("PIL.Image")

HAVE_PYSPNG = importlib.util.find_spec("pyspng") is not None
DECODERS = [
    "pillow",
    pytest.param("pyspng", marks=pytest.mark.skipif(not HAVE_PYSPNG, reason="no pyspng")),
]


def test_id_encoding_equals_panopticapi() -> None:
    utils = pytest.importorskip("panopticapi.utils")
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, size=(7, 9, 3)).astype(np.uint8)
    assert np.array_equal(rgb_to_id(rgb), utils.rgb2id(rgb))
    ids = rng.integers(0, MAX_SEGMENT_ID + 1, size=(5, 6))
    assert np.array_equal(id_to_rgb(ids), utils.id2rgb(ids))
    assert np.array_equal(rgb_to_id(id_to_rgb(ids)), ids)
    with pytest.raises(ParameterError, match="rgb: expected shape"):
        rgb_to_id(rgb[..., :2])
    with pytest.raises(ParameterError, match="ids: expected integers in"):
        id_to_rgb(np.array([MAX_SEGMENT_ID + 1]))


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("mode", ["RGB", "RGBA", "P"])
def test_png_decoding_equals_panopticapi(tmp_path: Path, mode: str, decoder: Any) -> None:
    utils = pytest.importorskip("panopticapi.utils")
    rng = np.random.default_rng(1)
    palette = rng.integers(0, 256, size=(12, 3)).astype(np.uint8)
    rgb = palette[rng.integers(0, 12, size=(13, 17))]
    path = tmp_path / "a.png"
    image = Image.fromarray(rgb)
    if mode == "RGBA":
        image.putalpha(Image.fromarray(rng.integers(0, 256, (13, 17)).astype(np.uint8)))
    elif mode == "P":
        image = image.quantize(
            colors=12, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE
        )
    image.save(path)
    expected = utils.rgb2id(np.array(Image.open(path).convert("RGB"), dtype=np.uint32))
    if mode == "RGBA":  # panopticapi drops the alpha channel itself
        expected = utils.rgb2id(np.array(Image.open(path), dtype=np.uint32))
    ids = read_panoptic_png(path, decoder=decoder)
    assert ids.dtype == np.uint32 and ids.shape == (13, 17)
    assert np.array_equal(ids, expected)
    assert read_panoptic_png(path, size=(17, 13), decoder=decoder).shape == (13, 17)
    wide = read_panoptic_png(path, buffer=np.zeros(13 * 17 + 5, np.int64), decoder=decoder)
    assert wide.dtype == np.int64 and np.array_equal(wide, expected)


def _png(path: Path, rgb: np.ndarray, mode: str, **save: Any) -> None:
    """Save ``rgb`` (H, W, 3) as a PNG of ``mode``: RGB, RGBA (random alpha), P (palette),
    P with a transparent index (tRNS)."""
    image = Image.fromarray(rgb)
    if mode == "RGBA":
        alpha = np.random.default_rng(5).integers(0, 256, rgb.shape[:2]).astype(np.uint8)
        image.putalpha(Image.fromarray(alpha))
    elif mode.startswith("P"):
        image = image.quantize(
            colors=16, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE
        )
        if mode == "P+tRNS":
            save["transparency"] = 0
    image.save(path, **save)


@pytest.mark.skipif(not HAVE_PYSPNG, reason="no pyspng")
@pytest.mark.parametrize("mode", ["RGB", "RGBA", "P", "P+tRNS"])
@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (5, 1), (13, 17), (64, 3)])
@pytest.mark.parametrize("save", [{}, {"interlace": 1}, {"compress_level": 0}, {"optimize": True}])
def test_pyspng_decodes_as_pillow(
    tmp_path: Path, mode: str, shape: tuple[int, int], save: dict[str, Any]
) -> None:
    """libspng's pixels equal Pillow's (the Pillow-side reference: ``np.asarray`` of the image,
    palettes converted to RGB) for every colour type, interlaced (Adam7) or not, stored or
    compressed, and the ids equal ``rgb_to_id`` of them."""
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    palette = rng.integers(0, 256, size=(9, 3)).astype(np.uint8)
    path = tmp_path / "a.png"
    _png(path, palette[rng.integers(0, 9, size=shape)], mode, **save)
    with Image.open(path) as image:
        reference = np.asarray(image.convert("RGB") if image.mode == "P" else image)
    got = decode_panoptic_png(path, decoder="pyspng")
    assert got.dtype == np.uint8 and got.flags.c_contiguous
    np.testing.assert_array_equal(got, reference)
    np.testing.assert_array_equal(decode_panoptic_png(path, decoder="pillow"), reference)
    ids = rgb_to_id(reference[..., :3])
    np.testing.assert_array_equal(read_panoptic_png(path, decoder="pyspng"), ids)
    buffer = np.zeros(ids.size, np.int64)
    np.testing.assert_array_equal(read_panoptic_png(path, buffer=buffer, decoder="pyspng"), ids)


@pytest.mark.skipif(not HAVE_PYSPNG, reason="no pyspng")
def test_pyspng_leaves_to_pillow_what_it_does_not_read_the_same_way(tmp_path: Path) -> None:
    """16-bit RGB (Pillow keeps the high byte) and a corrupt image stream go to Pillow: the
    same pixels, or Pillow's error."""
    deep = tmp_path / "deep.png"
    rgb16 = np.random.default_rng(0).integers(0, 2**16, size=(4, 5, 3)).astype(">u2")
    Image.frombytes("RGB", (5, 4), rgb16.tobytes(), "raw", "RGB;16B").save(deep)
    np.testing.assert_array_equal(
        decode_panoptic_png(deep, decoder="pyspng"), decode_panoptic_png(deep, decoder="pillow")
    )
    good = tmp_path / "good.png"
    Image.fromarray(np.arange(48 * 40 * 3).astype(np.uint8).reshape(40, 48, 3)).save(good)
    data = bytearray(good.read_bytes())
    idat = data.index(b"IDAT") + 4
    data[idat + 2 : idat + 40] = bytes(38)  # the deflate stream, not the header
    bad = tmp_path / "bad.png"
    bad.write_bytes(bytes(data))
    with pytest.raises(DataFormatError, match=r"bad.png: cannot read the PNG"):
        decode_panoptic_png(bad, decoder="pillow")
    with pytest.raises(DataFormatError, match=r"bad.png: cannot read the PNG"):
        decode_panoptic_png(bad, decoder="pyspng")


def test_resolve_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_decoder("pillow") == "pillow"
    assert resolve_decoder() == ("pyspng" if HAVE_PYSPNG else "pillow")
    with pytest.raises(ParameterError, match=r"decoder: expected one of 'auto', 'pyspng'"):
        resolve_decoder("cv2")
    import builtins

    real_import = builtins.__import__

    def no_pyspng(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pyspng":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyspng)
    assert resolve_decoder("auto") == "pillow"
    with pytest.raises(MissingDependencyError, match=r'decoder="pyspng" needs pyspng'):
        resolve_decoder("pyspng")


@pytest.mark.parametrize("decoder", DECODERS)
def test_png_errors(tmp_path: Path, decoder: Any) -> None:
    gray = tmp_path / "gray.png"
    Image.fromarray(np.zeros((3, 4), dtype=np.uint8)).save(gray)
    with pytest.raises(DataFormatError, match=r"gray.png: expected an RGB PNG .* got mode L"):
        read_panoptic_png(gray, decoder=decoder)
    deep = tmp_path / "deep.png"
    Image.fromarray(np.zeros((3, 4), dtype=np.uint16)).save(deep)
    # Pillow < 9.3 opens a 16-bit PNG as mode "I", later ones as "I;16"
    with pytest.raises(DataFormatError, match=r"deep.png: expected an RGB PNG .* got mode I"):
        read_panoptic_png(deep, decoder=decoder)
    jpeg = tmp_path / "a.png"
    Image.fromarray(np.zeros((3, 4, 3), dtype=np.uint8)).save(jpeg, format="JPEG")
    with pytest.raises(DataFormatError, match=r"a.png: expected a PNG file, got JPEG"):
        read_panoptic_png(jpeg, decoder=decoder)
    with pytest.raises(DataFormatError, match=r"b.png: cannot read the file \(no such file\)"):
        read_panoptic_png(tmp_path / "b.png", decoder=decoder)
    (tmp_path / "c.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    with pytest.raises(DataFormatError, match=r"c.png: cannot read the PNG"):
        read_panoptic_png(tmp_path / "c.png", decoder=decoder)
    with pytest.raises(
        DataFormatError, match=r"gray.png: expected 4x4 pixels \(gt.json: images\[0\]\), got 4x3"
    ):
        read_panoptic_png(gray, size=(4, 4), size_from="gt.json: images[0]", decoder=decoder)
    rgb = tmp_path / "rgb.png"
    Image.fromarray(np.zeros((3, 4, 3), dtype=np.uint8)).save(rgb)
    with pytest.raises(
        DataFormatError, match=r"rgb.png: expected 3x4 pixels \(gt/1.png\), got 4x3"
    ):
        read_panoptic_png(rgb, size=(3, 4), size_from="gt/1.png", decoder=decoder)


def _gt(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "images": [{"id": 1, "width": 4, "height": 3, "file_name": "1.jpg"}],
        "categories": [{"id": 1, "isthing": 1, "name": "person"}, {"id": 2, "isthing": 0}],
        "annotations": [
            {
                "image_id": 1,
                "file_name": "1.png",
                "segments_info": [
                    {"id": 30, "category_id": 2, "iscrowd": 0, "area": 8},
                    {"id": 4, "category_id": 1, "iscrowd": 1, "area": 4.0},
                ],
            }
        ],
    }
    data.update(changes)
    return data


def test_read_ground_truth(tmp_path: Path) -> None:
    path = tmp_path / "panoptic_val.json"
    path.write_text(json.dumps(_gt()))
    gt = read_coco_panoptic(path)
    assert gt.folder == tmp_path / "panoptic_val"  # panopticapi's default folder
    assert gt.label == str(path)
    assert gt.category_ids.tolist() == [1, 2] and gt.isthing.tolist() == [True, False]
    assert gt.category_names == ("person", "2")
    assert gt.image_sizes == {1: (4, 3)}
    (image,) = gt.images
    assert image.ids.tolist() == [4, 30] and image.position.tolist() == [1, 0]
    assert image.area.tolist() == [4.0, 8.0] and image.iscrowd.tolist() == [True, False]
    assert gt.png_path(image) == tmp_path / "panoptic_val" / "1.png"
    assert read_coco_panoptic(path, tmp_path / "pngs").folder == tmp_path / "pngs"
    data = _gt()
    before = json.dumps(data)
    assert read_coco_panoptic(data).folder is None
    assert json.dumps(data) == before  # not modified
    pred = read_coco_panoptic(
        {
            "annotations": [
                {
                    "image_id": "a",
                    "file_name": "a.png",
                    "segments_info": [{"id": 2, "category_id": 1}],
                }
            ]
        },
        predictions=True,
    )
    assert np.isnan(pred.images[0].area).all() and not pred.images[0].iscrowd.any()


def _seg(**changes: Any) -> dict[str, Any]:
    seg = {"id": 30, "category_id": 2, "iscrowd": 0, "area": 8}
    seg.update(changes)
    return _gt(annotations=[{"image_id": 1, "file_name": "1.png", "segments_info": [seg]}])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_gt(annotations={}), r"gt_json: annotations: expected a list, got dict"),
        ({"annotations": []}, r"gt_json: categories: missing"),
        (
            _gt(categories=[{"id": 1}]),
            r"gt_json: categories\[0\].isthing: missing \(expected 0 or 1\)",
        ),
        (
            _gt(categories=[{"id": 1, "isthing": 2}]),
            r"gt_json: categories\[0\].isthing: expected 0 or 1, got 2",
        ),
        (
            _gt(categories=[{"id": 1, "isthing": 1}, {"id": 1, "isthing": 0}]),
            r"gt_json: categories\[1\].id: 1 appears more than once",
        ),
        (
            _gt(annotations=[{"file_name": "1.png", "segments_info": []}]),
            r"gt_json: annotations\[0\].image_id: missing",
        ),
        (
            _gt(annotations=[{"image_id": 1.5, "file_name": "1.png", "segments_info": []}]),
            r"annotations\[0\].image_id: expected an integer or a string, got 1.5",
        ),
        (
            _gt(annotations=[{"image_id": 1, "segments_info": []}]),
            r"annotations\[0\].file_name: missing",
        ),
        (
            _gt(annotations=[{"image_id": 1, "file_name": "1.png"}]),
            r"annotations\[0\].segments_info: missing \(expected a list\)",
        ),
        (
            _gt(annotations=[{"image_id": 1, "file_name": "1.png", "segments_info": []}] * 2),
            r"annotations\[1\].image_id: 1 appears more than once \(also annotations\[0\]\)",
        ),
        (
            _gt(annotations=[{"image_id": 1, "file_name": "1.png", "segments_info": [7]}]),
            r"annotations\[0\].segments_info\[0\]: expected a JSON object, got 7",
        ),
        (_seg(id=0), r"segments_info\[0\].id: 0 is VOID"),
        (
            _seg(id=MAX_SEGMENT_ID + 1),
            r"segments_info\[0\].id: expected an integer in \[1, 16777215\]",
        ),
        (_seg(id="7"), r"segments_info\[0\].id: expected an integer, got '7'"),
        (_seg(id=True), r"segments_info\[0\].id: expected an integer, got True"),
        (_seg(category_id=None), r"segments_info\[0\].category_id: expected an integer, got None"),
        (_seg(category_id=5), r"segments_info\[0\].category_id: 5 is not in gt_json: categories"),
        (_seg(iscrowd=2), r"segments_info\[0\].iscrowd: expected 0 or 1, got 2"),
        (_seg(area=None), r"segments_info\[0\].area: expected a number, got None"),
        (_seg(area=-1), r"segments_info\[0\].area: expected a finite number >= 0, got -1"),
        (
            _gt(images=[{"id": 1, "width": 0, "height": 3}]),
            r"gt_json: images\[0\]: expected a positive width and height, got 0x3",
        ),
        (
            _gt(images=[{"id": 1, "width": 4, "height": 3}] * 2),
            r"gt_json: images\[1\].id: 1 appears more than once",
        ),
    ],
)
def test_json_errors_name_the_place(data: Any, message: str) -> None:
    with pytest.raises(DataFormatError, match=message):
        read_coco_panoptic(data)


def test_missing_area_and_file_errors(tmp_path: Path) -> None:
    data = _gt()
    del data["annotations"][0]["segments_info"][1]["area"]
    with pytest.raises(DataFormatError, match=r"segments_info\[1\].area: missing"):
        read_coco_panoptic(data)
    with pytest.raises(DataFormatError, match=r"nope.json: cannot read the file"):
        read_coco_panoptic(tmp_path / "nope.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(
        DataFormatError, match=r"list.json: expected a JSON object with annotations, got list"
    ):
        read_coco_panoptic(tmp_path / "list.json")
    with pytest.raises(DataFormatError, match=r"gt_json: annotations: missing"):
        read_coco_panoptic({"categories": []})
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(DataFormatError, match=r"bad.json: not valid JSON"):
        read_coco_panoptic(tmp_path / "bad.json")
    with pytest.raises(ParameterError, match="pred_json: expected a path"):
        read_coco_panoptic(3, predictions=True)  # type: ignore[arg-type]


@pytest.mark.parametrize(("h", "w"), [(1, 1), (1, 2), (1, 3), (2, 2), (5, 7)])
def test_png_sizes_and_buffers(tmp_path: Path, h: int, w: int) -> None:
    """Every pixel, the last ones (decoded apart from the word reads) included, and both
    buffer dtypes; a buffer too small is not used."""
    utils = pytest.importorskip("panopticapi.utils")
    rgb = np.random.default_rng(h * w).integers(0, 256, size=(h, w, 3)).astype(np.uint8)
    path = tmp_path / "a.png"
    Image.fromarray(rgb).save(path)
    expected = utils.rgb2id(rgb)
    for buffer in (None, np.zeros(h * w + 3, np.uint32), np.zeros(h * w, np.int64)):
        ids = read_panoptic_png(path, buffer=buffer)
        assert np.array_equal(ids, expected)
        assert ids.dtype == (np.uint32 if buffer is None else buffer.dtype)
        if buffer is not None:
            assert np.shares_memory(ids, buffer)
    small = np.zeros(1, np.int64)
    ids = read_panoptic_png(path, buffer=small)
    assert np.array_equal(ids, expected) and ids.dtype == np.int64
    assert (h * w == 1) == np.shares_memory(ids, small)
    with pytest.raises(ParameterError, match="buffer: expected a writeable C-contiguous 1-D"):
        read_panoptic_png(path, buffer=np.zeros(8, np.int32))
