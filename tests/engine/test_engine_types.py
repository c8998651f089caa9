"""The engine, GameLog included, passes ``mypy --strict`` (its types are part of its API)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.engine.helpers import REPO_ROOT


def test_the_engine_is_strictly_typed(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(tmp_path),
            "games/engine",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_configuration_checks_the_engine_strictly(tmp_path: Path) -> None:
    """``mypy`` without flags is as strict on ``games.engine`` modules, from pyproject.toml:
    an untyped function that ``--strict`` refuses is refused by the configuration alone."""
    engine = tmp_path / "src" / "games" / "engine"
    engine.mkdir(parents=True)
    for package in (engine.parent, engine):
        (package / "__init__.py").write_text("")
    (engine / "probe.py").write_text("def untyped(x):\n    return x\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(REPO_ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(engine / "probe.py"),
        ],
        cwd=tmp_path,
        # The django-stubs plugin imports the project's settings.
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1 and "no-untyped-def" in run.stdout, run.stdout + run.stderr
