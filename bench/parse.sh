#!/usr/bin/env bash
# Benchmark `git-clada parse --format json` on ~20 MB replies:
#   * mixed:       operations of every size, some very long lines
#                  (the per-byte costs: UTF-8, escaping, copying);
#   * many-blocks: ~30,000 small operations in ~570,000 short lines
#                  (the per-line and per-operation costs);
#   * replacer (and each other syntax with a bench/gen_SYNTAX.py): a
#                  realistic reply in that syntax, read by its front end.
#
# Targets, for each shape:
#   * median wall time of the whole process  <= 60 ms for the CSL shapes
#     (the budget for the CSL front end on a large reply), and at least
#     100 MB/s (200 ms for 20 MB) for the other syntaxes' front ends
#   * peak RSS                                <= 2.5 x the input size
# The script exits 1 when a target is missed, so it can gate CI; pass
# --report-only (or set BENCH_REPORT_ONLY=1) to only print the numbers.
# bench/parse_ref.sh compares the same runs with the reference parser.
#
# Usage: bench/parse.sh [--report-only] [--runs N] [--warmup N]
#                       [--size BYTES] [--seed N]
#                       [--shape mixed|many-blocks|both|all|SYNTAX]
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
shape=both
bench_options bench/parse.sh 2,20p runs warmup size seed shape -- "$@"
bench_min_runs bench/parse.sh
syntaxes=()
for gen in bench/gen_*.py; do
    name=${gen#bench/gen_}; name=${name%.py}
    [[ $name == reply || $name == repo ]] || syntaxes+=("$name")
done
case $shape in
    both) shapes=(mixed many-blocks) ;;
    all) shapes=(mixed many-blocks "${syntaxes[@]}") ;;
    mixed|many-blocks) shapes=("$shape") ;;
    *)
        if [[ -f bench/gen_$shape.py ]]; then
            shapes=("$shape")
        else
            echo "bench/parse.sh: --shape is mixed, many-blocks, both, all or one of: ${syntaxes[*]}" >&2
            exit 2
        fi
        ;;
esac

# 1. The release binary (bench/common.sh).
bench_build

failed=0
for shape in "${shapes[@]}"; do
    echo "== $shape"
    # 2. The reply (bench/common.sh), checked to parse without fatal errors.
    bench_reply "$shape" "$size" "$seed"

    # 3. Time the whole process, JSON to /dev/null (so terminal or pipe speed
    #    is not measured, but the serialisation work still is).
    echo "timing: $warmup warm-up + $runs measured runs of: git-clada parse --format json"
    result=$(python3 "$root/bench/measure.py" "$warmup" "$runs" -- \
        "$bin" parse --format json "$reply")

    # 4. Summarise and compare with the targets.
    python3 - "$shape" "$input_bytes" "$result" <<'EOF' || failed=1
import json, statistics, sys

shape, input_bytes, result = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
csl_shape = shape in ("mixed", "many-blocks")
ms = sorted(result["ms"])
median = statistics.median(ms)
# Peak over all measured runs; ru_maxrss is in KiB. MB here means 10^6 bytes,
# the same unit as the input size.
peak = max(result["maxrss_kib"]) * 1024
ratio = peak / input_bytes

# Another syntax's front end: at least 100 MB/s (1e5 bytes per ms).
MEDIAN_MS = 60.0 if csl_shape else input_bytes / 1e5
RSS_RATIO = 2.5
time_ok, rss_ok = median <= MEDIAN_MS, ratio <= RSS_RATIO

print(f"wall time: min {ms[0]:.1f} ms, median {median:.1f} ms, max {ms[-1]:.1f} ms ({len(ms)} runs)"
      f" = {input_bytes / 1e3 / median:.0f} MB/s")
print(f"peak RSS:  {peak / 1e6:.1f} MB = {ratio:.2f} x input ({input_bytes / 1e6:.1f} MB)")
verdict = "PASS" if time_ok and rss_ok else "FAIL"
print(f"RESULT {shape} {verdict}: median {median:.1f} ms (target <= {MEDIAN_MS:.0f}: {'ok' if time_ok else 'MISSED'}), "
      f"peak RSS {ratio:.2f} x input (target <= {RSS_RATIO}: {'ok' if rss_ok else 'MISSED'})")
sys.exit(verdict == "FAIL")
EOF
done

if [[ $failed -eq 1 && $report_only != 1 ]]; then
    exit 1
fi
