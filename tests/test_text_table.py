"""ioukit._text_table: the aligned per-class table layout and the escaped names."""

from __future__ import annotations

import ioukit
from ioukit._text_table import aligned_table, escape_text
from ioukit.report import per_class_table


def test_columns_line_up_with_the_widest_cell() -> None:
    text = aligned_table(["category_id", "name", "AP"], [["1", "a", "0.5"], ["2", "bird", "12.25"]])
    lines = text.split("\n")
    assert lines == [
        "category_id  name  AP",
        "1            a       0.5",
        "2            bird  12.25",
    ]
    assert all(line == line.rstrip() for line in lines)


def test_a_short_last_cell_leaves_no_trailing_space() -> None:
    assert aligned_table(["id", "name"], [["10", "x"]]) == "id  name\n10  x"


def test_escape_text_escapes_only_what_does_not_print() -> None:
    assert escape_text("chat noir") == "chat noir"
    assert escape_text("cat\x1b[2J\n\u200b") == "cat\\x1b[2J\\n\\u200b"


def test_the_result_table_and_the_report_table_escape_names_alike() -> None:
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "c\x1bat\nrow"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
             "iscrowd": 0}
        ],
    }  # fmt: skip
    dt = [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9}]
    result = ioukit.evaluate(gt, dt)
    table = result.per_class_table()
    assert "\x1b" not in table and len(table.splitlines()) == 2
    assert "c\\x1bat\\nrow" in table
    assert table == per_class_table(result.per_class)
