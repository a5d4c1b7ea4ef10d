#!/usr/bin/env python3
"""Generate a large, realistic replacer reply for benchmarking `git-clada parse`.

Usage: gen_replacer.py SIZE SEED OUTPUT

Deterministic for a given size and seed (only `random.Random` with the seed).
The reply has what models write in the replacer format: prose paragraphs and
markdown fences between blocks, an <<<EXPLANATION>>> before most blocks,
SEARCH/REPLACE blocks (some deleting, with an empty REPLACE) and OVERWRITE
blocks of whole files, code of varied line lengths (short, medium, some very
long minified lines), tabs, quotes, backslashes, non-ASCII text, and a few
blocks with CRLF line ends. Nothing in it is an error: bench/parse.sh checks
that it parses without a fatal diagnostic.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textgen  # noqa: E402
from textgen import code, prose  # noqa: E402


def block(rng, n):
    out = []
    if rng.random() < 0.7:
        out += ["<<<EXPLANATION>>>", prose(rng)]
    out += ["<<<FILE>>>", f"src/module_{n % 997}/file_{n}.py"]
    if rng.random() < 0.6:
        out += ["<<<SEARCH>>>"] + code(rng, rng.randint(1, 12))
        out += ["<<<REPLACE>>>"]
        if rng.random() > 0.1:
            out += code(rng, rng.randint(1, 16))
    else:
        out += ["<<<OVERWRITE>>>"] + code(rng, rng.randint(5, 80))
    out.append("<<<END>>>")
    ending = "\r\n" if rng.random() < 0.03 else "\n"
    return ending.join(out) + ending


def piece(rng, n):
    text = prose(rng) + "\n\n"
    if rng.random() < 0.2:
        text += "```\n"
    text += block(rng, n)
    if text.startswith("```") or "```\n" in text[:200]:
        text += "```\n"
    return text + "\n"


def main():
    textgen.write_reply(piece)


if __name__ == "__main__":
    main()
