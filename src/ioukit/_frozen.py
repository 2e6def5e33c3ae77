"""``@frozen``: frozen dataclasses that cost little to define (private).

``@dataclass(frozen=True)`` compiles five or six methods from generated source for every
class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``):
about 0.25 ms a class on Python 3.11, 4.5 ms of the 20 ms that ``import ioukit`` and a first
evaluation cost in a fresh process (#9). ``@frozen`` lets :func:`dataclasses.dataclass`
generate ``__init__`` only, and gives every record the same four plain methods instead:

* assigning or deleting an attribute after ``__init__`` raises
  :class:`dataclasses.FrozenInstanceError` (``__init__`` sets each field once; ``__post_init__``
  and :class:`functools.cached_property` write with ``object.__setattr__`` / the instance
  dict, as they do on a frozen dataclass);
* ``repr`` is the dataclass ``repr`` (fields with ``repr=True``);
* with ``eq=True`` (default), ``==`` compares the ``compare=True`` fields as a tuple, and the
  hash is that tuple's, as a frozen dataclass's; ``eq=False`` keeps identity for both.

The result is a dataclass: :func:`dataclasses.fields`, :func:`dataclasses.replace`,
:func:`dataclasses.asdict`, pickling and copying work as on ``@dataclass(frozen=True)``,
and type checkers read it as one (:func:`typing.dataclass_transform`).

Examples
--------
>>> import dataclasses
>>> @frozen
... class Point:
...     x: float
...     y: float = 0.0
>>> p = Point(1.0)
>>> p, p == Point(1.0, 0.0), hash(p) == hash(Point(1.0))
(Point(x=1.0, y=0.0), True, True)
>>> p.x = 2.0
Traceback (most recent call last):
...
dataclasses.FrozenInstanceError: cannot assign to field 'x'
>>> dataclasses.replace(p, y=3.0)
Point(x=1.0, y=3.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["frozen"]

_T = TypeVar("_T", bound=type)


def _setattr(self: Any, name: str, value: Any) -> None:
    # the generated __init__ sets each field once; nothing may be assigned afterwards
    if name in self.__dict__ or name not in self.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _repr(self: Any) -> str:
    body = ", ".join(
        f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr
    )
    return f"{type(self).__qualname__}({body})"


def _compared(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.compare)


def _eq(self: Any, other: object) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _compared(self) == _compared(other)


def _hash(self: Any) -> int:
    hashed = (f for f in dataclasses.fields(self) if (f.compare if f.hash is None else f.hash))
    return hash(tuple(getattr(self, f.name) for f in hashed))


@overload
def frozen(cls: _T, /) -> _T: ...
@overload
def frozen(*, eq: bool = True) -> Callable[[_T], _T]: ...


@dataclass_transform(frozen_default=True, eq_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: _T | None = None, /, *, eq: bool = True) -> _T | Callable[[_T], _T]:
    """Make ``cls`` a frozen dataclass (see the module docstring).

    Parameters
    ----------
    cls : type
        The class, when used as ``@frozen``.
    eq : bool
        ``==`` and ``hash`` by field values (True) or by identity (False).

    Returns
    -------
    type or callable
        ``cls`` (``@frozen``) or the decorator (``@frozen(eq=False)``).
    """

    def build(cls: _T) -> _T:
        own = set(cls.__dict__)  # methods the class defines itself are kept, as dataclass does
        dataclasses.dataclass(repr=False, eq=False)(cls)  # fields and __init__, in place
        methods: dict[str, Any] = {"__setattr__": _setattr, "__delattr__": _delattr}
        methods["__repr__"] = _repr
        if eq and "__eq__" not in own:
            methods.update(__eq__=_eq, __hash__=_hash)
        for name, method in methods.items():
            if name not in own:
                setattr(cls, name, method)
        return cls

    return build if cls is None else build(cls)
