#!/usr/bin/env python3
"""Time the extra cost of a RUN in `git clada apply` on one benchmark
repository made by gen_repo.py.

Usage: run_runs.py DIR CLADA_BIN WARMUP RUNS

Two scenarios, alternating round by round, both applying the reply of
gen_repo.py (10 SEARCH edits):

  edit      git-clada apply reply.md
  edit+run  git-clada apply reply-run.md  (the same reply plus a RUN of
                                           `ls`, so the scratch working tree
                                           is brought to the edited tree and
                                           scanned after the command)

First, untimed for the rounds but reported, the scratch working tree is
removed and one edit+run apply creates it ("first use": a checkout of every
file). The rounds then measure second and later uses, the case issue 4
sets the target for (<= 1 s extra at 50,000 files).

Before each timed run, untimed: `git reset -q --hard BASE`, the clada notes
ref deleted, the reflogs restored, the edited files' mtimes set back and the
index refreshed (as apply_runs.py). Loose objects are kept: the scratch
tree's record names a tree written by an earlier run, as in real use.
After each run HEAD's tree and a clean working tree are checked.

Prints one JSON object {"first_use": ms, "edit": [ms, ...],
"edit+run": [...]}.
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
    repo = BenchRepo(d, "run_runs.py")
    reply = repo.path("reply.md")
    reply_run = repo.path("reply-run.md")
    with open(reply) as f, open(reply_run, "w") as g:
        g.write(f.read() + "\n<---RUN--->\nls\n<---END--->\n")

    def reset():
        # Loose objects are kept: the scratch tree's record names a tree
        # written by an earlier run, as in real use.
        repo.reset(drop_loose_objects=False)

    def run(name, path):
        t, _ = run_once([clada, "apply", path])
        repo.check(name)
        return t

    shutil.rmtree(".git/clada", ignore_errors=True)
    shutil.rmtree(".git/worktrees/clada-scratch", ignore_errors=True)
    reset()
    first = run("first use", reply_run)

    scenarios = [("edit", reply), ("edit+run", reply_run)]
    ms = {name: [] for name, _ in scenarios}
    for i in range(warmup + runs):
        k = i % len(scenarios)
        for name, path in scenarios[k:] + scenarios[:k]:
            reset()
            t = run(name, path)
            if i >= warmup:
                ms[name].append(t)
    reset()
    print(json.dumps({"first_use": first, **ms}))


if __name__ == "__main__":
    main()
