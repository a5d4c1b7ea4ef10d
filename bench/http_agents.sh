#!/usr/bin/env bash
# Many agents sending replies to ONE branch over a real HTTP git server
# (issue 27): every request replayed on the moved branch, not refused.
#
# lighttpd runs `git http-backend` as www-data with clada's server hooks
# (scripts/git-http-server.sh); 8 and 32 agents each send 10 replies with
# `git clada push-reply`, all to one branch; then the same with half of
# the replies conflicting in pairs; then a branch each, against plain
# pushes (bench/http_agents.py says exactly what is timed and checked).
# Needs root and lighttpd. Any wrong result (a request lost, applied
# twice, a conflicting pair not one applied and one stale naming its
# operation, a merge, fsck) stops it with exit 1.
#
# Targets: at 8 agents, the one-branch round trip's median <= 2 x a plain
# push's, and requests applied per second on a branch each >= 0.8 x
# plain pushes per second, in one run. The script exits 1 when one is
# missed; --report-only (or BENCH_REPORT_ONLY=1) only prints the numbers.
#
# Usage: bench/http_agents.sh [--report-only] [--agents 8,32] [--replies 10]
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
agents=8,32
replies=10
bench_options bench/http_agents.sh 2,19p agents replies -- "$@"

bench_build
python3 "$root/bench/http_agents.py" "$bin" --agents "$agents" --replies "$replies"

python3 - "$report_only" "$root/bench/out/http_agents.json" <<'PY'
import json, sys
report_only, res = sys.argv[1] == "1", json.load(open(sys.argv[2]))
at8 = res.get("8")
if at8 is None:
    print("RESULT: no run at 8 agents, no target to check")
    sys.exit(0)
ok = at8["ratio_p50"] <= 2.0 and at8["throughput_ratio"] >= 0.8
print(f"RESULT {'PASS' if ok else 'FAIL'}: at 8 agents, one-branch round trip / plain push = {at8['ratio_p50']:.2f} (target <= 2.0), "
      f"requests applied per second / plain pushes per second = {at8['throughput_ratio']:.2f} (target >= 0.8)")
sys.exit(0 if ok or report_only else 1)
PY
