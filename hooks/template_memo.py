"""The theme's templates compiled once per process (MkDocs-specific: a Jinja2 bytecode cache held in memory).

MkDocs makes a new Jinja2 environment for every build, so under ``mkdocs serve`` every rebuild compiled the theme's
templates again: profiled at 1,000 records, compiling Material's ``main.html`` and the partials it includes was
about a tenth of a rebuild. Jinja2's bytecode cache is the library's own way to skip that: a template's compiled code
is kept under its name and file, and Jinja2 uses it only while the template's source has the checksum it had when
compiled (a changed template is compiled again). The code also depends on how the environment compiles (its
extensions, delimiters, escaping, whitespace rules), so it is kept apart per such configuration.
"""

from __future__ import annotations

import jinja2
from jinja2.bccache import Bucket

__all__ = ["TemplateMemo", "install"]

KEPT = 1024  # compiled templates at most (a theme has a few dozen)


def compile_settings(env: jinja2.Environment) -> tuple[object, ...]:
    """What else than a template's source decides its compiled code."""
    autoescape = env.autoescape if isinstance(env.autoescape, bool) else f"{env.autoescape!r}"
    return (
        tuple(sorted(env.extensions)),
        autoescape,
        env.block_start_string,
        env.block_end_string,
        env.variable_start_string,
        env.variable_end_string,
        env.comment_start_string,
        env.comment_end_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        env.trim_blocks,
        env.lstrip_blocks,
        env.newline_sequence,
        env.keep_trailing_newline,
        env.optimized,
        env.is_async,
    )


class TemplateMemo(jinja2.BytecodeCache):
    """Compiled templates kept in memory for every environment of this process with the same compile settings."""

    def __init__(self) -> None:
        self.kept: dict[tuple[object, ...], bytes] = {}
        self.loaded = 0  # templates taken from here rather than compiled

    def _key(self, bucket: Bucket) -> tuple[object, ...]:
        return (bucket.key, compile_settings(bucket.environment))

    def load_bytecode(self, bucket: Bucket) -> None:
        data = self.kept.get(self._key(bucket))
        if data is not None:
            bucket.bytecode_from_string(data)  # left empty (compiled again) when the source's checksum differs
            self.loaded += bucket.code is not None

    def dump_bytecode(self, bucket: Bucket) -> None:
        if len(self.kept) >= KEPT:
            self.kept.clear()
        self.kept[self._key(bucket)] = bucket.bytecode_to_string()


_MEMO = TemplateMemo()


def install(env: jinja2.Environment) -> None:
    """Give ``env`` this process's compiled templates (an environment with a bytecode cache of its own keeps it)."""
    if env.bytecode_cache is None:
        env.bytecode_cache = _MEMO
