"""A stand-in model server on 127.0.0.1 for agent hosts run offline.

Usage: python3 model_server.py RECORD_FILE PORT_FILE

Answers the Anthropic Messages API (`POST /v1/messages`, streamed or not)
and the OpenAI chat completions API (`POST /v1/chat/completions`, streamed or
not) with one short text reply, and appends every request body, as one JSON
line, to RECORD_FILE. Writes the port it listens on to PORT_FILE. Anything
else gets an empty JSON object. Runs until killed.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = "Noted."
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _record(self, body):
        with LOCK, open(sys.argv[1], "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": self.path, "body": body}) + "\n")

    def _send(self, status, content_type, payload):
        data = payload.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send(200, "application/json", "{}")

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace")
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            return self._send(200, "application/json", json.dumps({"input_tokens": 100}))
        self._record(body)
        stream = isinstance(body, dict) and body.get("stream")
        model = body.get("model", "stand-in") if isinstance(body, dict) else "stand-in"
        if path.endswith("/messages"):
            return self._anthropic(stream, model)
        if path.endswith("/chat/completions"):
            return self._openai(stream, model)
        self._send(200, "application/json", "{}")

    def _anthropic(self, stream, model):
        usage = {"input_tokens": 100, "output_tokens": 2}
        message = {"id": "msg_standin", "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not stream:
            message.update(content=[{"type": "text", "text": REPLY}], stop_reason="end_turn")
            return self._send(200, "application/json", json.dumps(message))
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": REPLY}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                               "stop_sequence": None}, "usage": {"output_tokens": 2}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        self._send(200, "text/event-stream", text)

    def _openai(self, stream, model):
        if not stream:
            reply = {"id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": model,
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                                  "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102}}
            return self._send(200, "application/json", json.dumps(reply))
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {"content": REPLY}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102}},
        ]
        base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 0, "model": model}
        text = "".join(f"data: {json.dumps({**base, **c})}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(200, "text/event-stream", text)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[2], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
