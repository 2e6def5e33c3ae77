"""``@frozen``: frozen dataclasses that cost little to define (private).

``@dataclass(frozen=True)`` compiles five or six methods from generated source for every
class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``):
about 5 million instructions a class on Python 3.11, more than all the rest of ``import
ioukit`` (#9: a fresh process evaluating 20 images defines 18 of them). ``@frozen`` lets
:func:`dataclasses.dataclass` collect the fields only and gives every record the same plain
methods, written once here:

* ``__init__`` takes the fields' values as the generated one does (positionally or by keyword,
  defaults, ``default_factory``, ``init=False`` fields, ``__post_init__``; the same
  ``TypeError`` messages) and sets them with ``object.__setattr__``; the class's
  ``__signature__`` is the generated one's (built on first use);
* assigning or deleting an attribute raises :class:`dataclasses.FrozenInstanceError`
  (``__post_init__`` and :class:`functools.cached_property` write with ``object.__setattr__``
  / the instance dict, as on a frozen dataclass);
* ``repr`` is the dataclass ``repr`` (fields with ``repr=True``);
* with ``eq=True`` (default), ``==`` compares the ``compare=True`` fields as a tuple, and the
  hash is that tuple's, as a frozen dataclass's; ``eq=False`` keeps identity for both.

Methods the class defines itself are kept. The result is a dataclass:
:func:`dataclasses.fields`, :func:`dataclasses.replace`, :func:`dataclasses.asdict`, pickling
and copying work as on ``@dataclass(frozen=True)``, and type checkers read it as one
(:func:`typing.dataclass_transform`). ``tests/test_frozen.py`` runs both side by side.

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
>>> import inspect; inspect.signature(Point)
<Signature (x: 'float', y: 'float' = 0.0) -> None>
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["frozen"]

_T = TypeVar("_T", bound=type)
_MISSING = dataclasses.MISSING


def _make_init(cls: type) -> Callable[..., None]:
    """``cls.__init__`` as :func:`dataclasses.dataclass` would generate it, without source."""
    fields = dataclasses.fields(cls)
    params = tuple(f.name for f in fields if f.init)
    position = {name: i for i, name in enumerate(params)}
    # (name, constant default or _MISSING, factory or None) in field order
    plan = tuple(
        (f.name, f.default, None if f.default_factory is _MISSING else f.default_factory, f.init)
        for f in fields
    )
    post_init = hasattr(cls, "__post_init__")
    title = f"{cls.__qualname__}.__init__()"
    setter = object.__setattr__

    def init(self: Any, /, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(params):
            raise TypeError(
                f"{title} takes {len(params) + 1} positional arguments but "
                f"{len(args) + 1} were given"
            )
        for key in kwargs:
            if key not in position:
                raise TypeError(f"{title} got an unexpected keyword argument {key!r}")
            if position[key] < len(args):
                raise TypeError(f"{title} got multiple values for argument {key!r}")
        missing = []
        for name, default, factory, init in plan:
            if init and position[name] < len(args):
                value = args[position[name]]
            elif init and name in kwargs:
                value = kwargs[name]
            elif factory is not None:
                value = factory()
            elif default is not _MISSING:
                value = default
            elif init:
                missing.append(repr(name))
                continue
            else:
                continue  # init=False without a default: __post_init__ sets it
            setter(self, name, value)
        if missing:
            raise TypeError(f"{title} missing {_count(missing)}")
        if post_init:
            self.__post_init__()

    init.__name__ = "__init__"
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _count(names: list[str]) -> str:
    # CPython's wording: "1 required positional argument: 'a'", "2 ...: 'a' and 'b'",
    # "3 ...: 'a', 'b', and 'c'"
    if len(names) == 1:
        return f"1 required positional argument: {names[0]}"
    listed = (
        " and ".join(names) if len(names) == 2 else ", ".join(names[:-1]) + ", and " + names[-1]
    )
    return f"{len(names)} required positional arguments: {listed}"


class _Signature:
    # the class's __signature__, built on first use (inspect.signature reads it)
    def __get__(self, instance: object, owner: type) -> Any:
        import inspect

        fields = [f for f in dataclasses.fields(owner) if f.init]
        parameters = [
            inspect.Parameter(
                f.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=(
                    f.default
                    if f.default is not _MISSING
                    else inspect.Parameter.empty
                    if f.default_factory is _MISSING
                    else _FactoryDefault(f.default_factory)
                ),
                annotation=f.type,
            )
            for f in fields
        ]
        return inspect.Signature(parameters, return_annotation=None)


class _FactoryDefault:
    # how the generated __init__'s signature shows a default_factory
    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory

    def __repr__(self) -> str:
        return "<factory>"


def _setattr(self: Any, name: str, value: Any) -> None:
    if "__dataclass_fields__" in type(self).__dict__ or name in self.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)  # a plain subclass's own attribute


def _delattr(self: Any, name: str) -> None:
    if "__dataclass_fields__" in type(self).__dict__ or name in self.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = (f for f in dataclasses.fields(self) if f.repr)
    body = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in shown)
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

    Raises
    ------
    TypeError
        A field without a default follows one with a default (as ``dataclass`` says).
    """

    def build(cls: _T) -> _T:
        own = set(cls.__dict__)  # methods the class defines itself are kept, as dataclass does
        dataclasses.dataclass(init=False, repr=False, eq=False)(cls)  # collects the fields
        regular = {f.name for f in dataclasses.fields(cls)}
        for name, f in cls.__dataclass_fields__.items():  # type: ignore[attr-defined]
            if name not in regular and "InitVar" in str(f.type):
                raise TypeError(f"{name}: InitVar fields are not supported by @frozen")
        seen_default = False
        for f in dataclasses.fields(cls):
            if f.kw_only:
                raise TypeError(f"{f.name}: keyword-only fields are not supported by @frozen")
            if not f.init:
                continue
            has_default = f.default is not _MISSING or f.default_factory is not _MISSING
            if seen_default and not has_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            seen_default = seen_default or has_default
        methods: dict[str, Any] = {
            "__init__": _make_init(cls),
            "__signature__": _Signature(),
            "__setattr__": _setattr,
            "__delattr__": _delattr,
            "__repr__": _repr,
        }
        if eq and "__eq__" not in own:
            methods.update(__eq__=_eq, __hash__=_hash)
        for name, method in methods.items():
            if name not in own:
                setattr(cls, name, method)
        return cls

    return build if cls is None else build(cls)
