#!/usr/bin/env python3
"""Generate a large, realistic SHAM reply for benchmarking the SHAM front end.

Usage: gen_sham.py SIZE SEED OUT

Writes about SIZE bytes to OUT, deterministic for a given SIZE and SEED (only
`random.Random(SEED)` is used). The reply holds prose paragraphs between
fenced ```sh nesl blocks of every action the front end reads (file_write with
heredoc content, file_append, file_replace_text, file_replace_all_text with and
without count, files_replace_all_text, file_delete, file_move, dir_create,
dir_delete, file_read, files_read, ls, grep, glob, exec), quoted values with
escapes, and content of short, medium and very long lines (minified code,
base64-like blobs). Nothing in it is an error: it parses with no diagnostic.
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
    if kind < 0.1:
        return "\t" + " ".join(r.choice(WORDS) for _ in range(r.randint(1, 12)))
    indent = " " * (4 * r.randint(0, 3))
    return indent + " ".join(r.choice(WORDS) for _ in range(r.randint(1, 14))) + r.choice(
        ["", ";", " {", " }", "(\"x\\n\")", " // ü é"])


def content(r, lines):
    return "\n".join(code_line(r) for _ in range(lines))


def path(r):
    return "src/" + "/".join(r.choice(WORDS) for _ in range(r.randint(1, 3))) + r.choice(
        [".rs", ".py", ".js", ".md"])


def block(r, n):
    bid = "".join(r.choice(ALNUM) for _ in range(3))
    eot = f"EOT_SHAM_{bid}"

    def heredoc(key, text):
        return f"{key} = <<'{eot}'\n{text}\n{eot}\n"

    action = r.choice(["file_write"] * 4 + ["file_replace_text"] * 4 + [
        "file_append", "file_replace_all_text", "files_replace_all_text", "file_delete",
        "file_move", "dir_create", "dir_delete", "file_read", "files_read", "ls", "grep",
        "glob", "exec"])
    body = f'action = "{action}"\n'
    if action in ("file_write", "file_append"):
        body += f'path = "{path(r)}"\n' + heredoc("content", content(r, r.randint(5, 120)))
    elif action in ("file_replace_text", "file_replace_all_text"):
        body += f'path = "{path(r)}"\n'
        body += heredoc("old_text", content(r, r.randint(1, 12)))
        body += heredoc("new_text", content(r, r.randint(1, 15)))
        if action == "file_replace_all_text" and r.random() < 0.5:
            body += f'count = "{r.randint(1, 4)}"\n'
    elif action == "files_replace_all_text":
        body += heredoc("paths", "\n".join(path(r) for _ in range(r.randint(2, 5))))
        body += 'old_text = "old_name"\nnew_text = "new_name"\n'
    elif action == "file_move":
        body += f'old_path = "{path(r)}"\nnew_path = "{path(r)}"\n'
    elif action == "files_read":
        body += heredoc("paths", "\n".join(path(r) for _ in range(r.randint(2, 6))))
    elif action == "grep":
        body += 'pattern = "fn \\\\w+\\\\(\\"x\\"\\\\)"\npath = "src"\ninclude = "*.rs"\n'
    elif action == "glob":
        body += 'pattern = "**/*.md"\nbase_path = "doc"\n'
    elif action == "exec":
        body += 'lang = "python"\n' + heredoc("code", "import sys\nprint(sys.version)")
    else:
        body += f'path = "{path(r)}"\n'
    return f"```sh nesl\n#!SHAM [@three-char-SHA-256: {bid}]\n// step {n}\n{body}#!END_SHAM_{bid}\n```\n"


def main():
    # Blocks are numbered from 0 here.
    textgen.write_reply(lambda r, n: prose(r) + "\n" + block(r, n - 1) + "\n")


if __name__ == "__main__":
    main()
