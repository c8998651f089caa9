"""The lock files pin what pyproject.toml asks for, with hashes, and serve what is tested.

``scripts/lock.sh`` writes them; this test fails when pyproject.toml changed and the
locks were not written again, so CI and compose never install an unpinned set.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PIN = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s\\]+)((?:\s*\\\n\s*--hash=\S+)*)", re.M
)


def pins(path: Path) -> dict[str, tuple[str, int]]:
    """Each pinned package of a lock file: its version and how many hashes it has."""
    return {
        canonicalize_name(name): (version, hashes.count("--hash=sha256:"))
        for name, version, hashes in PIN.findall(path.read_text())
    }


@pytest.fixture
def project(repo_root: Path) -> dict:
    return tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]


@pytest.mark.parametrize(("lock", "groups"), [("serve", ["runtime"]), ("test", ["runtime", "dev"])])
def test_each_lock_pins_every_dependency_with_hashes(
    repo_root: Path, project: dict, lock: str, groups: list[str]
) -> None:
    pinned = pins(repo_root / "requirements" / f"{lock}.txt")
    wanted = [
        Requirement(text)
        for group in groups
        for text in (
            project["dependencies"]
            if group == "runtime"
            else project["optional-dependencies"][group]
        )
    ]
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is not in requirements/{lock}.txt: run scripts/lock.sh"
        version, hashes = pinned[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{name}=={version} does not meet {requirement}: run scripts/lock.sh"
        )
    assert all(hashes for _, hashes in pinned.values()), "every pin carries its hashes"


def test_the_served_set_is_the_tested_set(repo_root: Path) -> None:
    """Serving installs the runtime set at the versions the tests ran with, and no tools."""
    serve = pins(repo_root / "requirements" / "serve.txt")
    test = pins(repo_root / "requirements" / "test.txt")
    assert {name: test[name][0] for name in serve} == {n: v for n, (v, _) in serve.items()}
    for tool in ("pytest", "ruff", "mypy", "playwright", "schemathesis"):
        assert tool not in serve and tool in test
