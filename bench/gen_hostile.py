#!/usr/bin/env python3
"""A hostile reply of SHAM or TELT blocks whose values never end.

Usage: gen_hostile.py KIND SIZE OUT

KIND is one of:
  sham-heredoc   SHAM blocks whose heredoc terminator never comes, each
                 with its own ID (and terminator word);
  sham-unclosed  SHAM blocks whose closing line never comes;
  telt-value     TELT blocks whose value runs on: no delimiter of their
                 own ID comes again, only another ID's END;
  telt-reused    TELT blocks reusing one ID, none ever ended.
Each block is a few lines; the reply is SIZE bytes or a little more.
Without look-ahead (src/syntax/ahead.rs) each of these made the reader or
the syntax detection rescan the rest of the reply once per block.
"""
import itertools
import string
import sys

kind, size, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ids = ["".join(p) for p in itertools.product(string.ascii_lowercase + string.digits, repeat=3)]


def block(i):
    k = ids[i % len(ids)] + (str(i // len(ids)) if i >= len(ids) else "")
    if kind == "sham-heredoc":
        return (f"#!SHAM [@three-char-SHA-256: {k}]\naction = \"file_write\"\npath = \"a\"\n"
                f"content = <<'EOT_SHAM_{k}'\nx\n")
    if kind == "sham-unclosed":
        return f"#!SHAM [@three-char-SHA-256: {k}]\naction = \"file_delete\"\npath = \"a\"\n"
    if kind == "telt-value":
        return (f"#!telt [3-char SHA: {k}]\n=== FILE_WRITE ===\n--PATH {k}--\na\n"
                f"--CONTENT {k}--\nx\n--END zzzz--\n")
    if kind == "telt-reused":
        return "#!telt [3-char SHA: k4x]\n=== FILE_WRITE ===\n--PATH k4x--\na\n--CONTENT k4x--\nx\n"
    sys.exit(f"gen_hostile.py: unknown kind {kind}")


parts, n, i = [], 0, 0
while n < size:
    b = block(i)
    parts.append(b)
    n += len(b)
    i += 1
with open(out, "w") as f:
    f.write("".join(parts))
