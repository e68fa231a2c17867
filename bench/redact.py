"""Redaction: the one place that decides what a secret looks like and hides it.

Every string that enters a record, a log excerpt, a terminal line, a PR report or a page passes through this
module (``redact_text`` for free text, ``redact_value`` for a named value or a JSON-like tree, ``redact_argv``
for a command line), and ``bench check`` uses ``find_secrets`` to refuse a record that still holds one. What
counts as secret:

* **names** (of variables, flags, JSON keys, query parameters) made of a secret word: KEY, TOKEN, SECRET, PASS
  (PASSWORD, PASSWD, PASSPHRASE), COOKIE, SESSION, BEARER, AUTH (AUTHORIZATION), CREDENTIAL(S), PRIVATE, SIG
  (SIGNATURE); a count such as ``max_tokens`` is not a name of a secret;
* **shapes** of keys and tokens: Hugging Face ``hf_``, OpenAI/Anthropic ``sk-``, Stripe ``sk_live_``/``rk_test_``,
  AWS ``AKIA``/``ASIA``, GitHub ``ghp_``/``github_pat_``, GitLab ``glpat-``, Slack ``xox?-``, Google ``ya29.``
  and ``AIza``, JWTs, ``Bearer``/``Basic`` credentials, PEM private-key blocks;
* **URL user-info** (``scheme://user:pw@host``, ``redis://:pw@host``) and **secret query parameters**
  (``?access_token=``, ``sig=``, ``X-Amz-Signature=``...);
* ``NAME=value`` / ``"name": "value"`` pairs and ``--flag value`` in a command line whose name is secret;
* **long random strings** (base64-like with high entropy, or 32+ hex digits that are not a sha1/sha256 digest).

Redaction keeps the surrounding text: ``https://<redacted>@host/path``, ``access_token=<redacted>``.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "REDACTED",
    "find_secrets",
    "looks_like_secret",
    "redact_argv",
    "redact_text",
    "redact_tree",
    "redact_value",
    "secret_name",
]

REDACTED = "<redacted>"

# ---------------------------------------------------------------------------------------------------------------------
# Names

_SECRET_WORDS = frozenset(
    {
        "KEY",
        "KEYS",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "SECRETS",
        "PASS",
        "PASSWD",
        "PASSWORD",
        "PASSWORDS",
        "PASSPHRASE",
        "PWD",
        "COOKIE",
        "COOKIES",
        "SESSION",
        "SESSIONID",
        "BEARER",
        "AUTH",
        "AUTHORIZATION",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "PRIVATE",
        "SIG",
        "SIGNATURE",
    }
)
# Glued words (``accesstoken``, ``hfpassword``) end in one of these.
_SECRET_SUFFIXES = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "COOKIE", "CREDENTIALS")
# Parts that contain a secret word but name something else.
_NOT_SECRET_PARTS = frozenset({"TOKENIZER", "TOKENIZERS", "TOKENS", "KEYBOARD", "PASSTHROUGH", "BYPASS"})
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def secret_name(name: str) -> bool:
    """True when ``name`` (a variable, flag, JSON key or query parameter) names a secret.

    >>> [secret_name(n) for n in ("HF_TOKEN", "--api-key", "secretKey", "max_tokens", "TOKENIZERS_PARALLELISM")]
    [True, True, True, False, False]
    """
    return _secret_name_short(name) if len(name) <= _SHORT else _secret_name(name)


@functools.lru_cache(maxsize=1 << 14)
def _secret_name_short(name: str) -> bool:  # a record's keys (p50, mean, formula) are asked about thousands of times
    return _secret_name(name)


def _secret_name(name: str) -> bool:
    parts = [p.upper() for p in _NAME_PARTS.findall(name)]
    if parts in (["KEY"], ["KEYS"]):  # a bare "key" names a level, a sort or a map entry; "api_key" is a secret
        return False
    for part in parts:
        if part in _NOT_SECRET_PARTS:
            continue
        if part in _SECRET_WORDS or (len(part) > 4 and part.endswith(_SECRET_SUFFIXES)):
            return True
    return False


# ---------------------------------------------------------------------------------------------------------------------
# Shapes inside text

_B = r"(?<![A-Za-z0-9_\-])"  # not preceded by a word character: a shape starts a token
_KEY_SHAPES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        _B + r"hf_[A-Za-z0-9]{8,}",
        _B + r"sk-[A-Za-z0-9_\-]{8,}",
        _B + r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}",
        _B + r"(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{12,}",
        _B + r"gh[pousr]_[A-Za-z0-9]{8,}",
        _B + r"github_pat_[A-Za-z0-9_]{8,}",
        _B + r"glpat-[A-Za-z0-9_\-]{8,}",
        _B + r"xox[abprse]-[A-Za-z0-9\-]{4,}",
        _B + r"ya29\.[A-Za-z0-9_\-.]{8,}",
        _B + r"AIza[0-9A-Za-z_\-]{20,}",
        _B + r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}(?:\.[A-Za-z0-9_\-]+)?",
        _B + r"npm_[A-Za-z0-9]{20,}",
        _B + r"tok_[A-Za-z0-9_\-]{6,}",
    )
)
# What every match of each shape above holds (its step is skipped for a text that holds none of them).
_SHAPE_NEEDLES: tuple[tuple[str, ...], ...] = (
    ("hf_",),
    ("sk-",),
    ("_live_", "_test_"),
    ("AKIA", "ASIA", "AGPA", "AIDA", "AROA"),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ("github_pat_",),
    ("glpat-",),
    ("xox",),
    ("ya29.",),
    ("AIza",),
    ("eyJ",),
    ("npm_",),
    ("tok_",),
)
_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL
)
_AUTH_SCHEME = re.compile(r"\b(Bearer|Basic|Token|Digest)(\s+)((?!-)[A-Za-z0-9._~+/\-]{6,}=*)", re.IGNORECASE)
# after an Authorization header name every credential is secret, whatever it looks like
_AUTH_HEADER = re.compile(
    r"""\b((?:Proxy-)?Authorization["']?\s*[:=]\s*["']?)((?:Bearer|Basic|Token|Digest)\s+)?([^\s"',;]+)""",
    re.IGNORECASE,
)
_CREDENTIAL_MARK = re.compile(r"[0-9._~+/=\-]|.[A-Z]")
# scheme://user:pw@ , scheme://:pw@ , scheme://token@ (user-info of any kind)
_URL_USERINFO = re.compile(r"(?<![A-Za-z0-9+.\-])([A-Za-z][A-Za-z0-9+.\-]*://)([^/\s@?#]*@)")
_QUERY_PARAM = re.compile(r"([?&;])([A-Za-z0-9_.\-]+)=([^&#\s\"'<>]*)")
# NAME=value, NAME: value, "name": "value", --name=value (the name decides; an unquoted value runs to the end of
# the line or the next , ; } ], since a passphrase may hold spaces). A name, a scheme and a flag start only
# where a word starts (the look-behinds), so a long run of word characters is scanned once, not once per position.
_PAIR_HEAD = re.compile(
    r"""(?<![A-Za-z0-9_.\-])(?P<name>-{0,2}[A-Za-z_][A-Za-z0-9_.\-]*)(?P<q1>["'])?(?P<sep>\s*[=:]\s*)(?P<q2>["'])?"""
)
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NO_VALUE = frozenset({"null", "None", "true", "false", "True", "False", "~"})
_QUOTED_VALUE = re.compile(r"""[^"'\n]*""")
_LINE_VALUE = re.compile(r"""[^\s,;"'}\]](?:[^\n,;"'}\]]*[^\s,;"'}\]])?""")
# a command line inside text: ``--api-key VALUE`` (the flag's name decides; a following flag is not a value)
_FLAG_PAIR = re.compile(r"""(?<![\w\-])(?P<flag>--?[A-Za-z][A-Za-z0-9_.\-]*)(?P<sp>[ \t]+)(?P<value>(?!-)[^\s"',;]+)""")
_BASE64ISH = re.compile(r"^[A-Za-z0-9+/_\-]+={0,2}$")
_HEX = re.compile(r"^[0-9a-fA-F]{32,}$")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_DIGEST_LENGTHS = (40, 64)  # sha1 (git commits) and sha256: hashes, not secrets


def _entropy(s: str) -> float:
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_SEGMENT_SPLIT = re.compile(r"[-_.]+")
# A UTC time in ISO basic format (``20261130T231000Z``, as record ids start): a clock reading, not randomness.
_UTC_STAMP = re.compile(r"[0-9]{8}T[0-9]{6}Z?")


def _random_segment(seg: str) -> bool:
    seg = _UTC_STAMP.sub("", seg)
    if len(seg) < 20 or not _BASE64ISH.match(seg):
        return False
    classes = sum((any(c.islower() for c in seg), any(c.isupper() for c in seg), any(c.isdigit() for c in seg)))
    if classes < 2:
        return False
    runs = _ALNUM_RUN.findall(seg)
    mean_run = sum(len(r) for r in runs) / len(runs)
    return mean_run >= 10 and _entropy(seg) >= 3.8


def _random_token(tok: str) -> bool:
    return _random_token_short(tok) if len(tok) <= _SHORT else _is_random_token(tok)


@functools.lru_cache(maxsize=1 << 14)
def _random_token_short(tok: str) -> bool:  # a payload's keys (``chunked_prefill_size``) recur in every record
    return _is_random_token(tok)


def _is_random_token(tok: str) -> bool:
    """A long random-looking string: 32+ hex digits (not a sha1/sha256 digest), or a part of the token between
    ``-``/``_``/``.`` separators of 20+ base64 characters mixing letter cases or digits, with long alphanumeric
    runs and high entropy. Names made of words (``Meta-Llama-3.1-8B-Instruct``), timestamps and record ids
    (``20261130T234109Z-baseline-db2789a``) and paths are made of short parts; a random key is not."""
    if _HEX.match(tok):
        return len(tok) not in _DIGEST_LENGTHS
    return any(_random_segment(seg) for seg in _SEGMENT_SPLIT.split(tok))


def _pairs(text: str) -> str:
    """Hide the value of every pair whose name is secret. Only a secret name's value is consumed (to the end of
    its line), so the pairs after an ordinary one (``port=8000 api_key=x``) are still read."""
    out: list[str] = []
    pos = 0
    for m in _PAIR_HEAD.finditer(text):
        if m.start() < pos or not secret_name(m.group("name")):
            continue
        value = (_QUOTED_VALUE if m.group("q2") else _LINE_VALUE).match(text, m.end())
        if value is None or not value.group(0) or value.group(0).startswith(REDACTED):  # hidden already
            continue
        if not m.group("q2") and (
            value.group(0) in _NO_VALUE  # ``"api_key": null`` states no secret (and the text stays JSON)
            or (_NUMBER.fullmatch(value.group(0)) and not _names_a_number_secret(m.group("name")))
        ):  # a number is hidden only under a name that ends in a secret word, as in redact_value
            continue
        out += [text[pos : m.end()], REDACTED]
        pos = value.end()
    out.append(text[pos:])
    return "".join(out)


def _flag_pair(m: re.Match[str]) -> str:
    if not secret_name(m.group("flag")) or m.group("value") == REDACTED:
        return m.group(0)
    return f"{m.group('flag')}{m.group('sp')}{REDACTED}"


def _query(m: re.Match[str]) -> str:
    if secret_name(m.group(2)) and m.group(3) and m.group(3) != REDACTED:
        return f"{m.group(1)}{m.group(2)}={REDACTED}"
    return m.group(0)


def _auth_header(m: re.Match[str]) -> str:
    if m.group(3) == REDACTED:
        return m.group(0)
    return f"{m.group(1)}{m.group(2) or ''}{REDACTED}"


def _auth_scheme(m: re.Match[str]) -> str:
    """``Bearer X``/``Basic X``/``Token X``: hidden when X looks like a credential (a digit, a symbol or a capital
    inside it), so that prose such as "output token counts" or "basic settings" is kept."""
    if m.group(3) == REDACTED or not _CREDENTIAL_MARK.search(m.group(3)):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{REDACTED}"


# A token: a run of these characters. ``_random_token`` needs 20 or more of them, so shorter runs are not looked at;
# the look-behind starts a match only where a run starts, so each run is scanned once.
_TOKEN_CHARS = r"[^\s,;=\"'`()\[\]{}<>|@?&:]"
_LONG_TOKEN = re.compile(rf"(?<!{_TOKEN_CHARS}){_TOKEN_CHARS}{{20,}}")


def _random_tokens(text: str) -> str:
    out: list[str] = []
    pos = 0
    for m in _LONG_TOKEN.finditer(text):
        tok = m.group(0)
        core = tok.strip(".")
        if _random_token(core):
            out.append(text[pos : m.start()])
            out.append(tok.replace(core, REDACTED))
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _userinfo(text: str) -> str:
    return _URL_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)


