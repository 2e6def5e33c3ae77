"""Aligned plain-text tables and escaped names, shared by the result's and the report's
per-class tables."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["aligned_table", "escape_text"]


def aligned_table(header: Sequence[str], cells: Sequence[Sequence[str]], /) -> str:
    """``header`` and the rows of ``cells`` in columns two spaces apart: the header and the
    first two columns left-aligned, the other cells right-aligned, no trailing space.

    Parameters
    ----------
    header : sequence of str, shape (C,)
    cells : sequence of sequences of str, shape (R, C)

    Returns
    -------
    str
        R + 1 lines.

    Examples
    --------
    >>> print(aligned_table(["id", "name", "AP"], [["1", "cat", "0.500"], ["12", "dog", "1"]]))
    id  name  AP
    1   cat   0.500
    12  dog       1
    """
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += [
        "  ".join(
            c.rjust(w) if i >= 2 else c.ljust(w)
            for i, (c, w) in enumerate(zip(cell, widths, strict=True))
        )
        for cell in cells
    ]
    return "\n".join(line.rstrip() for line in lines)


def escape_text(text: str) -> str:
    r"""``text`` with control and other non-printable characters escaped (``\x1b``, ``\n``).

    Class names come from the input files; printed raw, a name can move the terminal's cursor
    or split a table row.

    >>> print(escape_text("cat\x1b[2J\n"))
    cat\x1b[2J\n
    >>> escape_text("chat noir")
    'chat noir'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
