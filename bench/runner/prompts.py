"""Prompt sets: chat-formatted prompts in JSON Lines, validated on load, identified by a content hash.

File format (``bench/prompts/<name>.jsonl``)::

    {"name": "...", "description": "...", "license": "...", "source": "..."}      <- line 1: metadata
    {"id": "p001", "messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}]}
    ...                                                                              <- one prompt per line

Blank lines are ignored. The content hash is ``sha256:`` + the SHA-256 of the canonical JSON of the
prompts' messages, in file order (see :func:`content_hash`): re-formatting the file does not change it,
changing what the server is sent does. Ids and metadata are labels and are not hashed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr, ValidationError

from bench.errors import FieldError, from_validation_error, read_text_file
from bench.record.errors import RecordError
from bench.record.load import JsonTooDeep, loads_bounded

__all__ = [
    "PROMPTS_DIR",
    "Message",
    "Prompt",
    "PromptSet",
    "PromptSetError",
    "canonical_json",
    "content_hash",
    "list_prompt_sets",
    "load_prompt_set",
    "parse_prompt_set",
]

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
"""Where the shipped prompt sets live (``bench/prompts/``)."""


class PromptSetError(RecordError):
    """A bad prompt-set file: names the file, the line, the field and what was expected."""

    def __init__(self, path: Path | str, field: str, expected: str, *, line: int | None = None) -> None:
        self.line = line
        super().__init__(path, field, expected)

    def __str__(self) -> str:
        where = f"{self.path}: line {self.line}" if self.line is not None else self.path
        return f"{where}: field '{self.field}': {self.expected}"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("a non-empty string")
    return value


def _matching(pattern: str, expected: str) -> AfterValidator:
    rule = re.compile(pattern)

    def check(value: str) -> str:
        if not rule.fullmatch(value):
            raise ValueError(expected)
        return value

    return AfterValidator(check)


Text = Annotated[StrictStr, AfterValidator(_not_blank)]
Id = Annotated[StrictStr, _matching(r"[A-Za-z0-9][A-Za-z0-9._-]*", "a string of letters, digits, '.', '_' or '-'")]
Slug = Annotated[StrictStr, _matching(r"[a-z0-9][a-z0-9._-]*", "a lower-case slug such as 'coding-agentic'")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Message(_Strict):
    role: Literal["system", "user", "assistant"]
    content: Text


class Prompt(_Strict):
    """One request: chat messages ending with a user turn (a system message only first)."""

    id: Id
    messages: tuple[Message, ...] = Field(min_length=1)

    @property
    def text(self) -> str:
        """A plain-text rendering for the completions API.

        The system message (if any) comes first as a plain paragraph, then each turn as ``User: ...`` /
        ``Assistant: ...``, ending with ``Assistant:`` so the model continues as the assistant.
        """
        parts = [m.content if m.role == "system" else f"{m.role.capitalize()}: {m.content}" for m in self.messages]
        parts.append("Assistant:")
        return "\n\n".join(parts)

    def chat(self) -> list[dict[str, str]]:
        """The messages as fresh, mutable dicts (for a JSON request body)."""
        return [{"role": m.role, "content": m.content} for m in self.messages]


class PromptSetMetadata(_Strict):
    name: Slug
    description: Text
    license: Text
    source: Text


@dataclass(frozen=True)
class PromptSet:
    name: str
    description: str
    license: str
    source: str
    prompts: tuple[Prompt, ...]
    content_hash: str
    path: Path | None = None

    def __len__(self) -> int:
        return len(self.prompts)


def canonical_json(prompts: Sequence[Prompt]) -> str:
    """The hashed form: a JSON list of each prompt's messages, keys sorted, no whitespace, UTF-8 text."""
    return json.dumps([p.chat() for p in prompts], sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(prompts: Sequence[Prompt]) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(prompts).encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------------------------------------------------
# Parsing (pure: text in, PromptSet or PromptSetError out)


def _validate(model: type[_Strict], obj: Any, path: Path | str, line: int) -> Any:
    """``obj`` as ``model``, or a PromptSetError naming the line and the field (the project's one error shape)."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        err = from_validation_error(FieldError, path, exc)
        field = "" if err.field == FieldError.whole else err.field
        raise PromptSetError(path, field, err.expected, line=line) from None


def _prompt(obj: Any, path: Path | str, line: int) -> Prompt:
    prompt: Prompt = _validate(Prompt, obj, path, line)
    last = len(prompt.messages) - 1
    for i, m in enumerate(prompt.messages):
        if m.role == "system" and i != 0:
            raise PromptSetError(path, f"messages[{i}].role", "a system message only as the first message", line=line)
    if prompt.messages[last].role != "user":
        raise PromptSetError(path, f"messages[{last}].role", "the last message to be from the user", line=line)
    return prompt


def parse_prompt_set(text: str, path: Path | str) -> PromptSet:
    """Parse and validate a prompt-set file's text; ``path`` is only used in error messages."""
    meta: PromptSetMetadata | None = None
    prompts: list[Prompt] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = loads_bounded(line)
        except json.JSONDecodeError as exc:
            raise PromptSetError(
                path, f"column {exc.colno}", f"one JSON object per line ({exc.msg})", line=lineno
            ) from None
        except JsonTooDeep as exc:
            raise PromptSetError(path, "", str(exc), line=lineno) from None
        if meta is None:
            meta = _validate(PromptSetMetadata, obj, path, lineno)
            continue
        prompt = _prompt(obj, path, lineno)
        if prompt.id in seen:
            also = f"a unique id; {prompt.id!r} is also used on line {seen[prompt.id]}"
            raise PromptSetError(path, "id", also, line=lineno)
        seen[prompt.id] = lineno
        prompts.append(prompt)
    if meta is None:
        raise PromptSetError(path, "", "a metadata line followed by one prompt per line; the file is empty")
    if not prompts:
        raise PromptSetError(path, "", "at least one prompt after the metadata line")
    return PromptSet(prompts=tuple(prompts), content_hash=content_hash(prompts), path=Path(path), **meta.model_dump())


# ----------------------------------------------------------------------------------------------------------------------
# Files


def list_prompt_sets() -> list[str]:
    """Names of the shipped prompt sets, sorted."""
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.jsonl"))


def _resolve(name_or_path: str) -> Path:
    if "/" not in name_or_path and "\\" not in name_or_path and not name_or_path.endswith(".jsonl"):
        path = PROMPTS_DIR / f"{name_or_path}.jsonl"
        if not path.is_file():
            known = ", ".join(list_prompt_sets()) or "none"
            raise PromptSetError(name_or_path, "name", f"a shipped prompt set ({known}) or a path to a .jsonl file")
        return path
    return Path(name_or_path)


def load_prompt_set(name_or_path: str) -> PromptSet:
    """Load a shipped set by name (``bench/prompts/<name>.jsonl``) or a ``.jsonl`` file by path."""
    path = _resolve(name_or_path)
    prompt_set = parse_prompt_set(read_text_file(path, PromptSetError, what="a readable UTF-8 prompt-set file"), path)
    if path.parent == PROMPTS_DIR and prompt_set.name != path.stem:
        expected = f"the file name without .jsonl ({path.stem!r}), got {prompt_set.name!r}"
        raise PromptSetError(path, "name", expected, line=1)
    return prompt_set
