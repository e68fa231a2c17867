"""Code blocks highlighted once per distinct block (hooks/highlight_memo.py): the same HTML as Pygments gives each
time, per lexer and formatter options, and a repeated block not highlighted again."""

from __future__ import annotations

import json
from typing import Any

import markdown
import pymdownx.highlight as pymdownx_highlight  # type: ignore[import-untyped]
import pytest
from hooks_helpers import ROOT
from mkdocs.config import load_config

from hooks.highlight_memo import memo_highlight

BLOCKS = [
    ("json", json.dumps({"model": "SmolLM2", "tp": 1, "flags": ["--a", "--b"]}, indent=2)),
    ("bash", "python -m bench run --config configs/x.yaml \\\n  --levels 1 2 4"),
    ("json", json.dumps({"model": "other", "tp": 8}, indent=2)),
]


def _page() -> str:
    parts = []
    for i in range(3):  # each block three times, once with line numbers and a title
        for lang, code in BLOCKS:
            opts = ' linenums="1" title="run.sh"' if i == 2 and lang == "bash" else ""
            parts += [f"## Block {i} {lang}", "", f"```{lang}{opts}", code, "```", ""]
    return "\n".join(parts)


def _convert() -> str:
    config = load_config(str(ROOT / "mkdocs.yml"))
    md = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs)
    return md.convert(_page())


def test_remembered_highlighting_is_the_same_html_and_runs_once_per_block(monkeypatch: pytest.MonkeyPatch) -> None:
    real = pymdownx_highlight.highlight
    real = getattr(real, "__wrapped__", real)  # the site's hooks may have wrapped it in this process already
    monkeypatch.setattr(pymdownx_highlight, "highlight", real)
    plain = _convert()
    calls: list[str] = []

    def counted(code: str, lexer: Any, formatter: Any, outfile: Any = None) -> Any:
        calls.append(code)
        return real(code, lexer, formatter) if outfile is None else real(code, lexer, formatter, outfile)

    monkeypatch.setattr(pymdownx_highlight, "highlight", memo_highlight(counted))
    assert _convert() == plain
    assert plain.count('class="highlight"') >= 9 and "linenos" in plain and "run.sh" in plain
    # three distinct blocks, plus the numbered and titled one: four highlightings for nine blocks
    assert len(calls) == 4, len(calls)
    assert _convert() == plain and len(calls) == 4  # a second page: nothing highlighted again