def _shape(pattern: re.Pattern[str]) -> Callable[[str], str]:
    return lambda text: pattern.sub(REDACTED, text)


@dataclass(frozen=True)
class _Stage:
    """One step of :func:`_redact`, skipped for a text that holds none of ``needles``: every change the step makes
    is at a match of its pattern that holds one of them (``tests/test_redact_memo.py`` checks that the skipping
    changes nothing). ``fold``: the (lower-case) needles are looked for in the lower-cased text."""

    apply: Callable[[str], str]
    needles: tuple[str, ...]
    fold: bool = False


# The characters that Python's re, ignoring case, matches to an ASCII letter although they are not ASCII (dotted
# and dotless i, long s, the Kelvin sign): a case-folded needle never skips a text that holds one.
_FOLDS_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")

# What every secret name holds, lower-cased (a secret word, or a glued name's secret suffix; a word that holds another,
# such as "password", left out): the steps that hide only the value of a secret name are skipped for a text that
# holds none of these.
_SECRET_PARTS = frozenset(x.lower() for x in (*_SECRET_WORDS, *_SECRET_SUFFIXES))
_SECRET_NEEDLES = tuple(sorted(w for w in _SECRET_PARTS if not any(v != w and v in w for v in _SECRET_PARTS)))

_STAGES: tuple[_Stage, ...] = (
    _Stage(lambda text: _PEM.sub("<redacted private key>", text), ("-----BEGIN ",)),
    _Stage(_userinfo, ("://",)),
    _Stage(lambda text: _QUERY_PARAM.sub(_query, text), _SECRET_NEEDLES, fold=True),
    _Stage(lambda text: _AUTH_HEADER.sub(_auth_header, text), ("authorization",), fold=True),
    _Stage(lambda text: _AUTH_SCHEME.sub(_auth_scheme, text), ("bearer", "basic", "token", "digest"), fold=True),
    *(_Stage(_shape(shape), needles) for shape, needles in zip(_KEY_SHAPES, _SHAPE_NEEDLES, strict=True)),
    _Stage(_pairs, _SECRET_NEEDLES, fold=True),
    _Stage(lambda text: _FLAG_PAIR.sub(_flag_pair, text), _SECRET_NEEDLES, fold=True),
    _Stage(_random_tokens, ("",)),  # every text: _LONG_TOKEN finds what could be random
)


