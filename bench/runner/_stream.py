"""Folding the events of one streamed response into timestamps and counts (pure: events in, state out).

The measurement rules are in ``bench.runner.client``'s docstring; this module applies them to each event:
OpenAI chat/completions chunks (content or reasoning text, ``usage``, llama.cpp ``timings``) and SGLang
``/generate`` chunks (``output_ids`` growth through :mod:`bench.runner._native`, ``meta_info``).
"""

from __future__ import annotations

import json
from json.scanner import make_scanner
from typing import Any

from ._native import IdsCounter, split_chunk
from ._sse import SSEEvent
from .request import CACHED_SOURCES, DRAFT_SOURCES, one_line

__all__ = ["StreamError", "StreamState"]

# SGLang 0.5.17 sends both key pairs with equal values; the first pair present is read
_SGLANG_DRAFT_KEYS = (
    ("spec_accepted_drafts", "spec_proposed_drafts", DRAFT_SOURCES[0]),
    ("spec_num_correct_drafts", "spec_num_proposed_drafts", DRAFT_SOURCES[1]),
)


_DETAILS = "prompt_tokens_details"


def _chat_text(delta: Any) -> str | None:
    """A chat delta's text where it has no reasoning field (else None: the general path reads it)."""
    if type(delta) is not dict or "reasoning_content" in delta or "reasoning" in delta:
        return None
    content = delta.get("content")
    return "" if content is None else content if type(content) is str else None


# a /generate chunk shorter than this is decoded whole: for small (incremental) chunks one json.loads is cheaper
# than finding meta_info and counting ids; bounded, so the cost per token stays constant
_WHOLE_BELOW = 2048


# the C scanner json.loads ends in, without its three Python frames (typeshed names the argument a "context")
_scan = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def _loads(data: str) -> Any:
    """``json.loads(data)``: the scanner straight away; where it stops short (leading or trailing whitespace,
    extra data, no JSON value), ``json.loads`` itself, which accepts the whitespace or raises its ValueError."""
    try:
        obj, end = _scan(data, 0)
    except StopIteration:
        return json.loads(data)
    return obj if end == len(data) else json.loads(data)


