#!/usr/bin/env python3
"""Checks the links between gpufleet's documents: every relative link in README.md,
CHANGELOG.md and docs/*.md must name a file or folder that exists in the repository, and a
link with `#anchor` into a Markdown file must name one of its headings (as GitHub writes a
heading's anchor). Links to other sites (`https:`, `mailto:`) are not fetched; text in code
spans and code blocks is not read as links.

usage: python3 tools/doc-links.py [FILE.md ...]   (default: README.md, CHANGELOG.md, docs/*.md)
Run from the repository root. Exit 0 when every link resolves, 1 when one does not (each is
listed as FILE:LINE: link: why), 2 when a named file cannot be read.
"""
import glob
import os
import re
import sys
import unicodedata

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, inline code spans blanked."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"(`+)(?:(?!\1).)+?\1", lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped (letters,
    digits, `_` and `-` kept, in any script), each space a `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its words
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN" or cat == "Mn":
            kept.append(ch)
        elif ch == " ":
            kept.append("-")
    return "".join(kept)


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fenced = False
        for line in text.splitlines():
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        found.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
        cache[path] = found
    return cache[path]


def check(doc):
    problems = []
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(doc)
    for number, line in prose_lines(text):
        for m in LINK.finditer(line):
            link = m.group(1)
            if EXTERNAL.match(link):
                continue
            target, _, anchor = link.partition("#")
            path = os.path.normpath(os.path.join(here, target)) if target else doc
            if target.startswith("/") or path.startswith(".."):
                problems.append(f"{doc}:{number}: {link}: outside the repository")
                continue
            if not os.path.exists(path):
                problems.append(f"{doc}:{number}: {link}: no such file")
                continue
            if anchor and path.endswith(".md") and anchor not in anchors(path):
                problems.append(f"{doc}:{number}: {link}: no heading with that anchor in {path}")
    return problems


def main(argv):
    docs = argv[1:] or ["README.md", "CHANGELOG.md"] + sorted(glob.glob("docs/*.md"))
    problems, count = [], 0
    for doc in docs:
        try:
            problems += check(doc)
        except OSError as e:
            print(f"doc-links.py: {doc}: {e.strerror}", file=sys.stderr)
            return 2
        count += 1
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} broken links in {count} documents")
        return 1
    print(f"every link resolves in {count} documents")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
