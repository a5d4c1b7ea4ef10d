#!/usr/bin/env bash
# Benchmark `git clada apply` of a unified diff against `git apply --index`
# + `git commit` of the same diff (issue 18's target).
#
# The diff has 1,000 hunks touching 200 files (5 functions edited in each)
# of a synthetic 50,000-file repository (bench/gen_repo.py --edits 200
# --hunks 5); clada applies the very p.diff git applies, read by its diff
# front end. Every run starts from the same clean state (untimed, see
# bench/apply_runs.py); the two alternate round by round and the medians
# are compared.
#
# Target: clada <= 1.0 x (git apply --index + git commit), in one run.
# The script exits 1 when it is missed; --report-only (or
# BENCH_REPORT_ONLY=1) only prints the numbers.
#
# Usage: bench/apply_diff.sh [--report-only] [--runs N] [--warmup N]
#                            [--files N] [--seed N]
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
runs=21
warmup=3
files=50000
seed=20240601
bench_options bench/apply_diff.sh 2,18p runs warmup files seed -- "$@"
bench_min_runs bench/apply_diff.sh

bench_build
bench_hermetic

dir=$out/apply-diff-$files-seed$seed
if [[ ! -s $dir/state.json || $root/bench/gen_repo.py -nt $dir/state.json ]]; then
    rm -rf "$dir"
    echo "generating $dir (takes a while) ..."
    python3 "$root/bench/gen_repo.py" "$dir" --files "$files" --seed "$seed" --edits 200 --hunks 5
fi
hunks=$(grep -c '^@@' "$dir/p.diff")
echo "diff: $hunks hunks in $(grep -c '^diff --git' "$dir/p.diff") files of $files"
echo "timing: $warmup warm-up + $runs measured rounds of clada / git apply+commit"
result=$(python3 "$root/bench/apply_runs.py" "$dir" "$bin" "$warmup" "$runs" p.diff)

python3 - "$report_only" "$result" <<'PY'
import json, statistics, sys
report_only, res = sys.argv[1] == "1", json.loads(sys.argv[2])
clada, git = statistics.median(res["clada"]), statistics.median(res["patch"])
ratio = clada / git
print(f"git clada apply p.diff:          median {clada:.1f} ms")
print(f"git apply --index + git commit:  median {git:.1f} ms")
ok = ratio <= 1.0
print(f"RESULT {'PASS' if ok else 'FAIL'}: clada / git = {ratio:.2f} (target <= 1.0)")
sys.exit(0 if ok or report_only else 1)
PY
