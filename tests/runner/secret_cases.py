"""The secrets planted in real ``bench run`` invocations and what benchbook guarantees for each: the one list.

Each row is ``(name, where it is planted, expected outcome, the fake value, how it appears in a log line)``; the
last is a format string around ``{value}``. The values are fake, made to look like the real thing.
``tests/runner/test_planted_secrets.py`` plants every value (a row it does not plant fails) in runs against the
local test server and asserts that none appears in the record file, its log excerpt or the terminal;
``tests/hooks/test_hooks_secrets.py`` plants the same kinds in a record and builds the site. The "Reliability" docs
page is generated from this list, and its build runs each log line through the redactor again. The descriptions
avoid the syntax they describe, so the page's own redaction leaves them readable. Plain data: no imports.
"""

_HIDDEN = "hidden: never in the record file, its log excerpt or the terminal"

SECRET_CASES: list[tuple[str, str, str, str, str]] = [
    ("hf-token", "a Hugging Face token (hf_…) in the environment, the server log and a 500 body", _HIDDEN,
     "hf_PlantedE2eToken0123456789abcdef", "loaded {value}"),
    ("openai-key", "an OpenAI-style key (sk-…) given to the server's api-key flag and echoed in a 500 body",
     _HIDDEN, "sk-PlantedE2eOpenAiKey0123456789", "invalid credentials: key {value}"),
    ("stripe-key", "a Stripe live key (sk_live_…) printed in the server log", _HIDDEN,
     "sk_live_PlantedStripe0123456789ab", "fallback {value}"),
    ("google-token", "a Google access token (ya29.…) echoed in a 500 body", _HIDDEN,
     "ya29.PlantedGoogleAccessToken0123", "google {value}"),
    ("aws-key-id", "an AWS access key id (AKIA…) in the server's environment", _HIDDEN,
     "AKIAPLANTEDE2E01234X", "AWS_ACCESS_KEY_ID={value}"),
    ("aws-secret", "an AWS secret access key in the server's environment and its log", _HIDDEN,
     "Pl4ntedAwsSecretKeyValue/abc+DEF0123456xyz", "aws_secret_access_key = {value}"),
    ("redis-password", "a password in the user part of a redis URL (server environment, 500 body)", _HIDDEN,
     "PlantedRedisPw77", "url redis://:{value}@cache:6379"),
    ("access-token-query", "an access_token query parameter in a URL given to the server", _HIDDEN,
     "PlantedAccessTok42", "https://store.internal/w.bin?access_token={value}&part=1"),
    ("nccl-signature", "a sig query parameter in an NCCL plugin path (NCCL_NET_PLUGIN, read by the harness)",
     _HIDDEN, "PlantedNcclSig0123", "NCCL_NET_PLUGIN=/opt/nccl/libnccl-net.so?sv=2026&sig={value}"),
    ("url-password", "a user and password in the address given to the url flag (attached run, and one that never "
     "answers)", _HIDDEN, "PlantedUrlPassword9", "the server at http://admin:{value}@127.0.0.1:8000 is not ready"),
    ("admin-token", "an admin-token flag whose value has no key shape at all", _HIDDEN, "PlainAdminWords",
     "fake engine starting: --port 8000 --admin-token {value}"),
    ("password-variable", "a server variable whose name ends in PASSWORD", _HIDDEN, "PlantedPassw0rdValue",
     "SERVER_PASSWORD={value}"),
    ("cookie-variable", "a server variable whose name ends in COOKIE", _HIDDEN, "PlantedCookieVal",
     "SERVER_COOKIE={value}"),
    ("session-variable", "a server variable whose name ends in SESSION", _HIDDEN, "PlantedSessionVal",
     "SERVER_SESSION={value}"),
    ("bearer-variable", "a server variable whose name ends in BEARER", _HIDDEN, "PlantedBearerVal",
     "SERVER_BEARER={value}"),
    ("passphrase-variable", "a server variable whose name ends in PASSPHRASE, its value words with spaces",
     _HIDDEN, "planted pass phrase", "SERVER_PASSPHRASE={value}"),
    ("private-key", "a PEM private-key block printed in the server log", _HIDDEN,
     "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7PlantedPemBody",
     "-----BEGIN PRIVATE KEY-----\n{value}\n-----END PRIVATE KEY-----"),
]  # fmt: skip
