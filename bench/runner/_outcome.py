"""How a sweep ends: when to stop early, which levels are valid, and the record's final status (pure).

* A level is *failed* (``Level.failure``, in words) when its error rate is above the config's ``error_threshold``
  (:func:`bench.runner.metrics.level_failure`) or when it was stopped before its end (:func:`stopped_level`).
* A run is ``complete`` only when it measured every level it ran and none failed; ``partial`` when at least one
  level is valid but a level failed or the sweep stopped early; ``failed`` when no level is valid.
* :class:`AbortPolicy` stops the sweep when the server is gone or answers nothing but errors: the launched process
  exited, or ``max_consecutive`` requests in a row failed (connection refused, 5xx, broken or malformed streams,
  timeouts). Its counts run across levels: a dead server is still dead at the next level.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from bench.record.model import TEXT_LIMITS, Level, Record, Status
from bench.redact import redact_text

from .request import RequestResult

__all__ = ["ABORT_KINDS", "AbortPolicy", "final_status", "finish_record", "stopped_level"]

# Failures that say the server is gone or is not speaking the protocol. Not counted: http_4xx (a bad request is
# the harness's or the config's problem, reported per level), no_tokens (a model may stop at once), cancelled.
ABORT_KINDS = frozenset({"connect", "http_5xx", "stream_broken", "bad_response", "timeout"})


class _Server(Protocol):
    def is_alive(self) -> bool: ...

    def exit_description(self) -> str: ...


def _clip(text: str, limit: int = TEXT_LIMITS["message"]) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def final_status(
    levels: list[Level], *, error: str | None = None, log_excerpt: str | None = None, failed_level: int | None = None
) -> Status:
    """The run's status from its levels and the reason it stopped early, if it did."""
    bad = [lv for lv in levels if lv.failed]
    good = len(levels) - len(bad)
    if error is None and not bad:
        return Status(state="complete", message=f"{len(levels)} level(s) measured")
    listed = [lv for lv in bad if not (error and lv.concurrency == failed_level)]  # the error names that one
    details = "; ".join(f"C={lv.key}: {lv.failure}" for lv in listed)
    if error is None:
        message = f"{len(bad)} of {len(levels)} level(s) failed: {details}"
    else:
        message = error + (f"; failed earlier: {details}" if listed else "")
    if failed_level is None and bad:
        failed_level = bad[0].concurrency
    return Status(
        state="partial" if good else "failed",
        message=_clip(redact_text(message)),  # an abort reason quotes the server's error text
        log_excerpt=log_excerpt or None,
        failed_level=failed_level,
    )


def finish_record(
    record: Record,
    *,
    error: str | None = None,
    log_excerpt: str | None = None,
    failed_level: int | None = None,
    **update: Any,
) -> Record:
    """The record with its final status (see :func:`final_status`); ``update`` replaces other fields."""
    status = final_status(record.levels, error=error, log_excerpt=log_excerpt, failed_level=failed_level)
    data = record.model_dump()
    data.update(status=status.model_dump(), **update)
    return Record.model_validate(data)


def stopped_level(level: Level, reason: str) -> Level:
    """A level the sweep stopped before its end: kept (its requests were sent) but failed."""
    failure = f"stopped before its end: {reason}" + (f"; also {level.failure}" if level.failure else "")
    return Level.model_validate({**level.model_dump(), "failure": _clip(failure)})


@dataclass
class AbortPolicy:
    """Decides when the server is gone. ``observe`` sees every result; calling the policy returns a reason or None."""

    server: _Server | None = None
    max_consecutive: int = 8
    last_error: str | None = None
    _streak: Counter[str] = field(default_factory=Counter)

    def observe(self, result: RequestResult) -> None:
        if result.ok:
            self._streak.clear()
        elif result.error_kind in ABORT_KINDS:
            self._streak[result.error_kind] += 1
            self.last_error = f"{result.error_kind}: {result.error}"

    def __call__(self) -> str | None:
        if self.server is not None and not self.server.is_alive():
            return f"the server process {self.server.exit_description()}"
        total = sum(self._streak.values())
        if total >= self.max_consecutive:
            kinds = ", ".join(f"{kind} {n}" for kind, n in self._streak.most_common())
            return f"{total} consecutive failed requests ({kinds}; last: {self.last_error})"
        return None
