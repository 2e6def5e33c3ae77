"""The README's tour is executable: every ``>>>`` example must print what the README shows."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"


def test_readme_examples() -> None:
    pytest.importorskip("torch")
    failures, attempted = doctest.testfile(
        str(README),
        module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
    )
    assert attempted > 10
    assert failures == 0
