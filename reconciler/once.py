"""`OnceProperty`: a property computed on its first read and kept in the instance's `__dict__`,
as `functools.cached_property` does, without the lock Python 3.11's takes on every first read
(one lock for the class: ~0.9 µs more a first read, and every thread waits on it). A frozen value's
property is a function of the value alone, so two threads that both compute it get equal
values; a property whose value other code fills in (a shared memo dict) keeps
`cached_property`. After the first read the instance's own attribute hides the descriptor (it
defines no `__set__`), so later reads cost a plain attribute lookup. Used by the pass's most
read values: `reconciler.rollout.model.BindingView`, `reconciler.manifestbytes.Manifest`,
`reconciler.nametemplate.NameTemplate`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class OnceProperty(Generic[T]):
    """Decorate a method of a class whose instances have a `__dict__` (frozen dataclasses
    too: the value is put in the dict, not set as an attribute)."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> OnceProperty[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> OnceProperty[T] | T:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.name] = value
        return value