class StreamError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class StreamState:
    """Folds the events of one response into timestamps and counts.

    SGLang ``/generate`` chunks go through :func:`bench.runner._native.split_chunk` (only ``meta_info`` is
    decoded; new tokens per chunk come from the growth of ``output_ids``, cumulative or incremental); a chunk in
    another layout, or without ``output_ids``, is decoded whole and its text compared with the previous text.
    """

    __slots__ = (
        "accept_length",
        "accept_rate",
        "accepted",
        "api",
        "cached",
        "cached_source",
        "chunk_times",
        "chunk_tokens",
        "chunk_tokens_known",
        "counted",
        "decoded_chars",
        "done",
        "draft",
        "draft_source",
        "finish_reason",
        "ids",
        "input_tokens",
        "keep_text",
        "last_text",
        "output_tokens",
        "text_parts",
        "verify_steps",
    )

    def __init__(self, api: str, keep_text: bool) -> None:
        self.api = api
        self.keep_text = keep_text
        self.chunk_times: list[int] = []
        self.chunk_tokens: list[int] = []
        self.chunk_tokens_known = True
        self.counted = 0  # cumulative server count attributed to token-bearing chunks so far
        self.done = False
        self.finish_reason: str | None = None
        self.output_tokens: int | None = None
        self.input_tokens: int | None = None
        self.draft: int | None = None
        self.accepted: int | None = None
        self.draft_source: str | None = None
        self.verify_steps: int | None = None
        self.accept_rate: float | None = None
        self.accept_length: float | None = None
        self.cached: int | None = None
        self.cached_source: str | None = None
        self.ids = IdsCounter()
        self.decoded_chars = 0
        self.text_parts: list[str] = []
        self.last_text = ""

    def on_event(self, event: SSEEvent, now: int) -> None:
        data = event.data
        if data[:1] != "{":
            if data == "[DONE]":
                self.done = True
                return
            if not data or data.isspace():
                return
        if self.api == "generate" and event.event is None and len(data) > _WHOLE_BELOW:
            chunk = split_chunk(data, self.ids.skip)
            if chunk is not None:
                self.decoded_chars += chunk.decoded_chars
                ids_text = None
                completion = _int_or_none(chunk.meta.get("completion_tokens"))
                if not chunk.skipped and self.ids.wants_text(completion):
                    ids_text = "".join(data[chunk.ids_span[0] : chunk.ids_span[1]].split())
                    self.decoded_chars += len(ids_text)
                self._native(chunk.meta, now, self.ids.update(chunk, completion, ids_text), None)
                return
        self.decoded_chars += len(data)
        try:
            obj = _loads(data)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            raise StreamError("bad_response", f"event is not JSON: {one_line(data, 120)}") from None
        if not isinstance(obj, dict):
            raise StreamError("bad_response", f"event is not a JSON object: {one_line(data, 120)}")
        if event.event == "error" or "error" in obj or obj.get("object") == "error":
            err = obj.get("error", obj)
            message = err.get("message", err) if isinstance(err, dict) else err
            raise StreamError("stream_broken", f"error event mid-stream: {one_line(str(message))}")
        if self.api == "generate":
            raw_meta, ids, raw = obj.get("meta_info"), obj.get("output_ids"), obj.get("text")
            meta = raw_meta if isinstance(raw_meta, dict) else {}
            ids_text = None
            if isinstance(ids, list) and self.ids.wants_text(_int_or_none(meta.get("completion_tokens"))):
                ids_text = ",".join(map(str, ids))
            new = None
            if isinstance(ids, list):
                self.ids.skip = 0  # decoded whole: the next chunk's ids are counted whole too
                new = self.ids.new_tokens(len(ids), _int_or_none(meta.get("completion_tokens")), ids_text)
            self._native(meta, now, new, raw if isinstance(raw, str) else "")
        else:
            self._openai(obj, now)

    def _cached(self, value: Any, source: str) -> None:
        cached = _int_or_none(value)
        if cached is not None and (self.cached_source is None or self.cached_source == source):
            self.cached, self.cached_source = cached, source

    def _drafts(self, accepted: Any, proposed: Any, source: str) -> None:
        a, p = _int_or_none(accepted), _int_or_none(proposed)
        if a is not None and p is not None and (self.draft_source is None or self.draft_source == source):
            self.accepted, self.draft, self.draft_source = a, p, source

    def _openai(self, obj: dict[str, Any], now: int) -> None:
        # the common chunk first: one choice, a string of text, cumulative usage with two ints, no timings, no
        # prompt details; anything else takes the general path below
        choices, usage = obj.get("choices"), obj.get("usage")
        if (
            type(usage) is dict
            and "timings" not in obj
            and type(choices) is list
            and len(choices) == 1
            and _DETAILS not in usage
        ):
            choice, cumulative, prompt = choices[0], usage.get("completion_tokens"), usage.get("prompt_tokens")
            if type(choice) is dict and type(cumulative) is int and type(prompt) is int:
                text = choice.get("text") if self.api == "completions" else _chat_text(choice.get("delta"))
                reason = choice.get("finish_reason")
                if type(text) is str and (reason is None or type(reason) is str):
                    if reason:
                        self.finish_reason = reason
                    self.output_tokens, self.input_tokens = cumulative, prompt
                    if text:
                        self.chunk_times.append(now)
                        self.chunk_tokens.append(cumulative - self.counted)
                        self.counted = cumulative
                        if self.keep_text:
                            self.text_parts.append(text)
                    return
        self.openai_general(obj, now)

    def openai_general(self, obj: dict[str, Any], now: int) -> None:
        """Any OpenAI chunk (``_openai``'s fast path gives the same state for the chunks it takes)."""
        text = ""
        choices = obj.get("choices")
        if isinstance(choices, list) and choices:
            choice = choices[0]
            if isinstance(choice, dict):
                if self.api == "chat":
                    delta = choice.get("delta")
                    if isinstance(delta, dict):
                        content = delta.get("content") or ""
                        reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
                        text = (reasoning if isinstance(reasoning, str) else "") + (
                            content if isinstance(content, str) else ""
                        )
                else:
                    raw = choice.get("text")
                    text = raw if isinstance(raw, str) else ""
                reason = choice.get("finish_reason")
                if isinstance(reason, str) and reason:
                    self.finish_reason = reason
        cumulative: int | None = None
        usage = obj.get("usage")
        if isinstance(usage, dict):
            cumulative = _int_or_none(usage.get("completion_tokens"))
            if cumulative is not None:
                self.output_tokens = cumulative
            prompt = _int_or_none(usage.get("prompt_tokens"))
            if prompt is not None:
                self.input_tokens = prompt
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict):
                self._cached(details.get("cached_tokens"), CACHED_SOURCES[1])
        timings = obj.get("timings")
        if isinstance(timings, dict):  # llama.cpp
            self._drafts(timings.get("draft_n_accepted"), timings.get("draft_n"), DRAFT_SOURCES[2])
            if self.cached_source != CACHED_SOURCES[1]:
                self._cached(timings.get("cache_n"), CACHED_SOURCES[2])
        if text:
            self._token_chunk(now, cumulative)
            if self.keep_text:
                self.text_parts.append(text)

    def _native(self, meta: dict[str, Any], now: int, new: int | None, text: str | None) -> None:
        """One /generate chunk: ``new`` is the number of output ids it adds (None: the chunk has no
        ``output_ids``, then ``text`` decides whether it carries a token)."""
        cumulative = _int_or_none(meta.get("completion_tokens"))
        prompt = _int_or_none(meta.get("prompt_tokens"))
        if prompt is not None:
            self.input_tokens = prompt
        self._cached(meta.get("cached_tokens"), CACHED_SOURCES[0])
        verify = _int_or_none(meta.get("spec_verify_ct"))
        if verify is not None:
            self.verify_steps = verify
        for accepted, proposed, source in _SGLANG_DRAFT_KEYS:
            self._drafts(meta.get(accepted), meta.get(proposed), source)
        rate, length = _float_or_none(meta.get("spec_accept_rate")), _float_or_none(meta.get("spec_accept_length"))
        if rate is not None:
            self.accept_rate = rate
        if length is not None:
            self.accept_length = length
        reason = meta.get("finish_reason")
        if isinstance(reason, dict):
            reason = reason.get("type")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
        if new is not None:
            self.output_tokens = cumulative if cumulative is not None else self.ids.seen
            if new:
                self.chunk_times.append(now)
                self.chunk_tokens.append(new)
                self.counted = self.ids.seen
            return
        text = text or ""
        # no output_ids: SGLang streams the cumulative text by default, the increment with
        # --incremental-streaming-output
        new_text = text[len(self.last_text) :] if text.startswith(self.last_text) else text
        self.last_text = text if text.startswith(self.last_text) else self.last_text + text
        if cumulative is not None:
            bearing = cumulative > self.counted and bool(new_text)
            self.output_tokens = cumulative
        else:
            bearing = bool(new_text)
        if bearing:
            self._token_chunk(now, cumulative)
            if self.keep_text:
                self.text_parts.append(new_text)

    def _token_chunk(self, now: int, cumulative: int | None) -> None:
        self.chunk_times.append(now)
        if cumulative is None:
            self.chunk_tokens_known = False
        else:
            self.chunk_tokens.append(cumulative - self.counted)
            self.counted = cumulative
