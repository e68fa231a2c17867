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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.record.errors import RecordError

__all__ = [
    "PROMPTS_DIR",
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

ROLES = ("system", "user", "assistant")
METADATA_FIELDS = ("name", "description", "license", "source")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


class PromptSetError(RecordError):
    """A bad prompt-set file: names the file, the line, the field and what was expected."""

    def __init__(self, path: Path | str, line: int | None, field: str, expected: str) -> None:
        self.line = line
        super().__init__(path, field, expected)

    def __str__(self) -> str:
        where = f"{self.path}: line {self.line}" if self.line is not None else self.path
        return f"{where}: field '{self.field}': {self.expected}"


@dataclass(frozen=True)
class Prompt:
    """One request: chat messages ending with a user turn."""

    id: str
    messages: tuple[Mapping[str, str], ...]

    @property
    def text(self) -> str:
        """A plain-text rendering for the completions API.

        The system message (if any) comes first as a plain paragraph, then each turn as ``User: ...`` /
        ``Assistant: ...``, ending with ``Assistant:`` so the model continues as the assistant.
        """
        parts: list[str] = []
        for m in self.messages:
            if m["role"] == "system":
                parts.append(m["content"])
            else:
                parts.append(f"{m['role'].capitalize()}: {m['content']}")
        parts.append("Assistant:")
        return "\n\n".join(parts)

    def chat(self) -> list[dict[str, str]]:
        """The messages as fresh, mutable dicts (for a JSON request body)."""
        return [dict(m) for m in self.messages]


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
    body = [[{"role": m["role"], "content": m["content"]} for m in p.messages] for p in prompts]
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(prompts: Sequence[Prompt]) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(prompts).encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------------------------------------------------
# Parsing (pure: text in, PromptSet or PromptSetError out)


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)[:60]


def _parse_metadata(obj: Any, path: Path | str, line: int) -> dict[str, str]:
    if not isinstance(obj, dict):
        raise PromptSetError(path, line, "", f"a metadata object with {', '.join(METADATA_FIELDS)}, got {_shown(obj)}")
    unknown = sorted(set(obj) - set(METADATA_FIELDS))
    if unknown:
        raise PromptSetError(path, line, unknown[0], f"no such metadata field (allowed: {', '.join(METADATA_FIELDS)})")
    meta: dict[str, str] = {}
    for key in METADATA_FIELDS:
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip():
            raise PromptSetError(
                path, line, key, f"a non-empty string, got {_shown(value) if key in obj else 'nothing'}"
            )
        meta[key] = value
    if not _NAME.match(meta["name"]):
        raise PromptSetError(
            path, line, "name", f"a lower-case slug such as 'coding-agentic', got {_shown(meta['name'])}"
        )
    return meta


def _parse_message(obj: Any, path: Path | str, line: int, field: str) -> dict[str, str]:
    if not isinstance(obj, dict):
        raise PromptSetError(path, line, field, f"an object with role and content, got {_shown(obj)}")
    unknown = sorted(set(obj) - {"role", "content"})
    if unknown:
        raise PromptSetError(path, line, f"{field}.{unknown[0]}", "no such message field (allowed: role, content)")
    role = obj.get("role")
    if role not in ROLES:
        got = _shown(role) if "role" in obj else "nothing"
        raise PromptSetError(path, line, f"{field}.role", f"one of {', '.join(ROLES)}, got {got}")
    content = obj.get("content")
    if not isinstance(content, str) or not content.strip():
        got = _shown(content) if "content" in obj else "nothing"
        raise PromptSetError(path, line, f"{field}.content", f"a non-empty string, got {got}")
    return {"role": role, "content": content}


def _parse_prompt(obj: Any, path: Path | str, line: int) -> Prompt:
    if not isinstance(obj, dict):
        raise PromptSetError(path, line, "", f'a prompt object {{"id": ..., "messages": [...]}}, got {_shown(obj)}')
    unknown = sorted(set(obj) - {"id", "messages"})
    if unknown:
        raise PromptSetError(path, line, unknown[0], "no such prompt field (allowed: id, messages)")
    pid = obj.get("id")
    if not isinstance(pid, str) or not _ID.match(pid):
        got = _shown(pid) if "id" in obj else "nothing"
        raise PromptSetError(path, line, "id", f"a string of letters, digits, '.', '_' or '-', got {got}")
    raw = obj.get("messages")
    if not isinstance(raw, list) or not raw:
        got = _shown(raw) if "messages" in obj else "nothing"
        raise PromptSetError(path, line, "messages", f"a non-empty list of messages, got {got}")
    messages = tuple(_parse_message(m, path, line, f"messages[{i}]") for i, m in enumerate(raw))
    for i, m in enumerate(messages):
        if m["role"] == "system" and i != 0:
            raise PromptSetError(path, line, f"messages[{i}].role", "a system message only as the first message")
    if messages[-1]["role"] != "user":
        raise PromptSetError(path, line, f"messages[{len(messages) - 1}].role", "the last message to be from the user")
    return Prompt(id=pid, messages=messages)


def parse_prompt_set(text: str, path: Path | str) -> PromptSet:
    """Parse and validate a prompt-set file's text; ``path`` is only used in error messages."""
    meta: dict[str, str] | None = None
    prompts: list[Prompt] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PromptSetError(path, lineno, f"column {exc.colno}", f"one JSON object per line ({exc.msg})") from None
        if meta is None:
            meta = _parse_metadata(obj, path, lineno)
            continue
        prompt = _parse_prompt(obj, path, lineno)
        if prompt.id in seen:
            raise PromptSetError(
                path, lineno, "id", f"a unique id; {prompt.id!r} is also used on line {seen[prompt.id]}"
            )
        seen[prompt.id] = lineno
        prompts.append(prompt)
    if meta is None:
        raise PromptSetError(path, None, "", "a metadata line followed by one prompt per line; the file is empty")
    if not prompts:
        raise PromptSetError(path, None, "", "at least one prompt after the metadata line")
    return PromptSet(prompts=tuple(prompts), content_hash=content_hash(prompts), path=Path(path), **meta)


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
            raise PromptSetError(
                name_or_path, None, "name", f"a shipped prompt set ({known}) or a path to a .jsonl file"
            )
        return path
    return Path(name_or_path)


def load_prompt_set(name_or_path: str) -> PromptSet:
    """Load a shipped set by name (``bench/prompts/<name>.jsonl``) or a ``.jsonl`` file by path."""
    path = _resolve(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptSetError(path, None, "", f"a readable UTF-8 prompt-set file ({exc})") from None
    prompt_set = parse_prompt_set(text, path)
    if path.parent == PROMPTS_DIR and prompt_set.name != path.stem:
        raise PromptSetError(path, 1, "name", f"the file name without .jsonl ({path.stem!r}), got {prompt_set.name!r}")
    return prompt_set
