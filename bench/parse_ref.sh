#!/usr/bin/env bash
# Compare `git-clada parse --format json` with the reference CSL parser (the
# original TypeScript csl-parser, run by node) on the two replies of
# bench/parse.sh: mixed and many-blocks, ~20 MB each.
#
# Target: git-clada at least 10 x faster than the reference on each reply
# (median whole-process wall time). The script exits 1 when a ratio is
# below 10; pass --report-only (or set BENCH_REPORT_ONLY=1) to only print
# the numbers.
#
# The reference's source is not part of this repository and is not
# downloaded by this script: give the directory holding its three files
# index.ts, parser.ts and validator.ts (csl-parser/main/core/src/ in the
# GitHub repository bigfoothq/csl-parser) with --src DIR or CSL_PARSER_SRC=DIR.
# In a temporary directory the script installs `typescript` with npm,
# compiles the three files with tsc, and times node running a small driver
# that reads the reply, parses it and writes JSON.stringify of the result
# to stdout, which is /dev/null: the same measurement as for git-clada.
#
# Usage: CSL_PARSER_SRC=DIR bench/parse_ref.sh [--report-only] [--src DIR]
#            [--runs N] [--warmup N] [--size BYTES] [--seed N]
#            [--shape mixed|many-blocks|both]
#
# Needs bash, cargo, python3, node and npm (with access to the npm registry).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
src=${CSL_PARSER_SRC:-}
runs=15        # measured runs of each program; a node run takes ~0.3-0.5 s
warmup=3
size=20000000
seed=20240601
shape=both
typescript=typescript@5.9.3   # pinned: the compiler's output is what is timed
bench_options bench/parse_ref.sh 2,24p src runs warmup size seed shape -- "$@"
bench_min_runs bench/parse_ref.sh
case $shape in
    both) shapes=(mixed many-blocks) ;;
    mixed|many-blocks) shapes=("$shape") ;;
    *) echo "bench/parse_ref.sh: --shape is mixed, many-blocks or both" >&2; exit 2 ;;
esac
if [[ -z $src ]]; then
    echo "bench/parse_ref.sh: give the reference's source directory with --src DIR or CSL_PARSER_SRC=DIR (see --help)" >&2
    exit 2
fi
for f in index.ts parser.ts validator.ts; do
    if [[ ! -f $src/$f ]]; then
        echo "bench/parse_ref.sh: $src/$f is missing" >&2
        exit 2
    fi
done
node=$(command -v node) || { echo "bench/parse_ref.sh: node is not installed" >&2; exit 2; }

# 1. Both programs: git-clada's release binary, and the reference compiled
#    to CommonJS in a temporary directory (removed on exit).
bench_build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
cp "$src/index.ts" "$src/parser.ts" "$src/validator.ts" "$tmp/src/"
echo "installing $typescript with npm and compiling the reference ..."
npm install --prefix "$tmp" --no-save --no-audit --no-fund --loglevel=error "$typescript" >/dev/null
"$tmp/node_modules/.bin/tsc" --module commonjs --target es2022 --skipLibCheck \
    --outDir "$tmp/out" "$tmp/src/index.ts" "$tmp/src/parser.ts" "$tmp/src/validator.ts"
cat >"$tmp/driver.js" <<'EOF'
// Reads the reply named on the command line, parses and validates it with
// the reference, and writes the result as JSON to stdout. A syntax error
// throws, so node exits 1 and the benchmark stops.
const fs = require('fs');
const { parse } = require('./out/index.js');
const text = fs.readFileSync(process.argv[2], 'utf8');
fs.writeSync(1, JSON.stringify(parse(text)));
EOF

failed=0
for shape in "${shapes[@]}"; do
    echo "== $shape"
    bench_reply "$shape" "$size" "$seed"
    # The reference stops at the first syntax error; the replies have none.
    if ! "$node" "$tmp/driver.js" "$reply" >/dev/null; then
        echo "bench/parse_ref.sh: the reference cannot parse $reply" >&2
        exit 2
    fi
    echo "timing: $warmup warm-up + $runs measured runs of each: git-clada parse --format json, node driver.js"
    ours=$(python3 "$root/bench/measure.py" "$warmup" "$runs" -- \
        "$bin" parse --format json "$reply")
    ref=$(python3 "$root/bench/measure.py" "$warmup" "$runs" -- \
        "$node" "$tmp/driver.js" "$reply")
    python3 - "$shape" "$input_bytes" "$ours" "$ref" <<'EOF' || failed=1
import json, statistics, sys

shape, input_bytes = sys.argv[1], int(sys.argv[2])
RATIO = 10.0
medians = {}
for name, arg in (("git-clada", sys.argv[3]), ("reference", sys.argv[4])):
    result = json.loads(arg)
    ms = sorted(result["ms"])
    medians[name] = statistics.median(ms)
    peak = max(result["maxrss_kib"]) * 1024
    print(f"{name:10} median {medians[name]:7.1f} ms (min {ms[0]:.1f}, max {ms[-1]:.1f}), "
          f"peak RSS {peak / 1e6:.1f} MB = {peak / input_bytes:.2f} x input")
ratio = medians["reference"] / medians["git-clada"]
verdict = "PASS" if ratio >= RATIO else "FAIL"
print(f"RESULT {shape} {verdict}: git-clada is {ratio:.1f} x faster than the reference (target >= {RATIO:.0f})")
sys.exit(verdict == "FAIL")
EOF
done

if [[ $failed -eq 1 && $report_only != 1 ]]; then
    exit 1
fi
