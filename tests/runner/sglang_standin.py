"""An in-process stand-in for an SGLang 0.5.17 server: its info endpoints and streams, in the real shapes.

Every payload is what a real SGLang 0.5.17 answered on the H200 machine (``/work/shared/sglang-h200/observed/``),
not a guess:

* ``/server_info`` and ``/get_server_info`` (0.5.17 serves both; the old route logs a deprecation warning):
  ``fixtures/sglang/server_info-baseline.json`` is the payload kept in benchbook record
  ``observed/benchbook-main/20261201T105918Z-baseline-generate-388416b.json`` (``server.server_info``); the NGRAM
  and EAGLE-3 servers' payloads are that one with the changes in ``server_info-ngram.diff.json`` and
  ``server_info-eagle3-tree.diff.json`` (from the ``ngram-generate`` and ``eagle3-tree`` records). In sglang
  0.5.17's ``sglang/srt/entrypoints/http_server.py`` (PyPI wheel ``sglang-0.5.17-cp311``) the handler is
  l.771-806: ``**server_args`` (flat), ``**scheduler_info``, ``startup_time``, ``internal_states`` (one entry per
  DP rank), ``version``, ``kv_events``.
* ``/model_info`` and ``/get_model_info``: l.723-758 (``model_path``, ``tokenizer_path``, ``is_generation``,
  ``preferred_sampling_params``, ``weight_version``, ``has_image_understanding``, ``has_audio_understanding``,
  ``model_type``, ``architectures``; the ``embedding`` plan, cut short in ``baseline-endpoints.txt``, is left out).
* ``/v1/models``: l.1823-1852 and ``ModelCard`` (``openai/protocol.py`` l.69-78: ``owned_by: "sglang"``);
  the body is ``baseline-endpoints.txt``'s.
* No ``/version`` route in 0.5.17: 404 with FastAPI's ``{"detail": "Not Found"}``.
* ``/health``, ``/health_generate``: 200 with an empty body (l.646-720).
* ``POST /generate`` streamed (l.874-904): ``data: {json}`` per step, each repeating the whole text and every
  ``output_ids`` so far, ``meta_info.completion_tokens`` counting up, then ``data: [DONE]``. The last chunk's
  ``meta_info`` has ``finish_reason {"type": "length", "length": N}``, ``e2e_latency`` and, on a speculative
  server, the ``spec_*`` fields of ``ngram-endpoints.txt`` ("spec gen last").
* ``POST /v1/chat/completions`` streamed: a first chunk with ``role`` and empty content, content chunks, a
  ``finish_reason`` chunk, then ``choices: []`` with ``usage`` (``baseline-endpoints.txt`` "chat first/last").

Responses carry ``server: uvicorn`` (the HTTP server SGLang runs on).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures" / "sglang"
VARIANTS = ("baseline", "ngram", "eagle3-tree")


def server_info(variant: str = "baseline") -> dict[str, Any]:
    """The ``/server_info`` payload of the observed baseline, NGRAM or EAGLE-3 (tree) server."""
    info: dict[str, Any] = json.loads((FIXTURES / "server_info-baseline.json").read_text(encoding="utf-8"))
    if variant != "baseline":
        diff = json.loads((FIXTURES / f"server_info-{variant}.diff.json").read_text(encoding="utf-8"))
        info.update(diff["changed"])
        info["internal_states"] = [{**info["internal_states"][0], **diff["internal_states_0_changed"]}]
    return info


def model_info(model_path: str) -> dict[str, Any]:
    return {
        "model_path": model_path,
        "tokenizer_path": model_path,
        "is_generation": True,
        "preferred_sampling_params": None,
        "weight_version": "default",
        "has_image_understanding": False,
        "has_audio_understanding": False,
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def version_string(self) -> str:
        return "uvicorn"

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _empty(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        info = self.server.info
        self.server.asked.append(self.path)
        if self.path in ("/health", "/health_generate"):
            self._empty()
        elif self.path in ("/server_info", "/get_server_info"):
            self._json(200, info)
        elif self.path in ("/model_info", "/get_model_info"):
            self._json(200, model_info(info["model_path"]))
        elif self.path == "/v1/models":
            name = info["served_model_name"]
            card = {"id": name, "object": "model", "created": int(time.time()), "owned_by": "sglang",
                    "root": name, "parent": None, "max_model_len": 8192}  # fmt: skip
            self._json(200, {"object": "list", "data": [card]})
        else:
            self._json(404, {"detail": "Not Found"})

    def _stream(self, events: Iterator[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in [*events, None]:
            line = b"data: [DONE]\n\n" if event is None else b"data: " + json.dumps(event).encode() + b"\n\n"
            self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        self.server.asked.append(self.path)
        if self.path == "/generate":
            n = int((body.get("sampling_params") or {}).get("max_new_tokens") or 16)
            self._stream(self._generate(min(n, self.server.output_tokens)))
        elif self.path == "/v1/chat/completions":
            n = int(body.get("max_tokens") or 16)
            self._stream(self._chat(min(n, self.server.output_tokens)))
        else:
            self._json(404, {"detail": "Not Found"})

    def _spec(self, n: int) -> dict[str, Any]:
        """The ``spec_*`` fields of the real NGRAM server's last chunk, for ``n`` tokens in steps of 2."""
        steps = (n + 1) // 2
        proposed = steps * int(self.server.info.get("speculative_num_draft_tokens") or 1)
        accepted = n - steps
        return {"spec_accept_rate": accepted / proposed, "spec_accept_length": n / steps,
                "spec_num_correct_drafts": accepted, "spec_num_proposed_drafts": proposed, "spec_verify_ct": steps,
                "spec_accepted_drafts": accepted, "spec_proposed_drafts": proposed}  # fmt: skip

    def _generate(self, n: int) -> Iterator[dict[str, Any]]:
        rid, start = uuid.uuid4().hex, time.time()
        for k in range(1, n + 1):
            time.sleep(0.002)
            meta: dict[str, Any] = {"id": rid, "finish_reason": None, "prompt_tokens": 5, "weight_version": "default",
                                    "num_retractions": 0, "reasoning_tokens": 0, "completion_tokens": k,
                                    "cached_tokens": 2, "cached_tokens_details": {"device": 2, "host": 0},
                                    "dp_rank": None}  # fmt: skip
            if k == n:
                meta.update(finish_reason={"type": "length", "length": n}, e2e_latency=time.time() - start)
                if self.server.info.get("speculative_algorithm"):
                    meta.update(self._spec(n))
            yield {"text": " tok" * k, "output_ids": list(range(7042, 7042 + k)), "meta_info": meta}

    def _chat(self, n: int) -> Iterator[dict[str, Any]]:
        head = {"id": uuid.uuid4().hex, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": "default"}  # fmt: skip

        def choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**head, "choices": [{"index": 0, "delta": {"reasoning_content": None, **delta}, "logprobs": None,
                                         "finish_reason": finish, "matched_stop": None}]}  # fmt: skip

        yield choice({"role": "assistant", "content": ""})
        for _ in range(n):
            time.sleep(0.002)
            yield choice({"content": " tok"})
        yield choice({}, "length")
        usage = {"prompt_tokens": 42, "total_tokens": 42 + n, "completion_tokens": n, "prompt_tokens_details": None,
                 "reasoning_tokens": 0}  # fmt: skip
        yield {**head, "choices": [], "usage": usage}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, info: dict[str, Any], output_tokens: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.info = info
        self.output_tokens = output_tokens
        self.asked: list[str] = []


@contextmanager
def sglang_standin(variant: str = "baseline", *, output_tokens: int = 12) -> Iterator[_Server]:
    """Serve the ``variant`` SGLang server (see :data:`VARIANTS`) on a free port; ``.server_address`` has it."""
    server = _Server(server_info(variant), output_tokens)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def url_of(server: _Server) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}"
