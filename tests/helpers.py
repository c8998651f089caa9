"""Helpers shared by the in-process tests: socket headers, checks of JSON payloads.

Fixtures are in ``tests/conftest.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any


def token_headers(key: str) -> list[tuple[bytes, bytes]]:
    """ASGI headers of a socket that authenticates with the personal token ``key``."""
    return [(b"authorization", f"Token {key}".encode())]


def card_pattern(cards: list[str]) -> re.Pattern[str]:
    """Any of these card codes as a word of its own."""
    return re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, cards)) + r")(?![A-Za-z0-9])")


def walk(value: Any, path: str = "$") -> Iterator[tuple[str, str, Any]]:
    """Every (path, key, value) of a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path, k, v
            yield from walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, f"{path}[{i}]")


#: The keys of every page of a list (``api.pagination.CursorPage``).
PAGE_KEYS = {"next", "previous", "results"}


def pages(
    client: Any,
    url: str,
    params: dict[str, Any] | None = None,
    *,
    between: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every page of a list, from its first through each page's ``next`` link; ``between``
    runs after each page but the last (with the count of pages read)."""
    response = client.get(url, params or {})
    seen = []
    while True:
        assert response.status_code == 200, response.content
        page = response.json()
        assert set(page) >= PAGE_KEYS
        seen.append(page)
        if page["next"] is None:
            return seen
        if between is not None:
            between(len(seen))
        response = client.get(page["next"])


def rows(client: Any, url: str, params: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
    """Every row of a list, page after page (``pages``)."""
    return [row for page in pages(client, url, params, **kwargs) for row in page["results"]]


#: Seconds a test waits at most for a solve in the background (a bound, not a timing).
SOLVE_WAIT = 120


def solved(pending: Any) -> None:
    """Wait until a background solve (``games.hints.Pending``) has stored its answer: an
    event set by a callback added after the pool's own, so it fires after them."""
    import threading

    assert pending.future is not None, "the solve runs in this process"
    done = threading.Event()
    pending.future.add_done_callback(lambda _: done.set())
    assert done.wait(SOLVE_WAIT), "the solve did not end"


def hint_answered(position: Any, *, player: int) -> Any:
    """``games.hints``' answer at ``position``, waiting for the solve when there is one."""
    from games import hints

    asked = hints.hint_ask(position, player=player)
    if not isinstance(asked, hints.Pending):
        return asked
    solved(asked)
    found = hints.hint_result(position)
    assert isinstance(found, hints.Answer), found
    return found


def game_hint_answered(*, game_id: int, user: Any) -> Any:
    """A game's hint (``game_hint``), waiting for the solve when there is one."""
    from games.selectors.hints import HintPending, game_hint_result
    from games.services.hints import game_hint

    found = game_hint(game_id=game_id, user=user)
    if isinstance(found, HintPending):
        solved(found.solve)
        found = game_hint_result(game_id=game_id, user=user, ply=found.ply)
    return found


def rest_hint(client: Any, game_id: int) -> Any:
    """``POST .../hint/``, then its ``Location`` while it answers 202: the last answer."""
    import time

    response = client.post(f"/api/v1/games/{game_id}/hint/")
    for _ in range(SOLVE_WAIT * 20):
        if response.status_code != 202:
            return response
        assert int(response["Retry-After"]) >= 1 and response.json()["status"] == "solving"
        time.sleep(0.05)  # polls faster than Retry-After asks: the test waits less
        response = client.get(response["Location"])
    raise AssertionError("the hint was not solved")


def stored_log(game_id: int) -> list[tuple[int, str]]:
    """A game's stored log as ``(ply, notation)`` pairs, read afresh."""
    from games.models import Game
    from games.selectors.games import game_entries

    game = Game.objects.select_related("deal").get(pk=game_id)
    return [(entry.ply, entry.notation) for entry in game_entries(game)]


def stored_position(game_id: int) -> Any:
    """A game's stored position (``games.engine.Position``), read afresh."""
    from games.models import Game
    from games.selectors.games import game_position

    return game_position(Game.objects.get(pk=game_id))


def tamper_log(game_id: int, ply: int, notation: str | None) -> None:
    """Rewrite a stored log entry by hand (``None`` drops it), as a corrupted row would."""
    from games.engine.record import Entry, pack, unpack
    from games.models import Game

    game = Game.objects.select_related("deal").get(pk=game_id)
    entries = unpack(game.deal.variant, game.log)
    if notation is None:
        del entries[ply]
    else:
        entries[ply] = Entry(notation, entries[ply].ms)
    Game.objects.filter(pk=game_id).update(log=pack(game.deal.variant, entries))


def swap_piles(game_id: int, first: str, second: str) -> None:
    """Swap two piles of a stored position by hand, as a corrupted row would."""
    from games.engine import Position
    from games.engine.record import position_bytes
    from games.models import Game

    pos = stored_position(game_id)
    piles, index = list(pos.piles), type(pos).PILE_IDS.index
    piles[index(first)], piles[index(second)] = piles[index(second)], piles[index(first)]
    swapped = Position.class_for(pos.variant)(pos.variant, tuple(piles), pos.ply)
    Game.objects.filter(pk=game_id).update(position=position_bytes(swapped))
