#!/usr/bin/env bash
# The semantic tier on 1,000 generated memories (examples/gen_corpus.rs,
# seeded; about 1.3 KiB each, half Chinese): making every vector (cold),
# then again after editing 10 memories; a recall in a fresh process with the
# tier on against words alone (`MEM_MODEL=off`), page cache warm; a recall in
# a running `mem mcp`, warm; and peak memory of each.
#
#   MEM_MODEL=~/.local/share/mem/model bash benches/semantic.sh
#
# The model is the one `mem model import` installed (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${MEM_MODEL:?set MEM_MODEL to the model folder, e.g. ~/.local/share/mem/model}"
command -v hyperfine >/dev/null 2>&1 || { apt-get update && apt-get install -y hyperfine; }

COUNT=${COUNT:-1000}
QUERY=${QUERY:-"the deploy keeps failing because the service runs out of memory"}
cargo build --release --features semantic --bin mem --example gen_corpus
MEM="$PWD/target/release/mem"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mem-semantic.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export MEM_GLOBAL_DIR="$WORK/global" NO_COLOR=1 MEM_TRUST_ALL=1
target/release/examples/gen_corpus --count "$COUNT" --seed 42 "$WORK/tree" >/dev/null
cd "$WORK/tree"
"$MEM" compile >/dev/null

seconds() { /usr/bin/time -f '%e s, peak %M KiB' "$@" 2>&1 >/dev/null | tail -1; }
echo "vectors for $COUNT memories, cold:   $(seconds "$MEM" model embed)"
i=0
for f in $(find .memory -name '*.md' ! -name index.md ! -name ROOT.md | sort | head -10); do
  i=$((i + 1))
  printf '\nEdited again, round %s.\n' "$i" >>"$f"
done
sleep 2
echo "vectors after 10 edits:          $(seconds "$MEM" model embed)"
"$MEM" model status | tail -2

recall=("$MEM" recall --no-track -n 10 -- "$QUERY")
hyperfine -N --warmup 2 --min-runs 10 --export-json "$WORK/cli.json" \
  -n "recall, words alone" "env MEM_MODEL=off ${recall[*]}" \
  -n "recall, semantic tier" "${recall[*]}" | grep -E "Time|±|recall" || true
python3 - "$WORK/cli.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
a, b = (x["median"] * 1000 for x in r)
print(f"cold CLI recall, medians: words alone {a:.1f} ms, semantic tier {b:.1f} ms, +{b - a:.0f} ms ({b / a:.1f}x)")
PY
echo "recall peak memory, words alone: $( { /usr/bin/time -f '%M KiB' env MEM_MODEL=off "${recall[@]}" >/dev/null; } 2>&1 | tail -1)"
echo "recall peak memory, semantic:    $( { /usr/bin/time -f '%M KiB' "${recall[@]}" >/dev/null; } 2>&1 | tail -1)"
cd - >/dev/null
python3 benches/mcp_recall.py "$MEM" "$WORK/tree" "$QUERY"
