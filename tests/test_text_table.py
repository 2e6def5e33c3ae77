"""ioukit._text_table: the aligned per-class table layout."""

from __future__ import annotations

from ioukit._text_table import aligned_table


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
