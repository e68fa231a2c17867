"""Which files a function was asked for: a test replaces a module's function by a wrapper that notes each call's
path (its first argument) and calls the real one."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Patcher", "note_paths"]


class Patcher(Protocol):
    """What ``note_paths`` needs of ``pytest.MonkeyPatch`` (it restores the function when the test ends)."""

    def setattr(self, target: object, name: str, value: object) -> None: ...


def note_paths(patcher: Patcher, owner: object, name: str) -> list[str]:
    """Replace ``owner.name`` (a function whose first argument is a path) through ``patcher`` by one that appends the
    path's file name to the returned list, then calls the real function."""
    seen: list[str] = []
    real: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(real)
    def noted(path: Path, *args: Any, **kwargs: Any) -> Any:
        seen.append(path.name)
        return real(path, *args, **kwargs)

    patcher.setattr(owner, name, noted)
    return seen
