#!/usr/bin/env bash
# `apply` through one warm `git clada mcp` server (the MCP SDK's own
# client) against `git clada apply` processes, on the same replies in the
# same repository (benches/mcp.rs); release build.
#
# Usage: bench/mcp.sh
#   MCP_BENCH_CALLS=100 MCP_BENCH_FILES=100 MCP_BENCH_ROUNDS=3
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench --bench mcp
