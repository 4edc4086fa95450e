"""`reconciler.once.OnceProperty`: computed on the first read only, kept in the instance's
`__dict__` (frozen dataclasses too), invisible to equality and hashing, its docstring kept."""

from __future__ import annotations

from dataclasses import dataclass, field

from reconciler.once import OnceProperty
from reconciler.rollout.model import BindingView
from reconciler.state import BindingCondition


@dataclass(frozen=True)
class _Value:
    n: int
    calls: list[int] = field(default_factory=list, compare=False, hash=False)

    @OnceProperty
    def double(self) -> int:
        """Twice `n`."""
        self.calls.append(self.n)
        return 2 * self.n


def test_it_is_computed_once_per_instance_and_kept_in_its_dict() -> None:
    a, b = _Value(3), _Value(3)
    assert (a.double, a.double, b.double) == (6, 6, 6)
    assert a.calls == [3] and b.calls == [3]
    assert a.__dict__["double"] == 6
    assert a == b and hash(a) == hash(b)  # the kept value is no field


def test_the_class_attribute_is_the_descriptor_with_its_doc() -> None:
    descriptor = _Value.__dict__["double"]
    assert isinstance(descriptor, OnceProperty)
    assert _Value.double is descriptor and descriptor.__doc__ == "Twice `n`."


def test_binding_view_facts_read_as_before() -> None:
    failed = BindingCondition("Applied", "False", "ApplyFailed")
    available = BindingCondition("Available", "True", "AllWorkAreAvailable")
    view = BindingView("c", "Bound", content="h", desired_content="h", conditions=(failed,))
    assert view.failed and not view.diff_reported and view.up_to_date
    assert view.readiness == (False, None)
    ready = BindingView("c", "Bound", content="h", desired_content="x", conditions=(available,))
    assert not ready.failed and ready.readiness == (True, None) and not ready.up_to_date
