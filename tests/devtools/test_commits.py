"""The commit-subject rule CI checks (devtools/commits.py), on throwaway repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from devtools import commits

GOOD = "engine: a deal's text form names its variant"
LONG = "docs: " + "x" * 67  # 73 characters


@pytest.mark.parametrize(
    "subject",
    [GOOD, "x" * 72, "tests: wipe the board cache between tests", "swipe: no match"],
)
def test_a_subject_within_the_rule_passes(subject: str) -> None:
    assert commits.subject_problem(subject) is None


@pytest.mark.parametrize(
    ("subject", "problem"),
    [
        (LONG, "73 characters (at most 72)"),
        ("wip: typed events", 'says "wip"'),
        ("Races pages: lobby (WIP)", 'says "wip"'),
        ("api: Wip on the shapes", 'says "wip"'),
    ],
)
def test_a_long_or_unfinished_subject_is_named(subject: str, problem: str) -> None:
    assert commits.subject_problem(subject) == problem


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _commit(repo: Path, subject: str) -> str:
    _git(repo, "commit", "--allow-empty", "--no-verify", "-q", "-m", subject)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose history breaks the rule up to its third commit."""
    path = tmp_path / "repo"
    path.mkdir()
    _git(path, "init", "-q")
    _commit(path, "wip: the first try")
    _commit(path, LONG)
    return path


def test_only_the_commits_after_the_base_are_checked(repo: Path) -> None:
    base = _commit(repo, GOOD)
    assert commits.problems(commits.commit_subjects(repo, base)) == []
    _commit(repo, "web: board tables")
    bad = _commit(repo, "web: WIP board tables")
    found = commits.problems(commits.commit_subjects(repo, base))
    assert found == [f"{bad[:10]} 'web: WIP board tables': says \"wip\""]


def test_main_fails_on_a_bad_subject_and_passes_on_good_ones(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(commits, "BASE", _commit(repo, GOOD))
    # The default argument was bound at import: main passes BASE explicitly.
    assert commits.main([str(repo)]) == 0
    _commit(repo, LONG)
    assert commits.main([str(repo)]) == 1
    assert "73 characters" in capsys.readouterr().err


def test_a_shallow_clone_without_the_base_checks_what_it_holds(repo: Path, tmp_path: Path) -> None:
    base = _commit(repo, GOOD)
    _commit(repo, "api: one step parser")
    _commit(repo, LONG)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{repo}", str(clone)], check=True)
    found = commits.commit_subjects(clone, base)
    assert [subject for _, subject in found] == [LONG, "api: one step parser"]
    assert len(commits.problems(found)) == 1