# Every needle of every step but the last, lower-cased, as one pattern. A text whose lower-cased form holds none of
# them and that holds no character folding to an ASCII letter is one that only the last step (random tokens, which
# looks at every text) could change: found with one search instead of a look for every needle of every step. Most
# texts of a page hold no secret and are new to the memo (a figure, a cell, a record id).
_ANY_NEEDLE = re.compile("|".join(sorted({re.escape(n.lower()) for stage in _STAGES[:-1] for n in stage.needles})))


def _needle_free(text: str) -> bool:
    """Whether no step of :func:`_redact` but the last could change ``text``. A needle found in the text is found in
    its lower-cased form too: the needles are ASCII."""
    return _ANY_NEEDLE.search(text.lower()) is None and (text.isascii() or _FOLDS_TO_ASCII.search(text) is None)


def _applies(stage: _Stage, text: str, lower: str) -> bool:
    if not stage.fold:
        return any(n in text for n in stage.needles)
    if not text.isascii() and _FOLDS_TO_ASCII.search(text):
        return True
    return any(n in lower for n in stage.needles)


def redact_text(text: str) -> str:
    """``text`` with every secret inside it replaced by ``<redacted>`` (the rest of the text kept)."""
    if not text:
        return text
    n = len(text)
    if n <= _SHORT:
        return _redact_short(text)
    if n <= _MEDIUM:
        return _redact_medium(text)
    return _redact_long(text) if n <= _CACHED_LENGTH else _redact(text)


