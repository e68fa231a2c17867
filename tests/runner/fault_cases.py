"""The faults a `bench run` can meet, and what benchbook guarantees for each: the one list of them.

Each row is ``(name, what happens, expected outcome)``. The name's part before ``/`` is its group. The expected
outcome starts with the exit status and what is left on disk (``exit N; record STATE`` or ``exit N; no record``);
``tests/runner/test_faults.py`` runs every row (a row without a test, or a test without a row, fails) and checks
those two facts, besides its own assertions, on every case: the record validates, no traceback is printed, and no
server process is left behind (checked on the process table). The "Reliability" docs page is generated from this
list, so the page and the tests cannot disagree. Plain data: no imports.
"""

FAULT_CASES: list[tuple[str, str, str]] = [
    (
        "launch/exits-at-start",
        "the launched server exits with status 3 before it is ready (bench.testing.testserver --exit-at-start 3)",
        "exit 1; record failed, saying the server exited with status 3 before it was ready, with the server "
        "log's tail; nothing left running",
    ),
    (
        "launch/never-ready",
        "the launched server answers 503 to its readiness probe forever (--never-ready); ready_timeout_s is 3",
        "exit 1; record failed, saying the server was not ready after 3 s; the server is stopped",
    ),
    (
        "launch/killed-mid-level",
        "the launched server is SIGKILLed during the second level (--die-after-requests)",
        "exit 1; record partial: the first level valid, the second kept as a failed level stopped before its end, "
        "the status naming the signal; nothing left running",
    ),
    (
        "attached/killed-mid-level",
        "a server started by hand and attached with --url dies during the second level",
        "exit 1; record partial: the first level valid, the sweep stopped on consecutive failed requests "
        "(connection refused); nothing launched",
    ),
    (
        "responses/hangs-mid-stream",
        "every stream stops after 2 tokens but stays open (--hang-after-chunks 2); request_timeout_s is 1",
        "exit 1; record failed: every request failed as 'timeout' after the 1 s request timeout, which the "
        "record states (workload.request_timeout_s); nothing left running",
    ),
    (
        "responses/http-500",
        "the server answers every generation request with HTTP 500 (--fail-status 500)",
        "exit 1; record failed: each level's failure gives its error rate (100%, http_5xx) and the threshold; "
        "never 'complete'",
    ),
    (
        "responses/html-page",
        "the server answers 200 with an HTML page instead of an event stream (--bad-body html), as a proxy does",
        "exit 1; record failed: requests fail as 'bad_response', naming the content type text/html",
    ),
    (
        "responses/malformed-sse",
        "the server streams events whose data is not JSON (--bad-body malformed_sse)",
        "exit 1; record failed: requests fail as 'bad_response' ('event is not JSON')",
    ),
    (
        "responses/over-capacity",
        "the server answers 503 while 2 streams are already in flight (--max-streams 2); levels 1 and 4",
        "exit 1; record partial: level 1 valid, level 4 failed with its error rate above the 5% threshold",
    ),
    (
        "signals/sigint",
        "the harness gets SIGINT (Ctrl-C) during the second level",
        "exit 130; record partial: the first level kept, the status says 'interrupted (received SIGINT) during "
        "level C=2'; the server is stopped",
    ),
    (
        "signals/sigterm",
        "the harness gets SIGTERM during the second level",
        "exit 130; record partial: the first level kept, the status says 'interrupted (received SIGTERM)'; the "
        "server is stopped",
    ),
    (
        "signals/second-sigint-while-stopping",
        "the server ignores SIGTERM (--ignore-sigterm); the harness gets SIGINT, then a second SIGINT while it "
        "waits for the server to stop",
        "exit 130; record partial: the first level kept; the server is SIGKILLed after stop_timeout_s; nothing "
        "left running",
    ),
    (
        "storage/disk-full",
        "the records folder is a small tmpfs that fills up after the first level",
        "exit 1; record partial: the file keeps its last good version (the first level) intact, no temporary file "
        "is left, and the terminal names the error (No space left on device); nothing left running",
    ),
    (
        "storage/write-fails",
        "replacing the record file fails (an injected writer raising ENOSPC) after the first level",
        "exit 1; record partial: the file keeps its last good version byte for byte; the terminal says why the "
        "run stopped and that the file could not be written",
    ),
    (
        "storage/write-fails-once",
        "replacing the record file fails once (an injected writer raising ENOSPC) after the second level",
        "exit 1; record partial: the first level kept, the status saying the record could not be written after "
        "level C=2 and why",
    ),
    (
        "storage/read-only-records-dir",
        "the records folder is on a read-only file system",
        "exit 2; no record: an error naming the field records_dir and the reason, before any server is launched",
    ),
    (
        "input/records-dir-is-a-file",
        "--records-dir /etc/hostname (a file)",
        "exit 2; no record: \"--records-dir: field 'records_dir': a folder for records; /etc/hostname is a file\"",
    ),
    (
        "input/records-dir-in-proc",
        "records_dir: /proc/nope in the config",
        "exit 2; no record: an error naming the config file, the field records_dir and the reason; no traceback",
    ),
    (
        "input/url-not-a-url",
        "--url not-a-url",
        "exit 2; no record: an error naming the field url and what is expected",
    ),
    (
        "input/url-ftp",
        "--url ftp://127.0.0.1:21",
        "exit 2; no record: an error naming the field url (http:// or https:// only)",
    ),
    (
        "input/url-port-out-of-range",
        "--url http://127.0.0.1:99999",
        "exit 2; no record: an error naming the field url and the port range",
    ),
    (
        "scale/c512-soft-fd-limit",
        "concurrency 512 with the open-file limit at 256 (soft) and 4096 (hard)",
        "exit 0; record complete: the soft limit is raised (and said so); every request is accounted for "
        "(sent = completed + failed = planned, and the server counted as many)",
    ),
    (
        "scale/c512-hard-fd-limit",
        "concurrency 512 with the open-file limit at 256, soft and hard",
        "exit 2; no record: an error naming RLIMIT_NOFILE, the limit and the concurrency, before any server is "
        "launched",
    ),
]
