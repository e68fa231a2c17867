"""Shortcodes in hand-written pages: ``<!-- bench:NAME key=value ... -->`` on a line of its own.

The comment is replaced by Markdown rendered from the records. An unknown name, an unknown or
missing argument, or a malformed value raises :class:`ShortcodeError` naming the page, so the build
fails loudly. Shortcodes inside fenced code blocks or inline code are left alone (so pages can show
the syntax); one anywhere else that does not stand alone on its line is an error too.

Values are bare words or double-quoted strings. ``V`` below is a variant (its latest record, with its
repeated runs) or a record id; ``baseline`` defaults to the experiment's baseline variant (``benchbook.yaml``,
else the variant named ``baseline``). Shortcodes:

``latest n=10``                      the newest records
``record-errors``                    the box listing records/dead ends that failed to load (empty if none)
``records experiment=E``             an experiment's records
``compare experiment=E candidate=V [baseline=V] [metrics=a,b]``
                                     the comparison (bench.compare): warnings, verdict, a compact table and a ratio
                                     chart, downloads, and the long form in a fold; metrics among the compared
                                     figures of bench.figures (per_request_tok_s, total_throughput, ...)
``verdict experiment=E candidate=V [baseline=V]``
                                     the computed verdict sentence (and the warning box if not comparable)
``diff experiment=E candidate=V [baseline=V]``
                                     every field in which the two records differ (environment diff)
``chart experiment=E metric=M``      M (a key of bench.figures) against concurrency, every variant overlaid
                                     (band over repeated runs)
``tradeoff experiment=E``            total throughput per GPU vs per-request tok/s, Pareto front marked
``percentiles experiment=E metric=ttft_ms|tpot_ms``
                                     p50/p90/p99 against concurrency, every variant
``history experiment=E``             the experiment's configurations, their history pages and flags, and the
                                     download of the experiment's rows
``environment experiment=E``         environment of the latest record of each variant
``dead-ends [experiment=E]``         dead ends (of one experiment)
``context-table``                    the context/info split that decides comparability (bench.compare.context)
``settings``                         the comparison and regression settings in effect (benchbook.yaml)
``repeat-spread``                    how far repeated runs of one configuration land apart (the noise floor's
                                     evidence, bench.compare.repeat_spreads)
``figures``                          every figure of bench.figures: key, label, unit, direction, formula, where it
                                     lives in a level (the columns of bench.frame)
``frame-pivot experiment=E figure=K`` the median of K per concurrency and variant, from bench.frame with pandas
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from bench.compare import Comparison

from ._comparisons import site_comparison
from ._shortcode_call import BadArgs, Call, pair
from ._shortcode_handlers import SHORTCODES
from ._site_data import SiteData

__all__ = ["SHORTCODES", "ShortcodeError", "expand_shortcodes", "shortcode_comparisons"]

_LINE = re.compile(r"^(?P<indent>[ \t]*)<!--\s*bench:(?P<body>.*?)\s*-->[ \t]*$")
_ANY = re.compile(r"<!--\s*bench:")
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).*?\1")
COMPARISON_SHORTCODES = ("compare",)  # the shortcodes whose comparison has downloads


class ShortcodeError(Exception):
    def __init__(self, page: str, line: int, shortcode: str, problem: str) -> None:
        self.page, self.line, self.shortcode, self.problem = page, line, shortcode, problem
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.page}, line {self.line}: shortcode {self.shortcode!r}: {self.problem}"


def _parse(body: str) -> tuple[str, dict[str, str]]:
    try:
        tokens = shlex.split(body, posix=True)
    except ValueError as exc:
        raise BadArgs(f"cannot split the arguments ({exc})") from None
    if not tokens:
        raise BadArgs("no shortcode name")
    name, args = tokens[0], {}
    for tok in tokens[1:]:
        key, eq, value = tok.partition("=")
        if not eq or not key:
            raise BadArgs(f"argument {tok!r} is not key=value")
        if key in args:
            raise BadArgs(f"argument {key!r} given twice")
        args[key] = value
    return name, args


def render_shortcode(body: str, site: SiteData, page: str) -> str:
    """Render one shortcode body (``NAME key=value ...``); raises ``BadArgs`` on misuse."""
    name, args = _parse(body)
    if name not in SHORTCODES:
        raise BadArgs(f"unknown shortcode {name!r}; known: {', '.join(sorted(SHORTCODES))}")
    handler, required, optional = SHORTCODES[name]
    unknown = set(args) - required - optional
    if unknown:
        allowed = ", ".join(sorted(required | optional)) or "none"
        raise BadArgs(f"unknown argument(s) {', '.join(sorted(unknown))}; allowed: {allowed}")
    missing = required - set(args)
    if missing:
        raise BadArgs(f"missing argument(s) {', '.join(sorted(missing))}")
    return handler(Call(site=site, page=page, args=args))


def _lines(markdown: str) -> Iterator[tuple[int, str, re.Match[str] | None, bool]]:
    """(line number, line, its shortcode match, whether it is inside fenced code) for every line of a page."""
    fence: str | None = None
    for number, line in enumerate(markdown.split("\n"), start=1):
        fm = _FENCE.match(line)
        if fence is not None:
            if fm and fm.group("fence")[0] == fence[0] and len(fm.group("fence")) >= len(fence):
                fence = None
            yield number, line, None, True
        elif fm:
            fence = fm.group("fence")
            yield number, line, None, True
        else:
            yield number, line, _LINE.match(line), False


def expand_shortcodes(markdown: str, site: SiteData, page: str) -> str:
    """Replace every shortcode line of a page; ``page`` is its docs-relative path (for links and errors)."""
    if not _ANY.search(markdown):
        return markdown
    out: list[str] = []
    for number, line, m, in_code in _lines(markdown):
        if m is not None:
            try:
                rendered = render_shortcode(m.group("body"), site, page)
            except BadArgs as exc:
                raise ShortcodeError(page, number, line.strip(), str(exc)) from None
            indent = m.group("indent")
            out += ["", *((indent + x) if x else x for x in rendered.rstrip("\n").split("\n")), ""]
        elif not in_code and _ANY.search(_CODE_SPAN.sub("", line)):
            raise ShortcodeError(page, number, line.strip(), "a shortcode must stand alone on its line")
        else:
            out.append(line)
    return "\n".join(out)


def shortcode_comparisons(site: SiteData) -> list[Comparison]:
    """The comparisons the hand-written pages' ``compare`` shortcodes show (their downloads are generated with the
    other pages). A shortcode used wrongly is skipped here: expanding its page fails the build, naming it."""
    if site.docs_dir is None:
        return []
    found = []
    for path in sorted(site.docs_dir.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if not _ANY.search(text):
            continue
        page = path.relative_to(site.docs_dir).as_posix()
        for _, _, m, _ in _lines(text):
            if m is None:
                continue
            try:
                name, args = _parse(m.group("body"))
                named = pair(Call(site, page, args)) if name in COMPARISON_SHORTCODES else None
            except BadArgs:
                continue
            if named is not None and not isinstance(named, str):
                found.append(site_comparison(site, *named))
    return found
