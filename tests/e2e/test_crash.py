"""A server killed with SIGKILL in the middle of a load loses no acknowledged move.

One daphne process on a database of its own (PostgreSQL, or a SQLite file; Redis for
the channel layer and the boards when the run has one). Players of ``bench/load.py``
play over REST and WebSocket as fast as the server answers, half of them today's ranked daily
first, resigning every game at 40 moves (so games start and end all along), and
record every move the server acknowledged (its answer with the next ply).
Halfway, the server process gets SIGKILL while requests are in flight, and a
new one is started on the same port. The players reconnect, read the game again
and resend the move whose answer they lost, with the same ply. Then:

- every acknowledged move is in the database, at its ply, with its notation;
- no move was applied twice: the resent ones were answered as duplicates (the
  server had applied them before it died) or applied then, once;
- every game's stored position, counters and status equal the replay of its log
  (``games.selectors.games.game_verify`` is None for every game in the database);
- every ranked game that ended has exactly one result, on the board's Redis
  mirror when the end was acknowledged;
- every player carried on after the restart, in the game it was playing.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Callable

import pytest

from bench.load import Config, Deadline, Stats, make_players, run_players
from devtools.servers import Daphne, server_env
from tests.e2e.conftest import database_rows, logged_moves, redis_prefix
from tests.e2e.helpers import games_verified
from tests.pinned_clock import PINNED_DAY

pytestmark = pytest.mark.e2e

PLAYERS = 16  # half REST, half WebSocket
BEFORE_KILL_S = 4.0
AFTER_RESTART_S = 8.0  # a cold server under a loaded machine needs a few seconds


def test_a_server_killed_under_load_loses_no_acknowledged_move(
    e2e_urls: tuple[str, str | None],
    fresh_database: Callable[[str], str],
    e2e_player: Callable[[], tuple[str, str]],
    daphne: Callable[..., Daphne],
    pinned_clock: dict[str, str],
) -> None:
    database_url = fresh_database("crash")
    _, redis_url = e2e_urls
    env = server_env(database_url=database_url, redis_url=redis_url) | pinned_clock
    server = daphne(env).start()

    tokens = [e2e_player()[1] for _ in range(PLAYERS)]
    config = Config(
        ws_share=0.5,
        daily_share=0.5,
        variants=("bristol", "belvedere"),
        cap=40,  # resign at 40 moves: many starts and ends, ranked results among them
        undo_share=0.05,
        timeout=10.0,
        day=PINNED_DAY.isoformat(),
    )
    stats = Stats()
    players = make_players(server.url, tokens, config, stats)
    moments: dict[str, float] = {}

    async def crash(deadline: Deadline) -> None:
        await asyncio.sleep(BEFORE_KILL_S)
        moments["kill"] = time.perf_counter()
        server.kill()
        await asyncio.to_thread(server.start)
        moments["up"] = time.perf_counter()
        deadline.at = moments["up"] + AFTER_RESTART_S

    async def scenario() -> None:
        deadline = Deadline(time.perf_counter() + 120)  # until the server is back
        await asyncio.gather(run_players(players, deadline), crash(deadline))

    asyncio.run(scenario())
    server.stop()

    # The kill hit a busy server, and nothing but lost connections went wrong.
    assert stats.errors == Counter(), stats.errors
    assert sum(stats.lost.values()) >= PLAYERS // 2, stats.lost

    # Every acknowledged move is stored at its ply with its notation, exactly once.
    acks = [a for p in players for a in p.acks]
    keys = [(a.game, a.ply) for a in acks]
    assert len(keys) == len(set(keys)), "a ply acknowledged twice"
    stored = logged_moves(database_url)
    ranked_ends = database_rows(
        database_url,
        "SELECT g.id, g.deal_id, count(r.id), max(r.sort_key) FROM games_game g "
        "LEFT JOIN games_result r ON r.game_id = g.id "
        "WHERE g.ranked AND g.status <> 'playing' GROUP BY g.id, g.deal_id",
    )
    missing = [a for a in acks if stored.get((a.game, a.ply)) != a.notation]
    assert not missing, missing[:5]
    # A resent move was answered at the next ply: applied once, before the crash or after.
    resent = [a for a in acks if a.resent]
    assert all(a.answer_ply == a.ply + 1 for a in resent)
    assert resent, "no move was in flight when the server died"

    # Every game in the database equals the replay of its log.
    verdicts = games_verified(env)
    assert {g: v for g, v in verdicts.items() if v is not None} == {}
    assert {a.game for a in acks} <= set(verdicts)

    # One result per ended ranked game; an acknowledged end is on the board's mirror.
    assert all(n == 1 for _, _, n, _ in ranked_ends), ranked_ends
    acked_ends = {a.game for a in acks if a.status != "playing"}
    if redis_url:  # without Redis the boards are read from the database alone
        import redis

        mirror = redis.Redis.from_url(redis_url)
        prefix = f"{redis_prefix(database_url)}:board"
        for game, deal, _, key in ranked_ends:
            if game in acked_ends and mirror.exists(f"{prefix}:{deal}"):
                assert mirror.zscore(f"{prefix}:{deal}", key) is not None, (game, key)

    # Every player went on after the restart, in the game it was playing at the kill.
    for p in players:
        before = [a for a in p.acks if a.at < moments["kill"]]
        assert any(a.at > moments["up"] for a in p.acks), (
            f"player {p.index} ({p.transport}) made no move after the restart"
        )
        # The new server answers before the test has seen it up (its readiness is polled):
        # the first answer after the kill is the one to compare.
        after = [a for a in p.acks if a.at > moments["kill"]]
        if before and before[-1].status == "playing" and before[-1].answer_ply < config.cap:
            assert after[0].game == before[-1].game, (p.index, before[-1], after[0])

    print(
        f"\ncrash: {len(acks)} acknowledged moves checked ({len(resent)} resent after the kill: "
        f"{dict(stats.resent)}), {len(verdicts)} games verified, "
        f"{len(ranked_ends)} ranked games ended, lost connections {sum(stats.lost.values())}, "
        f"server down {moments['up'] - moments['kill']:.1f} s, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
