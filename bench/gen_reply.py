#!/usr/bin/env python3
"""Generate a large, realistic CSL reply for benchmarking `git-clada parse`.

Usage: gen_reply.py OUTPUT [--size BYTES] [--seed N] [--shape mixed|many-blocks]

The output is deterministic for a given seed and size (only `random.Random`
with a fixed seed is used, never the clock or hash ordering), so numbers from
different machines and commits measure the same input.

What a reply of the default `mixed` shape contains, and why:
  * prose paragraphs, headings, bullet lists and markdown fences between
    operations: the parser must skip them line by line at top level and
    between operations inside TASKS;
  * WRITE (some with append="true"), SEARCH with and without count, range
    SEARCH with TO, RUN, and TASKS groups holding WRITE/SEARCH/RUN with prose
    in between: every state of the parser's state machine is exercised;
  * code-like content of varied line lengths: mostly short and medium lines,
    tab-indented Makefile/Go lines, and some very long lines (minified JS,
    base64 blobs) so line splitting is not only measured on short lines;
  * quotes, backslashes, tabs and non-ASCII text, so the JSON writer has to
    escape (the common case for source code);
  * a small fraction of blocks with CRLF line ends (most replies are LF).

The `many-blocks` shape is the other extreme: only short lines (at most 85
characters, about 35 bytes on average) in many small operations (about 1,500
operations and 28,000 lines per MB), so the per-line and per-operation costs
dominate instead of the per-byte ones. See SmallBlocks below.

Nothing in it is an error: no line in prose or content starts with the marker
start delimiter, so the benchmark measures the success path. bench/parse.sh
checks that with `parse --format text`.
"""

import argparse
import random
import string

WORDS = (
    "the parser reads each line once and decides whether it is a marker or "
    "content this change moves the configuration loader into its own module "
    "so that tests can build it without touching the disk we keep the old "
    "behaviour for callers that pass a path and add a new entry point that "
    "takes the bytes directly note that the cache is invalidated when the "
    "file changes on disk which is checked by comparing modification times "
    "and sizes here is the updated function followed by the call sites that "
    "need to change après réflexion naïve façade über straße — “quoted” text "
    "with émojis 🚀 and ümlauts"
).split()

IDENTS = [
    "config", "loader", "parse_line", "buffer", "result", "items", "handler",
    "request", "response", "user_id", "session", "cache", "entry", "index",
    "offset", "payload", "retries", "timeout", "logger", "registry", "state",
    "builder", "context", "visitor", "node", "children", "path", "reader",
]
TYPES = ["String", "Vec<u8>", "usize", "Option<&str>", "HashMap<String, Value>",
         "Result<(), Error>", "u64", "bool", "&[Line<'a>]"]
PATHS = [
    "src/app.js", "src/main.rs", "src/lib.rs", "src/config/loader.rs",
    "app/models/user.py", "app/views.py", "web/static/bundle.min.js",
    "Makefile", "cmd/server/main.go", "README.md", "docs/guide.md",
    "tests/test_loader.py", "package.json", "scripts/deploy.sh",
    "internal/cache/cache.go", "src/components/Header.tsx", "CHANGELOG.md",
]
COMMANDS = [
    "cargo fmt", "cargo test --all-features -- --nocapture", "npm run build",
    "npm test -- --watch=false", "pytest -q tests/test_loader.py",
    "go vet ./...", "go test -race ./internal/...", "make -j4 all",
    "git status --short", "ls -la src/", "python3 -m pip install -r requirements.txt",
    "rg -n 'TODO|FIXME' src/", "./scripts/deploy.sh --dry-run staging",
    "echo \"done: $(date -u +%Y-%m-%dT%H:%M:%SZ)\"",
]



def hard_wrap(text, width=78):
    """`text` broken into lines of at most `width` characters at spaces."""
    lines, cur = [], ""
    for w in text.split(" "):
        if len(cur) + len(w) + 1 > width and cur:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return lines

