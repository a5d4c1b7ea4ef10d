#!/usr/bin/env python3
"""Fills fuzz/corpus/parse/ with seeds for the `parse` fuzz target.

Seeds come from the parser's snapshot cases (../test-data/parse/*.csl, with
the delimiters of their .args file) and, when ../../shared is beside the
project, from the CSL conformance corpus. Each seed is the target's input
format: one selector byte (0x00 = default delimiters; otherwise 0x80 | the
start delimiter's index in DELIMS, then a byte with the end delimiter's
index) followed by the reply. Delimiters not in the table are skipped.

The corpus directory is git-ignored; run this again after a clean checkout.
"""

import json
import re
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
ROOT = FUZZ.parent
OUT = FUZZ / "corpus" / "parse"
DEFAULT = ("<---", "--->")


def table():
    """The DELIMS table of fuzz_targets/parse.rs, in order."""
    src = (FUZZ / "fuzz_targets" / "parse.rs").read_text()
    body = re.search(r"const DELIMS: &\[&str\] = &\[(.*?)\];", src, re.S).group(1)
    out = []
    for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', body):
        lit = re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda m: chr(int(m.group(1), 16)), lit)
        out.append(re.sub(r"\\(.)", r"\1", lit))
    return out


def selector(delims, start, end):
    if (start, end) == DEFAULT:
        return b"\x00"
    if start in delims and end in delims:
        return bytes([0x80 | delims.index(start), delims.index(end)])
    return None


def args_delims(path):
    """Start and end delimiters from a snapshot case's .args file."""
    start, end = DEFAULT
    words = path.read_text().split("\n") if path.exists() else []
    i = 0
    while i < len(words):
        w = words[i]
        for flag in ("--start-delimiter", "--end-delimiter"):
            if w == flag and i + 1 < len(words):
                value, i = words[i + 1], i + 1
            elif w.startswith(flag + "="):
                value = w[len(flag) + 1 :]
            else:
                continue
            if flag == "--start-delimiter":
                start = value
            else:
                end = value
        i += 1
    return start, end


def main():
    delims = table()
    OUT.mkdir(parents=True, exist_ok=True)
    written = skipped = 0

    def put(name, sel, data):
        nonlocal written, skipped
        if sel is None:
            skipped += 1
            return
        (OUT / name).write_bytes(sel + data)
        written += 1

    for csl in sorted((ROOT / "test-data" / "parse").glob("*.csl")):
        start, end = args_delims(csl.with_suffix(".args"))
        put("case-" + csl.stem, selector(delims, start, end), csl.read_bytes())

    conf = ROOT.parent / "shared" / "conformance" / "csl-parser-cases.json"
    if conf.exists():
        for n, case in enumerate(json.loads(conf.read_text())):
            opts = case.get("options") or {}
            start = opts.get("startDelimiter", DEFAULT[0])
            end = opts.get("endDelimiter", DEFAULT[1])
            put(f"conformance-{n:03}", selector(delims, start, end), case["input"].encode())

    print(f"{written} seeds in {OUT.relative_to(ROOT)}, {skipped} skipped (delimiters not in DELIMS)")


if __name__ == "__main__":
    main()
