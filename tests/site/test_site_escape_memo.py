"""The remembered escapes (bench.site._escape) give what escaping afresh gives, secrets hidden, for any text."""

from __future__ import annotations

import html

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.redact import redact_text
from bench.site import html_text
from bench.site._escape import TEXT_LIMIT, html_attr

_SECRETS = ["sk-" + "a1B2" * 8, "hf_" + "Zx9" * 12, "https://user:pa55word@example.org/x", "Bearer abcdef0123456789"]
_texts = st.one_of(
    st.text(max_size=260),
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=30), st.sampled_from(_SECRETS), st.text(max_size=30)),
    st.sampled_from(["<b>&\"'</b>", "x" * 199, "y" * 200, "z" * 201, "a" * (TEXT_LIMIT + 5)]),
    st.integers(),
    st.floats(allow_nan=False),
)


def _fresh(text: object, quote: bool) -> str:
    s = redact_text(str(text))
    if len(s) > TEXT_LIMIT:
        s = f"{s[:TEXT_LIMIT]} … [{len(s) - TEXT_LIMIT:,} more characters not shown]"
    return html.escape(s, quote=quote)


@settings(max_examples=400, deadline=None)
@given(st.lists(_texts, min_size=1, max_size=6))
def test_remembered_html_escapes_equal_fresh_ones(texts: list[object]) -> None:
    for _ in range(2):  # the second round is answered from the memo
        for t in texts:
            assert html_text(t) == _fresh(t, quote=False)
            assert html_attr(t) == _fresh(t, quote=True)


def test_secrets_stay_hidden_when_remembered() -> None:
    for secret in _SECRETS:
        for _ in range(2):
            assert secret not in html_text(f"key {secret} end")
            assert secret not in html_attr(f"key {secret} end")