class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    # ----- small pieces ----------------------------------------------------

    def ident(self):
        return self.r.choice(IDENTS)

    def sentence(self):
        n = self.r.randint(6, 22)
        words = [self.r.choice(WORDS) for _ in range(n)]
        s = " ".join(words)
        return s[0].upper() + s[1:] + self.r.choice([".", ".", ".", ":", "?"])

    def paragraph(self):
        # Prose in replies is usually a few sentences per line (one paragraph
        # per line), sometimes hard-wrapped; both occur.
        sentences = [self.sentence() for _ in range(self.r.randint(1, 6))]
        text = " ".join(sentences)
        if self.r.random() < 0.4:
            return hard_wrap(text)
        return [text]

    def prose(self):
        out = []
        for _ in range(self.r.randint(1, 4)):
            kind = self.r.random()
            if kind < 0.15:
                out.append("#" * self.r.randint(1, 3) + " " + self.sentence().rstrip(".:?"))
            elif kind < 0.30:
                out.extend(f"- {self.sentence()}" for _ in range(self.r.randint(2, 5)))
            elif kind < 0.40:
                # A fenced snippet in prose (not an operation): just prose lines.
                out.append("```" + self.r.choice(["", "rust", "python", "sh", "diff"]))
                out.extend(self.code_lines(self.r.randint(2, 12)))
                out.append("```")
            else:
                out.extend(self.paragraph())
            out.append("")
        return out

    # ----- code-like content -------------------------------------------------

    def rust_line(self, depth):
        ind = "    " * depth
        c = self.r.random()
        a, b = self.ident(), self.ident()
        if c < 0.2:
            return f"{ind}let {a} = {b}.get(\"{a}\").unwrap_or_default();"
        if c < 0.35:
            return f"{ind}fn {a}_{b}(&self, {a}: {self.r.choice(TYPES)}) -> {self.r.choice(TYPES)} {{"
        if c < 0.5:
            return f"{ind}// {self.sentence()}"
        if c < 0.6:
            return f"{ind}if {a}.len() > {self.r.randint(0, 4096)} && !{b}.is_empty() {{"
        if c < 0.7:
            return f"{ind}return Err(Error::new(format!(\"cannot read {{}}: {{e}}\\n\", {a}.display())));"
        if c < 0.8:
            return f"{ind}{a}.push_str(\"\\\\\\\"escaped\\\\\\\" tab:\\t é\");"
        return f"{ind}}}"

    def python_line(self, depth):
        ind = "    " * depth
        c = self.r.random()
        a, b = self.ident(), self.ident()
        if c < 0.25:
            return f"{ind}{a} = {b}.get('{a}', {self.r.randint(0, 99)})"
        if c < 0.4:
            return f"{ind}def {a}_{b}(self, {a}, {b}=None):"
        if c < 0.55:
            return f"{ind}# {self.sentence()}"
        if c < 0.7:
            return f"{ind}raise ValueError(f\"bad {a}: {{{a}!r}} (expected '{b}')\")"
        if c < 0.85:
            return f"{ind}for {a} in sorted({b}.items(), key=lambda kv: kv[1]):"
        return f"{ind}return {a}"

    def go_line(self, depth):
        # Go and Makefiles are indented with tabs.
        ind = "\t" * depth
        c = self.r.random()
        a, b = self.ident(), self.ident()
        if c < 0.3:
            return f"{ind}{a}, err := {b}.Load(ctx, \"{a}\")"
        if c < 0.5:
            return f"{ind}if err != nil {{"
        if c < 0.65:
            return f"{ind}return fmt.Errorf(\"{a}: %w\", err)"
        if c < 0.8:
            return f"{ind}// {self.sentence()}"
        return f"{ind}}}"

    def long_line(self):
        # Minified bundles, data URIs and lock-file hashes produce very long
        # lines; a few of them per file are typical.
        n = self.r.choice([200, 400, 1000, 3000, 8000])
        if self.r.random() < 0.5:
            alphabet = string.ascii_letters + string.digits + "+/"
            return "const DATA = \"" + "".join(self.r.choice(alphabet) for _ in range(n)) + "\";"
        parts = []
        size = 0
        while size < n:
            a, b = self.ident(), self.ident()
            p = f"function {a}(e,t){{return e.{b}===t?\"{a}\":null}};var {b}={self.r.randint(0, 9999)};"
            parts.append(p)
            size += len(p)
        return "".join(parts)

    def code_lines(self, n):
        style = self.r.choice(["rust", "rust", "python", "python", "go"])
        make = {"rust": self.rust_line, "python": self.python_line, "go": self.go_line}[style]
        out, depth = [], 0
        for _ in range(n):
            c = self.r.random()
            if c < 0.08:
                out.append("")
            elif c < 0.1:
                out.append(self.long_line())
            else:
                depth = max(0, min(5, depth + self.r.choice([-1, 0, 0, 0, 1])))
                out.append(make(depth))
        return out

    def content(self):
        # Most edits are small; a few rewrite a whole, large file.
        c = self.r.random()
        if c < 0.6:
            n = self.r.randint(1, 25)
        elif c < 0.92:
            n = self.r.randint(25, 150)
        else:
            n = self.r.randint(150, 900)
        lines = self.code_lines(n)
        if self.r.random() < 0.1:
            lines.append("")  # content ending in a newline
        return lines

    # ----- operations --------------------------------------------------------

    def write_op(self):
        attrs = f'file="{self.r.choice(PATHS)}"'
        if self.r.random() < 0.1:
            attrs += ' append="true"'
        return [f"<---WRITE {attrs}--->", *self.content(), "<---END--->"]

    def search_op(self):
        attrs = f'file="{self.r.choice(PATHS)}"'
        c = self.r.random()
        if c < 0.25:
            attrs += f' count="{self.r.choice(["2", "3", "all"])}"'
        pattern = self.code_lines(self.r.randint(1, 8))
        pattern[0] = pattern[0] or "x = 1"  # patterns must be non-empty
        out = [f"<---SEARCH {attrs}--->", *pattern]
        if 0.25 <= c < 0.5:
            # Range SEARCH: from the pattern through the TO text (no count).
            out = [f'<---SEARCH file="{self.r.choice(PATHS)}"--->', *pattern, "<---TO--->"]
            to = self.code_lines(self.r.randint(1, 4))
            to[0] = to[0] or "}"
            out += to
        out.append("<---REPLACE--->")
        out += self.code_lines(self.r.randint(0, 30))
        out.append("<---END--->")
        return out

    def run_op(self):
        attrs = f' dir="{self.r.choice(["sub/dir", "web", "cmd/server"])}"' if self.r.random() < 0.3 else ""
        cmds = [self.r.choice(COMMANDS) for _ in range(self.r.randint(1, 5))]
        return [f"<---RUN{attrs}--->", *cmds, "<---END--->"]

    def leaf_op(self):
        c = self.r.random()
        if c < 0.45:
            return self.write_op()
        if c < 0.85:
            return self.search_op()
        return self.run_op()

    def tasks_op(self):
        out = [f'<---TASKS version="1"--->']
        for i in range(self.r.randint(2, 6)):
            if i and self.r.random() < 0.5:
                out += self.paragraph()
            out += self.leaf_op()
        out.append("<---END--->")
        return out

    def block(self):
        """Prose followed by one operation, sometimes inside a markdown fence."""
        lines = self.prose()
        c = self.r.random()
        op = self.tasks_op() if c < 0.15 else self.leaf_op()
        if self.r.random() < 0.2:
            # Models often wrap operations in fences; the fence lines are prose.
            op = ["```", *op, "```"]
        lines += op
        lines.append("")
        return lines


