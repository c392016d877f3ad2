#!/usr/bin/env bash
# The semantic tier, timed, page cache warm:
#
# 1. A recall in a fresh process on the demo (fixtures/demo, 30 memories,
#    vectors made first), with the tier and with words alone
#    (`MEM_MODEL=off`), in one hyperfine run: the fresh-process ratio (tier
#    median / words-alone median) and the peak memory of each.
# 2. On 1,000 generated memories (examples/gen_corpus.rs, seeded; about
#    1.3 KiB each, half Chinese): making every vector (cold), then again
#    after editing 10 memories; a fresh-process recall both ways; a recall in
#    a running `mem mcp`, warm; and peak memory of each.
#
#   MEM_MODEL=~/.local/share/mem/model bash benches/semantic.sh
#   BEFORE=/path/to/older/mem MEM_MODEL=... bash benches/semantic.sh   # both builds in the same runs
#   ONLY=demo MEM_MODEL=... bash benches/semantic.sh                   # part 1 alone
#
# The model is the one `mem model import` installed (see the README); this
# build prepares it (`mem-prepared.bin` in its folder) on its first load.
# BEFORE names another build of mem (a copy of an older target/release/mem)
# timed beside this one: same model, same vectors, same hyperfine run.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${MEM_MODEL:?set MEM_MODEL to the model folder, e.g. ~/.local/share/mem/model}"
command -v hyperfine >/dev/null 2>&1 || { apt-get update && apt-get install -y hyperfine; }
if [ -n "${BEFORE:-}" ] && [ ! -x "$BEFORE" ]; then
  echo "semantic.sh: BEFORE=$BEFORE is not an executable mem" >&2
  exit 2
fi

COUNT=${COUNT:-1000}
QUERY=${QUERY:-"the deploy keeps failing because the service runs out of memory"}
DEMO_QUERY=${DEMO_QUERY:-"deploy keeps failing"}
cargo build --release --features semantic --bin mem --example gen_corpus
MEM="$PWD/target/release/mem"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mem-semantic.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export MEM_GLOBAL_DIR="$WORK/global" NO_COLOR=1 MEM_TRUST_ALL=1

seconds() { /usr/bin/time -f '%e s, peak %M KiB' "$@" 2>&1 >/dev/null | tail -1; }
peak() { { /usr/bin/time -f '%M KiB' "$@" >/dev/null; } 2>&1 | tail -1; }

# fresh NAME QUERY: a fresh-process recall both ways (and BEFORE's), one
# hyperfine run, the medians and each build's ratio.
fresh() {
  local name=$1 query=$2 json="$WORK/$1.json"
  local args=(recall --no-track -n 10 -- "$query")
  local runs=(-n "words alone" "env MEM_MODEL=off $MEM ${args[*]}" -n "tier" "$MEM ${args[*]}")
  if [ -n "${BEFORE:-}" ]; then
    runs+=(-n "words alone, before" "env MEM_MODEL=off $BEFORE ${args[*]}" -n "tier, before" "$BEFORE ${args[*]}")
  fi
  hyperfine -N --warmup 2 --min-runs 10 --export-json "$json" "${runs[@]}" | grep -E "Time|Range|±" || true
  python3 - "$json" "$name" <<'PY'
import json, sys
runs = {r["command"]: r["median"] * 1000 for r in json.load(open(sys.argv[1]))["results"]}
for suffix in ["", ", before"]:
    words, tier = runs.get("words alone" + suffix), runs.get("tier" + suffix)
    if words and tier:
        build = "before" if suffix else "this build"
        print(f"{sys.argv[2]}, fresh-process recall medians ({build}): words alone {words:.1f} ms, "
              f"semantic tier {tier:.1f} ms, +{tier - words:.0f} ms, ratio {tier / words:.1f}x")
PY
  echo "recall peak memory, words alone: $(peak env MEM_MODEL=off "$MEM" "${args[@]}")"
  echo "recall peak memory, semantic:    $(peak "$MEM" "${args[@]}")"
  if [ -n "${BEFORE:-}" ]; then
    echo "recall peak memory, semantic, before: $(peak "$BEFORE" "${args[@]}")"
  fi
}

cp -R fixtures/demo "$WORK/demo"
cd "$WORK/demo"
"$MEM" model embed >/dev/null
"$MEM" model status | tail -1
fresh demo "$DEMO_QUERY"
cd - >/dev/null
[ "${ONLY:-}" = demo ] && exit 0

target/release/examples/gen_corpus --count "$COUNT" --seed 42 "$WORK/tree" >/dev/null
cd "$WORK/tree"
"$MEM" compile >/dev/null
echo "vectors for $COUNT memories, cold:   $(seconds "$MEM" model embed)"
i=0
for f in $(find .memory -name '*.md' ! -name index.md ! -name ROOT.md | sort | head -10); do
  i=$((i + 1))
  printf '\nEdited again, round %s.\n' "$i" >>"$f"
done
sleep 2
echo "vectors after 10 edits:          $(seconds "$MEM" model embed)"
"$MEM" model status | tail -2
fresh "$COUNT memories" "$QUERY"
cd - >/dev/null
python3 benches/mcp_recall.py "$MEM" "$WORK/tree" "$QUERY"
