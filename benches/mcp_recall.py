"""Time `memory_recall` (or, with TOOL=memory_context, `memory_context`) in
a running `mem mcp`: JSON-RPC over its stdin and stdout, one call at a time,
after one call that loads the model and lists the roots. Prints the median
and the server's peak memory (VmHWM); with JSON=1, one JSON line instead.

    python3 benches/mcp_recall.py target/release/mem TREE "a query" [CALLS]
"""
import os
import json
import statistics
import subprocess
import sys
import time

mem, tree, query = sys.argv[1:4]
calls = int(sys.argv[4]) if len(sys.argv) > 4 else 30
tool = os.environ.get("TOOL", "memory_recall")
server = subprocess.Popen([mem, "mcp"], cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def rpc(msg):
    server.stdin.write(json.dumps(msg) + "\n")
    server.stdin.flush()
    if "id" not in msg:
        return None
    while True:
        reply = json.loads(server.stdout.readline())
        if reply.get("id") == msg["id"]:
            return reply


rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})


def recall(i, q):
    started = time.perf_counter()
    reply = rpc({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                 "params": {"name": tool, "arguments": dict({"query": q, "limit": 10}, **({"track": False} if os.environ.get("TRACK") == "0" else {})) if tool == "memory_recall" else {"query": q}}})
    elapsed = time.perf_counter() - started
    assert not reply["result"].get("isError"), reply
    return elapsed


first = recall(1, query)
times = [recall(2 + i, f"{query} {i}") for i in range(calls)]
with open(f"/proc/{server.pid}/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM"))
server.stdin.close()
server.wait()
median = statistics.median(times) * 1000
if os.environ.get("JSON"):
    print(json.dumps({"tool": tool, "first_ms": first * 1000, "median_ms": median, "peak_mib": int(peak) // 1024}))
else:
    print(f"mcp {tool}: first call {first * 1000:.0f} ms (model loaded at start), "
          f"then median {median:.1f} ms over {calls}; server peak {int(peak) // 1024} MiB")
