#!/usr/bin/env python3
"""Generate a large, realistic unified diff reply for `bench/parse.sh`.

Usage: gen_diff.py SIZE SEED OUTPUT

Deterministic for a given size and seed. What models and `git diff` write:
prose between ```diff fences, git headers (index lines, new and deleted
files, renames), plain `---`/`+++` sections, several hunks per file with
three context lines, blank context lines written without their space, and
code of varied line lengths (some very long minified lines), tabs, quotes,
non-ASCII text and a few CRLF files. Nothing in it is an error.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textgen  # noqa: E402
from textgen import prose  # noqa: E402

# Blank lines are 5% of the code, for the blank context lines.
MINIFIED = "abcdef0123456789(){};,.+"


def code_line(rng):
    return textgen.code_line(rng, MINIFIED, blank=0.05)


def context(rng):
    line = code_line(rng)
    # Models often drop the space of a blank context line.
    return "" if line == "" and rng.random() < 0.5 else " " + line


def file_section(rng, n):
    path = f"src/module_{n % 997}/file_{n}.py"
    kind = rng.random()
    out = []
    if kind < 0.05:
        out += [f"diff --git a/{path} b/{path}", "new file mode 100644", "--- /dev/null", f"+++ b/{path}"]
        lines = [code_line(rng) for _ in range(rng.randint(5, 60))]
        out.append(f"@@ -0,0 +1,{len(lines)} @@")
        out += ["+" + l for l in lines]
        return out
    if kind < 0.08:
        return [f"diff --git a/{path} b/{path}", "deleted file mode 100644", f"--- a/{path}", "+++ /dev/null", "@@ -1,2 +0,0 @@", "-a", "-b"]
    if kind < 0.5:
        out += [f"diff --git a/{path} b/{path}", f"index {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644"]
    out += [f"--- a/{path}", f"+++ b/{path}"]
    line = 1
    for _ in range(rng.randint(1, 5)):
        line += rng.randint(5, 200)
        before = [context(rng) for _ in range(3)]
        removed = ["-" + code_line(rng) for _ in range(rng.randint(0, 6))]
        added = ["+" + code_line(rng) for _ in range(rng.randint(1, 8))]
        after = [context(rng) for _ in range(3)]
        out.append(f"@@ -{line},{6 + len(removed)} +{line},{6 + len(added)} @@")
        out += before + removed + added + after
    return out


def main():
    sections = [0]  # numbered across the pieces: a piece holds 1 to 4

    def piece(rng, _):
        text = prose(rng) + "\n\n```diff\n"
        for _ in range(rng.randint(1, 4)):
            sections[0] += 1
            lines = file_section(rng, sections[0])
            ending = "\r\n" if rng.random() < 0.03 else "\n"
            text += ending.join(lines) + ending
        return text + "```\n\n"

    textgen.write_reply(piece)


if __name__ == "__main__":
    main()
