"""One benchmark repository made by gen_repo.py, brought back to the same
clean state before every timed run, and checked after it.

Shared by apply_runs.py and run_runs.py. The reset (untimed):
`git reset -q --hard BASE`; the clada notes ref deleted; optionally every
loose object deleted (the base is packed, gen_repo.py runs git gc, so every
loose object was written by a run); the reflogs of HEAD and main restored
to their bytes when the repository was opened; the edited files' mtimes
set back to a fixed time in the past and the index refreshed (`git
update-index -q --refresh`), so no index entry is racily clean and neither
git nor clada has to re-hash a file.
"""

import json
import os
import subprocess
import sys

# Edited files are set back to this mtime (2023-11-14) before every run.
PAST = 1700000000


def git(*args, capture=False):
    r = subprocess.run(["git", *args], check=True, capture_output=capture)
    return r.stdout if capture else None


class BenchRepo:
    """The repository in DIR/repo (the current directory from here on),
    with DIR/state.json's base commit, expected tree and edited files."""

    def __init__(self, d, script):
        self.dir = os.path.abspath(d)
        self.script = script
        with open(os.path.join(self.dir, "state.json")) as f:
            state = json.load(f)
        self.base, self.tree, self.edited = state["base"], state["tree"], state["edited"]
        # The moves-and-deletes case (repositories made before it have none).
        self.tree_ops = state.get("tree_ops")
        self.touched = self.edited + [src for src, _ in state.get("moved", [])] + state.get("deleted", [])
        os.chdir(os.path.join(self.dir, "repo"))
        self.logs = {
            p: open(p, "rb").read()
            for p in (".git/logs/HEAD", ".git/logs/refs/heads/main")
            if os.path.exists(p)
        }

    def path(self, name):
        """A file of DIR (reply.md, p.diff)."""
        return os.path.join(self.dir, name)

    def reset(self, drop_loose_objects):
        git("reset", "-q", "--hard", self.base)
        subprocess.run(["git", "update-ref", "-d", "refs/notes/clada"], check=False)
        if drop_loose_objects:
            # Each run then writes its blobs, trees and commits afresh
            # instead of finding them from the run before.
            for sub in os.listdir(".git/objects"):
                if len(sub) == 2:
                    for name in os.listdir(os.path.join(".git/objects", sub)):
                        os.unlink(os.path.join(".git/objects", sub, name))
        for p, data in self.logs.items():
            with open(p, "wb") as f:
                f.write(data)
        for p in self.touched:
            os.utime(p, (PAST, PAST))
        git("update-index", "-q", "--refresh")

    def check(self, name, tree=None):
        """Exits unless HEAD has the expected tree (`tree`, else the edits'
        tree) and the working tree is clean, so that a broken run cannot
        pass as a fast one."""
        want = tree or self.tree
        got = git("rev-parse", "HEAD^{tree}", capture=True).decode().strip()
        if got != want:
            sys.exit(f"{self.script}: after {name}, HEAD's tree is {got}, expected {want}")
        self.check_clean(name)

    def check_clean(self, name):
        out = git("status", "--porcelain", capture=True)
        if out:
            sys.exit(f"{self.script}: the working tree is not clean after {name}:\n{out.decode()}")
