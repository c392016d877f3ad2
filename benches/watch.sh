#!/usr/bin/env bash
# A watching `mem mcp` against fresh processes, on the same generated tree
# (examples/gen_corpus.rs, seeded), page cache warm, the project trusted.
#
#   bash benches/watch.sh                     # 100,000 memories
#   COUNT=10000 bash benches/watch.sh
#   BEFORE=/tmp/mem-before bash benches/watch.sh   # and a build to compare with
#
# Prints, from one run: the median of a fresh `mem recall` and of a fresh
# `mem context --query` (hyperfine), the median `memory_recall` and
# `memory_context` call in one running server that watches its roots and in
# one that lists them by stat (MEM_WATCH=off), the ratios server / fresh,
# and the servers' peak memory (VmHWM). With BEFORE (a copy of an earlier
# `target/release/mem`), the same for it, its servers taking turns with
# this build's in the same run, each row marked "before".
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

COUNT=${COUNT:-100000}
WORD=${WORD:-timeout}
SEED=${SEED:-42}
CALLS=${CALLS:-30}
BENCH_DIR="${TMPDIR:-/tmp}/mem-bench"
MEM="$PWD/target/release/mem"
BEFORE=${BEFORE:-}
GEN="$PWD/target/release/examples/gen_corpus"

command -v hyperfine >/dev/null 2>&1 || {
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
  $SUDO apt-get update && $SUDO apt-get install -y hyperfine
}
cargo build --release --bin mem --example gen_corpus

dir="$BENCH_DIR/$COUNT"
if ! grep -q "gen_corpus count=$COUNT seed=$SEED" "$dir/.memory/ROOT.md" 2>/dev/null; then
  rm -rf "$dir"
  "$GEN" --count "$COUNT" --seed "$SEED" "$dir"
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mem-watch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
tree="$WORK/tree"
cp -r "$dir" "$tree"
mkdir -p "$WORK/global" "$WORK/home"
export MEM_GLOBAL_DIR="$WORK/global" HOME="$WORK/home" NO_COLOR=1 MEM_MODEL=off
cd "$tree"
"$MEM" trust --yes >/dev/null
"$MEM" recall -n 10 "$WORD" >/dev/null
sleep 2

bins=("$MEM")
names=("")
if [ -n "$BEFORE" ]; then
  bins=("$BEFORE" "$MEM")
  names=(" (before)" "")
fi
commands=()
for i in "${!bins[@]}"; do
  commands+=(-n "recall$i" "${bins[$i]} recall -n 10 $WORD" -n "context$i" "${bins[$i]} context --query $WORD")
done
hyperfine -N --warmup 2 --min-runs 15 --export-json "$WORK/fresh.json" "${commands[@]}" >/dev/null
median_ms() { python3 -c "import json,sys; print('%.1f' % (json.load(open(sys.argv[1]))['results'][int(sys.argv[2])]['median']*1000))" "$1" "$2"; }

served() { # BINARY TOOL [VAR=VALUE]
  env ${3:-} TOOL="$2" JSON=1 python3 "$REPO/benches/mcp_recall.py" "$1" "$tree" "$WORD" "$CALLS"
}
field() { python3 -c "import json,sys; print('%.1f' % json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
ratio() { python3 -c "import sys; print('%.3f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

echo "| $COUNT memories | fresh process ms | watching server ms | ratio | server by stat ms | ratio | peak MiB (watching / by stat) |"
echo "|---|---:|---:|---:|---:|---:|---|"
for tool in recall context; do
  k=0
  [ "$tool" = context ] && k=1
  # The servers of each build take turns: watching, then by stat.
  declare -A watching polling
  for i in "${!bins[@]}"; do watching[$i]=$(served "${bins[$i]}" "memory_$tool"); done
  for i in "${!bins[@]}"; do polling[$i]=$(served "${bins[$i]}" "memory_$tool" MEM_WATCH=off); done
  for i in "${!bins[@]}"; do
    fresh=$(median_ms "$WORK/fresh.json" $((2 * i + k)))
    w=$(field "${watching[$i]}" median_ms) p=$(field "${polling[$i]}" median_ms)
    echo "| $tool${names[$i]} | $fresh | $w | $(ratio "$w" "$fresh") | $p | $(ratio "$p" "$fresh") | $(field "${watching[$i]}" peak_mib) / $(field "${polling[$i]}" peak_mib) |"
  done
  unset watching polling
done
