#!/usr/bin/env python3
"""Time `git clada apply`, `git apply --index + git commit` and `git status`
on one benchmark repository made by gen_repo.py, in alternating rounds.

Usage: apply_runs.py DIR CLADA_BIN WARMUP RUNS

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

Before each timed run, untimed, the repository is brought back to the same
clean state: `git reset -q --hard BASE`; the clada notes ref and all loose
objects deleted (the base is packed, so loose objects are what earlier runs
wrote); the reflogs of HEAD and main restored to their bytes at the start;
the edited files' mtimes set back to a fixed time in the past and the index
refreshed (`git update-index -q --refresh`), so no index entry is racily
clean and neither git nor clada has to re-hash a file. After each timed run,
untimed, HEAD's tree is checked against the expected one and the working
tree is checked to be clean (`git status --porcelain` prints nothing), so a
broken run cannot pass as a fast one.

Timing is as in measure.py: posix_spawn + wait4, stdout to /dev/null, wall
time around spawn and wait. Prints one JSON object {"clada": [ms, ...],
"patch": [...], "status": [...]} for the measured rounds.
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import run_once  # noqa: E402

# Edited files are set back to this mtime (2023-11-14) before every run.
PAST = 1700000000


def git(*args, capture=False):
    r = subprocess.run(["git", *args], check=True, capture_output=capture)
    return r.stdout if capture else None


def main():
    d, clada, warmup, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    d = os.path.abspath(d)
    with open(os.path.join(d, "state.json")) as f:
        state = json.load(f)
    base, tree, edited = state["base"], state["tree"], state["edited"]
    reply, patch = os.path.join(d, "reply.md"), os.path.join(d, "p.diff")
    os.chdir(os.path.join(d, "repo"))
    gitbin = shutil.which("git")
    logs = {p: open(p, "rb").read() for p in (".git/logs/HEAD", ".git/logs/refs/heads/main")
            if os.path.exists(p)}

    def reset():
        git("reset", "-q", "--hard", base)
        git("update-ref", "-d", "refs/notes/clada")
        # The base is packed (gen_repo.py runs git gc), so every loose object
        # was written by a run: removed, so each run writes its blobs, trees
        # and commits afresh instead of finding them from the run before.
        for sub in os.listdir(".git/objects"):
            if len(sub) == 2:
                for name in os.listdir(os.path.join(".git/objects", sub)):
                    os.unlink(os.path.join(".git/objects", sub, name))
        for p, data in logs.items():
            with open(p, "wb") as f:
                f.write(data)
        for p in edited:
            os.utime(p, (PAST, PAST))
        git("update-index", "-q", "--refresh")

    def check_tree(name):
        got = git("rev-parse", "HEAD^{tree}", capture=True).decode().strip()
        if got != tree:
            sys.exit(f"apply_runs.py: after {name}, HEAD's tree is {got}, expected {tree}")

    def check_clean(name):
        out = git("status", "--porcelain", capture=True)
        if out:
            sys.exit(f"apply_runs.py: the working tree is not clean after {name}:\n{out.decode()}")

    def run_clada():
        t, _ = run_once([clada, "apply", reply])
        check_tree("clada")
        check_clean("clada")
        return t

    def run_patch():
        t1, _ = run_once([gitbin, "apply", "--index", patch])
        t2, _ = run_once([gitbin, "commit", "-q", "-m", "x"])
        check_tree("git apply + commit")
        check_clean("git apply + commit")
        return t1 + t2

    def run_status():
        t, _ = run_once([gitbin, "status", "--porcelain"])
        check_clean("git status")
        return t

    scenarios = [("clada", run_clada), ("patch", run_patch), ("status", run_status)]
    ms = {name: [] for name, _ in scenarios}
    for i in range(warmup + runs):
        k = i % len(scenarios)
        for name, fn in scenarios[k:] + scenarios[:k]:
            reset()
            check_clean("the reset")
            t = fn()
            if i >= warmup:
                ms[name].append(t)
    reset()
    git("update-ref", "-d", "refs/notes/clada")
    print(json.dumps(ms))


if __name__ == "__main__":
    main()
