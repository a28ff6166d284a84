"""A stand-in for an OpenAI-compatible server (SGLang's or vLLM's `/v1/chat/completions`), on 127.0.0.1.

No real model can run on these machines (no GPU, no weights), so `--explain` is tested against this server,
which answers the way such servers do: the answer's JSON in `choices[0].message.content`, the served model's
name in `model`, `/v1/models` listing it.  Each test chooses what it answers (a `Behaviour`) and reads back
every request it received.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "standin/Qwen3-8B"


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Behaviour:
    """What the server answers to a chat completion."""

    content: str = ""  # choices[0].message.content
    status: int = 200  # any other status answers with an error body instead
    sleep: float = 0.0  # seconds before answering (past the client's timeout: a timeout)
    # The response_format types the server rejects with 400, as a server without structured output does.
    rejects: tuple[str, ...] = ()
    redirect_to: str | None = None  # answer 307 with this Location
    raw_body: bytes | None = None  # answer this body as is (a reply that is not JSON)
    requests: list[Request] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # keep pytest's output clean

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _record(self, body: bytes) -> Behaviour:
        behaviour = self.server.behaviour
        behaviour.requests.append(Request(self.command, self.path, dict(self.headers.items()), body))
        return behaviour

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._record(b"")
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        behaviour = self._record(body)
        if behaviour.sleep:
            time.sleep(behaviour.sleep)
        if behaviour.redirect_to:
            self._send(307, b"", {"Location": behaviour.redirect_to})
            return
        if behaviour.raw_body is not None:
            self._send(behaviour.status, behaviour.raw_body)
            return
        if behaviour.status != 200:
            self._send(behaviour.status, b'{"object": "error", "message": "Internal Server Error", "code": 500}')
            return
        kind = (json.loads(body).get("response_format") or {}).get("type")
        if kind in behaviour.rejects:
            message = {"object": "error", "message": f"response_format {kind} is not supported", "code": 400}
            self._send(400, json.dumps(message).encode())
            return
        self._send(200, json.dumps(_completion(behaviour.content)).encode())


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler still sleeping (the timeout test) must not hold up the test's end

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviour = behaviour

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that gave up (the timeout test)
            super().handle_error(request, client_address)


@contextmanager
def standin_server(behaviour: Behaviour) -> Iterator[str]:
    """The server running in a thread; yields its base URL (`http://127.0.0.1:PORT/v1`)."""
    server = _Server(behaviour)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def answer(**overrides: Any) -> str:
    """A well-formed answer's JSON, with `overrides` in place of its fields."""
    data: dict[str, Any] = {
        "root_cause": "The tensor-parallel size does not divide the data-parallel size the scheduler was given.",
        "category": "parallel-config",
        "fix": [{"op": "set", "flag": "--dp-size", "value": "2", "to": None}],
        "upgrade": None,
        "evidence": ['assert cfg["tp"] % cfg["dp"] == 0, "tp must divide dp"'],
    }
    data.update(overrides)
    return json.dumps(data)
