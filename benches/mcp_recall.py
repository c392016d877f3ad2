"""Time `memory_recall` in a running `mem mcp`: JSON-RPC over its stdin and
stdout, one call at a time, after one call that loads the model. Prints the
median and the server's peak memory (VmHWM).

    python3 benches/mcp_recall.py target/release/mem TREE "a query" [CALLS]
"""
import json
import statistics
import subprocess
import sys
import time

mem, tree, query = sys.argv[1:4]
calls = int(sys.argv[4]) if len(sys.argv) > 4 else 30
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
                 "params": {"name": "memory_recall", "arguments": {"query": q, "limit": 10}}})
    elapsed = time.perf_counter() - started
    assert not reply["result"].get("isError"), reply
    return elapsed


first = recall(1, query)
times = [recall(2 + i, f"{query} {i}") for i in range(calls)]
with open(f"/proc/{server.pid}/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM"))
server.stdin.close()
server.wait()
print(f"mcp memory_recall: first call {first * 1000:.0f} ms (model loaded at start), "
      f"then median {statistics.median(times) * 1000:.1f} ms over {calls}; server peak {int(peak) // 1024} MiB")
