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

import random
import sys

WORDS = (
    "the parser reads each line once and decides whether it is a marker or "
    "content this change moves the configuration loader into its own module "
    "so that tests can build it without touching the file system café naïve"
).split()


def prose(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40))).capitalize() + "."


def code_line(rng):
    kind = rng.random()
    if kind < 0.02:
        return "var a=" + "".join(rng.choice("abcdef0123456789(){};,.=+") for _ in range(rng.randint(500, 3000)))
    if kind < 0.2:
        return "\tif err != nil { return fmt.Errorf(\"read %s: %w\", path, err) }"
    indent = " " * (4 * rng.randint(0, 3))
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
    return f'{indent}value = "{words}"  # \\n keeps \'quotes\''


def code(rng, lines):
    return [code_line(rng) for _ in range(lines)]


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


def main():
    size, seed, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    parts, total, n = [], 0, 0
    while total < size:
        n += 1
        text = prose(rng) + "\n\n"
        if rng.random() < 0.2:
            text += "```\n"
        text += block(rng, n)
        if text.startswith("```") or "```\n" in text[:200]:
            text += "```\n"
        text += "\n"
        parts.append(text)
        total += len(text.encode())
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
