"""How a run ends (bench.runner._outcome): level validity, the final status, and when the sweep gives up."""

from __future__ import annotations

from typing import Any

from bench.record.model import TEXT_LIMITS, Level, LevelErrors
from bench.runner._outcome import AbortPolicy, final_status, stopped_level
from bench.runner.request import RequestResult


def lv(c: int, failure: str | None = None) -> Level:
    return Level(concurrency=c, requests_sent=4, failure=failure)


def result(ok: bool, kind: str | None = None) -> RequestResult:
    return RequestResult(
        ok=ok, t_sent_ns=0, t_first_ns=None, t_last_ns=None, t_done_ns=1, chunk_times_ns=[], chunk_tokens=None,
        output_tokens=None, input_tokens=None, token_source="unknown", finish_reason=None, error_kind=kind,
        error=None if ok else f"{kind} happened",
    )  # fmt: skip


def test_complete_only_when_every_level_is_valid() -> None:
    s = final_status([lv(1), lv(2)])
    assert (s.state, s.message, s.failed_level) == ("complete", "2 level(s) measured", None)
    s = final_status([lv(1), lv(2, "error rate 50% (...)"), lv(4, "error rate 75% (...)")])
    assert s.state == "partial" and s.failed_level == 2
    assert s.message == "2 of 3 level(s) failed: C=2: error rate 50% (...); C=4: error rate 75% (...)"
    s = final_status([lv(1, "error rate 100% (...)")])
    assert (s.state, s.message) == ("failed", "1 of 1 level(s) failed: C=1: error rate 100% (...)")
    assert final_status([]).state == "complete"  # nothing planned and nothing failed (a config with no levels)


def test_a_stop_names_its_cause_and_the_earlier_failures_once() -> None:
    levels = [lv(1), lv(2, "error rate 9% (...)"), stopped_level(lv(4), "the server process exited with status 1")]
    s = final_status(levels, error="stopped during level C=4: the server process exited", failed_level=4)
    assert s.state == "partial" and s.failed_level == 4
    assert s.message == "stopped during level C=4: the server process exited; failed earlier: C=2: error rate 9% (...)"
    assert final_status([], error="server not ready", log_excerpt="tail").model_dump() == {
        "state": "failed", "message": "server not ready", "log_excerpt": "tail", "failed_level": None,
    }  # fmt: skip
    assert final_status([lv(1)], error="interrupted").state == "partial"


def test_long_messages_are_clipped_to_the_schema_limit() -> None:
    levels = [lv(c, "error rate 100% " + "x" * 400) for c in range(1, 20)]
    s = final_status(levels)
    assert s.message is not None and len(s.message) == TEXT_LIMITS["message"] and s.message.endswith("…")


def test_stopped_level_keeps_its_counts_and_both_reasons() -> None:
    level = Level(concurrency=8, requests_sent=5, requests_completed=2, requests_failed=3,
                  errors=LevelErrors(error_rate=0.6), failure="error rate 60% (...)")  # fmt: skip
    out = stopped_level(level, "8 consecutive failed requests")
    assert out.failure == "stopped before its end: 8 consecutive failed requests; also error rate 60% (...)"
    assert (out.requests_sent, out.requests_completed, out.requests_failed) == (5, 2, 3)


class Dead:
    def __init__(self) -> None:
        self.alive = True

    def is_alive(self) -> bool:
        return self.alive

    def exit_description(self) -> str:
        return "killed by signal SIGKILL"


def test_abort_policy_counts_across_levels_and_resets_on_success() -> None:
    policy = AbortPolicy(max_consecutive=4)
    for kind in ("connect", "http_5xx", "timeout"):
        policy.observe(result(False, kind))
    assert policy() is None
    policy.observe(result(True))  # a success: the server is alive
    for kind in ("http_4xx", "no_tokens", "cancelled"):  # a bad request or an empty answer: not "server gone"
        policy.observe(result(False, kind))
    assert policy() is None
    for kind in ("connect", "connect", "bad_response", "stream_broken"):
        policy.observe(result(False, kind))
    reason = policy()
    assert reason is not None and reason.startswith("4 consecutive failed requests (connect 2, ")
    assert reason.endswith("last: stream_broken: stream_broken happened)")


def test_abort_policy_sees_a_dead_process_at_once() -> None:
    server: Any = Dead()
    policy = AbortPolicy(server=server)
    assert policy() is None
    server.alive = False
    assert policy() == "the server process killed by signal SIGKILL"


def test_a_secret_in_a_server_error_never_reaches_the_status() -> None:
    policy = AbortPolicy(max_consecutive=1)
    failure = result(False, "http_5xx")
    failure.error = "HTTP 500: bad key sk-FAKEopenaiKEY0987654321zyxwv for https://user:hunter2@proxy:8080"
    policy.observe(failure)
    reason = policy()
    assert reason is not None and "sk-FAKE" in reason  # the policy keeps the raw text; the record must not
    message = final_status([], error=f"stopped during level C=1: {reason}").message or ""
    assert "sk-FAKEopenaiKEY0987654321zyxwv" not in message and "hunter2" not in message
    assert message.startswith("stopped during level C=1: 1 consecutive failed requests (http_5xx 1; last: http_5xx:")
