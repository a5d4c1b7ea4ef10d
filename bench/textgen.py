"""Prose and code lines for the reply generators (bench/gen_aider.py,
gen_diff.py, gen_patch.py, gen_replacer.py): one vocabulary and one line
mix, so that their replies differ only in their syntax.

Deterministic: everything is drawn from the `random.Random` passed in.
"""

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
