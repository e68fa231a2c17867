"""Every regular expression benchbook compiles at import time matches alike on every Python it supports (>= 3.11).

Python 3.11.0 to 3.11.4 match possessive quantifiers (``x*+``, ``x++``, ``x?+``, ``x{m,n}+``) wrongly where what
they repeat can backtrack (CPython gh-106052, fixed in 3.11.5): on Debian 12's Python 3.11.2, the offline check's
fast scan missed ``style="background:url(//x)"``. An atomic group (``(?>x*)``) means the same and matches alike
on every version; so no possessive quantifier is used."""

from __future__ import annotations

import importlib
import pkgutil
import re
from re import _constants as constants  # type: ignore[attr-defined]
from re import _parser as parser  # type: ignore[attr-defined]
from typing import Any

import pytest

import bench


def _patterns() -> list[tuple[str, re.Pattern[Any]]]:
    """Every compiled pattern held by a module of the ``bench`` package (its globals, and tuples of them)."""
    found: list[tuple[str, re.Pattern[Any]]] = []
    for info in pkgutil.walk_packages(bench.__path__, "bench."):
        if info.name.endswith(".__main__"):  # runs a command when imported
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (the GPU's sglang) that is not installed here
            continue
        for name, value in vars(module).items():
            for item in value if isinstance(value, tuple) else (value,):
                if isinstance(item, re.Pattern):
                    found.append((f"{info.name}.{name}", item))
    return found


def _possessive(tree: Any) -> bool:
    """Whether a parsed pattern holds a possessive repeat anywhere."""
    for op, av in tree:
        if op is constants.POSSESSIVE_REPEAT:
            return True
        for arg in av if isinstance(av, tuple | list) else (av,):
            if isinstance(arg, parser.SubPattern) and _possessive(arg):
                return True
            if isinstance(arg, tuple | list) and any(isinstance(a, parser.SubPattern) and _possessive(a) for a in arg):
                return True
    return False


def test_the_walk_finds_a_possessive_quantifier() -> None:
    assert _possessive(parser.parse(r"(?:a|b(?:c[^d]*+)?)"))
    assert _possessive(parser.parse(r"x{2,3}+"))
    assert not _possessive(parser.parse(r"(?>[^d]*)(?:a|b)"))


@pytest.mark.parametrize("where, pattern", _patterns(), ids=lambda x: x if isinstance(x, str) else "")
def test_no_pattern_uses_a_possessive_quantifier(where: str, pattern: re.Pattern[Any]) -> None:
    assert not _possessive(parser.parse(pattern.pattern, pattern.flags)), f"{where}: use (?>x*) for x*+"
