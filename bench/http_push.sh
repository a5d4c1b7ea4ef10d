#!/usr/bin/env bash
# Benchmark a request's round trip over a real HTTP git server against a
# plain push of the same change (issue 19's target).
#
# lighttpd runs `git http-backend` as www-data with clada's server hooks
# (scripts/git-http-server.sh); 1, 4 and 16 agents, each on a branch of its
# own, send `git clada push-reply` requests (push, apply on the server,
# result and branch fetched) and plain `git push`es of the same change, all
# agents at once, the two alternating round by round (bench/http_push.py
# says exactly what is timed). Needs root and lighttpd.
#
# Target: a request's median round trip <= 2 x a plain push's, at every
# number of agents, in one run. The script exits 1 when it is missed;
# --report-only (or BENCH_REPORT_ONLY=1) only prints the numbers.
#
# Usage: bench/http_push.sh [--report-only] [--runs N] [--warmup N] [--agents 1,4,16]
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
runs=15
warmup=2
agents=1,4,16
bench_options bench/http_push.sh 2,16p runs warmup agents -- "$@"
bench_min_runs bench/http_push.sh

bench_build
python3 "$root/bench/http_push.py" "$bin" --agents "$agents" --rounds "$runs" --warmup "$warmup"

python3 - "$report_only" "$root/bench/out/http_push.json" <<'PY'
import json, sys
report_only, res = sys.argv[1] == "1", json.load(open(sys.argv[2]))
worst = max(r["ratio_p50"] for r in res.values())
ok = worst <= 2.0
print(f"RESULT {'PASS' if ok else 'FAIL'}: request round trip / plain push, worst median ratio = {worst:.2f} (target <= 2.0)")
sys.exit(0 if ok or report_only else 1)
PY
