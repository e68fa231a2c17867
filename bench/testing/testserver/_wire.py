"""What the test server writes: HTTP/1.1 heads, chunked SSE frames, and the JSON payloads of the OpenAI routes and
of SGLang 0.5.17's native ``/generate``."""

from __future__ import annotations

import json
from typing import Any

from ._config import HEADER, SERVER_NAME, TestServerConfig, Truth

__all__ = ["Events", "response_head", "sse", "sse_comment", "whole_response"]


def _words(n: int, start: int = 0) -> str:
    return "".join(f" w{i}" for i in range(start, start + n))


def sse(obj: Any) -> bytes:
    payload = b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def sse_comment(text: bytes) -> bytes:
    payload = b": " + text + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(payload), payload)


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}


def response_head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}", f"server: {SERVER_NAME}", f"{HEADER}: 1"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class Events:
    """The JSON payloads of one streamed response."""

    def __init__(
        self, api: str, cfg: TestServerConfig, truth: Truth, prompt: tuple[int, int | None], continuous: bool
    ) -> None:
        self.api, self.cfg, self.truth, self.continuous = api, cfg, truth, continuous
        self.prompt_tokens, self.cached = prompt
        self.sent = 0
        self.id = "cmpl-benchbook-test"

    def _usage(self) -> dict[str, Any]:
        return _usage(self.prompt_tokens, self.sent, self.cached)

    def _choice(self, text: str | None, finish: str | None, role: bool = False) -> dict[str, Any]:
        if self.api == "chat":
            delta: dict[str, str] = {"role": "assistant"} if role else {}
            if text is not None:
                delta["content"] = text
            return {"index": 0, "delta": delta, "finish_reason": finish}
        return {"index": 0, "text": text or "", "finish_reason": finish}

    def _envelope(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        kind = "chat.completion.chunk" if self.api == "chat" else "text_completion"
        obj: dict[str, Any] = {"id": self.id, "object": kind, "model": self.cfg.model, "choices": choices}
        if self.continuous:
            obj["usage"] = self._usage()
        return obj

    def role(self) -> dict[str, Any]:
        return self._envelope([self._choice(None, None, role=True)])

    def content(self, k: int, size: int) -> dict[str, Any]:
        start = self.sent
        self.sent += size
        if self.api != "generate":
            return self._envelope([self._choice(_words(size, start), None)])
        last = k == len(self.truth.chunk_tokens) - 1
        first = start if self.cfg.incremental_output else 0
        meta = _sglang_meta(self.cfg, self.truth, self.prompt_tokens, self.cached, self.sent, k + 1, last)
        return {
            "text": _words(self.sent - first, first),
            "output_ids": list(range(first, self.sent)),
            "meta_info": meta,
        }

    def finish(self) -> dict[str, Any]:
        obj = self._envelope([self._choice(None if self.api == "chat" else "", self.truth.finish_reason)])
        if self.cfg.draft_tokens_per_step is not None:  # llama.cpp's per-request timings
            steps = len(self.truth.chunk_tokens)
            obj["timings"] = {
                "predicted_n": self.sent,
                "draft_n": steps * self.cfg.draft_tokens_per_step,
                "draft_n_accepted": self.sent - steps,
            }
            if self.cached is not None:
                obj["timings"]["cache_n"] = self.cached
        return obj

    def usage(self) -> dict[str, Any]:
        kind = "chat.completion.chunk" if self.api == "chat" else "text_completion"
        return {"id": self.id, "object": kind, "model": self.cfg.model, "choices": [], "usage": self._usage()}


def _usage(prompt_tokens: int, completion_tokens: int, cached: int | None) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def _sglang_meta(
    cfg: TestServerConfig, truth: Truth, prompt_tokens: int, cached: int | None, sent: int, steps: int, last: bool
) -> dict[str, Any]:
    """``meta_info`` as SGLang 0.5.17 streams it (keys and order from tests/runner/fixtures/sglang/); the
    speculative counters are cumulative, one verify step per chunk, ``tokens - 1`` accepted drafts per step."""
    finish: dict[str, Any] | None = None
    if last:
        finish = {"type": "length", "length": sent} if truth.finish_reason == "length" else {"type": "stop"}
    meta: dict[str, Any] = {"id": "benchbook-test", "finish_reason": finish, "prompt_tokens": prompt_tokens}
    if cfg.usage:
        meta["completion_tokens"] = sent
    if cached is not None:
        meta["cached_tokens"] = cached
    if cfg.draft_tokens_per_step is not None:
        proposed, accepted = steps * cfg.draft_tokens_per_step, sent - steps
        meta.update(
            spec_accept_rate=accepted / proposed if proposed else 0.0,
            spec_accept_length=sent / steps,
            spec_num_correct_drafts=accepted,
            spec_num_proposed_drafts=proposed,
            spec_verify_ct=steps,
            spec_accepted_drafts=accepted,
            spec_proposed_drafts=proposed,
        )
    return meta


def whole_response(
    api: str, cfg: TestServerConfig, truth: Truth, prompt_tokens: int, cached: int | None
) -> dict[str, Any]:
    n = truth.output_tokens
    if api == "generate":
        meta = _sglang_meta(cfg, truth, prompt_tokens, cached, n, len(truth.chunk_tokens), True)
        return {"text": _words(n), "output_ids": list(range(n)), "meta_info": meta}
    if api == "chat":
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": _words(n)}}
    else:
        choice = {"index": 0, "text": _words(n)}
    choice["finish_reason"] = truth.finish_reason
    obj: dict[str, Any] = {"id": "cmpl-benchbook-test", "model": cfg.model, "choices": [choice]}
    if cfg.usage:
        obj["usage"] = _usage(prompt_tokens, n, cached)
    return obj
