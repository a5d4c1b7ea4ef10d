#!/usr/bin/env python3
"""Generate a large, realistic aider SEARCH/REPLACE reply for `bench/parse.sh`.

Usage: gen_aider.py SIZE SEED OUTPUT

Deterministic for a given size and seed. The reply has what models write in
aider's format: prose between blocks, the file path on the line before a
```lang fence, several blocks for one file (later ones without a path line),
empty SEARCH parts that create files, Cline-style markers in some blocks,
code of varied line lengths (some very long minified lines), tabs, quotes,
backslashes, non-ASCII text and a few CRLF blocks. Nothing in it is an error.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textgen  # noqa: E402
from textgen import prose  # noqa: E402

# aider's replies were generated without "=" in minified lines.
MINIFIED = "abcdef0123456789(){};,.+"


def code_line(rng):
    return textgen.code_line(rng, MINIFIED)


def block(rng, n, with_path):
    cline = rng.random() < 0.1
    head, tail = ("------- SEARCH", "+++++++ REPLACE") if cline else ("<<<<<<< SEARCH", ">>>>>>> REPLACE")
    out = []
    if with_path:
        out.append(f"src/module_{n % 997}/file_{n}.py")
    out.append("```python")
    out.append(head)
    if rng.random() > 0.15:
        out += [code_line(rng) for _ in range(rng.randint(1, 12))]
    out.append("=======")
    out += [code_line(rng) for _ in range(rng.randint(1, 30))]
    out += [tail, "```"]
    ending = "\r\n" if rng.random() < 0.03 else "\n"
    return ending.join(out) + ending


def main():
    textgen.write_reply(
        lambda rng, n: prose(rng) + "\n\n" + block(rng, n, n == 1 or rng.random() < 0.7) + "\n"
    )


if __name__ == "__main__":
    main()
