#!/usr/bin/env python3
"""Generate a large, realistic apply_patch reply for benchmarking `git-clada parse`.

Usage: gen_patch.py SIZE SEED OUTPUT

Deterministic for a given size and seed (only `random.Random` with the seed).
The reply has what models write in Codex's apply_patch format: prose
paragraphs between patches, some patches in markdown fences or a heredoc,
several file sections per patch: Update File sections with `@@` hunks (an
anchor line on most, three lines of context around each change, blank
context lines, some `*** End of File`, some `*** Move to:`), Add File
sections of whole new files, Delete File sections; code of varied line
lengths (short, medium, some very long minified lines), tabs, quotes,
backslashes, non-ASCII text, and a few patches with CRLF line ends.
Nothing in it is an error: bench/parse.sh checks that it parses without a
fatal diagnostic.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textgen  # noqa: E402
from textgen import prose  # noqa: E402


# Blank lines are 5% of the code, for the blank context lines.
def code_line(rng):
    return textgen.code_line(rng, blank=0.05)


def code(rng, lines):
    return [code_line(rng) for _ in range(lines)]


def hunk(rng):
    out = []
    if rng.random() < 0.7:
        out.append(f"@@ def handler_{rng.randint(1, 500)}(request):")
    else:
        out.append("@@")
    out += [" " + l for l in code(rng, rng.randint(0, 3))]
    out += ["-" + l for l in code(rng, rng.randint(0, 6))]
    out += ["+" + l for l in code(rng, rng.randint(1, 8))]
    out += [" " + l for l in code(rng, rng.randint(0, 3))]
    return out


def section(rng, n):
    path = f"src/module_{n % 997}/file_{n}.py"
    kind = rng.random()
    if kind < 0.35:
        return [f"*** Add File: {path}"] + ["+" + l for l in code(rng, rng.randint(5, 80))]
    if kind < 0.4:
        return [f"*** Delete File: {path}"]
    out = [f"*** Update File: {path}"]
    if rng.random() < 0.05:
        out.append(f"*** Move to: src/moved/file_{n}.py")
    for _ in range(rng.randint(1, 4)):
        out += hunk(rng)
    if rng.random() < 0.1:
        out.append("*** End of File")
    return out


def patch(rng, n):
    lines = ["*** Begin Patch"]
    for k in range(rng.randint(1, 5)):
        lines += section(rng, n * 10 + k)
    lines.append("*** End Patch")
    ending = "\r\n" if rng.random() < 0.03 else "\n"
    text = ending.join(lines) + ending
    wrap = rng.random()
    if wrap < 0.3:
        text = "```\n" + text + "```\n"
    elif wrap < 0.35:
        text = "apply_patch <<'EOF'\n" + text + "EOF\n"
    return text


def main():
    textgen.write_reply(lambda rng, n: prose(rng) + "\n\n" + patch(rng, n) + "\n")


if __name__ == "__main__":
    main()