# The same strings (field names, engine, model and GPU names, variants, flags, a page's cells, an engine's payload
# shown on every record page it came with) pass through here thousands of times per site build, and every rule above
# is a constant of this module: the result depends on the text alone, so it is remembered, keyed by the text: at
# most 65,536 texts of at most 200 characters, 1,024 of at most 4,096 and 16 of at most 262,144 (tens of MB at
# worst); longer texts are redacted every time.
_SHORT = 200
_MEDIUM = 4096
_CACHED_LENGTH = 1 << 18


@functools.lru_cache(maxsize=1 << 16)
def _redact_short(text: str) -> str:
    return _redact(text)


@functools.lru_cache(maxsize=1 << 10)
def _redact_medium(text: str) -> str:
    return _redact(text)


@functools.lru_cache(maxsize=16)
def _redact_long(text: str) -> str:
    return _redact(text)


def _redact(text: str) -> str:
    if _needle_free(text):
        return _random_tokens(text)  # the last step (_STAGES), the only one that could change it
    out = text
    lower = ""
    for stage in _STAGES:
        if stage.fold and not lower:
            lower = out.lower()
        if _applies(stage, out, lower):
            changed = stage.apply(out)
            if changed != out:
                out, lower = changed, ""
    return out


def looks_like_secret(text: str) -> bool:
    """True when ``text`` holds anything :func:`redact_text` would hide."""
    return redact_text(text) != text


