"""A day's board: keyset paging (also while results arrive), my rank and my neighbours,
with ranks counted in the database and from the Redis mirror (rebuilt when missing)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any, NoReturn

import pytest
import redis
from django.contrib.auth import get_user_model
from pytest_django import Settings

from games import boards
from games.models import Deal, Result
from games.services.results import result_disqualify
from tests.daily_fixtures import (
    DAY,
    NOON,
    FakeClock,
    board_order,
    committed,
    daily,
    day_board,
    finished_result,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]
pytest_plugins = ["tests.daily_fixtures"]

_names = iter(range(10**6))


def player() -> Any:
    n = next(_names)
    return get_user_model().objects.create_user(f"u{n:05d}", password="pw-12345-x")


def random_result(deal: Deal, rng: random.Random) -> Result:
    """A result with coarse values, so that ties on every criterion are common."""
    won = rng.random() < 0.3
    return finished_result(
        deal,
        player(),
        won=won,
        cards_home=52 if won else rng.choice([10, 20, 30]),
        moves=rng.choice([100, 120, 140]),
        time_ms=rng.choice([60_000, 90_000]),
        finished_at=NOON - timedelta(seconds=rng.choice([0, 1, 2])),
    )


def better_count(result: Result) -> int:
    """Results of its day standing strictly ahead of ``result``, by the rules written out."""

    def order(r: Result) -> tuple[int, int, int, int, float, int]:
        if r.won:
            return (0, 0, r.moves, r.time_ms, r.finished_at.timestamp(), r.game_id)
        # Not won (these games have no log: every reach is 0): more moves, the later finish.
        return (1, -r.cards_home, -r.moves, 0, -r.finished_at.timestamp(), r.game_id)

    mine = order(result)
    others = Result.objects.filter(deal=result.deal, disqualified=False)
    return sum(1 for r in others if order(r) < mine)


def walk(
    deal: Deal, *, limit: int, between: Callable[[int], object] | None = None
) -> list[dict[str, Any]]:
    """Every line of a board, page by page through each page's ``next`` link."""
    lines, url, pages = [], None, 0
    while True:
        page = day_board(deal=deal, limit=limit, url=url)
        assert len(page["results"]) <= limit
        ranks = [e["rank"] for e in page["results"]]
        assert ranks == list(range(ranks[0], ranks[0] + len(ranks))) if ranks else True
        lines += page["results"]
        pages += 1
        url = page["next"]
        if url is None:
            return lines
        if between is not None:
            between(pages)


def mirror(redis_client: Any, deal: Deal) -> list[str]:
    return [
        k.decode()
        for k in redis_client.zrange(boards._key(deal.pk), 0, -1)
        if k != boards.SENTINEL.encode()
    ]


# -- paging --------------------------------------------------------------------------------


def test_pages_follow_rank_order_with_a_cursor(board_backend: str, daily_clock: FakeClock) -> None:
    deal = daily("bristol", DAY)
    rng = random.Random(1)
    for _ in range(23):
        random_result(deal, rng)
    expected = board_order(deal)
    first = day_board(deal=deal, limit=10)
    assert first["total"] == 23
    assert [e["rank"] for e in first["results"]] == list(range(1, 11))
    assert first["previous"] is None and "cursor=" in first["next"]
    second = day_board(deal=deal, url=first["next"])
    assert [e["rank"] for e in second["results"]] == list(range(11, 21))
    back = day_board(deal=deal, url=second["previous"])
    assert back["results"] == first["results"]
    lines = walk(deal, limit=10)
    assert [e["result_id"] for e in lines] == expected
    assert [e["rank"] for e in lines] == list(range(1, 24))
    last = day_board(deal=deal, limit=10, after=Result.objects.get(pk=expected[19]).sort_key)
    assert [e["rank"] for e in last["results"]] == [21, 22, 23] and last["next"] is None
    exact = day_board(deal=deal, limit=23)
    assert len(exact["results"]) == 23 and exact["next"] is None


