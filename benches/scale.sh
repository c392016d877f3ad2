#!/usr/bin/env bash
# Scale: whole `mem` processes against `rg -F` and the sqlite3 FTS5 shell on
# the same generated trees (examples/gen_corpus.rs, seeded), page cache warm.
#
#   bash benches/scale.sh                    # 1k, 10k and 100k memories
#   COUNTS="1000 10000" bash benches/scale.sh
#
# Prints medians (hyperfine) and the ratios the scale goals are stated in:
# recall with the cache warm; recall on a tree whose cache was built as the
# tree was written (inside the 2 s window where an edit could hide) and
# recall after editing, adding and deleting 100 files each (the first run
# after either folds what it sees into the cache; the rows time the runs
# after it), both against the warm figure; the first run against the FTS5
# index build; compile on an unchanged tree; and recall's peak memory
# against the size of the Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNTS=${COUNTS:-"1000 10000 100000"}
WORD=${WORD:-timeout}
SEED=${SEED:-42}
BENCH_DIR="${TMPDIR:-/tmp}/mem-bench"
MEM="$PWD/target/release/mem"
GEN="$PWD/target/release/examples/gen_corpus"

missing=()
for tool in rg:ripgrep sqlite3:sqlite3 hyperfine:hyperfine; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
  $SUDO apt-get update && $SUDO apt-get install -y "${missing[@]}"
fi

cargo build --release --bin mem --example gen_corpus
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mem-scale.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/global"
export MEM_GLOBAL_DIR="$WORK/global" NO_COLOR=1

# median_ms FILE INDEX
median_ms() { python3 -c "import json,sys; print('%.1f' % (json.load(open(sys.argv[1]))['results'][int(sys.argv[2])]['median']*1000))" "$1" "$2"; }
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

rows=()
for count in $COUNTS; do
  dir="$BENCH_DIR/$count"
  if ! grep -q "gen_corpus count=$count seed=$SEED" "$dir/.memory/ROOT.md" 2>/dev/null; then
    rm -rf "$dir"
    "$GEN" --count "$count" --seed "$SEED" "$dir"
  fi
  tree="$WORK/tree-$count"
  rm -rf "$tree" && cp -r "$dir" "$tree"
  recall=("$MEM" --project "$tree" recall --no-track -n 10 -- "$WORD")
  # A cache built at once over files written within 2 s: they are read and
  # compared until they are old enough, then trusted. The first timed run
  # (2 s later) does that check; the median is what follows.
  "${recall[@]}" >/dev/null
  sleep 2
  hyperfine -N --min-runs 10 --export-json "$WORK/racy.json" \
    -n "mem recall after a build as the tree was written" "${recall[*]}" >/dev/null
  md_bytes=$(find "$tree/.memory" -name '*.md' -printf '%s\n' | awk '{s+=$1} END {print s}')
  db="$WORK/fts-$count.db"
  fts_build="rm -f $db && sqlite3 $db \"CREATE VIRTUAL TABLE docs USING fts5(path, body); INSERT INTO docs SELECT name, data FROM fsdir('$tree/.memory') WHERE name LIKE '%.md';\""
  fts_query="sqlite3 $db \"SELECT path FROM docs WHERE docs MATCH '$WORD' ORDER BY rank LIMIT 10\""

  # First run (no cache) against the FTS5 build.
  hyperfine -N --runs 3 --export-json "$WORK/first.json" \
    --prepare "rm -rf $tree/.memory/.cache" -n "mem first run" "${recall[*]}" >/dev/null
  hyperfine --runs 3 --export-json "$WORK/build.json" -n "fts5 build" "$fts_build" >/dev/null

  # Warm: cache built, tree unchanged.
  "${recall[@]}" >/dev/null
  hyperfine -N --warmup 3 --min-runs 10 --export-json "$WORK/warm.json" \
    -n "mem recall" "${recall[*]}" \
    -n "rg -F" "rg -F -c $WORD $tree/.memory" \
    -n "fts5 query" "$fts_query" >/dev/null
  peak=$( { /usr/bin/time -f '%M' "${recall[@]}" >/dev/null; } 2>&1 | tail -1)

  # Compile on the unchanged tree: one compile writes the indexes; once they
  # have settled (a file changed within 2 s is never trusted), the next one
  # records the tree and the timed ones find it unchanged.
  "$MEM" --project "$tree" compile >/dev/null
  sleep 2
  hyperfine -N --warmup 2 --min-runs 5 --export-json "$WORK/compile.json" \
    -n "mem compile" "$MEM --project $tree compile" >/dev/null

  # Edit 100 files in place, add 100, delete 100; the next recalls see it all.
  python3 - "$tree/.memory" <<'PY'
