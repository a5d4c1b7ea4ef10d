#!/usr/bin/env python3
"""Fills fuzz/corpus/edit/ with seeds for the `edit` fuzz target.

Each seed is the target's input: `[variant, p1, p2, A.., 0, B..]`, where A
and B are a file before and after a real commit of the corpus in
../../shared/corpus (unpacked with `tar -xJf` into the directory given as
the first argument, default /tmp/fzcorp). A is cut to the lines around
the commit's changes (40 lines either side) and B to the same region, so
that seeds stay below the target's -max_len; each pair is written once
per variant (the damages 0-5, plain and in aider's form), with p1, p2
taken from the pair's index.

The corpus directory is git-ignored; run this again after a clean checkout.
"""

import difflib
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
OUT = FUZZ / "corpus" / "edit"
MARGIN = 40
MAX = 12000


def window(a, b):
    """The lines of a and b around their differences, as bytes."""
    al, bl = a.splitlines(keepends=True), b.splitlines(keepends=True)
    ops = [
        op
        for op in difflib.SequenceMatcher(None, al, bl, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]
    if not ops:
        return None
    a0, a1 = max(ops[0][1] - MARGIN, 0), ops[-1][2] + MARGIN
    b0, b1 = max(ops[0][3] - MARGIN, 0), ops[-1][4] + MARGIN
    return b"".join(al[a0:a1]), b"".join(bl[b0:b1])


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/fzcorp")
    OUT.mkdir(parents=True, exist_ok=True)
    pairs = []
    for before in sorted(root.glob("*/*/before/**/*")):
        if not before.is_file():
            continue
        entry = before.parents[0]
        while entry.name != "before":
            entry = entry.parent
        after = entry.parent / "after" / before.relative_to(entry)
        if not after.is_file():
            continue
        a, b = before.read_bytes(), after.read_bytes()
        if b"\0" in a or b"\0" in b or a == b:
            continue
        cut = window(a, b)
        if cut and len(cut[0]) + len(cut[1]) <= MAX:
            pairs.append(cut)
    written = 0
    for n, (a, b) in enumerate(pairs):
        for variant in list(range(6)) + [8 + d for d in range(6)]:
            seed = bytes([variant, n % 256, (n * 7) % 256]) + a + b"\0" + b
            (OUT / f"pair{n:04}-v{variant:02}").write_bytes(seed)
            written += 1
    print(f"{written} seeds from {len(pairs)} file pairs in {OUT}")


if __name__ == "__main__":
    main()
