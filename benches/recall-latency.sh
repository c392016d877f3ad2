#!/usr/bin/env bash
# Recall latency: `mem recall` against a plain `rg -F -c` over the same
# synthetic memory tree (examples/gen_corpus.rs), page cache warm.
#
#   bash benches/recall-latency.sh
#   COUNTS="1000 10000" QUERIES="timeout 部署 cache" bash benches/recall-latency.sh
#
# Env: COUNTS (tree sizes, default "1000 10000"), QUERIES (words that occur in
# the corpus, default "timeout 部署"), SEED (default 42), RUNS (hyperfine
# --min-runs, default 10). Trees live in ${TMPDIR:-/tmp}/mem-bench/<count>/ and
# are reused when their ROOT.md stamp matches the count and seed.
# Needs ripgrep and hyperfine (installed with apt-get when missing) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNTS=${COUNTS:-"1000 10000"}
QUERIES=${QUERIES:-"timeout 部署"}
SEED=${SEED:-42}
RUNS=${RUNS:-10}
BENCH_DIR="${TMPDIR:-/tmp}/mem-bench"
MEM="$PWD/target/release/mem"
GEN="$PWD/target/release/examples/gen_corpus"

if ! command -v rg >/dev/null 2>&1 || ! command -v hyperfine >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
  $SUDO apt-get update && $SUDO apt-get install -y ripgrep hyperfine
fi
command -v python3 >/dev/null 2>&1 || { echo "recall-latency: python3 is needed to read hyperfine's JSON" >&2; exit 2; }

cargo build --release --bin mem --example gen_corpus

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mem-bench-run.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# An empty global root, so nothing outside the bench tree is read or ranked.
mkdir -p "$WORK/global"
export MEM_GLOBAL_DIR="$WORK/global"
export NO_COLOR=1

# median_ms JSON INDEX: the median of hyperfine result INDEX, in milliseconds.
median_ms() {
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]
print("%.1f" % (r["median"] * 1000))' "$1" "$2"
}

ROWS=()
LIST_ROWS=()
for count in $COUNTS; do
  dir="$BENCH_DIR/$count"
  stamp="<!-- gen_corpus count=$count seed=$SEED -->"
  if [ -f "$dir/.memory/ROOT.md" ] && grep -qF -- "$stamp" "$dir/.memory/ROOT.md"; then
    echo "reusing $dir/.memory"
  else
    mkdir -p "$dir"
    "$GEN" --count "$count" --seed "$SEED" --force "$dir"
  fi
  files=$(find "$dir/.memory" -mindepth 2 -name '*.md' | wc -l)
  if [ "$files" -ne "$count" ]; then
    echo "recall-latency: $dir/.memory holds $files memory files, expected $count; delete it and rerun" >&2
    exit 1
  fi

  for q in $QUERIES; do
    # rg is pointed at .memory itself (rg skips hidden folders it walks into,
    # not the ones it is given); check it sees every file that has the word.
    rg_files=$(rg -F -c -- "$q" "$dir/.memory" | wc -l)
    grep_files=$(grep -rlF --include="*.md" --exclude-dir=.cache --exclude-dir=.trash --exclude-dir=.history -- "$q" "$dir/.memory" | wc -l)
    if [ "$rg_files" -ne "$grep_files" ]; then
      echo "recall-latency: rg counts $rg_files files with '$q', grep -r counts $grep_files" >&2
      exit 1
    fi
    if [ "$rg_files" -eq 0 ]; then
      echo "recall-latency: '$q' does not occur in $dir/.memory; pick another QUERIES word" >&2
      exit 1
    fi
    "$MEM" --project "$dir" recall --no-track -n 10 -- "$q" >/dev/null || {
      echo "recall-latency: mem recall '$q' failed (exit $?) on $dir" >&2
      exit 1
    }

    json="$WORK/recall-$count-$(printf '%s' "$q" | od -An -tx1 | tr -d ' \n').json"
    hyperfine --warmup 3 --min-runs "$RUNS" --ignore-failure --style basic \
      --export-json "$json" \
      -n "mem recall $q" "'$MEM' --project '$dir' recall --no-track -n 10 -- '$q' > /dev/null" \
      -n "rg -F -c $q" "rg -F -c -- '$q' '$dir/.memory' > /dev/null"
    mem_ms=$(median_ms "$json" 0)
    rg_ms=$(median_ms "$json" 1)
    ratio=$(python3 -c 'import sys; print("%.1f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$mem_ms" "$rg_ms")
    ROWS+=("| $count | $q | $mem_ms | $rg_ms | $ratio | $rg_files |")
  done

  # Where the time goes: scanning and parsing every file, without ranking.
  json="$WORK/list-$count.json"
  hyperfine --warmup 3 --min-runs "$RUNS" --style basic --export-json "$json" \
    -n "mem list --json" "'$MEM' --project '$dir' list --json > /dev/null"
  LIST_ROWS+=("| $count | $(median_ms "$json" 0) |")
done

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)
echo
echo "## mem recall vs rg -F -c (median of >= $RUNS runs, warm page cache)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "- nproc: $(nproc); CPU: ${cpu:-unknown}"
echo "- mem: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (dirty)'); $(rg --version | head -1); $(hyperfine --version)"
echo
echo "| tree size | query | mem median (ms) | rg median (ms) | mem/rg | files with word |"
echo "|---:|---|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
echo "| tree size | mem list --json median (ms): scan + parse only |"
echo "|---:|---:|"
printf '%s\n' "${LIST_ROWS[@]}"
