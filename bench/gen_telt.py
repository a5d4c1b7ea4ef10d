#!/usr/bin/env python3
"""Generate a large, realistic TELT reply for benchmarking the TELT front end.

Usage: gen_telt.py SIZE SEED OUT

Writes about SIZE bytes to OUT, deterministic for a given SIZE and SEED (only
`random.Random(SEED)` is used). The reply holds prose between ```telt blocks
of one to four commands each, covering every command the front end reads
(CREATE_FILE, FILE_WRITE, FILE_APPEND, FILE_REPLACE_TEXT,
FILE_REPLACE_ALL_TEXT with and without COUNT, FILES_REPLACE_ALL_TEXT,
FILE_DELETE, FILE_MOVE, DIR_CREATE, DIR_DELETE, FILE_READ, FILES_READ with
repeated PATHS, LS, GREP, GLOB, EXEC), `//` comments on syntax lines, and
values of short, medium and very long lines (some holding `//` and `===`
text, which is content). Nothing in it is an error: it parses with no
diagnostic.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textgen  # noqa: E402

WORDS = ("the parser reads each line once this change moves the loader into "
         "its own module and keeps every test green while the cache is warm").split()
ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def prose(r):
    return " ".join(r.choice(WORDS) for _ in range(r.randint(8, 60))).capitalize() + ".\n"


def code_line(r):
    kind = r.random()
    if kind < 0.02:
        return "".join(r.choice(ALNUM + "+/") for _ in range(r.randint(500, 4000)))
    if kind < 0.05:
        return "=== " + r.choice(WORDS) + " ==="
    if kind < 0.1:
        return "\t" + " ".join(r.choice(WORDS) for _ in range(r.randint(1, 12))) + " // note"
    indent = " " * (4 * r.randint(0, 3))
    return indent + " ".join(r.choice(WORDS) for _ in range(r.randint(1, 14))) + r.choice(
        ["", ";", " {", " }", "(\"x\\n\")", " ü é"])


def content(r, lines):
    return "\n".join(code_line(r) for _ in range(lines))


def path(r):
    return "src/" + "/".join(r.choice(WORDS) for _ in range(r.randint(1, 3))) + r.choice(
        [".rs", ".py", ".js", ".md"])


def command(r, bid):
    def p(name, value):
        return f"--{name} {bid}--\n{value}\n"

    name = r.choice(["CREATE_FILE", "FILE_REPLACE_TEXT"] * 3 + [
        "FILE_WRITE", "FILE_APPEND", "FILE_REPLACE_ALL_TEXT", "FILES_REPLACE_ALL_TEXT",
        "FILE_DELETE", "FILE_MOVE", "DIR_CREATE", "DIR_DELETE", "FILE_READ", "FILES_READ",
        "LS", "GREP", "GLOB", "EXEC"])
    out = f"=== {name} ===" + (" // why" if r.random() < 0.2 else "") + "\n"
    if name == "CREATE_FILE":
        out += p("FILE", path(r)) + p("CONTENT", content(r, r.randint(5, 120)))
    elif name in ("FILE_WRITE", "FILE_APPEND"):
        out += p("PATH", path(r)) + p("CONTENT", content(r, r.randint(3, 60)))
    elif name in ("FILE_REPLACE_TEXT", "FILE_REPLACE_ALL_TEXT"):
        out += p("PATH", path(r)) + p("OLD_TEXT", content(r, r.randint(1, 12)))
        out += p("NEW_TEXT", content(r, r.randint(1, 15)))
        if name == "FILE_REPLACE_ALL_TEXT" and r.random() < 0.5:
            out += p("COUNT", str(r.randint(1, 4)))
    elif name == "FILES_REPLACE_ALL_TEXT":
        out += p("PATHS", "\n".join(path(r) for _ in range(r.randint(2, 5))))
        out += p("OLD_TEXT", "old_name") + p("NEW_TEXT", "new_name")
    elif name == "FILE_MOVE":
        out += p("OLD_PATH", path(r)) + p("NEW_PATH", path(r))
    elif name == "FILES_READ":
        out += "".join(p("PATHS", path(r)) for _ in range(r.randint(2, 5)))
    elif name == "GREP":
        out += p("PATTERN", "fn \\w+") + p("PATH", "src") + p("INCLUDE", "*.rs")
    elif name == "GLOB":
        out += p("PATTERN", "**/*.md") + p("BASE_PATH", "doc")
    elif name == "EXEC":
        out += p("LANG", "bash") + p("CODE", "cargo test -q\necho done")
    else:
        out += p("PATH", path(r))
    return out


def block(r):
    bid = "".join(r.choice(ALNUM) for _ in range(3))
    commands = "\n".join(command(r, bid) for _ in range(r.choice([1, 1, 1, 2, 3, 4])))
    return f"```telt\n#!telt [3-char SHA: {bid}] // a step\n{commands}--END {bid}--\n```\n"


def main():
    textgen.write_reply(lambda r, _: prose(r) + "\n" + block(r) + "\n")


if __name__ == "__main__":
    main()
