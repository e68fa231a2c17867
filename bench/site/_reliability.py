"""The "Reliability" page: what benchbook guarantees against hostile input, secrets and faults, generated from the
test suite's own case lists, so the page and the tests cannot disagree.

Sources (paths relative to the repository):

* ``tests/record/hostile/cases.yaml``: the hostile corpus, malformed or hostile record files and the exact error
  each must produce. The build loads every file again and shows whether the error is the stated one.
* ``tests/runner/secret_cases.py`` (``SECRET_CASES``): the secrets planted in real runs. The build runs each fake
  value through the redactor again; the page shows kinds and outcomes, never the values.
* ``tests/bad_input_cases.py`` (``BAD_INPUT_CASES``): bad command-line input and settings.
* ``tests/runner/fault_cases.py`` (``FAULT_CASES``): faults during a run.

Rows are ``(name, what happens, expected outcome)``; the part of a name before ``/`` is its group.
:func:`load_reliability` reads the sources (I/O at the edge); :func:`reliability_markdown` is pure.
"""

from __future__ import annotations

import runpy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import load_yaml
from bench.md_table import md_table
from bench.record.errors import RecordError
from bench.record.load import load_record
from bench.redact import redact_text

from ._escape import md_code, md_inline, md_text

__all__ = ["RELIABILITY_PAGE", "Case", "Section", "load_reliability", "reliability_markdown"]

RELIABILITY_PAGE = "reliability.md"
HOSTILE = "tests/record/hostile/cases.yaml"
SECRETS = "tests/runner/secret_cases.py"
BAD_INPUT = "tests/bad_input_cases.py"
FAULTS = "tests/runner/fault_cases.py"

HELD, DIFFERS = "held in this build", "DIFFERS in this build"


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    what: str
    outcome: str
    checked: str | None = None  # what this build saw when it tried the case again (None: not tried here)
    exact: bool = False  # the outcome is an exact message (shown verbatim)


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    intro: str
    source: str  # the file the cases come from, relative to the repository
    command: str  # how to run its tests
    cases: tuple[Case, ...] = ()
    missing: bool = False  # the source file is not in this checkout


def _rows(path: Path, name: str) -> list[tuple[Any, ...]] | None:
    """The list ``name`` of a plain-data Python file, or None when the file is not there."""
    if not path.is_file():
        return None
    value = runpy.run_path(str(path)).get(name)
    if not isinstance(value, list) or not all(isinstance(r, tuple) and len(r) >= 3 for r in value):
        raise ValueError(f"{path}: {name} must be a list of (name, what happens, expected outcome) tuples")
    return value


def _grouped(rows: Sequence[tuple[Any, ...]]) -> tuple[Case, ...]:
    out = []
    for row in rows:
        name, what, outcome = (str(x) for x in row[:3])
        group, _, short = name.partition("/")
        out.append(Case(group if short else "", short or name, what, outcome))
    return tuple(out)


def _hostile(repo: Path) -> tuple[tuple[Case, ...], bool]:
    manifest = repo / HOSTILE
    if not manifest.is_file():
        return (), True
    data = load_yaml(manifest.read_text(encoding="utf-8"))
    cases = []
    for c in data["cases"]:
        path = manifest.parent / c["file"]
        shown = path.relative_to(repo).as_posix()
        expected = f"field '{c['field']}': {c['expected']}"
        try:
            load_record(path)
            checked = f"{DIFFERS}: the file loaded without an error"
        except RecordError as exc:
            got = f"field '{exc.field}': {exc.expected}"
            checked = HELD if got == expected else f"{DIFFERS}: {got}"
        cases.append(Case(c["group"], Path(shown).name, c["what"], expected, checked, exact=True))
    return tuple(cases), False


def _secrets(repo: Path) -> tuple[tuple[Case, ...], bool]:
    rows = _rows(repo / SECRETS, "SECRET_CASES")
    if rows is None:
        return (), True
    cases = []
    for name, what, outcome, value, line in rows:
        kept = value in redact_text(str(line).format(value=value))
        checked = f"{DIFFERS}: the redactor keeps it in a log line" if kept else HELD
        cases.append(Case("", name, what, outcome, checked))
    return tuple(cases), False


