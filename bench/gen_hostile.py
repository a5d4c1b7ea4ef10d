#!/usr/bin/env python3
"""A hostile reply: blocks whose values never end, or broken blocks.

Usage: gen_hostile.py KIND SIZE OUT

KIND is one of:
  sham-heredoc   SHAM blocks whose heredoc terminator never comes, each
                 with its own ID (and terminator word);
  sham-unclosed  SHAM blocks whose closing line never comes;
  telt-value     TELT blocks whose value runs on: no delimiter of their
                 own ID comes again, only another ID's END;
  telt-reused    TELT blocks reusing one ID, none ever ended;
  telt-far       TELT blocks whose value's next delimiter of their own ID
                 comes only at the very end of the reply (all of them
                 there), so each value runs over every later block;
  csl-invalid    CSL WRITEs without a file attribute (each skipped);
  csl-indented   CSL start markers indented off column 1 (each dropped);
  aider-unclosed aider blocks whose ======= has no REPLACE after it;
  replacer-unclosed replacer blocks with a SEARCH and nothing after it;
  json-invalid   JSON operations without a path, one per line (each
                 invalid, its diagnostic at its line).
Each block is a few lines; the reply is SIZE bytes or a little more.
Without look-ahead (src/syntax/ahead.rs) each of the first five made the
reader or the syntax detection rescan the rest of the reply once per
block. Every block of every kind has diagnostics: the last four are the
smallest broken blocks of their syntaxes, for the memory a parse keeps
per problem (src/csl/sink.rs).
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
    if kind == "csl-invalid":
        return "<---WRITE--->\nx\n<---END--->\n"
    if kind == "csl-indented":
        return '  <---WRITE file="a"--->\n'
    if kind == "aider-unclosed":
        return "a.py\n<<<<<<< SEARCH\nx\n=======\n"
    if kind == "replacer-unclosed":
        return "<<<FILE>>>\n<<<SEARCH>>>\nx\n"
    if kind == "json-invalid":
        return '{"op": "write", "content": "x"},\n'
    sys.exit(f"gen_hostile.py: unknown kind {kind}")


parts, n, i = [], 0, 0
if kind == "telt-far":
    # A block is ~60 bytes and its far delimiter ~16.
    count = size // 76
    for i in range(count):
        k = ids[i % len(ids)] + (str(i // len(ids)) if i >= len(ids) else "")
        parts.append(f"#!telt [3-char SHA: {k}]\n=== FILE_WRITE ===\n--PATH {k}--\na\n")
    for i in range(count):
        k = ids[i % len(ids)] + (str(i // len(ids)) if i >= len(ids) else "")
        parts.append(f"--CONTENT {k}--\n")
    n = size
while n < size:
    b = block(i)
    parts.append(b)
    n += len(b)
    i += 1
if kind == "json-invalid":
    # One JSON array: the last operation without its comma.
    parts = ["[\n"] + parts[:-1] + [parts[-1].rstrip(",\n") + "\n]\n"]
with open(out, "w") as f:
    f.write("".join(parts))
