"""Fixtures of the web page tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def player(make_user: Callable[..., Any]) -> Any:
    return make_user("ada")


@pytest.fixture
def rival(make_user: Callable[..., Any]) -> Any:
    return make_user("grace")


@pytest.fixture
def logged_in(client: Any, player: Any) -> Any:
    client.force_login(player)
    return client


@pytest.fixture
def practice(player: Any) -> Any:
    """A Bristol practice game of ``player`` with a fixed deal."""
    from games.services.games import practice_game_start

    return practice_game_start(user=player, variant="bristol", seed=7)


@pytest.fixture
def gallery_game(player: Any) -> Any:
    from games.services.games import practice_game_start

    return practice_game_start(user=player, variant="picture-gallery", seed=7)
