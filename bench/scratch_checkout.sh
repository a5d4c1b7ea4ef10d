#!/usr/bin/env bash
# Benchmark the first use of clada's scratch working tree (the checkout of
# every file before the first RUN) against `git worktree add --detach` of
# the same tree, in one run, on the synthetic 30,000-file repository of
# bench/gen_repo.py.
#
# clada's checkout is measured as what a user waits for: the first
# `git clada apply` of a reply with 10 SEARCH edits and a RUN of `ls`
# (scratch tree removed before), minus the same apply without the RUN.
# Round by round, alternating: that pair, then `git worktree add --detach`
# of a commit of the same tree (the worktree removed before, untimed).
#
# Target (issue 17): clada / git <= 1.2 (medians). Exits 1 when it is
# missed unless --report-only (or BENCH_REPORT_ONLY=1).
#
# Usage: bench/scratch_checkout.sh [--report-only] [--runs N] [--warmup N] [--files N]
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
runs=15
warmup=2
files=30000
seed=20240601
bench_options bench/scratch_checkout.sh 2,16p runs warmup files -- "$@"

bench_build
bench_hermetic
bench_repo "$files" "$seed"
echo "timing $files files: $warmup warm-up + $runs measured rounds of edit / edit+run (first use) / git worktree add"
result=$(python3 "$root/bench/scratch_runs.py" "$dir" "$bin" "$warmup" "$runs")

python3 - "$report_only" "$files" "$result" <<'PY'
import json, statistics, sys
report_only, files, r = sys.argv[1] == "1", int(sys.argv[2]), json.loads(sys.argv[3])
e, er, g = (statistics.median(r[k]) for k in ("edit", "edit+run", "git worktree add"))
clada = er - e
print(f"{files} files: edit {e:.1f} ms, edit+run on first use {er:.1f} ms, git worktree add --detach {g:.1f} ms (medians of {len(r['edit'])} runs)")
ratio = clada / g
ok = ratio <= 1.2
print(f"RESULT {'PASS' if ok else 'FAIL'}: the scratch checkout takes {clada:.1f} ms, {ratio:.2f}x git worktree add (target <= 1.2x)")
if not ok and not report_only:
    sys.exit(1)
PY