def load_reliability(repo: Path) -> tuple[Section, ...]:
    """Every section, read from the test suite of the checkout at ``repo`` (a missing source is marked)."""
    hostile, hostile_missing = _hostile(repo)
    secrets, secrets_missing = _secrets(repo)
    bad = _rows(repo / BAD_INPUT, "BAD_INPUT_CASES")
    faults = _rows(repo / FAULTS, "FAULT_CASES")
    return (
        Section(
            "secrets",
            "Secrets are never recorded, printed or shown",
            "Fake keys, tokens and passwords are planted in real `bench run` invocations against the local test "
            "server: in the environment, the launch command, the server's own log and its error responses. None "
            "may appear in the record file, its log excerpt or the terminal. The same kinds, planted in a record, "
            "must appear in no file of the built site. Every string that enters a record, a terminal line, a report "
            "or a page passes through one redaction module (`bench/redact.py`).",
            SECRETS,
            "pytest tests/runner/test_planted_secrets.py tests/hooks/test_hooks_secrets.py tests/test_redact.py",
            secrets,
            secrets_missing,
        ),
        Section(
            "hostile",
            "Malformed and hostile record files",
            "Records arrive by pull request from many people and machines. Each file below (in "
            "`tests/record/hostile/hostile/`) is broken or hostile in one way; loading it must give exactly the error "
            "shown after its file name, naming the field, never a traceback. The same files go through "
            "`bench validate` and a site build, and a property-based fuzz of the loader (hypothesis) mutates valid "
            "records at random: the loader returns a record or an error in this shape, nothing else.",
            HOSTILE,
            "pytest tests/record/test_hostile_corpus.py tests/record/test_loader_fuzz.py",
            hostile,
            hostile_missing,
        ),
        Section(
            "bad-input",
            "Bad command-line input and settings",
            "A clear error in one shape (`<file>: field '<field>': <expected>`), a non-zero exit and nothing "
            "written; a value given by the user is used as given or refused, never changed silently.",
            BAD_INPUT,
            "pytest tests/test_bad_input.py",
            _grouped(bad or []),
            bad is None,
        ),
        Section(
            "faults",
            "Faults during a run",
            "Each fault leaves a valid record with every finished level and the reason it stopped, a non-zero exit "
            "and no server process behind.",
            FAULTS,
            "pytest tests/runner/test_faults.py",
            _grouped(faults or []),
            faults is None,
        ),
    )


def _section_markdown(s: Section) -> list[str]:
    out = [f"## {s.title} {{ #{s.key} }}", "", s.intro, ""]  # benchbook's own Markdown, not a record's text
    if s.missing:
        return [*out, f"*The case list {md_code(s.source)} is not in this checkout.*", ""]
    out += [f"{len(s.cases)} case(s), from {md_code(s.source)}; run them with {md_code(s.command)}.", ""]
    groups: dict[str, list[Case]] = {}
    for c in s.cases:
        groups.setdefault(c.group, []).append(c)
    checked = any(c.checked is not None for c in s.cases)
    header = ["Case", "What happens", "Guaranteed outcome", *(["This build"] if checked else [])]
    for group, cases in groups.items():
        if group:
            out += [f"### {md_text(group)}", ""]
        rows = [
            [
                md_code(c.name),
                md_inline(c.what),
                md_code(c.outcome) if c.exact else md_inline(c.outcome),
                *([md_text(c.checked or "—")] * checked),
            ]
            for c in cases
        ]
        out += [md_table(header, rows), ""]
    return out


def reliability_markdown(sections: Sequence[Section]) -> str:
    """The whole page (pure)."""
    if not sections:
        return "# Reliability\n\n*This build was not given the repository, so its test suite's cases are not here.*\n"
    total = sum(len(s.cases) for s in sections)
    tried = [c for s in sections for c in s.cases if c.checked is not None]
    held = sum(1 for c in tried if c.checked == HELD)
    summary = [
        f"- [{s.title}](#{s.key}): " + ("not in this checkout" if s.missing else f"{len(s.cases)} case(s)")
        for s in sections
    ]
    out = [
        "# Reliability",
        "",
        "What benchbook guarantees when input is hostile, secrets are around or a run goes wrong. This page is "
        "generated from the test suite's own case lists: every row is a test that runs in CI, and the expected "
        "outcome shown is what that test asserts.",
        "",
        f"{total} case(s) in all:",
        "",
        *summary,
        "",
        f"This build tried {len(tried)} of them again (the record files and the planted secrets): {held} held"
        + (f", **{len(tried) - held} did not**." if held != len(tried) else "."),
        "",
    ]
    for s in sections:
        out += _section_markdown(s)
    return "\n".join(out).rstrip("\n") + "\n"