import os, sys
root = sys.argv[1]
def visible(d):
    rel = os.path.relpath(d, root)
    return rel != '.' and not any(p.startswith('.') for p in rel.split(os.sep))
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) if visible(d) for f in fs
               if f.endswith('.md') and f != 'index.md')
for f in files[:100]:
    with open(f, 'a') as h:
        h.write('\nEdited: the rollback timeout is now 90 seconds.\n')
for f in files[100:200]:
    os.remove(f)
cat = os.path.dirname(files[0])
for i in range(100):
    with open(os.path.join(cat, f'added-{i}.md'), 'w') as h:
        h.write(f'---\nsummary: added note {i} on the deploy timeout\n---\nA new memory {i}.\n')
PY
  sleep 2
  # The first recall reads the 200 changed files and writes them to the
  # cache's delta; the timed runs are the ones after it.
  "${recall[@]}" >/dev/null
  hyperfine -N --min-runs 10 --export-json "$WORK/edited.json" \
    -n "mem recall after edits" "${recall[*]}" -n "rg -F" "rg -F -c $WORD $tree/.memory" >/dev/null

  # Every change is seen: the cached answer equals a full rescan's (at one
  # fixed clock, since recency counts in the score).
  queries=("$WORD" "rollback timeout 90 seconds" "added note deploy")
  answers() {
    for q in "${queries[@]}"; do
      MEM_NOW=1800000000000 "$MEM" --project "$tree" recall --no-track --json -n 50 -- "$q"
    done
  }
  cached=$(answers)
  rm -rf "$tree/.memory/.cache"
  if [ "$cached" != "$(answers 2>/dev/null)" ]; then
    echo "scale: $count: recall after edits differs from a full rescan" >&2
    exit 1
  fi

  warm=$(median_ms "$WORK/warm.json" 0); rg=$(median_ms "$WORK/warm.json" 1); fts=$(median_ms "$WORK/warm.json" 2)
  first=$(median_ms "$WORK/first.json" 0); build=$(median_ms "$WORK/build.json" 0)
  compile=$(median_ms "$WORK/compile.json" 0)
  edited=$(median_ms "$WORK/edited.json" 0); rg2=$(median_ms "$WORK/edited.json" 1)
  racy=$(median_ms "$WORK/racy.json" 0)
  rows+=("| $count | $warm | $rg | $(ratio "$warm" "$rg") | $fts | $(ratio "$warm" "$fts") | $racy | $(ratio "$racy" "$warm") | $edited | $(ratio "$edited" "$warm") | $(ratio "$edited" "$rg2") | $first | $build | $(ratio "$first" "$build") | $compile | $(ratio "$compile" "$rg") | $((peak / 1024)) | $((md_bytes / 1048576)) |")
done

echo
echo "## mem at scale ($(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); medians in ms)"
echo
echo "| memories | recall | rg -F | ×rg | FTS5 query | ×FTS5 | recall, cache built as written | ×recall | recall after 300 changes | ×recall | ×rg | first run | FTS5 build | ×build | compile (unchanged) | ×rg | recall peak MiB | Markdown MiB |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
