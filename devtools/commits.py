"""The commit-subject rule, checked by CI: a subject has at most 72 characters (what
``git log --oneline``, mail and review tools show whole) and no "wip" (a branch lands
finished work).

The rule holds from :data:`BASE` on; older history breaks it and stays as it is. In a
shallow clone without :data:`BASE`, every commit that is there is checked.

    python -m devtools.commits            # exit status 1 and one line per bad subject
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

#: The last commit whose subject breaks the rule: its descendants are checked.
BASE = "fa2efc622cc66ffc0d33d8ca8287fd1109f696f9"

MAX_SUBJECT = 72

_WIP = re.compile(r"\bwip\b", re.IGNORECASE)


def subject_problem(subject: str) -> str | None:
    """What is wrong with one subject, or None when it keeps the rule."""
    if len(subject) > MAX_SUBJECT:
        return f"{len(subject)} characters (at most {MAX_SUBJECT})"
    if _WIP.search(subject):
        return 'says "wip"'
    return None


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )


def commit_subjects(repo: Path, base: str = BASE) -> list[tuple[str, str]]:
    """(hash, subject) of each commit of HEAD after ``base``, or of every commit there
    when the clone does not hold ``base`` (a shallow clone holds only later ones)."""
    has_base = _git(repo, "cat-file", "-e", f"{base}^{{commit}}").returncode == 0
    revs = f"{base}..HEAD" if has_base else "HEAD"
    log = _git(repo, "log", "--format=%H%x00%s", revs)
    if log.returncode != 0:
        raise RuntimeError(f"git log {revs} failed: {log.stderr.strip()}")
    return [_pair(line) for line in log.stdout.splitlines()]


def _pair(line: str) -> tuple[str, str]:
    sha, _, subject = line.partition("\0")
    return sha, subject


def problems(commits: Iterable[tuple[str, str]]) -> list[str]:
    """One line per commit that breaks the rule: short hash, subject, what is wrong."""
    lines = []
    for sha, subject in commits:
        problem = subject_problem(subject)
        if problem is not None:
            lines.append(f"{sha[:10]} {subject!r}: {problem}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Check the repository in the current directory (or the one path given)."""
    args = sys.argv[1:] if argv is None else argv
    repo = Path(args[0]) if args else Path.cwd()
    bad = problems(commit_subjects(repo, BASE))
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
