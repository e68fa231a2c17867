"""The theme's templates compiled once per process (hooks/template_memo.py): a new environment (MkDocs makes one per
build) takes the compiled code of a template whose source is unchanged, compiles a changed one again, and never
takes code compiled under other compile settings; with the real theme the pages are the same."""

from __future__ import annotations

import jinja2
from hooks_helpers import ROOT
from mkdocs.commands.build import get_context
from mkdocs.config import load_config
from mkdocs.structure.files import Files
from mkdocs.structure.nav import get_navigation

from hooks.template_memo import TemplateMemo, install

SOURCES = {
    "base.html": "<title>{% block title %}{{ title }}{% endblock %}</title>{% block body %}{% endblock %}",
    "main.html": '{% extends "base.html" %}{% block body %}'
    + "{% for x in items %}<i>{{ x }}</i>{% endfor %}{% endblock %}",
}


def _env(memo: TemplateMemo, sources: dict[str, str], **settings: object) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.DictLoader(dict(sources)), **settings)  # type: ignore[arg-type]
    env.bytecode_cache = memo
    return env


def _render(env: jinja2.Environment) -> str:
    return env.get_template("main.html").render(title="a<b", items=[1, "<2>"])


def test_a_new_environment_takes_the_compiled_templates() -> None:
    memo = TemplateMemo()
    first = _render(_env(memo, SOURCES, autoescape=True))
    assert memo.loaded == 0 and len(memo.kept) == 2  # main.html and the base it extends, compiled and kept
    again = _render(_env(memo, SOURCES, autoescape=True))
    assert again == first == "<title>a&lt;b</title><i>1</i><i>&lt;2&gt;</i>"
    assert memo.loaded == 2  # neither compiled again


def test_a_changed_template_is_compiled_again() -> None:
    memo = TemplateMemo()
    _render(_env(memo, SOURCES, autoescape=True))
    changed = SOURCES | {"main.html": SOURCES["main.html"].replace("<i>", "<b>").replace("</i>", "</b>")}
    out = _render(_env(memo, changed, autoescape=True))
    assert out == "<title>a&lt;b</title><b>1</b><b>&lt;2&gt;</b>"
    assert memo.loaded == 1  # base.html only
    assert _render(_env(memo, changed, autoescape=True)) == out and memo.loaded == 3


def test_code_compiled_under_other_settings_is_not_taken() -> None:
    memo = TemplateMemo()
    escaped = _render(_env(memo, SOURCES, autoescape=True))
    plain = _render(_env(memo, SOURCES, autoescape=False))
    assert memo.loaded == 0 and len(memo.kept) == 4
    assert plain == "<title>a<b</title><i>1</i><i><2></i>" != escaped
    trimmed = _env(memo, {"t.html": "{% if 1 %}\nx{% endif %}"}, trim_blocks=True)
    untrimmed = _env(memo, {"t.html": "{% if 1 %}\nx{% endif %}"})
    assert trimmed.get_template("t.html").render() == "x"
    assert untrimmed.get_template("t.html").render() == "\nx"


def test_the_theme_renders_the_same_from_kept_code() -> None:
    config = load_config(str(ROOT / "mkdocs.yml"))
    files = Files([])
    context = get_context(get_navigation(files, config), files, config)  # as MkDocs renders its 404 page
    expected = config.theme.get_env().get_template("404.html").render(context)
    assert "<html" in expected
    for _ in range(2):  # compiled and kept, then taken
        env = config.theme.get_env()
        install(env)
        assert env.get_template("404.html").render(context) == expected
    memo = env.bytecode_cache
    assert isinstance(memo, TemplateMemo) and memo.loaded >= 2  # 404.html and the base it extends at least
    own = config.theme.get_env()
    own.bytecode_cache = TemplateMemo()
    install(own)  # an environment with a cache of its own keeps it
    assert own.bytecode_cache is not memo
