"""The Python example of README.md's "The API from a script" runs as printed.

The block after the ``<!-- README example: python-game -->`` marker is run with
httpx's client sending its requests in-process to the WSGI application.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from games.models import Game
from patience_site.wsgi import application

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "<!-- README example: python-game -->"


def readme_block(repo_root: Any) -> str:
    text = (repo_root / "README.md").read_text()
    found = re.search(re.escape(MARKER) + r"\n```python\n(.*?)\n```", text, re.DOTALL)
    assert found, f"README.md has no python block after {MARKER}"
    return found.group(1)


class LocalClient(httpx.Client):
    """httpx's client, answered by the application in this process."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, transport=httpx.WSGITransport(app=application), **kwargs)


def test_the_python_example_plays_a_game_to_its_end(repo_root, make_user, monkeypatch, capsys):
    code = readme_block(repo_root)
    make_user("robot")
    monkeypatch.setattr(httpx, "Client", LocalClient)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    game = Game.objects.get(player__username="robot")
    assert game.status in ("won", "lost", "resigned") and game.ply > 0
    printed = capsys.readouterr().out
    assert printed == f"{game.status}: {game.score} cards home in {game.ply} moves\n"
