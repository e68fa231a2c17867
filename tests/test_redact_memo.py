"""Redaction's speed-ups change nothing: the steps it skips could not have changed the text, and what it remembers
is keyed by the text alone, bounded, and never hides a secret planted later."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import bench.redact as R
from bench.redact import REDACTED, redact_text

_SEP = r"[^\s,;=\"'`()\[\]{}<>|@?&:]+"


def _every_step_on_every_token(text: str) -> str:
    """The reference: every step applied to every text, and every token (not only the long ones) judged random or
    not, as redaction did before the steps were skipped."""
    for stage in R._STAGES:
        if stage.apply is R._random_tokens:
            out, pos = [], 0
            for m in re.finditer(_SEP, text):
                tok = m.group(0)
                core = tok.strip(".")
                if R._random_token(core):
                    out += [text[pos : m.start()], tok.replace(core, REDACTED)]
                    pos = m.end()
            text = "".join([*out, text[pos:]])
        else:
            text = stage.apply(text)
    return text


# Pieces that start, end, fake or break every shape, name and step (and the non-ASCII letters that re matches to
# ASCII ones when it ignores case).
# fmt: off
FRAGMENTS = [
    "hf_", "sk-", "sk_live_", "rk_test_", "AKIA", "ASIA", "ghp_", "github_pat_", "glpat-", "xoxb-", "ya29.", "AIza",
    "eyJ", "npm_", "tok_", "AbCdEfGhIjKlMnOp", "aZ3kQ9xW2mN7pL5vR8tY", "0123456789abcdef0123456789abcdef",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "Bearer ", "BEARER ", "bAsIc ", "Ba\u017fic ", "Toke\u212a ", "D\u0130gest ",
    "d\u0131gest ", "Digest ", "Authorization: ", "AUTHOR\u0130ZATION=", "Proxy-Authorization: ", "Session=",
    "x-auth-token: ", "Cookie:", "--hf-token ", "PWD=", "mysig=", "SECRET", "Credentials", "http://", "redis://:",
    "@", "?", "&", "access_token=", "sig=", "=", ": ", '"', "'", "--api-key ", "--token=", "-", "api_key",
    "PASSWORD", " ", "\n", ".", "_", "-----BEGIN ", "RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "null",
    "1234", "20261130T231000Z", "\u00d7", "\u2013", "Meta-Llama",
]
# fmt: on
texts = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=24).map("".join)


@settings(max_examples=1500, deadline=None)
@given(texts)
def test_skipping_steps_changes_nothing(text: str) -> None:
    assert R._redact(text) == _every_step_on_every_token(text)


@settings(max_examples=1500, deadline=None)
@given(texts)
def test_a_text_found_needle_free_is_one_only_the_random_token_step_changes(text: str) -> None:
    """The one check that skips every step but the last at once (``_needle_free``) never skips a step that would
    change the text."""
    assert R._STAGES[-1].apply is R._random_tokens
    if R._needle_free(text):
        assert all(stage.apply(text) == text for stage in R._STAGES[:-1]), text
        assert R._redact(text) == _every_step_on_every_token(text)


def test_the_needle_check_reads_ascii_needles_and_lets_every_planted_secret_through() -> None:
    from test_redact import PLANTED

    assert all(n.isascii() for stage in R._STAGES for n in stage.needles)  # found in the lower-cased text too
    for text, secret in PLANTED:
        for variant in (text, text.upper(), text.lower(), text.replace("s", "\u017f"), text.replace("k", "\u212a")):
            assert not R._needle_free(variant) or secret not in R._random_tokens(variant), variant
    clean_texts = ("92.7", "12.3 \u00b1 0.4", "sglang", "max_new_requests", "h200-llamacpp-gpt-oss-20b-agentic-04")
    for clean in clean_texts:
        assert R._needle_free(clean) and R._redact(clean) == clean, clean


def test_skipping_steps_changes_nothing_on_the_planted_secrets() -> None:
    from test_redact import PLANTED

    for text, secret in PLANTED:
        for variant in (text, f"x {text} y", text.upper(), text.lower(), text.replace("s", "ſ")):
            assert R._redact(variant) == _every_step_on_every_token(variant), variant
        assert secret not in redact_text(text)


def test_the_non_ascii_letters_that_fold_to_ascii_are_all_known() -> None:
    """A step that ignores case is skipped by a lower-case needle only when no character of the text could fold to
    an ASCII letter without being one: that list must be complete for this Python."""
    letter = re.compile("(?i)[a-z]")
    folding = {c for c in map(chr, range(128, sys.maxunicode + 1)) if letter.fullmatch(c)}
    assert folding == set(R._FOLDS_TO_ASCII.pattern[1:-1])


def test_a_token_planted_after_the_same_text_was_seen_clean_is_redacted() -> None:
    token = "hf_AbCdEfGhIjKlMnOpQrSt"
    for size in (10, 300, 5000, 300_000):  # remembered short, medium or long; never remembered
        clean = "engine sglang, model Qwen3-8B, " + "x" * size
        assert redact_text(clean) == clean
        assert redact_text(clean) == clean  # now remembered
        planted = clean + " " + token
        assert token not in redact_text(planted)
        assert redact_text(planted).endswith(REDACTED)
        assert redact_text(clean) == clean


def test_page_text_remembered_by_its_text_still_hides_a_token_planted_later() -> None:
    from bench.site._escape import html_text, md_text

    clean = "H200 SXM, sglang 0.5.17"
    for shown in (md_text, html_text):
        assert "H200" in shown(clean) and shown(clean) == shown(clean)
        assert "ghp_16C7e42F292c6912E7710c838347Ae178B4a" not in shown(
            clean + " ghp_16C7e42F292c6912E7710c838347Ae178B4a"
        )
        assert "redacted" in shown(clean + " ghp_16C7e42F292c6912E7710c838347Ae178B4a")


def test_what_is_remembered_is_bounded() -> None:
    tiers = [(R._redact_short, 1), (R._redact_medium, R._SHORT + 1), (R._redact_long, R._MEDIUM + 1)]
    for memo, length in tiers:
        size = memo.cache_info().maxsize
        assert size is not None
        for i in range(size + 10):
            text = f"{i} " + "x" * length
            assert redact_text(text) == text
        assert memo.cache_info().currsize == size
    before = [memo.cache_info().currsize for memo, _ in tiers]
    long_text = "b " * R._CACHED_LENGTH
    assert redact_text(long_text) == long_text
    assert [memo.cache_info().currsize for memo, _ in tiers] == before
    # worst case: every entry at its longest, the text and its result
    limits = [(R._redact_short, R._SHORT), (R._redact_medium, R._MEDIUM), (R._redact_long, R._CACHED_LENGTH)]
    assert sum(2 * (memo.cache_info().maxsize or 0) * n for memo, n in limits) <= 64 * 2**20


def test_nothing_redaction_reads_can_change_at_run_time() -> None:
    """The memo is keyed by the text alone: that is sound only while every rule is a constant of the module (no
    setting, no environment variable, nothing mutable)."""
    immutable = (str, int, float, bool, frozenset, tuple, re.Pattern, type(None), R._Stage)
    for name, value in vars(R).items():
        if name.startswith("__") or isinstance(value, types.FunctionType | types.ModuleType | type):
            continue
        if name in ("annotations", "Any"):  # imports: the __future__ flag and typing's Any
            continue
        if callable(value) and hasattr(value, "cache_info"):  # the memoised functions themselves
            continue
        assert isinstance(value, immutable), name
        if isinstance(value, tuple | frozenset):
            assert all(isinstance(v, (*immutable, type)) for v in value), name
    source = Path(R.__file__ or "").read_text(encoding="utf-8")
    assert source and "environ" not in source and "getenv" not in source and "open(" not in source
