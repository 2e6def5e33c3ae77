"""What the two HTML pages (the report and the comparison) share: the page shell, the data
embedded as JSON, the output check (private to :mod:`ioukit.report`).

A page is a header (title, a link per section, optional controls), one ``<section>`` per
part with an ``<h2>`` and a ``.body`` the script fills, the data as ``<script
type="application/json" id="report-data">`` and the page's script; a Content Security Policy
allows nothing but inline style and script (and images from ``img_src``).

Examples
--------
>>> page = page_html("<t>", [("summary", "Summary", "<p>hi</p>")], {"x": [1, 2]}, "0;")
>>> "<title>&lt;t&gt;</title>" in page, '<section id="summary"' in page
(True, True)
>>> json_for_script({"name": "</script>"})
'{"name":"\\\\u003c/script\\\\u003e"}'
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.errors import ParameterError
from ioukit.report._assets import CSS

__all__ = ["check_output", "json_for_script", "json_text", "page_html"]


def _plain(value: Any) -> Any:
    """``json.dumps`` fallback: arrays as lists, NaN as None."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and np.isnan(value).any():
            return [_plain(v) for v in value]
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def json_text(document: Any) -> str:
    """Compact JSON of ``document`` (NumPy arrays included; orjson when installed)."""
    try:
        import orjson  # optional: ioukit[fast-json]
    except ImportError:
        return json.dumps(
            document, separators=(",", ":"), allow_nan=False, ensure_ascii=False, default=_plain
        )
    option = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
    return str(orjson.dumps(document, option=option).decode("utf-8"))


def json_for_script(document: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>``, ``&`` raw."""
    return (
        json_text(document)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def page_html(
    title: str,
    parts: Sequence[tuple[str, str, str]],
    data: Any,
    script: str,
    *,
    header_extra: str = "",
    img_src: str = "data:",
) -> str:
    """The self-contained page: ``parts`` are ``(element id, heading, static body HTML)``.

    Parameters
    ----------
    title : str
        Escaped here.
    parts : sequence of (str, str, str)
        Each section's id, heading (escaped here) and body (HTML, already escaped).
    data : JSON-ready object
        Embedded as ``#report-data``.
    script : str
        The page's JavaScript (inline).
    header_extra : str
        HTML after the section links in the header (the report's controls).
    img_src : str
        The policy's ``img-src`` sources.

    Returns
    -------
    str
    """
    esc = html.escape
    sections = "".join(
        f'<section id="{sid}" aria-labelledby="{sid}-h"><h2 id="{sid}-h">{esc(heading)}</h2>'
        f'<div class="body">{body}</div></section>'
        for sid, heading, body in parts
    )
    links = "".join(f'<a href="#{sid}">{esc(heading)}</a>' for sid, heading, _ in parts)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"img-src {img_src}; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{esc(title)}</h1><nav aria-label="sections">{links}</nav>'
        f"{header_extra}</header>"
        f"<main>{sections}</main>"
        f'<script type="application/json" id="report-data">{json_for_script(data)}</script>'
        f"<script>{script}</script></body></html>\n"
    )


def check_output(path: Path, images: str | os.PathLike[str] | None, inputs: Iterable[Any]) -> None:
    """Refuse an output that is an input file or lies inside an input folder.

    Raises
    ------
    ParameterError
        ``path`` is one of ``inputs`` or ``images``, or inside one of those folders.
    IsADirectoryError, FileNotFoundError
        ``path`` is a folder, or its folder does not exist.
    """
    target = Path(os.path.realpath(path))
    sources = [Path(p) for p in inputs if p is not None]
    if images is not None:
        sources.append(Path(images))
    for source in sources:
        src = Path(os.path.realpath(source))
        if target == src:
            raise ParameterError(f"path {path}: refusing to write onto the input {source}")
        if src.is_dir() and src in target.parents:
            raise ParameterError(f"path {path}: refusing to write inside the input folder {source}")
    if path.is_dir():
        raise IsADirectoryError(f"path {path}: expected a file name, got a folder")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path {path}: folder {path.parent} does not exist")
