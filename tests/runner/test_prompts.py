"""Prompt sets: the shipped sets, the content hash, validation errors, and ``bench prompts``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bench.cli import main
from bench.record.errors import RecordError
from bench.runner.prompt_commands import format_listing, format_set
from bench.runner.prompts import (
    PROMPTS_DIR,
    Prompt,
    PromptSetError,
    canonical_json,
    content_hash,
    list_prompt_sets,
    load_prompt_set,
    parse_prompt_set,
)

SHIPPED = ("coding-agentic", "encyclopedic")
META = {"name": "tiny", "description": "two prompts", "license": "Apache-2.0", "source": "this test"}


def write_set(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def tiny_lines() -> list[object]:
    return [
        META,
        {"id": "a", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]},
        {"id": "b", "messages": [{"role": "user", "content": "What is 2+2?"}]},
    ]


# --- shipped sets ---------------------------------------------------------------------------------------------------


def test_shipped_sets_are_listed() -> None:
    assert set(SHIPPED) <= set(list_prompt_sets())


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_set_loads_and_is_well_formed(name: str) -> None:
    ps = load_prompt_set(name)
    assert ps.name == name
    assert ps.license == "Apache-2.0"
    assert ps.description and ps.source
    assert len(ps.prompts) >= 48
    ids = [p.id for p in ps.prompts]
    assert len(set(ids)) == len(ids)
    # distinct content, not the same prompt under many ids
    contents = [json.dumps(p.chat(), sort_keys=True) for p in ps.prompts]
    assert len(set(contents)) == len(contents)
    # every prompt asks something: the last message is the user's
    assert all(p.messages[-1].role == "user" for p in ps.prompts)
    # varied lengths
    lengths = sorted(len(p.text) for p in ps.prompts)
    assert lengths[-1] > 2 * lengths[0]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_hash_equals_a_recomputation(name: str) -> None:
    ps = load_prompt_set(name)
    assert ps.content_hash.startswith("sha256:") and len(ps.content_hash) == len("sha256:") + 64
    assert ps.content_hash == content_hash(ps.prompts)
    # and independently from the file, as the README describes it
    lines = [json.loads(line) for line in (PROMPTS_DIR / f"{name}.jsonl").read_text("utf-8").splitlines()[1:]]
    body = [[{"role": m["role"], "content": m["content"]} for m in obj["messages"]] for obj in lines]
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert ps.content_hash == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert load_prompt_set(name).content_hash == ps.content_hash


def test_the_two_sets_differ() -> None:
    assert load_prompt_set(SHIPPED[0]).content_hash != load_prompt_set(SHIPPED[1]).content_hash


def test_coding_set_has_agentic_and_code_prompts() -> None:
    ps = load_prompt_set("coding-agentic")
    texts = [p.text for p in ps.prompts]
    assert sum("```" in t for t in texts) >= 10
    assert sum("run_shell" in t for t in texts) >= 5  # the agent's tool-describing system prompt
    assert any(len(p.messages) > 3 for p in ps.prompts)  # multi-turn agent transcripts
    assert any("git" in t for t in texts)


# --- hash behaviour -------------------------------------------------------------------------------------------------


def test_whitespace_and_key_order_do_not_change_the_hash(tmp_path: Path) -> None:
    plain = load_prompt_set(str(write_set(tmp_path / "a.jsonl", tiny_lines())))
    lines = tiny_lines()
    pretty = "\n\n".join(json.dumps(x, indent=None, separators=(" ,  ", " :  "), sort_keys=True) for x in lines)
    (tmp_path / "b.jsonl").write_text("\n" + pretty + "\n\n", encoding="utf-8")
    reformatted = load_prompt_set(str(tmp_path / "b.jsonl"))
    assert reformatted.content_hash == plain.content_hash


def test_a_modified_prompt_changes_the_hash(tmp_path: Path) -> None:
    base = load_prompt_set(str(write_set(tmp_path / "a.jsonl", tiny_lines())))
    changed = tiny_lines()
    changed[2]["messages"][0]["content"] = "What is 2+3?"  # type: ignore[index]
    other = load_prompt_set(str(write_set(tmp_path / "b.jsonl", changed)))
    assert other.content_hash != base.content_hash
    reordered = [tiny_lines()[0], tiny_lines()[2], tiny_lines()[1]]
    assert load_prompt_set(str(write_set(tmp_path / "c.jsonl", reordered))).content_hash != base.content_hash


def test_ids_and_metadata_are_not_hashed(tmp_path: Path) -> None:
    base = load_prompt_set(str(write_set(tmp_path / "a.jsonl", tiny_lines())))
    relabelled = tiny_lines()
    relabelled[0] = {**META, "description": "another description"}
    relabelled[1]["id"] = "renamed"  # type: ignore[index]
    assert load_prompt_set(str(write_set(tmp_path / "b.jsonl", relabelled))).content_hash == base.content_hash


def test_modifying_a_shipped_set_changes_its_hash(tmp_path: Path) -> None:
    src = (PROMPTS_DIR / "encyclopedic.jsonl").read_text("utf-8").splitlines()
    obj = json.loads(src[5])
    obj["messages"][-1]["content"] += " Keep it short."
    copy = tmp_path / "encyclopedic.jsonl"
    copy.write_text("\n".join([*src[:5], json.dumps(obj), *src[6:]]) + "\n", encoding="utf-8")
    assert load_prompt_set(str(copy)).content_hash != load_prompt_set("encyclopedic").content_hash


def test_canonical_json_is_compact_and_sorted() -> None:
    p = Prompt(id="x", messages=({"content": "é", "role": "user"},))
    assert canonical_json([p]) == '[[{"content":"é","role":"user"}]]'


def test_text_rendering_for_the_completions_api() -> None:
    p = Prompt(
        id="x",
        messages=(
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Bye"},
        ),
    )
    assert p.text == "Be brief.\n\nUser: Hi\n\nAssistant: Hello.\n\nUser: Bye\n\nAssistant:"
    chat = p.chat()
    chat[0]["content"] = "changed"
    assert p.messages[0].content == "Be brief."


# --- errors -----------------------------------------------------------------------------------------------------------


BAD_CASES = [
    ("not json", ["{not json"], 1, "column 2", "one JSON object per line"),
    ("metadata not object", [[1, 2]], 1, "(whole file)", "a valid dictionary"),
    ("metadata missing", [{k: v for k, v in META.items() if k != "license"}], 1, "license", "got nothing"),
    ("metadata unknown key", [{**META, "licence": "x"}], 1, "licence", "Extra inputs are not permitted"),
    ("bad name", [{**META, "name": "Has Spaces"}], 1, "name", "lower-case slug"),
    ("prompt not object", [META, "hello"], 2, "(whole file)", "a valid dictionary"),
    ("missing id", [META, {"messages": [{"role": "user", "content": "q"}]}], 2, "id", "got nothing"),
    ("bad id", [META, {"id": "a b", "messages": [{"role": "user", "content": "q"}]}], 2, "id", '"a b"'),
    ("no messages", [META, {"id": "a", "messages": []}], 2, "messages", "at least 1 item"),
    ("bad role", [META, {"id": "a", "messages": [{"role": "tool", "content": "q"}]}], 2, "messages[0].role", '"tool"'),
    ("empty content", [META, {"id": "a", "messages": [{"role": "user", "content": " "}]}], 2, "messages[0].content",
     "non-empty string"),
    ("int content", [META, {"id": "a", "messages": [{"role": "user", "content": 3}]}], 2, "messages[0].content", "3"),
    ("extra message key", [META, {"id": "a", "messages": [{"role": "user", "content": "q", "name": "n"}]}], 2,
     "messages[0].name", "Extra inputs are not permitted"),
    ("extra prompt key", [META, {"id": "a", "messages": [{"role": "user", "content": "q"}], "x": 1}], 2, "x",
     "Extra inputs are not permitted"),
    ("late system", [META, {"id": "a", "messages": [{"role": "user", "content": "q"},
                                                     {"role": "system", "content": "s"}]}],
     2, "messages[1].role", "system message only as the first"),
    ("ends with assistant", [META, {"id": "a", "messages": [{"role": "user", "content": "q"},
                                                             {"role": "assistant", "content": "a"}]}],
     2, "messages[1].role", "last message to be from the user"),
    ("duplicate id", [META, {"id": "a", "messages": [{"role": "user", "content": "q"}]},
                      {"id": "a", "messages": [{"role": "user", "content": "r"}]}], 3, "id", "also used on line 2"),
    ("no prompts", [META], None, "(whole file)", "at least one prompt"),
    ("empty file", [], None, "(whole file)", "the file is empty"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "lines", "line", "field", "expected"), BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_malformed_files_give_clear_errors(
    tmp_path: Path, case: str, lines: list[object], line: int | None, field: str, expected: str
) -> None:
    path = tmp_path / "bad.jsonl"
    if lines and lines[0] == "{not json":
        path.write_text("{not json\n", encoding="utf-8")
    else:
        write_set(path, lines)
    with pytest.raises(PromptSetError) as info:
        load_prompt_set(str(path))
    err = info.value
    assert isinstance(err, RecordError)
    assert err.line == line and err.field == field
    message = str(err)
    assert message.startswith(f"{path}: ")
    assert f"field '{field}'" in message and expected in message
    if line is not None:
        assert f": line {line}: " in message


def _nested_prompt(depth: int) -> str:
    """A prompt line ``depth`` containers deep: its object, then lists down ``messages``."""
    return '{"id": "a", "messages": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


@pytest.mark.parametrize("depth", [101, 5_000])
def test_a_line_nested_too_deep_is_refused_alike_on_every_python(tmp_path: Path, depth: int) -> None:
    """A prompt nested past ``bench.record.load.MAX_JSON_DEPTH``: 3.11's parser gives up on 5,000 levels (an
    uncaught RecursionError before), 3.13's reads them; both get the records' rule, on the line that breaks it."""
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(META) + "\n" + _nested_prompt(depth) + "\n", encoding="utf-8")
    with pytest.raises(PromptSetError) as info:
        load_prompt_set(str(path))
    expected = "JSON nested at most 100 deep (this file nests deeper)"
    assert str(info.value) == f"{path}: line 2: field '(whole file)': {expected}"


def test_a_line_nested_to_the_limit_is_read_and_judged_as_a_prompt(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(META) + "\n" + _nested_prompt(100) + "\n", encoding="utf-8")
    with pytest.raises(PromptSetError) as info:
        load_prompt_set(str(path))
    assert (info.value.line, info.value.field) == (2, "messages[0]")
    assert "a valid dictionary" in info.value.expected


def test_unknown_name_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PromptSetError, match=r"coding-agentic.*encyclopedic"):
        load_prompt_set("no-such-set")
    with pytest.raises(PromptSetError, match="readable UTF-8"):
        load_prompt_set(str(tmp_path / "missing.jsonl"))
    bad_utf8 = tmp_path / "latin1.jsonl"
    bad_utf8.write_bytes(b'{"name": "caf\xe9"}\n')
    with pytest.raises(PromptSetError, match="readable UTF-8"):
        load_prompt_set(str(bad_utf8))


def test_parse_names_the_given_path() -> None:
    with pytest.raises(PromptSetError, match=r"^somewhere/x\.jsonl: line 1: "):
        parse_prompt_set("[]\n", "somewhere/x.jsonl")


# --- bench prompts ---------------------------------------------------------------------------------------------------


def test_cli_lists_sets_with_counts_and_hashes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompts"]) == 0
    out = capsys.readouterr().out
    for name in SHIPPED:
        ps = load_prompt_set(name)
        row = next(line for line in out.splitlines() if line.startswith(name + " "))
        assert str(len(ps.prompts)) in row.split() and ps.content_hash in row


def test_cli_shows_one_set(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["prompts", "show", "encyclopedic"]) == 0
    out = capsys.readouterr().out
    ps = load_prompt_set("encyclopedic")
    assert ps.content_hash in out
    assert all(p.id in out for p in ps.prompts)
    path = write_set(tmp_path / "tiny.jsonl", tiny_lines())
    assert main(["prompts", "show", str(path), "--full"]) == 0
    out = capsys.readouterr().out
    assert "What is 2+2?" in out and "Be brief." in out and "[system]" in out


def test_cli_reports_bad_sets(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["prompts", "show", "no-such-set"]) == 1
    assert "error:" in capsys.readouterr().err
    path = write_set(tmp_path / "bad.jsonl", [META, {"id": "a", "messages": []}])
    assert main(["prompts", "show", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: line 2: field 'messages'" in err


def test_format_functions_are_pure() -> None:
    ps = load_prompt_set("coding-agentic")
    assert format_listing([ps]) == format_listing([ps])
    assert format_listing([]) == "no prompt sets\n"
    short = format_set(ps)
    assert len(short.splitlines()) == 7 + 1 + len(ps.prompts)  # header (with file), blank line, one row per prompt
    assert len(format_set(ps, full=True)) > len(short)
