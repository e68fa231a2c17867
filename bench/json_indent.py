"""``json.dumps(value, indent=2, ensure_ascii=False)``, byte for byte, several times faster.

With ``indent`` set, the standard library writes JSON with its pure-Python encoder (a generator per container,
a call per value); a site build writes every record whose text redaction changed this way. :func:`dumps_indent2`
writes the same text with one join per container and, for a list of numbers (a record's samples), one join over
``float.__repr__``/``int.__repr__`` (what the encoder calls for them). Strings go through the encoder's own
``encode_basestring`` (C). Anything the fast path does not know exactly (a key that is not a ``str``, a value
that is not exactly a dict, list, str, int, float, bool or None) is handed to :func:`json.dumps` as a whole, so
the result is always what it writes; ``tests/test_json_indent.py`` checks that on generated trees.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring  # the C function where available
from typing import Any

__all__ = ["dumps_indent2"]


class _Unknown(Exception):
    """A value the fast path does not write exactly as json does: the whole tree goes to json.dumps."""


def _float(x: float) -> str:
    if x != x:
        return "NaN"
    if x == math.inf:
        return "Infinity"
    if x == -math.inf:
        return "-Infinity"
    return float.__repr__(x)


_FLOAT, _INT, _STR = frozenset({float}), frozenset({int}), frozenset({str})


def _write(value: Any, out: list[str], nl: str) -> None:
    """Append ``value`` at the indentation whose newline-and-indent is ``nl``."""
    t = type(value)
    if t is str:
        out.append(encode_basestring(value))
    elif t is dict:
        if not value:
            out.append("{}")
            return
        inner = nl + "  "
        sep = "," + inner
        out.append("{" + inner)
        first = True
        for k, v in value.items():
            if type(k) is not str:
                raise _Unknown
            if first:
                first = False
            else:
                out.append(sep)
            out.append(encode_basestring(k))
            out.append(": ")
            tv = type(v)
            if tv is str:
                out.append(encode_basestring(v))
            elif tv is float:
                out.append(float.__repr__(v) if v - v == 0 else _float(v))  # finite: what _float returns
            elif tv is int:
                out.append(int.__repr__(v))
            else:
                _write(v, out, inner)
        out.append(nl + "}")
    elif t is list or t is tuple:
        if not value:
            out.append("[]")
            return
        inner = nl + "  "
        sep = "," + inner
        out.append("[" + inner)
        types = set(map(type, value))  # C loops below: a record's samples are thousands of numbers
        if types == _FLOAT:
            out.append(sep.join(map(float.__repr__ if all(map(math.isfinite, value)) else _float, value)))
        elif types == _INT:
            out.append(sep.join(map(int.__repr__, value)))
        elif types == _STR:
            out.append(sep.join(map(encode_basestring, value)))
        else:
            first = True
            for v in value:
                if first:
                    first = False
                else:
                    out.append(sep)
                _write(v, out, inner)
        out.append(nl + "]")
    elif t is float:
        out.append(_float(value))
    elif t is int:
        out.append(int.__repr__(value))
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    else:
        raise _Unknown


def _key_sorted(value: Any) -> Any:
    """``value`` with the keys of every dict in it in sorted order (what ``sort_keys`` writes); a dict with a key
    that is not a ``str`` is left to json whole."""
    t = type(value)
    if t is dict:
        if any(type(k) is not str for k in value):
            raise _Unknown
        return {k: _key_sorted(value[k]) for k in sorted(value)}
    if t is list or t is tuple:
        return [_key_sorted(v) for v in value]
    return value


def dumps_indent2(value: Any, *, sort_keys: bool = False) -> str:
    """Exactly ``json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys)``."""
    out: list[str] = []
    try:
        _write(_key_sorted(value) if sort_keys else value, out, "\n")
    except (_Unknown, RecursionError):
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys)
    return "".join(out)
