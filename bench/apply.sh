#!/usr/bin/env bash
# Benchmark `git clada apply` against `git apply --index + git commit` and
# `git status` on synthetic repositories of 1,000 and 50,000 files.
#
# The reply makes 10 SEARCH edits on 10 existing files (no RUN); the patch
# is the same change as a `git diff`. A second case adds two moves and two
# deletions to the same edits (a JSON reply; a patch with rename headers). Every run starts from the same clean
# state (reset untimed, see bench/apply_runs.py); scenarios alternate round
# by round and the medians are compared.
#
# Targets, at 50,000 files:
#   * clada <= 0.7 x (git apply --index + git commit), in both cases
#   * clada <= 1.3 x git status --porcelain
# The 1k -> 50k growth of each scenario's time is printed too (no target).
# The script exits 1 when a target is missed, so it can gate CI; pass
# --report-only (or set BENCH_REPORT_ONLY=1) to only print the numbers.
#
# Usage: bench/apply.sh [--report-only] [--runs N] [--warmup N]
#                       [--sizes "1000 50000"] [--seed N]
#
# The repositories are made by bench/gen_repo.py under bench/out/ (about
# 500 MB for 50,000 files) and reused while they are newer than the
# generator. Needs bash, cargo, git and python3.
set -euo pipefail

cd "$(dirname "$0")/.."   # repo root
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
runs=21       # measured rounds (each runs every scenario once)
warmup=3
sizes="1000 50000"
seed=20240601
bench_options bench/apply.sh 2,22p runs warmup sizes seed -- "$@"
bench_min_runs bench/apply.sh

# 1. The release binary and a hermetic git (bench/common.sh).
bench_build
bench_hermetic

# 2. The repositories, generated once and reused.
results=()
for n in $sizes; do
    bench_repo "$n" "$seed"
    # 3. Time the scenarios.
    echo "timing $n files: $warmup warm-up + $runs measured rounds of clada / git apply+commit / git status"
    results+=("$n" "$(python3 "$root/bench/apply_runs.py" "$dir" "$bin" "$warmup" "$runs")")
done

# 4. Summarise and compare with the targets.
python3 - "$report_only" "${results[@]}" <<'EOF'
import json, statistics, sys

report_only = sys.argv[1] == "1"
args = sys.argv[2:]
res = {int(args[i]): json.loads(args[i + 1]) for i in range(0, len(args), 2)}
names = [("clada", "git clada apply"), ("patch", "git apply --index + commit"), ("status", "git status --porcelain"),
         ("clada_ops", "clada, + moves/deletes"), ("patch_ops", "git apply, + moves/deletes")]

def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))]

med = {n: {k: statistics.median(v) for k, v in r.items()} for n, r in res.items()}
print()
print(f"{'files':>7}  {'scenario':<27} {'median':>9} {'p25..p75 ms':>17} {'min':>8}")
for n, r in res.items():
    for k, label in names:
        if k not in r:
            continue
        v = r[k]
        print(f"{n:>7}  {label:<27} {med[n][k]:7.1f} ms {q(v, .25):7.1f}..{q(v, .75):<7.1f} {min(v):7.1f}  ({len(v)} runs)")
    m = med[n]
    print(f"{n:>7}  clada / (apply + commit) = {m['clada'] / m['patch']:.2f}   clada / status = {m['clada'] / m['status']:.2f}")
    if "clada_ops" in m:
        print(f"{n:>7}  with moves and deletes: clada / (apply + commit) = {m['clada_ops'] / m['patch_ops']:.2f}")
sizes = sorted(res)
if len(sizes) >= 2:
    a, b = sizes[0], sizes[-1]
    growth = "   ".join(f"{k} x{med[b][k] / med[a][k]:.2f}" for k, _ in names if k in med[a] and k in med[b])
    print(f"growth {a} -> {b} files: {growth}")

big = 50000
if big not in res:
    print(f"RESULT n/a: the targets are defined at {big} files, which was not measured")
    sys.exit(0)
m = med[big]
r1, r2 = m["clada"] / m["patch"], m["clada"] / m["status"]
r3 = m["clada_ops"] / m["patch_ops"] if "clada_ops" in m else None
ok1, ok2, ok3 = r1 <= 0.7, r2 <= 1.3, r3 is None or r3 <= 0.7
verdict = "PASS" if ok1 and ok2 and ok3 else "FAIL"
ops = "" if r3 is None else f", with moves and deletes {r3:.2f} x (target <= 0.7: {'ok' if ok3 else 'MISSED'})"
print(f"RESULT {verdict} at {big} files: clada {m['clada']:.1f} ms = {r1:.2f} x (apply + commit) "
      f"(target <= 0.7: {'ok' if ok1 else 'MISSED'}), {r2:.2f} x status (target <= 1.3: {'ok' if ok2 else 'MISSED'}){ops}")
if verdict == "FAIL" and not report_only:
    sys.exit(1)
EOF