class SmallBlocks(Gen):
    """Many small blocks of short lines: a reply of many quick edits.

    Per 20 MB about 30,000 operations and 570,000 lines of at most
    MAX_LINE characters; WRITE, SEARCH (some range), RUN and TASKS mixed as
    in the default shape, with a line or two of prose between them.
    """

    MAX_LINE = 85

    def long_line(self):
        # No very long lines here: a lock-file style hash instead.
        alphabet = string.ascii_letters + string.digits + "+/"
        return "integrity sha512-" + "".join(self.r.choice(alphabet) for _ in range(60))

    def code_lines(self, n):
        # Source as edits show it: short lines, a blank one now and then.
        lines = super().code_lines(n)
        return ["" if self.r.random() < 0.12 else line[: self.MAX_LINE] for line in lines]

    def paragraph(self):
        # One or two sentences, always hard-wrapped.
        return hard_wrap(" ".join(self.sentence() for _ in range(self.r.randint(1, 2))))

    def prose(self):
        kind = self.r.random()
        if kind < 0.3:
            out = [("#" * self.r.randint(1, 3) + " " + self.sentence().rstrip(".:?"))[: self.MAX_LINE]]
        elif kind < 0.45:
            out = [f"- {self.sentence()}"[: self.MAX_LINE] for _ in range(self.r.randint(1, 3))]
        else:
            out = self.paragraph()
        out.append("")
        return out

    def content(self):
        lines = self.code_lines(self.r.randint(1, 28))
        if self.r.random() < 0.1:
            lines.append("")
        return lines

    def search_op(self):
        # The default shape's SEARCH, with a shorter replacement.
        out = super().search_op()
        replace = out.index("<---REPLACE--->")
        return out[: replace + 1] + out[replace + 1 : -1][:12] + ["<---END--->"]


SHAPES = {"mixed": Gen, "many-blocks": SmallBlocks}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output")
    ap.add_argument("--size", type=int, default=20_000_000)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--shape", choices=SHAPES, default="mixed")
    args = ap.parse_args()

    g = SHAPES[args.shape](args.seed)
    chunks, total = [], 0
    # Stop at the first block boundary past the target: blocks are small
    # (tens of KB at most), so the overshoot is well under 1 %.
    while total < args.size:
        lines = g.block()
        eol = "\r\n" if g.r.random() < 0.02 else "\n"
        chunk = (eol.join(lines) + eol).encode("utf-8")
        chunks.append(chunk)
        total += len(chunk)
    with open(args.output, "wb") as f:
        f.writelines(chunks)
    print(total)


if __name__ == "__main__":
    main()
