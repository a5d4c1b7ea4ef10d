#!/usr/bin/env python3
"""Time `git clada apply`, `git apply --index + git commit` and `git status`
on one benchmark repository made by gen_repo.py, in alternating rounds.

Usage: apply_runs.py DIR CLADA_BIN WARMUP RUNS [REPLY]

REPLY (default reply.md) is the file clada applies: p.diff makes clada
apply the very patch git applies (bench/apply_diff.sh); then only the
clada and patch scenarios run.

DIR holds repo/, reply.md, p.diff and state.json (see gen_repo.py). Each
round runs every scenario once, in an order that rotates from round to
round (so a slow spell of the machine, or a cache effect of the previous
command, does not always fall on the same scenario):

  clada   git-clada apply reply.md            (one process; the binary is
                                               run directly, not through
                                               git's `git clada` dispatch)
  patch   git apply --index p.diff, then git commit -q -m x
                                              (two processes, times summed)
  status  git status --porcelain
  clada_ops, patch_ops
          the same with the moves-and-deletes case (reply-ops.json,
          p-ops.diff): the edits plus two files moved and two deleted

Before each timed run, untimed, the repository is brought back to the same
clean state, loose objects deleted too (bench_repo.py). After each timed
run, untimed, HEAD's tree is checked against the expected one and the
working tree is checked to be clean (`git status --porcelain` prints
nothing), so a broken run cannot pass as a fast one.

Timing is as in measure.py: posix_spawn + wait4, stdout to /dev/null, wall
time around spawn and wait. Prints one JSON object {"clada": [ms, ...],
"patch": [...], "status": [...]} for the measured rounds.
"""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_repo import BenchRepo  # noqa: E402
from measure import run_once  # noqa: E402


def main():
    d, clada, warmup, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    reply_name = sys.argv[5] if len(sys.argv) > 5 else "reply.md"
    repo = BenchRepo(d, "apply_runs.py")
    reply, patch = repo.path(reply_name), repo.path("p.diff")
    gitbin = shutil.which("git")

    def run_clada():
        t, _ = run_once([clada, "apply", reply])
        repo.check("clada")
        return t

    def run_patch():
        t1, _ = run_once([gitbin, "apply", "--index", patch])
        t2, _ = run_once([gitbin, "commit", "-q", "-m", "x"])
        repo.check("git apply + commit")
        return t1 + t2

    def run_status():
        t, _ = run_once([gitbin, "status", "--porcelain"])
        repo.check_clean("git status")
        return t

    def run_clada_ops():
        t, _ = run_once([clada, "apply", repo.path("reply-ops.json")])
        repo.check("clada (moves and deletes)", repo.tree_ops)
        return t

    def run_patch_ops():
        t1, _ = run_once([gitbin, "apply", "--index", repo.path("p-ops.diff")])
        t2, _ = run_once([gitbin, "commit", "-q", "-m", "x"])
        repo.check("git apply + commit (moves and deletes)", repo.tree_ops)
        return t1 + t2

    scenarios = [("clada", run_clada), ("patch", run_patch), ("status", run_status)]
    if reply_name != "reply.md":
        scenarios = scenarios[:2]
    elif repo.tree_ops:
        scenarios += [("clada_ops", run_clada_ops), ("patch_ops", run_patch_ops)]
    ms = {name: [] for name, _ in scenarios}
    for i in range(warmup + runs):
        k = i % len(scenarios)
        for name, fn in scenarios[k:] + scenarios[:k]:
            repo.reset(drop_loose_objects=True)
            repo.check_clean("the reset")
            t = fn()
            if i >= warmup:
                ms[name].append(t)
    repo.reset(drop_loose_objects=True)
    print(json.dumps(ms))


if __name__ == "__main__":
    main()