# ---------------------------------------------------------------------------------------------------------------------
# Named values, trees and command lines


def _names_a_number_secret(name: str) -> bool:
    """A number is a secret only under a name that ends in a secret word (``api_key: 1234``, ``PIN_PASSWORD``);
    ``token_events_per_s`` or ``session_count`` name a figure about tokens or sessions, not a secret."""
    parts = _NAME_PARTS.findall(name)
    last = parts[-1].upper() if parts else ""
    return last not in _NOT_SECRET_PARTS and (
        last in _SECRET_WORDS or (len(last) > 4 and last.endswith(_SECRET_SUFFIXES))
    )


_PLAIN = frozenset({int, float, bool, type(None)})  # values that redact_value("", v) returns unchanged


def redact_value(name: str, value: Any) -> Any:
    """A copy of ``value`` fit to record under ``name``: the whole value hidden when the name is secret (and the
    value not empty; a number only when the name ends in the secret word), else every string inside it passed
    through :func:`redact_text`, keys of mappings deciding for their values in turn, and a list of strings read
    as a command line (:func:`redact_argv`: the value after ``--api-key`` is hidden)."""
    if type(value) is float or type(value) is int:  # most of a record's leaves: hidden only under a secret name
        return REDACTED if name and secret_name(name) and _names_a_number_secret(name) else value
    hidden = name and value not in (None, "", [], {}) and not isinstance(value, bool) and secret_name(name)
    if hidden and (not isinstance(value, int | float) or _names_a_number_secret(name)):
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {redact_text(str(k)): redact_value(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if all(type(v) in _PLAIN for v in value):  # numbers (a record's samples): nothing to hide, nothing to copy
            return list(value)
        if all(isinstance(v, str) for v in value):
            return redact_argv(value)
        return [redact_value("", v) for v in value]
    return value


def redact_tree(value: Any) -> Any:
    """Exactly ``redact_value("", value)``, faster for a JSON tree (a record as parsed or dumped): the same rules,
    dispatched on the exact type of each value with what is asked of every key (``secret_name``, and whether a
    number under it is hidden) remembered by key; any value that is not exactly a dict, list, str, int, float, bool
    or None (a tuple, a subclass) goes to :func:`redact_value` itself. ``tests/test_redact_tree.py`` checks that
    the two agree."""
    return _tree("", value)


def _hides(name: str) -> bool:
    """Whether ``redact_value(name, <a number>)`` hides it."""
    return bool(name) and secret_name(name) and _names_a_number_secret(name)


def _key_facts(key: str) -> tuple[str, bool, bool]:
    """(the key redacted, whether a number under it is hidden, whether it names a secret): what redact_value asks
    of every key of a mapping, a pure function of the key."""
    return _key_facts_short(key) if len(key) <= _SHORT else (redact_text(key), _hides(key), secret_name(key))


@functools.lru_cache(maxsize=1 << 16)
def _key_facts_short(key: str) -> tuple[str, bool, bool]:
    return redact_text(key), _hides(key), bool(key) and secret_name(key)


_KEYS_REMEMBERED = 64  # the keys of a mapping of at most this many, all strings, are looked up together


@functools.lru_cache(maxsize=1 << 12)
def _dict_facts(keys: tuple[str, ...]) -> tuple[bool, tuple[tuple[str, bool, bool], ...]]:
    """:func:`_key_facts` of each key (all strings), and whether every key is kept as it is (not redacted, no secret
    name, no number hidden under it)."""
    facts = tuple(map(_key_facts, keys))
    kept = all(text == key and not hides and not secret for key, (text, hides, secret) in zip(keys, facts, strict=True))
    return kept, facts


_STR_ONLY = frozenset({str})
_EXACT = frozenset({dict, list, str, int, float, bool, type(None)})


def _tree(name: str, value: Any) -> Any:
    """``redact_value(name, value)`` where ``name`` is "" or, for a non-empty dict or list, not secret (its caller
    hid those already)."""
    t = type(value)
    if t is dict:
        keys = tuple(value)
        if len(keys) <= _KEYS_REMEMBERED and set(map(type, keys)) == _STR_ONLY:
            kept, facts = _dict_facts(keys)  # one look-up for the keys of a metric, a level, a model
            if kept and set(map(type, value.values())) <= _PLAIN:
                return dict(value)  # keys kept, every value a number, bool or None: nothing to hide
        else:
            facts = tuple(_key_facts(k if type(k) is str else str(k)) for k in keys)
        out: dict[str, Any] = {}
        for k, (text, hides, secret), v in zip(keys, facts, value.values(), strict=True):
            key = k if type(k) is str else str(k)
            tv = type(v)
            if tv is float or tv is int:
                out[text] = REDACTED if hides else v
            elif tv is str:
                out[text] = REDACTED if secret and v else redact_text(v)
            elif v is None or tv is bool:
                out[text] = v
            elif secret and v and (tv is dict or tv is list):
                out[text] = REDACTED
            else:
                out[text] = _tree(key, v)
        return out
    if t is list:
        types = set(map(type, value))
        if not types <= _EXACT:  # a str subclass decides between a command line and a list, say
            return redact_value(name, value)
        if types <= _PLAIN:  # numbers (a record's samples): nothing to hide, nothing to copy
            return list(value)
        if types == _STR_ONLY:
            return redact_argv(value)
        return [_tree("", v) for v in value]
    if t is str:
        return REDACTED if name and value and secret_name(name) else redact_text(value)
    if t is float or t is int:
        return REDACTED if name and _hides(name) else value
    if value is None or t is bool:
        return value
    return redact_value(name, value)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line with the value of every secret flag hidden (``--api-key X``, ``--token=X``) and every
    other argument passed through :func:`redact_text`."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next and not (arg.startswith("-") and len(arg) > 1 and not arg[1].isdigit()):
            out.append(REDACTED)
            hide_next = False
            continue
        hide_next = False
        if arg.startswith("-") and len(arg) > 1:
            flag, eq, val = arg.partition("=")
            if secret_name(flag):
                if eq:
                    out.append(f"{flag}={REDACTED}" if val else arg)
                else:
                    out.append(arg)
                    hide_next = True
                continue
        out.append(redact_text(arg))
    return out


def _walk(value: Any, path: str, name: str) -> Iterator[tuple[str, str, Any, bool]]:
    """(dotted path, key name, leaf, is_key) for every key and leaf of a JSON-like tree."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            yield where, str(k), str(k), True
            yield from _walk(v, where, str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]", name)
    else:
        yield path, name, value, False


def find_secrets(value: Any, path: str = "") -> list[str]:
    """The dotted paths in a JSON-like tree that hold a secret (by name or by shape). Never the values."""
    found: set[str] = set()
    for where, name, leaf, is_key in _walk(value, path, ""):
        if is_key:
            if looks_like_secret(leaf):
                found.add(where)
        elif isinstance(leaf, str) and (looks_like_secret(leaf) or redact_value(name, leaf) != leaf):
            found.add(where)
    return sorted(found)
