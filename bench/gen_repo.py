#!/usr/bin/env python3
"""Generate a synthetic repository, a reply and the same change as a patch,
for benchmarking `git clada apply` (bench/apply.sh).

Usage: gen_repo.py OUTDIR --files N [--seed N] [--edits N] [--hunks K]

Creates, in OUTDIR (which must not exist yet):
  repo/       a git repository on branch main with exactly N tracked files in
              one commit, packed (`git gc`, as after a clone), with a clean
              working tree and an up-to-date index;
  reply.md    a CSL reply with one SEARCH/REPLACE on each of --edits files
              (no RUN);
  reply-ops.json, p-ops.diff
              the same edits plus two files moved and two deleted, as a
              JSON reply and as a patch with rename headers;
  p.diff      the same change as a `git diff` patch, for `git apply --index`;
  state.json  {"base": commit, "tree": the tree after the change, "edited":
              [paths], "files": N}, written last: its presence means the
              directory is complete.

Git runs in the caller's environment; bench/apply.sh makes it hermetic
(GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null). Name, e-mail and the
other settings the benchmark depends on are set in the repository's config.

What the repository looks like, and why:
  * nested directories (a random tree, 1 to 5 levels deep, about 12 files
    per directory, file counts per directory skewed): status walks and the
    tree edits of an apply both depend on depth and fan-out;
  * source-like text files (Rust, Python, TypeScript/JavaScript, Go, C,
    Markdown, JSON/YAML/TOML) of log-normally distributed sizes (median about
    2.5 KB, a few over 100 KB), built from functions with repository-wide
    unique names, so a SEARCH pattern matches exactly once;
  * a .gitignore at the top, as most repositories have one.
The output is deterministic for a seed and N (only random.Random with a
fixed seed is used); commit dates are fixed, so the base commit id is too.
"""

import argparse
import json
import os
import random
import subprocess
import sys

WORDS = (
    "the loader reads each entry once and decides whether it is cached or "
    "stale this module keeps the old behaviour for callers that pass a path "
    "note that the index is rebuilt when the file changes on disk which is "
    "checked by comparing modification times and sizes retry the request "
    "with a fresh session when the token expired and log the failure"
).split()
IDENTS = [
    "config", "loader", "line", "buffer", "result", "items", "handler",
    "request", "response", "user_id", "session", "cache", "entry", "index",
    "offset", "payload", "retries", "timeout", "logger", "registry", "state",
    "builder", "context", "visitor", "node", "children", "path", "reader",
    "count", "limit", "token", "header", "value", "key", "store", "queue",
]
VERBS = ["parse", "load", "build", "handle", "read", "write", "check", "merge",
         "render", "resolve", "update", "fetch", "apply", "encode", "decode"]
