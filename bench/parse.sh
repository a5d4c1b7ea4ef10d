#!/usr/bin/env bash
# Benchmark `git-clada parse --format json` on a ~20 MB reply.
#
# Targets (the budget for the CSL front end on a large reply):
#   * median wall time of the whole process  <= 60 ms
#   * peak RSS                                <= 2.5 x the input size
# The script exits 1 when a target is missed, so it can gate CI; pass
# --report-only (or set BENCH_REPORT_ONLY=1) to only print the numbers.
#
# Usage: bench/parse.sh [--report-only] [--runs N] [--warmup N]
#                       [--size BYTES] [--seed N]
#
# Needs bash, cargo and python3 (for the generator and for timing: python's
# os.wait4 gives the child's own peak RSS without depending on GNU time).
set -euo pipefail

cd "$(dirname "$0")/.."   # repo root: cargo, and git config lookup as in real use
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
runs=20        # measured runs; the median of 20 is stable to about 1 ms here
warmup=3
size=20000000  # 20 MB: a large reply, well under the 50 MiB input limit
seed=20240601
bench_options bench/parse.sh 2,14p runs warmup size seed -- "$@"
bench_min_runs bench/parse.sh

# 1. The release binary (bench/common.sh).
bench_build

# 2. Generate the reply (deterministic for a seed and size). It is reused
#    while it is newer than the generator, because generating takes seconds.
out=$root/bench/out
mkdir -p "$out"
reply=$out/reply-seed$seed-$size.md
if [[ ! -s $reply || $root/bench/gen_reply.py -nt $reply ]]; then
    echo "generating $reply ..."
    python3 "$root/bench/gen_reply.py" --size "$size" --seed "$seed" "$reply" >/dev/null
fi
input_bytes=$(wc -c <"$reply")
echo "input: $reply ($input_bytes bytes, $(wc -l <"$reply") lines)"

# Sanity check: the reply must parse without fatal errors, otherwise we would
# time the error path (diagnostic rendering) instead of the normal one.
# `parse` exits 2 on fatal errors, so capture the status without set -e.
set +e
summary=$("$bin" parse --format text "$reply" | tail -n 1)
status=${PIPESTATUS[0]}
set -e
echo "check: $summary"
if [[ $status -eq 2 || $summary != *" 0 fatal,"* ]]; then
    echo "bench/parse.sh: the generated reply has fatal errors (exit $status); fix bench/gen_reply.py" >&2
    exit 2
fi

# 3. Time the whole process, JSON to /dev/null (so terminal or pipe speed is
#    not measured, but the serialisation work still is).
echo "timing: $warmup warm-up + $runs measured runs of: git-clada parse --format json"
result=$(python3 "$root/bench/measure.py" "$warmup" "$runs" -- \
    "$bin" parse --format json "$reply")

# 4. Summarise and compare with the targets.
python3 - "$input_bytes" "$report_only" "$result" <<'EOF'
import json, statistics, sys

input_bytes, report_only, result = int(sys.argv[1]), sys.argv[2] == "1", json.loads(sys.argv[3])
ms = sorted(result["ms"])
median = statistics.median(ms)
# Peak over all measured runs; ru_maxrss is in KiB. MB here means 10^6 bytes,
# the same unit as the input size.
peak = max(result["maxrss_kib"]) * 1024
ratio = peak / input_bytes

MEDIAN_MS, RSS_RATIO = 60.0, 2.5
time_ok, rss_ok = median <= MEDIAN_MS, ratio <= RSS_RATIO

print(f"wall time: min {ms[0]:.1f} ms, median {median:.1f} ms, max {ms[-1]:.1f} ms ({len(ms)} runs)")
print(f"peak RSS:  {peak / 1e6:.1f} MB = {ratio:.2f} x input ({input_bytes / 1e6:.1f} MB)")
verdict = "PASS" if time_ok and rss_ok else "FAIL"
print(f"RESULT {verdict}: median {median:.1f} ms (target <= {MEDIAN_MS:.0f}: {'ok' if time_ok else 'MISSED'}), "
      f"peak RSS {ratio:.2f} x input (target <= {RSS_RATIO}: {'ok' if rss_ok else 'MISSED'})")
if verdict == "FAIL" and not report_only:
    sys.exit(1)
EOF
