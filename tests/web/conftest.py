"""Fixtures of the web page tests."""

from __future__ import annotations

from typing import Any

import pytest

WEB_PASSWORD = "correct-horse-battery-staple-42"


@pytest.fixture
def player(db: None) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="ada", password=WEB_PASSWORD)


@pytest.fixture
def rival(db: None) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username="grace", password=WEB_PASSWORD)


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
