#!/usr/bin/env bash
# The differential harness of issue 25 over the whole real-commit corpus:
# every commit of ../shared/corpus and up to 100 of this repository's own
# history, rebuilt as a reply in every scenario (doc/fidelity.md), applied
# by a release build of clada and, for the diff scenarios, by `git apply`,
# `git apply --recount` and GNU `patch --fuzz=2`; one table per corpus
# and one in total (exact / refused / WRONG / crash / n/a / median ms).
#
# Usage: bench/fidelity.sh
# Narrow it with the environment (doc/fidelity.md):
#   FIDELITY_ONLY=fd/0a1b2c3d4e5f     commits (corpus/id prefixes, commas)
#   FIDELITY_SCENARIO=aider-ws,patch  scenarios
#   FIDELITY_CORPORA=flask,own        corpora (flask fd fzf own)
#   FIDELITY_PEERS=0                  clada alone
#   FIDELITY_KEEP=1                   keep every work tree
#   FIDELITY_OWN=100  FIDELITY_THREADS=2
# Records of every case that is not exact: target/fidelity/bench/
# (cases.jsonl, replies/, tables.md).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench --bench fidelity
