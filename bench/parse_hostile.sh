#!/usr/bin/env bash
# Benchmark `git-clada parse` on hostile replies: ~45 MB (just under the
# 50 MiB input limit) of SHAM or TELT blocks whose values or blocks never
# end, or of the smallest broken blocks of CSL, aider and the replacer
# (bench/gen_hostile.py says which). A server hook parses whatever is
# pushed, so such a reply must cost time linear in its size.
#
# Target, for each kind: the median of the runs <= 5 s (before the
# look-ahead of src/syntax/ahead.rs, a 1 MB reply of such blocks took
# 1-7 s and 45 MB would have taken hours). Peak RSS (from wait4, free) is
# printed with its ratio to the reply's size, not judged: every block is
# still a task, but only the first 1,000 diagnostics are kept
# (src/csl/sink.rs).
#
# Usage: bench/parse_hostile.sh [--report-only] [--runs N] [--size BYTES]
# Exits 1 when a target is missed (unless --report-only).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
runs=3
size=45000000
bench_options bench/parse_hostile.sh 2,16p runs size -- "$@"
bench_build
mkdir -p bench/out

failed=0
for kind in sham-heredoc sham-unclosed telt-value telt-reused telt-far \
    csl-invalid csl-indented aider-unclosed replacer-unclosed json-invalid; do
    reply=bench/out/hostile-$kind-$size.md
    [[ -f $reply && $reply -nt bench/gen_hostile.py ]] ||
        python3 bench/gen_hostile.py "$kind" "$size" "$reply"
    python3 - "$bin" "$reply" "$kind" "$runs" <<'PY' || failed=1
import os, statistics, sys, time
binary, reply, kind, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ms, rss = [], []
for _ in range(runs):
    t0 = time.perf_counter()
    pid = os.posix_spawn(binary, [binary, "parse", "--syntax", kind.split("-")[0], reply],
                         os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    ms.append((time.perf_counter() - t0) * 1000)
    rss.append(usage.ru_maxrss * 1024 / 1e6)  # kB to MB, as the size
    # parse exits 1 for a reply with invalid operations: expected here.
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{kind}: parse failed")
median = statistics.median(ms)
mb = os.path.getsize(reply) / 1e6
verdict = "ok" if median <= 5000 else "MISSED"
peak = max(rss)
print(f"{kind}: {mb:.1f} MB, median {median:.0f} ms ({runs} runs), peak RSS {peak:.0f} MB ({peak / mb:.1f} x): {verdict}")
sys.exit(0 if verdict == "ok" else 1)
PY
done
if (( failed )) && (( ! report_only )); then
    exit 1
fi
