"""#23 item 26: the declared dependency floors are what CI tests. The ``oldest`` dependency
group (installed by the oldest-versions lane of ``.ci/run``, which runs the suite there) pins
every floor of the core dependencies and of each user extra, exactly; a floor raised or added
without its pin fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
USER_EXTRAS = ("fast-json", "plots", "images", "panoptic", "yaml", "progress", "dask", "completion")


def _floors(specs: list[str]) -> dict[str, Version]:
    floors = {}
    for spec in specs:
        req = Requirement(spec)
        lower = [s.version for s in req.specifier if s.operator == ">="]
        assert lower, f"{spec}: expected a >= floor"
        floors[req.name.lower()] = Version(lower[0])
    return floors


def _pins(specs: list[str]) -> dict[str, Version]:
    pins = {}
    for spec in specs:
        req = Requirement(spec)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if exact:
            pins[req.name.lower()] = Version(exact[0])
    return pins


def test_every_declared_floor_is_pinned_in_the_oldest_lane() -> None:
    project = PYPROJECT["project"]
    extras = project["optional-dependencies"]
    assert set(USER_EXTRAS) | {"all", "test"} == set(extras), "a new extra: list it here"
    declared = _floors(project["dependencies"])
    for name in USER_EXTRAS:
        for dep, floor in _floors(extras[name]).items():
            assert declared.setdefault(dep, floor) == floor, f"{dep}: two floors"
    pins = _pins(PYPROJECT["dependency-groups"]["oldest"])
    wrong = {d: (str(f), str(pins.get(d))) for d, f in declared.items() if pins.get(d) != f}
    assert not wrong, f"floor != the oldest lane's pin (floor, pin): {wrong}"
    assert declared.keys() >= {"numpy", "array-api-compat", "pillow", "matplotlib"}


def test_the_oldest_lane_runs_the_suite() -> None:
    run = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"pip install --quiet --group oldest", run)
    assert re.search(r"\.venv-oldest/bin/python -m pytest", run)


def test_references_pinned_there_meet_the_test_extra() -> None:
    """The reference versions of the oldest lane satisfy the test extra's own floors."""
    test_extra = {Requirement(s).name.lower(): Requirement(s) for s in PYPROJECT["project"]
                  ["optional-dependencies"]["test"]}  # fmt: skip
    for dep, pin in _pins(PYPROJECT["dependency-groups"]["oldest"]).items():
        if dep in test_extra:
            assert test_extra[dep].specifier.contains(pin), (dep, str(pin))