DIRS = [
    "src", "lib", "internal", "pkg", "cmd", "api", "core", "util", "utils",
    "server", "client", "models", "views", "handlers", "services", "storage",
    "cache", "config", "auth", "net", "http", "db", "migrations", "parser",
    "compiler", "runtime", "plugins", "tools", "scripts", "tests", "fixtures",
    "docs", "examples", "web", "components", "hooks", "store", "styles",
    "assets", "i18n", "proto", "gen", "common", "shared", "io", "fs", "sync",
    "metrics", "tracing", "cli", "ui", "widgets", "admin", "billing", "search",
]
# (extension, weight, kind). "code" files are made of functions and can be
# edited by the benchmark; the others are prose or data.
EXTS = [
    ("rs", 16, "rust"), ("py", 16, "python"), ("ts", 10, "js"), ("js", 8, "js"),
    ("go", 14, "go"), ("c", 6, "c"), ("h", 4, "c"), ("md", 8, "md"),
    ("json", 6, "json"), ("yaml", 6, "yaml"), ("toml", 2, "toml"),
]
CODE_KINDS = {"rust", "python", "js", "go", "c"}


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.fn_id = 0
        # Pools of body lines per language: files pick from them, which is
        # much faster than building every line and still gives varied text.
        self.pools = {k: [self.body_line(k) for _ in range(4000)] for k in sorted(CODE_KINDS)}
        self.prose_pool = [self.sentence() for _ in range(3000)]

    def ident(self):
        return self.r.choice(IDENTS)

    def sentence(self):
        words = [self.r.choice(WORDS) for _ in range(self.r.randint(5, 16))]
        s = " ".join(words)
        return s[0].upper() + s[1:] + "."

    def body_line(self, kind):
        r, a, b = self.r.random(), self.ident(), self.ident()
        n = self.r.randint(0, 4096)
        if kind == "rust":
            return self.r.choice([
                f"let {a} = {b}.get(\"{a}\").unwrap_or_default();",
                f"if {a}.len() > {n} && !{b}.is_empty() {{ return Ok(()); }}",
                f"// {self.sentence()}",
                f"{a}.push({b}.clone());",
                f"let {a}: Vec<_> = {b}.iter().filter(|x| x.{a} > {n}).collect();",
                f"self.{a}.insert({b}.key(), {n});",
                f"return Err(Error::new(format!(\"cannot read {{}}\", {a}.display())));",
            ])
        if kind == "python":
            return self.r.choice([
                f"{a} = {b}.get('{a}', {n})",
                f"# {self.sentence()}",
                f"if {a} is None or len({b}) > {n}:",
                f"    return self.{a}",
                f"raise ValueError(f\"bad {a}: {{{a}!r}}\")",
                f"for {a} in sorted({b}.items(), key=lambda kv: kv[1]):",
                f"    {b}.append({a})",
            ])
        if kind == "js":
            return self.r.choice([
                f"const {a} = await {b}.get(\"{a}\", {{ limit: {n} }});",
                f"// {self.sentence()}",
                f"if (!{a} || {b}.length > {n}) return null;",
                f"{a}.forEach((x) => {b}.push(x.{a}));",
                f"this.{a} = {{ ...this.{a}, {b}: {n} }};",
                f"throw new Error(`cannot load ${{{a}}}`);",
            ])
        if kind == "go":
            return self.r.choice([
                f"{a}, err := {b}.Load(ctx, \"{a}\")",
                "if err != nil {",
                f"\treturn fmt.Errorf(\"{a}: %w\", err)",
                "}",
                f"// {self.sentence()}",
                f"s.{a}[{b}.Key()] = {n}",
            ])
        return self.r.choice([  # C
            f"{a}->{b} = {n};",
            f"if ({a} == NULL || {b} > {n}) return -1;",
            f"/* {self.sentence()} */",
            f"memcpy({a}->buf, {b}, sizeof(*{b}));",
            f"for (size_t i = 0; i < {a}->len; i++) {b}[i] = 0;",
        ])

    def signature(self, kind):
        self.fn_id += 1
        name = f"{self.r.choice(VERBS)}_{self.ident()}_{self.fn_id}"
        a, b = self.ident(), self.ident()
        if kind == "rust":
            return f"pub fn {name}(&mut self, {a}: &str, {b}: usize) -> Result<(), Error> {{", "}"
        if kind == "python":
            return f"def {name}(self, {a}, {b}=None):", None
        if kind == "js":
            return f"export async function {name}({a}, {b}) {{", "}"
        if kind == "go":
            return f"func (s *Server) {name}(ctx context.Context, {a} string) error {{", "}"
        return f"static int {name}(struct {a} *{a}, size_t {b})\n{{", "}"

    def n_lines(self):
        # Log-normal: median about 75 lines (2.5 KB), a long tail, capped.
        return max(3, min(6000, int(self.r.lognormvariate(4.3, 1.0))))

    def code_file(self, kind, target):
        header = {
            "rust": ["use std::collections::HashMap;", "use crate::error::Error;", ""],
            "python": ["import os", "import sys", "from typing import Optional", ""],
            "js": ["import { Store } from \"./store\";", ""],
            "go": ["package server", "", "import (", "\t\"context\"", "\t\"fmt\"", ")", ""],
            "c": ["#include <stdlib.h>", "#include <string.h>", ""],
        }[kind]
        lines = list(header)
        pool = self.pools[kind]
        ind = "\t" if kind == "go" else "    "
        while len(lines) < target:
            sig, close = self.signature(kind)
            lines.extend(sig.split("\n"))
            k = self.r.randint(3, 25)
            lines.extend(ind + line for line in self.r.choices(pool, k=k))
            lines.append(close if close is not None else "")
            if close is not None:
                lines.append("")
        return lines

    def text_file(self, kind, target):
        r = self.r
        lines = []
        if kind == "md":
            lines.append("# " + r.choice(self.prose_pool).rstrip("."))
            while len(lines) < target:
                if r.random() < 0.15:
                    lines += ["", "## " + r.choice(self.prose_pool).rstrip("."), ""]
                else:
                    lines.append(" ".join(r.choices(self.prose_pool, k=r.randint(1, 3))))
        elif kind == "json":
            lines.append("{")
            while len(lines) < target:
                lines.append(f'  "{self.ident()}_{len(lines)}": {{"{self.ident()}": {r.randint(0, 9999)}, "enabled": {r.choice(["true", "false"])}}},')
            lines.append('  "version": 1')
            lines.append("}")
        elif kind == "yaml":
            while len(lines) < target:
                lines.append(f"{self.ident()}_{len(lines)}:")
                lines.append(f"  {self.ident()}: {r.randint(0, 9999)}")
                lines.append(f"  description: {r.choice(self.prose_pool)}")
        else:  # toml
            while len(lines) < target:
                lines.append(f"[{self.ident()}_{len(lines)}]")
                lines.append(f"{self.ident()} = {r.randint(0, 9999)}")
                lines.append(f'name = "{self.ident()}"')
                lines.append("")
        return lines

    def tree(self, n_files):
        """Directory paths and file paths (n_files in all, .gitignore included)."""
        r = self.r
        dirs = [""]
        depth = {"": 0}
        children = {"": set()}
        n_dirs = max(3, n_files // 12)
        while len(dirs) < n_dirs:
            # A parent at depth d takes a child with probability 1 - d/5:
            # most directories end up 3 to 5 levels deep.
            parent = r.choice(dirs)
            if r.random() < depth[parent] / 5:
                continue
            name = r.choice(DIRS)
            if name in children[parent]:
                name = f"{name}_{len(dirs)}"
            children[parent].add(name)
            path = f"{parent}/{name}" if parent else name
            dirs.append(path)
            depth[path] = depth[parent] + 1
            children[path] = set()
        # Skewed file counts per directory (some large, many small).
        weights = [r.paretovariate(1.5) for _ in dirs]
        weights[0] = weights[0] * 0.1  # few files at the top
        files = [".gitignore"]
        used = {".gitignore"}
        exts, ext_w = [e for e in EXTS], [e[1] for e in EXTS]
        while len(files) < n_files:
            d = r.choices(dirs, weights=weights)[0]
            ext = r.choices(exts, weights=ext_w)[0]
            base = f"{r.choice(VERBS)}_{self.ident()}"
            path = f"{d}/{base}.{ext[0]}" if d else f"{base}.{ext[0]}"
            if path in used:
                path = path[: -len(ext[0]) - 1] + f"_{len(files)}.{ext[0]}"
            used.add(path)
            files.append(path)
        return files


def git(repo, *args, **kw):
    return subprocess.run(["git", "-C", repo, *args], check=True, **kw)


def git_out(repo, *args):
    return git(repo, *args, capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--edits", type=int, default=10)
    # Edits per file: K functions each, far enough apart that `git diff`
    # makes K hunks of the file (bench/apply_diff.sh: 200 files x 5).
    ap.add_argument("--hunks", type=int, default=1)
    args = ap.parse_args()
    out = os.path.abspath(args.outdir)
    repo = os.path.join(out, "repo")
    if os.path.exists(out):
        sys.exit(f"gen_repo.py: {out} exists; remove it first")
    os.makedirs(repo)

    g = Gen(args.seed)
    kind_of = {e[0]: e[2] for e in EXTS}
    paths = g.tree(args.files)
    contents = {}
    for path in paths:
        if path == ".gitignore":
            text = "/target\n/node_modules\n/build\n*.o\n*.pyc\n__pycache__/\n.env\n"
        else:
            kind = kind_of[path.rsplit(".", 1)[1]]
            n = g.n_lines()
            lines = g.code_file(kind, n) if kind in CODE_KINDS else g.text_file(kind, n)
            text = "\n".join(lines) + "\n"
        contents[path] = text
        full = os.path.join(repo, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)

    # One commit with fixed dates (so the id is reproducible), then packed.
    git(repo, "init", "-q", "-b", "main")
    for k, v in [("user.name", "Bench"), ("user.email", "bench@example.com"),
                 ("commit.gpgsign", "false"), ("core.autocrlf", "false"),
                 # No automatic gc in the background: the explicit one below
                 # would find it running and fail.
                 ("gc.auto", "0")]:
        git(repo, "config", k, v)
    git(repo, "add", "-A")
    env = dict(os.environ, GIT_AUTHOR_DATE="1700000000 +0000",
               GIT_COMMITTER_DATE="1700000000 +0000")
    git(repo, "commit", "-q", "-m", f"Synthetic repository: {args.files} files", env=env)
    git(repo, "gc", "-q")
    base = git_out(repo, "rev-parse", "HEAD")
    n_tracked = git(repo, "ls-files", "-z", capture_output=True).stdout.count(b"\0")
    assert n_tracked == args.files, (n_tracked, args.files)

    # The edits: one per file, code files of 1-40 KB, in as many different
    # top-level directories as possible; each replaces a function's first
    # three lines (its signature is unique in the repository) with a changed
    # version and one added line.
    r = random.Random(args.seed + 1)
    def signature_rows(p):
        return [i for i, l in enumerate(contents[p].split("\n"))
                if l.startswith(("pub fn ", "def ", "export async function ", "func (s *Server) ", "static int "))]

    def sites(p):
        """K signature rows at least 10 lines apart, spread over the file."""
        rows = signature_rows(p)
        picked = []
        for i in rows[len(rows) // 2:] + rows[:len(rows) // 2]:
            if all(abs(i - j) >= 10 for j in picked):
                picked.append(i)
            if len(picked) == args.hunks:
                break
        return sorted(picked) if len(picked) == args.hunks else None

    candidates = [p for p in paths if p != ".gitignore"
                  and kind_of[p.rsplit(".", 1)[1]] in CODE_KINDS
                  and 1000 <= len(contents[p].encode()) <= 40000
                  and (args.hunks == 1 or sites(p) is not None)]
    r.shuffle(candidates)
    chosen, tops = [], set()
    for strict in (True, False):
        for p in candidates:
            top = p.split("/", 1)[0]
            if len(chosen) < args.edits and p not in chosen and (not strict or top not in tops):
                chosen.append(p)
                tops.add(top)
    chosen.sort()
    assert len(chosen) == args.edits, "not enough candidate files"

    reply = ["Here are the changes: each function now checks its input first.", ""]
    # The same edits as JSON operations, for the moves-and-deletes case.
    ops = []
    for p in chosen:
        lines = contents[p].split("\n")
        sig_rows = signature_rows(p)
        rows = [sig_rows[len(sig_rows) // 2]] if args.hunks == 1 else sites(p)
        new = contents[p]
        for i in rows:
            if lines[i].startswith("static int "):
                i += 1  # C: the "{" line follows the signature
            search = lines[i - (1 if lines[i] == "{" else 0): i + 3]
            assert contents[p].count("\n".join(search) + "\n") == 1, p
            ind = "\t" if p.endswith(".go") else "    "
            replace = [search[0], *search[1:-1], ind + "// Checked by the caller since the last change.", search[-1]]
            replace = [l.replace("Error", "Error /* v2 */", 1) if j == 0 else l for j, l in enumerate(replace)]
            reply += [f"Update `{p}`:", "", f'<---SEARCH file="{p}"--->', *search,
                      "<---REPLACE--->", *replace, "<---END--->", ""]
            ops.append({"op": "search", "path": p, "search": "\n".join(search),
                        "replace": "\n".join(replace)})
            new = new.replace("\n".join(search) + "\n", "\n".join(replace) + "\n", 1)
        with open(os.path.join(repo, p), "w", encoding="utf-8", newline="\n") as f:
            f.write(new)
    with open(os.path.join(out, "reply.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(reply))
    with open(os.path.join(out, "p.diff"), "wb") as f:
        f.write(git(repo, "diff", "--no-color", "--no-ext-diff", capture_output=True).stdout)
    git(repo, "add", "--", *chosen)
    tree = git_out(repo, "write-tree")

    # The moves-and-deletes case: the same edits, plus two files moved into
    # a new directory and two deleted, as one JSON reply and as a patch
    # with git's rename headers.
    others = [p for p in paths if p != ".gitignore" and p not in chosen]
    r.shuffle(others)
    moved = [(p, "moved/" + p.replace("/", "-")) for p in sorted(others[:2])]
    deleted = sorted(others[2:4])
    os.makedirs(os.path.join(repo, "moved"), exist_ok=True)
    for src, dst in moved:
        ops.append({"op": "move", "from": src, "to": dst})
        git(repo, "mv", src, dst)
    for p in deleted:
        ops.append({"op": "delete", "path": p})
    git(repo, "rm", "-q", "--", *deleted)
    tree_ops = git_out(repo, "write-tree")
    with open(os.path.join(out, "p-ops.diff"), "wb") as f:
        f.write(git(repo, "diff", "--cached", "-M", "--no-color", "--no-ext-diff",
                    capture_output=True).stdout)
    with open(os.path.join(out, "reply-ops.json"), "w", encoding="utf-8") as f:
        json.dump(ops, f, indent=1)
        f.write("\n")

    git(repo, "reset", "-q", "--hard", base)
    git(repo, "update-index", "-q", "--refresh")
    with open(os.path.join(out, "state.json"), "w") as f:
        json.dump({"base": base, "tree": tree, "edited": chosen, "files": args.files,
                   "tree_ops": tree_ops, "moved": moved, "deleted": deleted}, f, indent=1)
        f.write("\n")
    print(f"{out}: {args.files} files, base {base[:12]}, {len(chosen)} edits")


if __name__ == "__main__":
    main()
