"""The package's documented examples run, and importing the engine stays Django-free."""

from __future__ import annotations

import doctest
import importlib
import json
import subprocess
import sys

import pytest

import games.engine
from tests.engine.helpers import REPO_ROOT

ENGINE_MODULES = [
    "games.engine",
    "games.engine.cards",
    "games.engine.errors",
    "games.engine.moves",
    "games.engine.shuffle",
    "games.engine.variants",
    "games.engine.position",
    "games.engine.bristol",
    "games.engine.gallery",
    "games.engine.log",
    "games.engine.__main__",
]


@pytest.mark.parametrize("name", ["games.engine", "games.engine.moves"])
def test_documented_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_no_failing_examples_anywhere(name: str) -> None:
    assert doctest.testmod(importlib.import_module(name)).failed == 0


def test_package_docstring_documents_the_api() -> None:
    doc = games.engine.__doc__ or ""
    for word in ("new_position", "legal_moves", "apply", "to_json", "public_json", "replay"):
        assert word in doc
    for code in ("bad_notation", "illegal_move", "game_over", "unknown_variant", "bad_position"):
        assert code in doc


def test_importing_the_engine_does_not_import_django() -> None:
    code = (
        "import json, sys\n"
        "import games.engine\n"
        "from games.engine import new_position\n"
        "new_position('bristol', seed=1).apply('deal')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('django', 'rest_framework', 'channels', 'daphne', 'api', 'patience_site') "
        "or (m.startswith('games.') and not m.startswith('games.engine')))\n"
        "print(json.dumps(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert json.loads(out.stdout) == []
