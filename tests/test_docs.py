"""The docs are reference: no numbered issue and no commit hash on any page.

The issues are not in the repository and a hash names a moment of its history, so
for a reader both are dead ends; history is in git and in CHANGELOG.md (which this
check leaves alone). The README, every page of docs/ and bench/README.md are read.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))]
PAGES.append("bench/README.md")

#: "issue 31", "Issues 13 and 18", "#31", "PR 7", "pull request 7".
ISSUE = re.compile(r"\b(?:issues?|PR|pull request)s?\s+#?\d+|(?<![\w&/#])#\d+\b", re.IGNORECASE)
#: A word of 7 to 40 hex digits with a digit and a letter in it: how git abbreviates a commit.
HASH = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])")


def history_in(text: str) -> list[str]:
    """The issue references and commit hashes of a page's text."""
    return ISSUE.findall(text) + HASH.findall(text)


@pytest.mark.parametrize("page", PAGES)
def test_the_page_names_no_issue_and_no_commit(page: str) -> None:
    found = history_in((REPO / page).read_text())
    assert not found, f"{page}: say what is, not when it came: {found}"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("as issue 31 asked (71feba7)", ["issue 31", "71feba7"]),
        ("Issues 13 and 18, see #4", ["Issues 13", "#4"]),
        ("`bench/compare.sh 87029d2 4820dfb`", ["87029d2", "4820dfb"]),
        ("1,200 moves, 0.5 ms, a3 and deadbeef, #top, 2026-12-04", []),
        ("a sha256 of 64 digits: " + "ab12" * 16, []),
    ],
)
def test_the_check_finds_references_and_hashes_and_nothing_else(
    text: str, found: list[str]
) -> None:
    assert history_in(text) == found
