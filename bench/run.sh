#!/usr/bin/env bash
# Benchmark the extra cost of a RUN: `git clada apply` of a reply with 10
# SEARCH edits, with and without a RUN of `ls`, on the synthetic 50,000-file
# repository of bench/apply.sh (generated there, or here if missing).
#
# Target (issue 4): on the second and later applies, the RUN adds <= 1 s
# (the first use of the scratch working tree may pay one checkout; its
# time is printed too). Exits 1 when the target is missed unless
# --report-only (or BENCH_REPORT_ONLY=1).
#
# Usage: bench/run.sh [--report-only] [--runs N] [--warmup N] [--files N]
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
runs=15
warmup=2
files=50000
seed=20240601
bench_options bench/run.sh 2,12p runs warmup files -- "$@"

bench_build
bench_hermetic
bench_repo "$files" "$seed"
echo "timing $files files: first use, then $warmup warm-up + $runs measured rounds of edit / edit+run"
result=$(python3 "$root/bench/run_runs.py" "$dir" "$bin" "$warmup" "$runs")

python3 - "$report_only" "$files" "$result" <<'PY'
import json, statistics, sys
report_only, files, r = sys.argv[1] == "1", int(sys.argv[2]), json.loads(sys.argv[3])
e, er = statistics.median(r["edit"]), statistics.median(r["edit+run"])
print(f"{files} files: first use of the scratch tree {r['first_use']:.0f} ms")
print(f"{files} files: edit {e:.1f} ms, edit+run {er:.1f} ms (medians of {len(r['edit'])} runs)")
extra = er - e
ok = extra <= 1000
print(f"RESULT {'PASS' if ok else 'FAIL'}: a RUN adds {extra:.1f} ms on later applies (target <= 1000 ms)")
if not ok and not report_only:
    sys.exit(1)
PY
