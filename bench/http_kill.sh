#!/usr/bin/env bash
# Agents over HTTP while the web server is killed and restarted twice
# (issue 28): every agent told the truth, nothing applied twice.
#
# lighttpd (or nginx + fcgiwrap) runs `git http-backend` as www-data with
# clada's server hooks (scripts/git-http-server.sh); 8 agents send 80
# `git clada push-reply` requests in all, each a WRITE of a file of its
# own, all to one branch, while the web server is killed with SIGKILL
# (the first time alone, its CGI programs and hooks going on; the second
# time with its whole process group) and started again on the same port,
# after 25 and 55 requests were started. Each agent acts on push-reply's
# answer as an agent would (bench/http_kill.py says how, and what is
# checked). Needs root and lighttpd (nginx and fcgiwrap for --server
# nginx).
#
# Exits 1 when an agent was told anything but the truth, a request was
# applied twice, or the repository is not sound afterwards (also after
# `git clada hook recover`). --report-only (or BENCH_REPORT_ONLY=1) still
# exits 1 then: there is no target to miss, only results to be wrong.
#
# Usage: bench/http_kill.sh [--agents 8] [--requests 80] [--kills 25,55]
#        [--kill server,group] [--server lighttpd|nginx] [--down 1.5] [--branch one|each]
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
source bench/common.sh

report_only=${BENCH_REPORT_ONLY:-0}
agents=8
requests=80
kills=25,55
kill=server,group
server=lighttpd
down=1.5
branch=one
bench_options bench/http_kill.sh 2,23p agents requests kills kill server down branch -- "$@"

bench_build
python3 "$root/bench/http_kill.py" "$bin" --agents "$agents" --requests "$requests" --kills "$kills" \
    --kill "$kill" --server "$server" --down "$down" --branch "$branch"
