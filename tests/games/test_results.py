"""Results and records: the one sort key, ranking on ties, disqualification, removing an
account's results, streaks and player statistics."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from api import shapes
from games import boards
from games.engine import new_position
from games.engine.record import position_bytes
from games.models import Deal, Game, PlayerStats, Result
from games.selectors import boards as board_selectors
from games.selectors import dailies as daily_selectors
from games.services.results import (
    result_disqualify,
    result_record,
    results_remove_for_player,
    stats_recompute,
)
from games.standings import MAX_MOVES, standing_key
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


def alltime(*, variant: str, url: str | None = None, **query: Any) -> dict[str, Any]:
    """A page of an all-time board as it is served: the page at ``url`` (a page's link),
    else the first page of ``query``."""
    response = APIClient().get(url or f"/api/v1/leaderboards/{variant}/", query)
    assert response.status_code == 200, response.content
    return response.json()


pytest_plugins = ["tests.daily_fixtures"]

ONE_MS = timedelta(milliseconds=1)


def players(*names: str) -> list:
    User = get_user_model()
    return [User.objects.create_user(n, password=f"pw-{n}-12345") for n in names]


def key(**over: Any) -> str:
    base = {
        "won": True,
        "cards_missing": 0,
        "moves": 200,
        "time_ms": 90_000,
        "finished_ms": 1_773_144_000_000,
        "game_id": 500,
    }
    return standing_key(**{**base, **over})


# -- the sort key --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "better, worse",
    [
        # won first, whatever else
        ({"won": True, "moves": 900, "time_ms": 10**9}, {"won": False, "moves": 5}),
        # then more cards home (fewer missing)
        ({"won": False, "cards_missing": 1, "moves": 999}, {"won": False, "cards_missing": 2}),
        ({"won": False, "cards_missing": 9}, {"won": False, "cards_missing": 10}),
        # not won: then fewer entries to reach those cards ...
        ({"won": False, "reach": 40, "moves": 5}, {"won": False, "reach": 41, "moves": 900}),
        # ... then more entries: never moving does not pay ...
        ({"won": False, "moves": 65, "finished_ms": 1}, {"won": False, "moves": 0}),
        # ... then the later finish: quitting first does not pay either
        ({"won": False, "finished_ms": 2, "game_id": 9}, {"won": False, "finished_ms": 1}),
        # won: fewer moves (also across a change in the number of digits)
        ({"moves": 99, "time_ms": 10**8}, {"moves": 100, "time_ms": 1}),
        ({"moves": 9}, {"moves": 10}),
        # then less time
        ({"time_ms": 999, "finished_ms": 2 * 10**12}, {"time_ms": 1000, "finished_ms": 1}),
        # then the earlier finish
        ({"finished_ms": 1_773_144_000_000, "game_id": 9}, {"finished_ms": 1_773_144_000_001}),
        # the game id only breaks complete ties
        ({"game_id": 99}, {"game_id": 100}),
    ],
)
def test_sort_key_orders_by_won_cards_moves_time_finish(
    better: dict[str, int], worse: dict[str, int]
) -> None:
    assert key(**better) < key(**worse)


def test_sort_key_is_fixed_width_and_caps_huge_values() -> None:
    won = [key(), key(moves=0, time_ms=0, finished_ms=0, game_id=1)]
    lost = [
        key(won=False, cards_missing=104, moves=10**7, time_ms=10**13, game_id=10**11),
        key(won=False, cards_missing=0, moves=0, finished_ms=0, game_id=1, reach=10**8),
    ]
    for keys in (won, lost):
        assert len({len(k) for k in keys}) == 1 and len(keys[0]) <= 64
    assert key(moves=MAX_MOVES + 5) == key(moves=MAX_MOVES)
    assert key(won=False, moves=MAX_MOVES + 5) == key(won=False, moves=MAX_MOVES)


def test_board_ranks_break_ties_in_the_documented_order(
    board_backend: str, daily_clock: FakeClock
) -> None:
    deal = daily("bristol", DAY)
    names = ["d", "c", "a", "h", "b", "g", "e", "f"]
    people = dict(zip(names, players(*names), strict=True))
    t = NOON - timedelta(hours=1)
    spec: dict[str, dict[str, Any]] = {
        # expected rank order: d c a h b g e f (of e and g, not won, g played on longer)
        "a": {"won": True, "moves": 300, "time_ms": 200_000, "finished_at": t},
        "b": {"won": True, "moves": 300, "time_ms": 200_000, "finished_at": t + ONE_MS},
        "c": {"won": True, "moves": 300, "time_ms": 150_000, "finished_at": t},
        "d": {"won": True, "moves": 250, "time_ms": 500_000, "finished_at": t},
        "e": {"won": False, "cards_home": 51, "moves": 10, "time_ms": 10_000},
        "f": {"won": False, "cards_home": 40, "moves": 5, "time_ms": 5_000},
        "g": {"won": False, "cards_home": 51, "moves": 20, "time_ms": 1_000},
        "h": {"won": True, "moves": 300, "time_ms": 200_000, "finished_at": t},
    }
    # Insert in a scrambled order, but "a" before "h": a complete tie goes to the older game.
    order = ["f", "a", "e", "b", "g", "h", "d", "c"]
    results = {n: finished_result(deal, people[n], **spec[n]) for n in order}
    assert results["a"].game_id < results["h"].game_id

    expected = [results[n].pk for n in names]
    assert board_order(deal) == expected
    page = day_board(deal=deal, limit=100)
    assert [e["result_id"] for e in page["results"]] == expected
    assert [e["rank"] for e in page["results"]] == list(range(1, 9))
    for rank, n in enumerate(names, start=1):
        assert boards.rank_of(deal.pk, results[n].sort_key) == rank
        mine = day_board(deal=deal, user=people[n])["me"]
        assert mine["rank"] == rank and mine["result_id"] == results[n].pk
    assert sorted(r.sort_key for r in results.values()) == [results[n].sort_key for n in names]


def test_result_comes_from_the_game_on_the_server(daily_clock: FakeClock) -> None:
    (ann,) = players("ann")
    deal = daily("picture-gallery", DAY)
    start = new_position("picture-gallery", seed=int(deal.seed))
    started = NOON - timedelta(minutes=3)
    game = Game.objects.create(
        player=ann,
        deal=deal,
        ranked=True,
        status="won",
        score=104,
        ply=417,
        started_at=started,
        finished_at=NOON,
        position=position_bytes(start),
    )
    result = committed(result_record, game)
    assert (result.won, result.cards_home, result.moves, result.time_ms) == (
        True,
        104,
        417,
        180_000,
    )
    assert result.finished_at == NOON and result.player == ann and result.deal == deal
    expected = standing_key(
        won=True,
        cards_missing=0,
        moves=417,
        time_ms=180_000,
        finished_ms=int(NOON.timestamp() * 1000),
        game_id=game.pk,
    )
    assert result.sort_key == expected

    lost = Game.objects.create(
        player=players("bob")[0],
        deal=deal,
        ranked=True,
        status="resigned",
        score=30,
        ply=12,
        started_at=started,
        finished_at=NOON,
        position=position_bytes(start),
    )
    result = committed(result_record, lost)
    assert not result.won and result.cards_home == 30
    assert result.sort_key.startswith("1074")  # not won, 74 of 104 cards missing


def test_no_result_for_practice_or_unfinished_games(daily_clock: FakeClock) -> None:
    (ann,) = players("ann")
    deal = daily("bristol", DAY)
    pos = position_bytes(new_position("bristol", seed=int(deal.seed)))
    practice = Game.objects.create(
        player=ann, deal=deal, status="lost", started_at=NOON, finished_at=NOON, position=pos
    )
    playing = Game.objects.create(player=ann, deal=deal, ranked=True, started_at=NOON, position=pos)
    assert committed(result_record, practice) is None
    assert committed(result_record, playing) is None
    assert not Result.objects.exists()


# -- disqualification and removal ------------------------------------------------------------


def make_board(deal: Deal, n: int, prefix: str = "p") -> list[Result]:
    """``n`` results in rank order (the i-th has i more moves)."""
    people = players(*[f"{prefix}{i}" for i in range(n)])
    return [
        finished_result(deal, people[i], won=True, moves=100 + i, time_ms=60_000) for i in range(n)
    ]


def test_a_disqualified_result_leaves_the_board_and_ranks_follow(
    board_backend: str, daily_clock: FakeClock
) -> None:
    deal = daily("bristol", DAY)
    results = make_board(deal, 6)
    boards.rank_of(deal.pk, results[0].sort_key)  # the Redis mirror is built now
    cheat = results[2]
    assert day_board(deal=deal, user=cheat.player)["me"]["rank"] == 3

    committed(result_disqualify, result_id=cheat.pk)

    board = day_board(deal=deal, user=cheat.player, limit=100)
    assert board["total"] == 5
    assert cheat.pk not in [e["result_id"] for e in board["results"]]
    assert board["me"] is None and board["around"] == []
    assert [e["result_id"] for e in board["results"]] == [r.pk for r in results if r != cheat]
    assert [e["rank"] for e in board["results"]] == [1, 2, 3, 4, 5]
    for i, r in enumerate(results[3:], start=3):
        assert boards.rank_of(deal.pk, r.sort_key) == i  # one up
    overview = {
        d["variant"]: d
        for d in shapes.daily_overview(daily_selectors.dailies_of_day(user=cheat.player, day=DAY))
    }
    assert overview["bristol"]["my_game"]["rank"] is None
    stats = PlayerStats.objects.get(player=cheat.player, variant="bristol")
    assert (stats.played, stats.won, stats.best_result) == (0, 0, None)
    # Other players see the same.
    below = day_board(deal=deal, user=results[4].player, around=1)
    assert below["me"]["rank"] == 4
    assert [e["result_id"] for e in below["around"]] == [r.pk for r in results[3:6]]

    committed(result_disqualify, result_id=cheat.pk, disqualified=False)
    board = day_board(deal=deal, user=cheat.player, limit=100)
    assert board["total"] == 6 and board["me"]["rank"] == 3
    assert [e["result_id"] for e in board["results"]] == [r.pk for r in results]
    assert boards.rank_of(deal.pk, results[5].sort_key) == 6
    assert PlayerStats.objects.get(player=cheat.player, variant="bristol").won == 1


def test_disqualifying_twice_changes_nothing_more(
    board_backend: str, daily_clock: FakeClock
) -> None:
    deal = daily("mod3", DAY)
    results = make_board(deal, 3)
    committed(result_disqualify, result_id=results[0].pk)
    committed(result_disqualify, result_id=results[0].pk)
    board = day_board(deal=deal, limit=10)
    assert board["total"] == 2
    assert [e["rank"] for e in board["results"]] == [1, 2]


def test_removing_an_accounts_results(board_backend: str, daily_clock: FakeClock) -> None:
    today = daily("bristol", DAY)
    yesterday = daily("bristol", DAY - timedelta(days=1))
    results = make_board(today, 5)
    gone = results[1].player
    old = finished_result(yesterday, gone, won=True, finished_at=NOON - timedelta(days=1))
    other_old = finished_result(
        yesterday, results[0].player, won=False, finished_at=NOON - timedelta(days=1)
    )
    boards.rank_of(today.pk, results[0].sort_key)
    boards.rank_of(yesterday.pk, other_old.sort_key)
    assert PlayerStats.objects.get(player=gone, variant="bristol").played == 2

    assert committed(results_remove_for_player, player=gone) == 2

    assert not Result.objects.filter(player=gone).exists()
    assert not PlayerStats.objects.filter(player=gone).exists()
    assert Game.objects.filter(player=gone, ranked=True).count() == 2  # the games stay
    board = day_board(deal=today, user=gone, limit=100)
    assert board["total"] == 4 and board["me"] is None
    assert [e["result_id"] for e in board["results"]] == [r.pk for r in results if r.player != gone]
    assert boards.rank_of(today.pk, results[2].sort_key) == 2
    old_board = day_board(deal=yesterday, limit=100)
    assert old_board["total"] == 1
    assert [e["result_id"] for e in old_board["results"]] == [other_old.pk]
    assert not Result.objects.filter(pk=old.pk).exists()
    assert (
        shapes.player_record(gone, board_selectors.stats_of_player(user=gone), race_ratings=())[
            "played"
        ]
        == 0
    )


# -- records: streaks and statistics ----------------------------------------------------------


def play_days(
    daily_clock: FakeClock, player: Any, outcomes: dict[int, bool], variant: str = "bristol"
) -> dict[int, Result]:
    """Ranked results on DAY + offset: True won, False lost."""
    out = {}
    for offset, won in sorted(outcomes.items()):
        day = DAY + timedelta(days=offset)
        daily_clock.set(datetime.combine(day, NOON.timetz()))
        out[offset] = finished_result(daily(variant, day), player, won=won, moves=100 + offset)
    return out


def test_streaks_count_consecutive_days_won_and_reset_across_a_missed_day(
    daily_clock: FakeClock,
) -> None:
    (ann,) = players("ann")
    # won 0,1,2 ; missed 3 ; won 4,5
    play_days(daily_clock, ann, {0: True, 1: True, 2: True, 4: True, 5: True})
    stats = PlayerStats.objects.get(player=ann, variant="bristol")
    assert (stats.played, stats.won, stats.best_streak, stats.streak) == (5, 5, 3, 2)
    assert stats.last_won == DAY + timedelta(days=5)
    # Today is day 5 (won): the streak is alive; still alive on day 6 before playing.
    assert board_selectors.current_streak(stats) == 2
    daily_clock.next_day()
    assert board_selectors.current_streak(stats) == 2
    # A day missed: the current streak is 0; the best stays.
    daily_clock.next_day()
    assert board_selectors.current_streak(stats) == 0
    record = shapes.player_record(ann, board_selectors.stats_of_player(user=ann), race_ratings=())[
        "variants"
    ][0]
    assert (record["best_streak"], record["current_streak"]) == (3, 0)


def test_a_lost_day_breaks_the_streak(daily_clock: FakeClock) -> None:
    (ann,) = players("ann")
    play_days(daily_clock, ann, {0: True, 1: True, 2: False})
    stats = PlayerStats.objects.get(player=ann, variant="bristol")
    assert (stats.best_streak, stats.won, stats.played) == (2, 2, 3)
    assert board_selectors.current_streak(stats) == 0  # today (day 2) was lost
    play_days(daily_clock, ann, {3: True})
    stats.refresh_from_db()
    assert (stats.best_streak, board_selectors.current_streak(stats)) == (2, 1)


def test_best_streak_can_be_older_than_the_current_one(daily_clock: FakeClock) -> None:
    (ann,) = players("ann")
    play_days(daily_clock, ann, {0: True, 1: True, 2: True, 3: True, 5: True, 6: True, 8: True})
    stats = PlayerStats.objects.get(player=ann, variant="bristol")
    assert (stats.best_streak, stats.streak, board_selectors.current_streak(stats)) == (4, 1, 1)


def test_streaks_are_per_variant(daily_clock: FakeClock) -> None:
    (ann,) = players("ann")
    play_days(daily_clock, ann, {0: True, 1: True}, variant="bristol")
    play_days(daily_clock, ann, {0: True, 1: False}, variant="mod3")
    by = {s.variant: s for s in PlayerStats.objects.filter(player=ann)}
    assert (by["bristol"].best_streak, by["mod3"].best_streak) == (2, 1)
    assert (
        board_selectors.current_streak(by["bristol"]),
        board_selectors.current_streak(by["mod3"]),
    ) == (2, 0)


def test_player_statistics_played_won_win_rate_and_best_result(daily_clock: FakeClock) -> None:
    ann, bob = players("ann", "bob")
    res = play_days(daily_clock, ann, {0: False, 1: True, 2: False, 3: True})
    # A better win on day 1 than day 3: fewer moves (100 + offset).
    play_days(daily_clock, ann, {0: False, 1: False}, variant="picture-gallery")
    record = shapes.player_record(ann, board_selectors.stats_of_player(user=ann), race_ratings=())
    assert (record["player"], record["played"], record["won"]) == ("ann", 6, 2)
    assert record["win_rate"] == round(2 / 6, 4)
    by = {v["variant"]: v for v in record["variants"]}
    assert [v["variant"] for v in record["variants"]] == ["bristol", "picture-gallery"]
    bristol = by["bristol"]
    assert (bristol["played"], bristol["won"], bristol["win_rate"]) == (4, 2, 0.5)
    assert bristol["best"] == {
        "date": (DAY + timedelta(days=1)).isoformat(),
        "won": True,
        "cards_home": 52,
        "moves": 101,
        "time_ms": 60_000,
    }
    assert PlayerStats.objects.get(player=ann, variant="bristol").best_result_id == res[1].pk
    assert by["picture-gallery"]["won"] == 0 and by["picture-gallery"]["win_rate"] == 0.0
    assert by["picture-gallery"]["best"]["cards_home"] == 10
    empty = shapes.player_record(bob, board_selectors.stats_of_player(user=bob), race_ratings=())
    assert (empty["played"], empty["won"], empty["win_rate"], empty["variants"]) == (0, 0, 0.0, [])


def test_stats_recompute_equals_a_recount_after_random_results(daily_clock: FakeClock) -> None:
    (ann,) = players("ann")
    rng = random.Random(4)
    outcomes = {d: rng.random() < 0.6 for d in range(30) if rng.random() < 0.8}
    play_days(daily_clock, ann, outcomes)
    stats = stats_recompute(player=ann, variant="bristol")
    won_days = sorted(d for d, w in outcomes.items() if w)
    runs, run, prev = [], 0, None
    for d in sorted(outcomes):
        follows = prev is not None and d == prev + 1 and run > 0
        run = (run + 1 if follows else 1) if outcomes[d] else 0
        prev = d
        runs.append(run)
    assert stats.played == len(outcomes) and stats.won == len(won_days)
    assert stats.best_streak == max(runs)
    assert stats.streak == runs[-1]
    assert stats.last_won == DAY + timedelta(days=won_days[-1])


def test_alltime_boards_order_and_page(daily_clock: FakeClock) -> None:
    ann, bob, cid, dan, eve = players("ann", "bob", "cid", "dan", "eve")
    play_days(daily_clock, ann, {0: True, 1: True, 2: True, 5: True})  # 4 won, best 3
    play_days(daily_clock, bob, {3: True, 4: True, 5: True, 6: True})  # 4 won, best 4, alive
    play_days(daily_clock, cid, {0: True, 6: True})  # 2 won, best 1, alive
    play_days(daily_clock, dan, {0: False, 6: False})  # never won
    play_days(daily_clock, eve, {5: True, 6: False})  # 1 won, run ended by today's loss
    daily_clock.set(datetime(2026, 3, 16, 20, 0, tzinfo=UTC))  # day 6

    def names(order: str, **kw: Any) -> tuple[list[tuple[int, str]], dict[str, Any]]:
        page = alltime(variant="bristol", order=order, limit=10, **kw)
        return [(e["rank"], e["player"]) for e in page["results"]], page

    days_won, _ = names("days_won")
    # ties: best streak, then the older account
    assert days_won == [(1, "bob"), (2, "ann"), (3, "cid"), (4, "eve")]
    best, page = names("best_streak")
    assert best == [(1, "bob"), (2, "ann"), (3, "cid"), (4, "eve")]
    assert page["results"][1]["best_streak"] == 3 and page["results"][1]["days_won"] == 4
    streak, page = names("streak")
    # ann won day 5 (a run of one, alive on day 6); ties on the run go to more days won.
    assert streak == [(1, "bob"), (2, "ann"), (3, "cid")]
    assert [e["current_streak"] for e in page["results"]] == [4, 1, 1]

    first = alltime(variant="bristol", order="days_won", limit=2)
    assert [e["player"] for e in first["results"]] == ["bob", "ann"]
    assert first["previous"] is None
    second = alltime(variant="bristol", url=first["next"])
    assert [(e["rank"], e["player"]) for e in second["results"]] == [(3, "cid"), (4, "eve")]
    assert second["next"] is None
    back = alltime(variant="bristol", url=second["previous"])
    assert back["results"] == first["results"]
    assert alltime(variant="mod3", order="days_won", limit=5) == {
        "next": None,
        "previous": None,
        "results": [],
    }
