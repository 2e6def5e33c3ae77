"""ioukit._frozen: ``@frozen`` behaves as ``@dataclass(frozen=True)``, side by side."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from ioukit._frozen import frozen


@frozen
class Ours:
    a: int
    b: str = "x"
    c: list[int] = field(default_factory=list)
    d: float = field(default=0.5, repr=False, compare=False)


@dataclass(frozen=True)
class Theirs:
    a: int
    b: str = "x"
    c: list[int] = field(default_factory=list)
    d: float = field(default=0.5, repr=False, compare=False)


@frozen(eq=False)
class OursNoEq:
    a: int
    b: str = "x"
    c: list[int] = field(default_factory=list)
    d: float = field(default=0.5, repr=False, compare=False)


@dataclass(frozen=True, eq=False)
class TheirsNoEq:
    a: int
    b: str = "x"
    c: list[int] = field(default_factory=list)
    d: float = field(default=0.5, repr=False, compare=False)


def _pair(eq: bool) -> tuple[Any, Any]:
    """The same record declared with @frozen and with @dataclass(frozen=True)."""
    return (Ours, Theirs) if eq else (OursNoEq, TheirsNoEq)


@pytest.mark.parametrize("eq", [True, False])
def test_same_behaviour_as_frozen_dataclass(eq: bool) -> None:
    ours, theirs = _pair(eq)
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    for cls in (ours, theirs):
        x, y = cls(1, "y", [2]), cls(1, "y", [2], 9.0)
        assert repr(x) == f"{cls.__name__}(a=1, b='y', c=[2])"
        assert (x == y) is eq and (x == cls(2)) is False
        assert (x != y) is not eq
        assert dataclasses.is_dataclass(x)
        assert [f.name for f in dataclasses.fields(x)] == ["a", "b", "c", "d"]
        assert dataclasses.asdict(x) == {"a": 1, "b": "y", "c": [2], "d": 0.5}
        assert dataclasses.replace(x, a=5).a == 5 and dataclasses.replace(x, a=5).c == [2]
        assert cls(1).c == [] and cls(1).c is not cls(1).c
        back = pickle.loads(pickle.dumps(x))
        assert (back.a, back.b, back.c, back.d) == (1, "y", [2], 0.5)
        assert copy.deepcopy(x).c == [2] and copy.copy(x).a == 1
        with pytest.raises(dataclasses.FrozenInstanceError):
            x.a = 2  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            x.new = 2  # type: ignore[attr-defined]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del x.a
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            cls()
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            cls(1, e=2)
        with pytest.raises(TypeError):
            cls(1, "b", [], 0.1, 5)
    if eq:
        assert hash(ours(1, "y", (2,))) == hash(theirs(1, "y", (2,)))  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="unhashable"):
            hash(ours(1, "y", [2]))
    else:
        x = ours(1)
        assert hash(x) == object.__hash__(x)


def test_post_init_and_own_methods_kept() -> None:
    @frozen
    class Span:
        lo: int
        hi: int
        width: int = field(init=False, repr=False)

        def __post_init__(self) -> None:
            if self.hi < self.lo:
                raise ValueError("hi: below lo")
            object.__setattr__(self, "width", self.hi - self.lo)

        def __repr__(self) -> str:
            return f"[{self.lo}, {self.hi})"

    s = Span(1, 4)
    assert s.width == 3 and repr(s) == "[1, 4)" and s == Span(1, 4)
    with pytest.raises(ValueError, match="hi"):
        Span(4, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.width = 0  # type: ignore[misc]


def test_subclass_and_cached_property() -> None:
    from functools import cached_property

    @frozen(eq=False)
    class Base:
        n: int

        @cached_property
        def double(self) -> int:
            return 2 * self.n

    @frozen
    class Child(Base):
        label: str = "c"

    c = Child(3)
    assert c.double == 6 and c.double == 6 and repr(c).endswith("Child(n=3, label='c')")
    assert Child(3) == Child(3) and Child(3) != Child(4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.n = 1  # type: ignore[misc]


@frozen
class Three:
    a: int
    b: int
    c: int
    d: int = field(init=False, default=7)


@dataclass(frozen=True)
class ThreeDC:
    a: int
    b: int
    c: int
    d: int = field(init=False, default=7)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1,), {}), ((1, 2), {}), ((1, 2, 3, 4), {}), ((1,), {"a": 2}), ((), {"x": 1})],
)
def test_same_type_errors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The messages of the generated __init__, word for word (class name aside)."""
    messages = []
    for cls in (Three, ThreeDC):
        with pytest.raises(TypeError) as info:
            cls(*args, **kwargs)
        messages.append(str(info.value).replace(cls.__qualname__, "C"))
    assert messages[0] == messages[1]


def test_init_false_default_and_keywords() -> None:
    assert Three(1, 2, 3).d == 7 == ThreeDC(1, 2, 3).d
    assert Three(c=3, b=2, a=1) == Three(1, 2, 3)
    assert repr(Three(1, 2, 3)) == repr(ThreeDC(1, 2, 3)).replace("ThreeDC", "Three")


def test_refused_like_dataclass() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @frozen
        class Bad:
            a: int = 0
            b: int

    with pytest.raises(TypeError, match="keyword-only"):

        @frozen
        class KwOnly:
            a: int = field(kw_only=True)

    with pytest.raises(TypeError, match="InitVar"):

        @frozen
        class WithInitVar:
            a: int
            b: dataclasses.InitVar[int]


def test_recursive_repr_and_class_variables() -> None:
    @frozen
    class Node:
        kind: ClassVar[str] = "node"
        children: list[Any] = field(default_factory=list)

    n = Node()
    n.children.append(n)
    assert repr(n).endswith("Node(children=[...])")
    assert Node.kind == "node" and [f.name for f in dataclasses.fields(Node)] == ["children"]


def test_plain_subclass_may_set_its_own_attributes() -> None:
    class Plain(Ours):
        pass

    p = Plain(1)
    p.extra = 5  # type: ignore[attr-defined]
    assert p.extra == 5  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.a = 2  # type: ignore[misc]
