#!/usr/bin/env python3
"""Checks the relative links of BENCHMARKS.md and docs/benchmarks/*.md.

    python3 Benchmarks/check_doc_links.py [FILE.md ...]

Every `[text](target)` whose target is not a URL must name a file or folder
that exists (relative to the file that links), and a `#anchor` must match a
heading of the target as GitHub makes its anchors (lower case, punctuation
dropped, spaces to hyphens, `-1`, `-2` for repeats). Prints each broken link
and exits 1 if there is any. Links inside code (fenced or `inline`) are not
links and are skipped.
"""
import pathlib, re, sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(title):
    s = title.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)  # GitHub keeps letters, digits, _, -, spaces
    return s.replace(" ", "-")


def anchors(path):
    seen, out, fenced = {}, set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2))
            base = slug(text)
            n = seen.get(base, 0)
            out.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
    return out


def links(path):
    fenced = False
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            yield no, target


def main():
    files = [pathlib.Path(a) for a in sys.argv[1:]] or [ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs/benchmarks").glob("*.md"))]
    bad = checked = 0
    for f in files:
        for no, target in links(f):
            if re.match(r"^[a-z]+:", target):
                continue
            checked += 1
            file, _, anchor = target.partition("#")
            dest = (f.parent / file).resolve() if file else f.resolve()
            if not dest.exists():
                print(f"{f}:{no}: missing {target}")
                bad += 1
            elif anchor and dest.is_file() and anchor not in anchors(dest):
                print(f"{f}:{no}: no heading for #{anchor} in {dest.relative_to(ROOT)}")
                bad += 1
    print(f"{checked} relative links checked, {bad} broken")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
