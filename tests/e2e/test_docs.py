#!/usr/bin/env python3
"""The README and docs/ as a reader meets them: every relative link resolves (to a file, and to a
heading where it names one), every path of this repository they name exists, and the README stays
a landing page."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, main  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOP_FOLDERS = ("launcher", "runtime", "kernels", "collective", "ps", "configs", "tests", "scripts", "common", "docs",
               "cmake")


def pages():
    docs = os.path.join(ROOT, "docs")
    return [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))


def prose(path):
    """(line number, text) of each line outside code blocks."""
    inside = False
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                inside = not inside
                continue
            if not inside:
                yield number, line


def anchors(path):
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces to '-'."""
    found = set()
    for _, line in prose(path):
        m = re.match(r"^#{1,6} (.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            found.add(slug)
    return found


def where(path, number):
    return f"{os.path.relpath(path, ROOT)}:{number}"


def test_every_relative_link_in_the_readme_and_docs_resolves():
    broken = []
    for page in pages():
        for number, line in prose(page):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z]+:", target):
                    continue  # https:, mailto:
                file, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
                if not os.path.exists(resolved):
                    broken.append(f"{where(page, number)}: {target}: no such file")
                elif anchor and anchor not in anchors(resolved):
                    broken.append(f"{where(page, number)}: {target}: no heading makes #{anchor}")
    check(not broken, "broken links:\n" + "\n".join(broken))


def test_every_repository_path_the_docs_name_exists():
    pattern = re.compile(r"`((?:%s)/[A-Za-z0-9_./-]*)`" % "|".join(TOP_FOLDERS))
    missing = []
    for page in pages():
        for number, line in prose(page):
            for path in pattern.findall(line):
                if not os.path.exists(os.path.join(ROOT, path)):
                    missing.append(f"{where(page, number)}: {path}")
    check(not missing, "paths named that this repository does not hold:\n" + "\n".join(missing))


def test_the_readme_is_a_landing_page():
    with open(os.path.join(ROOT, "README.md")) as f:
        lines = f.read().splitlines()
    check(len(lines) <= 200, f"README.md has {len(lines)} lines: the guides belong in docs/")
    for needed in ("bash scripts/main_job.sh", "bash scripts/test.sh"):
        check(any(needed in line for line in lines), f"README.md gives the command `{needed}`")


if __name__ == "__main__":
    main(sys.modules[__name__])
