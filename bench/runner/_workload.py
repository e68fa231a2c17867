"""What the workload does to a server's prefix cache: unique request prefixes, and the cache policy in words.

The shipped plans send each prompt of a 55-prompt set dozens of times (about 45 times at C=250). A server with a
prefix cache (SGLang's radix cache, llama-server's slot prompt reuse, vLLM's prefix caching) then serves most
prompt tokens from its cache, which lowers TTFT and raises throughput by an amount that depends on the plan, not
on the engine. ``prefix: unique`` (the default) opens every request with its own short marker, so no two
requests share more than the chat template's opening tokens and the marker's first character or two; the
prompt's length class does not change (the marker adds about 5–10 tokens to prompts of about 50–400).
``prefix: repeated`` sends the prompts as written. Either way the record keeps ``Workload.prefix``, the cache
policy (:func:`cache_policy`) and, per level, the cached prompt tokens the server reported (``Level.prefix_cache``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["PREFIX_MODES", "Prefix", "cache_policy", "prefix_marker", "with_marker"]

Prefix = Literal["unique", "repeated"]
PREFIX_MODES: tuple[Prefix, ...] = ("unique", "repeated")
_MARKER_HEX = 8


def prefix_marker(nonce: str, index: int) -> str:
    """The marker of request ``index`` of the run ``nonce`` (the record id): 8 hex digits, then ``": "``.
    Derived from both, so it differs between requests of a run and between runs on the same server."""
    digest = hashlib.sha256(f"{nonce}:{index}".encode()).hexdigest()[:_MARKER_HEX]
    return f"{digest}: "


def with_marker(payload: str | list[dict[str, str]], marker: str) -> str | list[dict[str, str]]:
    """The request's prompt with ``marker`` at its very start: before the text (completions, /generate), or
    before the first message's content (chat: the system prompt if there is one, so a system prompt shared by
    several prompts is not reused either)."""
    if isinstance(payload, str):
        return marker + payload
    if not payload:
        return payload
    first = {**payload[0], "content": marker + payload[0]["content"]}
    return [first, *payload[1:]]


def _arg(args: Mapping[str, Any], name: str) -> Any:
    for key in (name, name.replace("-", "_"), f"--{name}"):
        if key in args:
            return args[key]
    return None


def cache_policy(engine: str, args: Mapping[str, Any], server_info: Mapping[str, Any] | None) -> str:
    """The server's prefix cache in words, saying whether the server reported it or only the config implies it."""
    info = server_info or {}
    if engine == "sglang":
        if isinstance(info.get("disable_radix_cache"), bool):
            state = "off" if info["disable_radix_cache"] else "on"
            return (
                f"SGLang radix cache {state} (reported: server_info disable_radix_cache={info['disable_radix_cache']})"
            )
        if _arg(args, "disable-radix-cache"):
            return "SGLang radix cache off (--disable-radix-cache; not confirmed by the server)"
        return "SGLang radix cache on: the default, not disabled by the config (not confirmed by the server)"
    if engine == "llama.cpp":
        text = "llama-server reuses the prompt prefix each slot shares with its previous request (cache_prompt default)"
        reuse = _arg(args, "cache-reuse")
        return text + (f"; --cache-reuse {reuse}" if reuse else "")
    if engine == "benchbook-testserver":
        if _arg(args, "prefix-cache"):
            return "test server: simulated prefix cache (--prefix-cache)"
        return "test server: no prefix cache"
    return f"{engine}: not known (the server does not report a prefix-cache policy)"
