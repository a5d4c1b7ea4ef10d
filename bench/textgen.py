"""Shared by the reply generators (bench/gen_*.py): their command line and
the loop that writes a reply of a given size (`write_reply`), and for
gen_aider.py, gen_diff.py, gen_patch.py and gen_replacer.py prose and
code lines: one vocabulary and one line mix, so that their replies differ
only in their syntax.

Deterministic: everything is drawn from the `random.Random` seeded from
the command line.
"""

import random
import sys

WORDS = (
    "the parser reads each line once and decides whether it is a marker or "
    "content this change moves the configuration loader into its own module "
    "so that tests can build it without touching the file system café naïve"
).split()

MINIFIED = "abcdef0123456789(){};,.=+"


def prose(rng):
    """A sentence of 8 to 40 words."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40))).capitalize() + "."


def code_line(rng, minified=MINIFIED, blank=0.0):
    """A line of code: 2% very long minified lines (of `minified`'s
    characters), 18% a tab-indented Go line, a `blank` share of empty
    lines, the rest indented Python with quotes and a backslash."""
    kind = rng.random()
    if kind < 0.02:
        return "var a=" + "".join(rng.choice(minified) for _ in range(rng.randint(500, 3000)))
    if kind < 0.2:
        return "\tif err != nil { return fmt.Errorf(\"read %s: %w\", path, err) }"
    if kind < 0.2 + blank:
        return ""
    indent = " " * (4 * rng.randint(0, 3))
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
    return f'{indent}value = "{words}"  # \\n keeps \'quotes\''


def code(rng, lines):
    """`lines` lines of code."""
    return [code_line(rng) for _ in range(lines)]


def write_reply(piece, usage=None):
    """The generators' command line, `SIZE SEED OUT`: writes to OUT the
    pieces `piece(rng, n)` for n = 1, 2, … until they hold SIZE bytes
    (UTF-8), with `rng` seeded with SEED. `usage`: printed (and exit 1)
    when the arguments are not three."""
    if usage is not None and len(sys.argv) != 4:
        sys.exit(usage)
    size, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    parts, total, n = [], 0, 0
    while total < size:
        n += 1
        text = piece(rng, n)
        parts.append(text)
        total += len(text.encode())
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write("".join(parts))