def test_paging_has_no_gaps_or_repeats_while_results_arrive(
    board_backend: str, daily_clock: FakeClock
) -> None:
    deal = daily("picture-gallery", DAY)
    rng = random.Random(7)
    for _ in range(40):
        random_result(deal, rng)
    at_start = board_order(deal)
    dropped = []

    def meanwhile(page: int) -> None:
        daily_clock.advance(seconds=1)
        for _ in range(3):  # new results, some ahead of the cursor, some behind it
            random_result(deal, rng)
        if page == 2:  # and one result of the start leaves the board
            victim = at_start[25]
            committed(result_disqualify, result_id=victim)
            dropped.append(victim)

    lines = walk(deal, limit=7, between=meanwhile)
    seen = [e["result_id"] for e in lines]
    assert len(seen) == len(set(seen)), "a result was shown twice"
    stayed = [pk for pk in at_start if pk not in dropped]
    assert set(stayed) <= set(seen), "a result present from the start was skipped"
    assert dropped[0] not in seen
    # The walk moved forward in board order, and its ranks were ranks at reading time.
    keys = dict(Result.objects.filter(pk__in=seen).values_list("pk", "sort_key"))
    assert [keys[pk] for pk in seen] == sorted(keys[pk] for pk in seen)
    assert Result.objects.filter(deal=deal).count() == 40 + 3 * (len(lines) // 7)


def test_a_cursor_past_the_end_gives_an_empty_page(
    board_backend: str, daily_clock: FakeClock
) -> None:
    deal = daily("bristol", DAY)
    finished_result(deal, player(), won=True)
    page = day_board(deal=deal, after="9" * 46)
    assert page["results"] == [] and page["next"] is None and page["total"] == 1
    empty = day_board(deal=daily("mod3", DAY))
    assert empty == {
        "total": 0,
        "results": [],
        "next": None,
        "previous": None,
        "me": None,
        "around": [],
    }


# -- my rank and my neighbours ------------------------------------------------------------------


def test_my_rank_is_one_plus_the_results_ahead_of_me(
    board_backend: str, daily_clock: FakeClock
) -> None:
    deal = daily("bristol", DAY)
    rng = random.Random(3)
    results = [random_result(deal, rng) for _ in range(45)]
    ordered = sorted(results, key=lambda r: r.sort_key)
    for mine in (ordered[0], ordered[1], ordered[22], ordered[-2], ordered[-1]):
        board = day_board(deal=deal, user=mine.player, limit=5, around=3)
        expected = better_count(mine) + 1
        assert board["me"]["rank"] == expected
        assert board["me"]["result_id"] == mine.pk
        assert boards.rank_of(deal.pk, mine.sort_key) == expected
        i = ordered.index(mine)
        neighbours = ordered[max(0, i - 3) : i + 4]
        assert [e["result_id"] for e in board["around"]] == [r.pk for r in neighbours]
        assert [e["rank"] for e in board["around"]] == [better_count(r) + 1 for r in neighbours]
    top = day_board(deal=deal, user=ordered[0].player, around=2)
    assert [e["rank"] for e in top["around"]] == [1, 2, 3]
    bottom = day_board(deal=deal, user=ordered[-1].player, around=2)
    assert [e["rank"] for e in bottom["around"]] == [43, 44, 45]
    alone = day_board(deal=deal, user=ordered[10].player, around=0)
    assert alone["around"] == [alone["me"]]


def test_no_line_for_a_player_without_a_result(board_backend: str, daily_clock: FakeClock) -> None:
    deal = daily("bristol", DAY)
    finished_result(deal, player(), won=False)
    board = day_board(deal=deal, user=player())
    assert board["me"] is None and board["around"] == [] and board["total"] == 1


# -- the Redis mirror --------------------------------------------------------------------------


def test_a_missing_mirror_is_rebuilt_with_the_same_ranks(
    redis_board: Any, daily_clock: FakeClock
) -> None:
    deal = daily("bristol", DAY)
    rng = random.Random(11)
    results = [random_result(deal, rng) for _ in range(30)]
    key = boards._key(deal.pk)
    boards.board_drop(deal.pk)
    later = random_result(deal, rng)  # a result of a board not built is not mirrored ...
    results.append(later)
    assert redis_board.exists(key)  # ... but ranking it for its board event built it
    ranks = {r.pk: boards.rank_of(deal.pk, r.sort_key) for r in results}
    assert mirror(redis_board, deal) == sorted(r.sort_key for r in results)
    assert ranks == {r.pk: better_count(r) + 1 for r in results}

    boards.board_drop(deal.pk)
    assert not redis_board.exists(key)
    again = {r.pk: boards.rank_of(deal.pk, r.sort_key) for r in results}
    assert again == ranks and redis_board.exists(key)

    redis_board.delete(key)
    assert boards.board_rebuild(deal.pk) is True
    assert mirror(redis_board, deal) == sorted(r.sort_key for r in results)
    assert boards.board_size(deal) == 31

    # Adding to a board that is not built does not start a partial one.
    redis_board.delete(key)
    boards.board_add(deal.pk, results[0].sort_key)
    assert not redis_board.exists(key)


def test_the_size_of_a_missing_mirror_rebuilds_it(redis_board: Any, daily_clock: FakeClock) -> None:
    """A board nobody asked a rank of (anonymous readers only) is not counted in the
    database on every request: asking its size builds the mirror."""
    deal = daily("bristol", DAY)
    results = [finished_result(deal, player(), won=True, moves=100 + i) for i in range(5)]
    key = boards._key(deal.pk)
    redis_board.delete(key)
    page = day_board(deal=deal, limit=2)
    assert page["total"] == 5 and redis_board.exists(key)
    assert mirror(redis_board, deal) == [r.sort_key for r in results]
    redis_board.delete(key)
    lock = redis_board.lock(f"{key}:lock", timeout=30)
    assert lock.acquire(blocking=False)
    try:  # being rebuilt elsewhere: counted in the database meanwhile
        assert boards.board_size(deal) == 5 and not redis_board.exists(key)
    finally:
        lock.release()


def test_the_mirror_follows_new_disqualified_and_restored_results(
    redis_board: Any, daily_clock: FakeClock
) -> None:
    deal = daily("bristol", DAY)
    rng = random.Random(5)
    results = [random_result(deal, rng) for _ in range(10)]
    boards.rank_of(deal.pk, results[0].sort_key)
    new = random_result(deal, rng)
    committed(result_disqualify, result_id=results[3].pk)
    counted = list(
        Result.objects.filter(deal=deal, disqualified=False)
        .order_by("sort_key")
        .values_list("sort_key", flat=True)
    )
    assert mirror(redis_board, deal) == counted and new.sort_key in counted
    assert boards.board_size(deal) == 10
    committed(result_disqualify, result_id=results[3].pk, disqualified=False)
    assert len(mirror(redis_board, deal)) == 11


def test_ranks_agree_with_and_without_redis(
    settings: Settings, redis_board: Any, daily_clock: FakeClock
) -> None:
    deal = daily("royal-parade", DAY)
    rng = random.Random(8)
    results = [random_result(deal, rng) for _ in range(25)]
    with_redis = {r.pk: boards.rank_of(deal.pk, r.sort_key) for r in results}
    page_redis = day_board(deal=deal, limit=8, after=sorted(r.sort_key for r in results)[9])
    settings.REDIS_URL = ""
    boards._client.cache_clear()
    without = {r.pk: boards.rank_of(deal.pk, r.sort_key) for r in results}
    page_db = day_board(deal=deal, limit=8, after=sorted(r.sort_key for r in results)[9])
    assert with_redis == without
    assert page_redis == page_db and page_db["results"][0]["rank"] == 11


def test_a_board_being_rebuilt_elsewhere_is_counted_in_the_database(
    redis_board: Any, daily_clock: FakeClock
) -> None:
    deal = daily("bristol", DAY)
    results = [finished_result(deal, player(), won=True, moves=100 + i) for i in range(4)]
    boards.board_drop(deal.pk)
    lock = redis_board.lock(f"{boards._key(deal.pk)}:lock", timeout=30)
    assert lock.acquire(blocking=False)
    try:
        assert boards.rank_of(deal.pk, results[2].sort_key) == 3
        assert not redis_board.exists(boards._key(deal.pk))
    finally:
        lock.release()
    assert boards.rank_of(deal.pk, results[2].sort_key) == 3
    assert redis_board.exists(boards._key(deal.pk))


def test_redis_failures_fall_back_to_the_database(
    redis_board: Any, daily_clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    deal = daily("bristol", DAY)
    results = [finished_result(deal, player(), won=True, moves=100 + i) for i in range(4)]

    class Down:
        def __getattr__(self, name: str) -> Callable[..., NoReturn]:
            def fail(*args: object, **kwargs: object) -> NoReturn:
                raise redis.exceptions.ConnectionError("redis is down")

            return fail

    monkeypatch.setattr(boards, "_client", lambda: Down())
    assert boards.rank_of(deal.pk, results[3].sort_key) == 4
    board = day_board(deal=deal, user=results[1].player, limit=2, after=results[0].sort_key)
    assert board["total"] == 4 and board["me"]["rank"] == 2
    assert [e["rank"] for e in board["results"]] == [2, 3]
    # Writes that fail leave no half-right mirror behind.
    boards.board_add(deal.pk, results[0].sort_key)
    boards.board_remove(deal.pk, results[0].sort_key)
