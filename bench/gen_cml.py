#!/usr/bin/env python3
"""Generate a large, realistic CML reply for benchmarking the CML front end.

Usage: gen_cml.py SIZE SEED OUT

Writes about SIZE bytes to OUT, deterministic for a given SIZE and SEED
(only `random.Random(SEED)`, never the clock).

What the reply holds, and why:
  * prose paragraphs, bullet lists and ```xml / ```python fences between
    elements: the front end skips them line by line at top level;
  * every element: <write> (some append="true", some empty <write/>),
    <edit> with <search> and with a <search-start>/<search-end> range, some
    with count, <run> with and without dir, <move>, <remove>, and <tasks>
    blocks (some with a version) holding several of them;
  * CDATA content of code-like lines of varied length (short, medium,
    tab-indented, some very long minified or base64-like lines), with
    quotes, `&`, `<tags>` and non-ASCII text that CDATA keeps literal, an
    occasional `]]>` written with the split-CDATA trick, and a few blocks
    with CRLF line ends;
  * single-line values outside CDATA with entity references.

Nothing in it is an error (no fatal or invalid diagnostic), so the
benchmark measures the success path.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textgen  # noqa: E402

WORDS = (
    "the parser reads each element once and copies its text into the plan "
    "this change moves the configuration loader into its own module so that "
    "tests can build it without touching the disk we keep the old behaviour "
    "for callers that pass a path après réflexion naïve façade über straße "
    "“quoted” text with émojis 🚀 and ümlauts"
).split()
IDENTS = ["config", "loader", "buffer", "result", "items", "handler", "request",
          "session", "cache", "entry", "offset", "payload", "state", "node"]
PATHS = ["src/app.js", "src/main.rs", "src/config/loader.rs", "app/models/user.py",
         "web/index.html", "docs/guide.md", "Makefile", "pkg/server/handler.go"]


def sentence(r, n):
    return " ".join(r.choice(WORDS) for _ in range(n))


def prose(r):
    kind = r.random()
    if kind < 0.5:
        return sentence(r, r.randint(8, 60)).capitalize() + ".\n\n"
    if kind < 0.8:
        return "".join(f"- {sentence(r, r.randint(3, 12))}\n" for _ in range(r.randint(2, 5))) + "\n"
    lang = r.choice(["python", "sh", "html"])
    body = "".join(code_line(r) + "\n" for _ in range(r.randint(2, 6)))
    return f"```{lang}\n{body}```\n\n"


def code_line(r):
    kind = r.random()
    ident = r.choice(IDENTS)
    if kind < 0.15:
        return ""
    if kind < 0.55:
        return f"    {ident} = {r.choice(IDENTS)}.get(\"{r.choice(WORDS)}\") & mask"
    if kind < 0.75:
        return f"\t{ident}: <{r.choice(IDENTS)}> {sentence(r, r.randint(1, 8))}"
    if kind < 0.95:
        return f"        if {ident} && len({ident}) > {r.randint(0, 99)}: return \"{sentence(r, 3)}\""
    # A very long line: minified code or a base64-like blob.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "".join(r.choice(alphabet) for _ in range(r.randint(300, 3000)))


def cdata(r, lines, nl):
    text = nl.join(code_line(r) for _ in range(lines))
    if not text.strip():
        # Search texts and commands must not be empty.
        text = f"{r.choice(IDENTS)} = {r.randint(0, 999)}"
    if r.random() < 0.02:
        # A `]]>` of the text, split so that it stays text.
        text += " ]]]]><![CDATA[> end"
    return f"<![CDATA[{nl}{text}{nl}]]>"


def element(r, indent, nl):
    path = r.choice(PATHS)
    kind = r.random()
    i = indent
    if kind < 0.35:
        append = ' append="true"' if r.random() < 0.1 else ""
        if r.random() < 0.03:
            return f'{i}<write path="{path}"/>{nl}'
        return f'{i}<write path="{path}"{append}>{cdata(r, r.randint(3, 60), nl)}</write>{nl}'
    if kind < 0.65:
        count = r.choice(["", "", "", ' count="2"', ' count="all"'])
        if r.random() < 0.3:
            return (f'{i}<edit path="{path}"{count}>{nl}'
                    f'{i}  <search-start>{cdata(r, 1, nl)}</search-start>{nl}'
                    f'{i}  <search-end>{cdata(r, 1, nl)}</search-end>{nl}'
                    f'{i}  <replace>{cdata(r, r.randint(1, 20), nl)}</replace>{nl}'
                    f'{i}</edit>{nl}')
        return (f'{i}<edit path="{path}"{count}>{nl}'
                f'{i}  <search>{cdata(r, r.randint(1, 8), nl)}</search>{nl}'
                f'{i}  <replace>{cdata(r, r.randint(1, 12), nl)}</replace>{nl}'
                f'{i}</edit>{nl}')
    if kind < 0.8:
        if r.random() < 0.5:
            return f'{i}<run dir="src">cargo test &amp;&amp; echo &quot;ok&quot;</run>{nl}'
        return f'{i}<run>{cdata(r, r.randint(1, 3), nl)}</run>{nl}'
    if kind < 0.9:
        return f'{i}<move from="{path}" to="old/{path}"/>{nl}'
    return f'{i}<remove path="build/{r.choice(IDENTS)}/"/>{nl}'


def block(r):
    nl = "\r\n" if r.random() < 0.05 else "\n"
    if r.random() < 0.2:
        version = r.choice(["", ' version="1.0"', ' version="1.1"'])
        inner = "".join(element(r, "  ", nl) for _ in range(r.randint(2, 5)))
        text = f"<tasks{version}>{nl}{inner}</tasks>{nl}"
    else:
        text = element(r, "", nl)
    if r.random() < 0.1:
        text = f"```xml\n{text}```\n"
    return text + "\n"


def main():
    textgen.write_reply(lambda r, _: prose(r) + block(r), usage=__doc__)


if __name__ == "__main__":
    main()
