"""A stand-in model server on 127.0.0.1 for agent hosts run offline.

Usage: python3 model_server.py RECORD_FILE PORT_FILE

Answers the Anthropic Messages API (`POST /v1/messages`, streamed or not)
and the OpenAI chat completions API (`POST /v1/chat/completions`, streamed or
not) with one short text reply, and appends every request body, as one JSON
line, to RECORD_FILE. Writes the port it listens on to PORT_FILE. Anything
else gets an empty JSON object. Runs until killed.

Anthropic requests that carry mem's consolidation instructions (`asked
once for session `<id>``) are answered as a model that follows them would:
load mem's MCP `memory_remember` tool (`ToolSearch`, when the host defers
it), call it once with `session_id` set to that session, then reply.
"""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = "Noted."
LOCK = threading.Lock()
ASKED = re.compile(r"asked once for session `([A-Za-z0-9._:-]+)`")
SAVED = "facts/consolidated-staging"


def texts(content):
    """The text of a message's content: a string, or its text blocks."""
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def blocks(message, kind):
    content = message.get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if isinstance(content, list) else []


def consolidation_call(body):
    """What a model following the consolidation instructions calls next, as
    (tool, input), or None: after the newest message that carries them,
    `ToolSearch` to load the deferred `memory_remember` (Claude Code defers
    MCP tools), then `memory_remember` with the session id, then nothing."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    messages = body["messages"]
    asked = [i for i, m in enumerate(messages) if m.get("role") != "assistant"
             and ASKED.search("\n".join(texts(m.get("content"))))]
    if not asked:
        return None
    found = ASKED.search("\n".join(texts(messages[asked[-1]].get("content"))))
    since = messages[asked[-1] + 1:]
    called = {b.get("name") for m in since for b in blocks(m, "tool_use")}
    tools = [t.get("name", "") for t in body.get("tools") or []]
    remember = next((t for t in tools if t.endswith("memory_remember")), None)
    if any(name and name.endswith("memory_remember") for name in called):
        return None
    if remember:
        return remember, {"path": SAVED, "session_id": found.group(1),
                          "body": "The staging cluster is shopfront-stg; a deploy there takes about four minutes."}
    deferred = re.search(r"(mcp__[A-Za-z0-9_]*?__memory_remember)", json.dumps(body))
    if "ToolSearch" in tools and "ToolSearch" not in called and deferred:
        return "ToolSearch", {"query": f"select:{deferred.group(1)}"}
    return None


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
            call = consolidation_call(body)
            if call:
                return self._anthropic_tool(stream, model, *call)
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

    def _anthropic_tool(self, stream, model, name, arguments):
        usage = {"input_tokens": 100, "output_tokens": 20}
        block = {"type": "tool_use", "id": f"toolu_standin_{name[-15:]}", "name": name, "input": {}}
        message = {"id": "msg_standin_tool", "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not stream:
            message.update(content=[{**block, "input": arguments}], stop_reason="tool_use")
            return self._send(200, "application/json", json.dumps(message))
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "input_json_delta", "partial_json": json.dumps(arguments)}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use",
                               "stop_sequence": None}, "usage": {"output_tokens": 20}}),
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
