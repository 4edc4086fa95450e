"""Fixtures shared by the reconciler unit tests: `computed`, the placements `place` ran for."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reconciler import placememo


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The keys `place` actually ran for (not reused), in order."""
    calls: list[str] = []
    real = placememo.place  # type: ignore[attr-defined]

    def counting(key: str, *args: object) -> object:
        calls.append(key)
        return real(key, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(placememo, "place", counting)
    placememo.forget()
    yield calls
    placememo.forget()
