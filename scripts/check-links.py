#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/*.md resolves.

A link `[text](path)`, an image `![alt](path)` or a reference definition
`[label]: path` whose target has no URL scheme must name a file or folder
that exists, relative to the Markdown file. A `#anchor` (alone, or after a
path to a Markdown file) must name a heading of that file, slugged as
GitHub does (lower case; letters, digits, spaces, `-` and `_` kept, other
characters dropped; spaces to `-`; a repeated slug gets `-1`, `-2`...), or
an explicit `<a name="...">` / `id="..."`. Links inside code (fenced blocks
and inline code spans) are not links and are skipped.

Usage: scripts/check-links.py [FILE.md ...]   (default: README.md docs/*.md)
Exits 1 and lists every broken link, with file and line, when one is found.
Python standard library only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
EXPLICIT_ANCHOR = re.compile(r"""<a\s[^>]*\b(?:name|id)\s*=\s*["']([^"']+)["']|\bid\s*=\s*["']([^"']+)["']""")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def strip_code_spans(line: str) -> str:
    """The line with its inline code spans blanked (same length kept)."""
    out: List[str] = []
    i = 0
    while i < len(line):
        if line[i] == "`":
            n = len(line[i:]) - len(line[i:].lstrip("`"))
            close = line.find("`" * n, i + n)
            while close != -1 and close + n < len(line) and line[close + n] == "`":
                close = line.find("`" * n, close + n + 1)
            if close == -1:
                out.append(line[i : i + n])
                i += n
                continue
            out.append(" " * (close + n - i))
            i = close + n
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def prose_lines(text: str) -> Iterator[Tuple[int, str, bool]]:
    """(line number, line, inside a fenced code block) for every line."""
    fence: Optional[str] = None
    for number, line in enumerate(text.splitlines(), start=1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            yield number, line, True
        elif fence is not None:
            if line.strip().startswith(fence) and set(line.strip()) <= {fence[0]}:
                fence = None
            yield number, line, True
        else:
            yield number, line, False


def heading_text_to_slug(text: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.replace("`", "").strip().lower()
    slug = "".join(c for c in text if c.isalnum() or c in " -_")
    return slug.replace(" ", "-")


def anchors_of(path: Path, cache: Dict[Path, Set[str]]) -> Set[str]:
    if path in cache:
        return cache[path]
    anchors: Set[str] = set()
    counts: Dict[str, int] = {}
    previous: Optional[str] = None
    for _, line, code in prose_lines(path.read_text(encoding="utf-8")):
        if code:
            previous = None
            continue
        for m in EXPLICIT_ANCHOR.finditer(line):
            anchors.add(m.group(1) or m.group(2))
        heading = None
        m = HEADING.match(line)
        if m:
            heading = m.group(2)
        elif previous and previous.strip() and SETEXT.match(line) and not HEADING.match(previous):
            heading = previous.strip()
        if heading is not None:
            slug = heading_text_to_slug(heading)
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            anchors.add(slug if n == 0 else f"{slug}-{n}")
        previous = line
    cache[path] = anchors
    return anchors


def links_of(text: str) -> Iterator[Tuple[int, str]]:
    for number, line, code in prose_lines(text):
        if code:
            continue
        prose = strip_code_spans(line)
        for m in INLINE_LINK.finditer(prose):
            yield number, m.group(1)
        m = REFERENCE_DEF.match(prose)
        if m:
            yield number, m.group(1)


def check(files: List[Path]) -> List[str]:
    errors: List[str] = []
    cache: Dict[Path, Set[str]] = {}
    for md in files:
        for number, target in links_of(md.read_text(encoding="utf-8")):
            where = f"{md.relative_to(ROOT) if md.is_relative_to(ROOT) else md}:{number}"
            if not target:
                errors.append(f"{where}: empty link target")
                continue
            if SCHEME.match(target) or target.startswith("//"):
                continue  # an absolute URL: not checked here
            path_part, _, anchor = target.partition("#")
            dest = (md.parent / path_part).resolve() if path_part else md.resolve()
            if not dest.exists():
                errors.append(f"{where}: `{target}`: {path_part} does not exist")
                continue
            if anchor and dest.is_file() and dest.suffix.lower() == ".md":
                if anchor not in anchors_of(dest, cache):
                    errors.append(f"{where}: `{target}`: no heading or anchor `#{anchor}` in {dest.name}")
    return errors


def self_test() -> None:
    """GitHub's slugs for headings like this project's (checked each run)."""
    for heading, slug in [
        ("auto (the default)", "auto-the-default"),
        ("memplan against MiniMalloc's reference", "memplan-against-minimallocs-reference"),
        ("Gaps: figures", "gaps-figures"),
        ("C and C++", "c-and-c"),
        ("`--stable` and `hint_kept`", "--stable-and-hint_kept"),
        ("Search solver (MiniMalloc) §6", "search-solver-minimalloc-6"),
        ("[Pools](pools.md) × 2", "pools--2"),
    ]:
        got = heading_text_to_slug(heading)
        assert got == slug, f"slug of {heading!r}: {got!r}, expected {slug!r}"
    assert strip_code_spans("a `[x](y)` b") == "a " + " " * 8 + " b"


def main(argv: List[str]) -> int:
    self_test()
    if argv:
        files = [Path(a).resolve() for a in argv]
    else:
        files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    errors = check(files)
    for e in errors:
        print(e, file=sys.stderr)
    print(f"check-links: {len(files)} files, {'OK' if not errors else f'{len(errors)} broken links'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
