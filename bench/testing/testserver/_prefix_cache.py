"""A prefix cache in miniature, so a workload's cache policy can be tested without an engine."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["PrefixCacheSim"]


class PrefixCacheSim:
    """A prefix cache in miniature: a prompt's cached tokens are the words it shares with the start of an earlier
    prompt (the longest such prefix), at most all but the last word, as a radix cache computes at least one
    token. Earlier prompts are looked up by their first word (the last ``per_word`` prompts for each)."""

    def __init__(self, per_word: int = 64) -> None:
        self._by_first: dict[str, list[tuple[str, ...]]] = {}
        self._per_word = per_word

    def cached(self, words: Sequence[str]) -> int:
        prompt = tuple(words)
        if not prompt:
            return 0
        seen = self._by_first.setdefault(prompt[0], [])
        best = 0
        for earlier in seen:
            n = 0
            for a, b in zip(prompt, earlier, strict=False):
                if a != b:
                    break
                n += 1
            best = max(best, n)
        seen.append(prompt)
        del seen[: -self._per_word]
        return min(best, len(prompt) - 1)
