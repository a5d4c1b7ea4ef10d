#!/usr/bin/env python3
"""Time the first use of clada's scratch working tree against
`git worktree add --detach` on one benchmark repository made by
gen_repo.py.

Usage: scratch_runs.py DIR CLADA_BIN WARMUP RUNS

Three scenarios, in turn each round (the order rotates):

  edit              git-clada apply reply.md
  edit+run          git-clada apply reply-run.md: the same reply plus a
                    RUN of `ls`, with no scratch working tree yet, so it is
                    checked out (every file) before the command
  git worktree add  git worktree add --detach WT COMMIT, COMMIT holding
                    the tree the edits give (what the scratch tree gets)

Untimed before each: for the applies, `git reset -q --hard BASE` and the
rest of BenchRepo.reset, and the scratch tree removed
(.git/clada/scratch, .git/worktrees/clada-scratch); for git, the worktree
directory and its admin dir removed. After each apply HEAD's tree and a
clean working tree are checked; after git's, the worktree's file count.

Prints one JSON object {"edit": [ms, ...], "edit+run": [...],
"git worktree add": [...]}.
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_repo import BenchRepo, git  # noqa: E402
from measure import run_once  # noqa: E402


def main():
    d, clada, warmup, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    repo = BenchRepo(d, "scratch_runs.py")
    reply = repo.path("reply.md")
    reply_run = repo.path("reply-run.md")
    with open(reply) as f, open(reply_run, "w") as g:
        g.write(f.read() + "\n<---RUN--->\nls\n<---END--->\n")
    # A commit of the edited tree, for git to check out.
    commit = git("commit-tree", repo.tree, "-m", "bench", capture=True).decode().strip()
    wt = os.path.join(repo.dir, "git-worktree")
    with open(os.path.join(repo.dir, "state.json")) as f:
        files = json.load(f)["files"]

    def reset():
        shutil.rmtree(".git/clada", ignore_errors=True)
        shutil.rmtree(".git/worktrees/clada-scratch", ignore_errors=True)
        repo.reset(drop_loose_objects=False)

    def apply(name, path):
        reset()
        t, _ = run_once([clada, "apply", path])
        repo.check(name)
        return t

    def worktree_add(name, _):
        shutil.rmtree(wt, ignore_errors=True)
        shutil.rmtree(".git/worktrees/git-worktree", ignore_errors=True)
        t, _ = run_once(["/usr/bin/env", "git", "worktree", "add", "-q", "--detach", wt, commit])
        out = subprocess.run(["git", "-C", wt, "ls-files"], check=True, capture_output=True).stdout
        # The edits move and delete nothing: as many files as the base.
        got = out.count(b"\n")
        if got != files:
            sys.exit(f"scratch_runs.py: {name} checked out {got} files, expected {files}")
        return t

    scenarios = [("edit", lambda n: apply(n, reply)),
                 ("edit+run", lambda n: apply(n, reply_run)),
                 ("git worktree add", lambda n: worktree_add(n, None))]
    ms = {name: [] for name, _ in scenarios}
    for i in range(warmup + runs):
        k = i % len(scenarios)
        for name, f in scenarios[k:] + scenarios[:k]:
            t = f(name)
            if i >= warmup:
                ms[name].append(t)
    shutil.rmtree(wt, ignore_errors=True)
    git("worktree", "prune")
    reset()
    print(json.dumps(ms))


if __name__ == "__main__":
    main()
