"""Races through the real servers: many clients send the same request at the same moment.

Sixteen clients of one player (half REST, half WebSocket, spread over both
daphne processes A and B of the ``servers`` fixture) each hold an open
connection, then send their request at once (one ``asyncio.gather``: all
sixteen are written within a millisecond or two). The game's row lock, the
unique ``(game, ply)`` of the log and the unique constraints on results and
ranked games must turn every such race into exactly one change:

- the same move at the same ply: one applied, the others answered as the
  idempotent duplicate (or ``stale_ply``); one log entry;
- different moves at the same ply: one applied, all others ``stale_ply`` (409);
- a ranked daily ended sixteen times at once (sixteen resignations; the last move
  sixteen times): one end, one result, one line on the board and in its Redis
  mirror (``ZCARD``), and the others ``game_finished`` or duplicates;
- today's daily started sixteen times at once: one ranked game;
- one practice deal (same seed) started sixteen times at once: one deal row.

Every game is then checked with ``games.selectors.games.game_verify``.
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from bench.load import Http
from devtools.accounts import register
from tests.e2e.conftest import database_rows, logged_moves, redis_prefix
from tests.e2e.helpers import games_verified
from tests.pinned_clock import PINNED_DAY

pytestmark = pytest.mark.e2e

CLIENTS = 16
TIMEOUT = 20.0


def today() -> str:
    """The day the servers play (their clock is pinned)."""
    return PINNED_DAY.isoformat()


class Client:
    """One connection of a player to one server: REST (keep-alive) or a game socket."""

    def __init__(self, base: str, token: str, transport: str) -> None:
        self.base, self.token, self.transport = base, token, transport
        self.http = Http(base, token, TIMEOUT)
        self.ws: Any = None

    async def open(self, game: int) -> None:
        """Connect before the race, so that the race itself sends requests only."""
        if self.transport == "ws":
            from websockets.asyncio.client import connect

            url = self.base.replace("http", "ws", 1) + f"/ws/v1/games/{game}/"
            self.ws = await connect(
                url, additional_headers={"Authorization": f"Token {self.token}"}, proxy=None
            )
            first = json.loads(await asyncio.wait_for(self.ws.recv(), TIMEOUT))
            assert first["type"] == "state", first
        else:
            status, _ = await self.http.request("GET", f"/api/v1/games/{game}/")
            assert status == 200

    async def close(self) -> None:
        await self.http.close()
        if self.ws is not None:
            await self.ws.close()

    async def send(self, game: int, kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        """One request; the outcome (applied, duplicate or the error code) and the state."""
        if self.transport == "ws":
            await self.ws.send(json.dumps({"type": kind, **fields}))
            while True:
                answer = json.loads(await asyncio.wait_for(self.ws.recv(), TIMEOUT))
                if answer.get("cause") == kind:
                    break
                assert answer["cause"] == "changed", answer  # pushed: the game moved on
            if answer["type"] == "error":
                return answer["error"]["code"], answer
            state = answer["state"]
            return ("duplicate" if answer.get("duplicate") else "applied"), state
        path = {"move": "moves", "undo": "undo", "resign": "resign"}[kind]
        status, data = await self.http.request(
            "POST", f"/api/v1/games/{game}/{path}/", fields or None
        )
        if status != 200:
            return f"{status} {data['error']['code']}", data
        return ("duplicate" if data.get("duplicate") else "applied"), data


def clients_of(servers: list[str], token: str, n: int = CLIENTS) -> list[Client]:
    """``n`` clients of one player: REST and WebSocket in turn, on A and B in turn."""
    return [
        Client(servers[(i // 2) % len(servers)], token, ("rest", "ws")[i % 2]) for i in range(n)
    ]


def at_once(coros: list[Any]) -> list[Any]:
    async def run() -> list[Any]:
        return await asyncio.gather(*coros)

    return asyncio.run(run())


def race(
    clients: list[Client], game: int, requests: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, dict[str, Any]]]:
    """Connect every client, then send request ``i`` through client ``i``, all at once."""

    async def run() -> list[tuple[str, dict[str, Any]]]:
        await asyncio.gather(*(c.open(game) for c in clients))
        try:
            return await asyncio.gather(
                *(c.send(game, kind, **f) for c, (kind, f) in zip(clients, requests, strict=True))
            )
        finally:
            await asyncio.gather(*(c.close() for c in clients))

    return asyncio.run(run())


def rest(base: str, token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async def run() -> tuple[int, Any]:
        http = Http(base, token, TIMEOUT)
        try:
            return await http.request(method, path, body)
        finally:
            await http.close()

    return asyncio.run(run())


def sql(env: dict[str, str], query: str, *params: Any) -> list[tuple[Any, ...]]:
    return database_rows(env["DATABASE_URL"], query, *params)


def mirror(env: dict[str, str], deal: int) -> list[str]:
    """The members of a day board's Redis mirror (the sentinel "" included)."""
    import redis

    client = redis.Redis.from_url(env["REDIS_URL"])
    members = client.zrange(f"{redis_prefix(env['DATABASE_URL'])}:board:{deal}", 0, -1)
    # Bytes here; redis-py's return type also covers withscores and decoded replies.
    return [m.decode() for m in members]  # type: ignore[union-attr]


def board_checks(env: dict[str, str], base: str, token: str, game: int, variant: str) -> None:
    """One result for the game, one line on the day's board and in its mirror (with Redis)."""
    [(deal,)] = sql(env, "SELECT deal_id FROM games_game WHERE id = %s", game)
    assert sql(env, "SELECT count(*) FROM games_result WHERE game_id = %s", game) == [(1,)]
    [(key,)] = sql(env, "SELECT sort_key FROM games_result WHERE game_id = %s", game)
    [(counted,)] = sql(
        env, "SELECT count(*) FROM games_result WHERE deal_id = %s AND NOT disqualified", deal
    )
    if "REDIS_URL" in env:
        members = mirror(env, deal)
        assert members[:1] == [""], "the board's mirror was not built"
        assert [m for m in members if m.endswith(f"{game:012d}")] == [key]
        assert len(members) - 1 == counted
    status, board = rest(base, token, "GET", f"/api/v1/daily/{variant}/{today()}/board/")
    assert status == 200
    assert board["total"] == counted
    assert board["me"] is not None and board["me"]["rank"] >= 1


def start_practice(base: str, token: str, seed: int) -> dict[str, Any]:
    status, state = rest(
        base, token, "POST", "/api/v1/games/", {"variant": "bristol", "seed": seed}
    )
    assert status == 201, state
    return state


def test_the_same_move_sent_by_sixteen_clients_at_once_is_applied_once(
    servers: list[str], e2e_env: dict[str, str], e2e_player: Callable[[], tuple[str, str]]
) -> None:
    _, token = e2e_player()
    state = start_practice(servers[0], token, seed=1)
    game = state["id"]
    outcomes: Counter = Counter()
    log = []
    for round_ in range(6):
        ply = state["ply"]
        if round_ == 3:  # an undo, sixteen times at once
            kind, fields = "undo", {"ply": ply}
        else:
            kind, fields = "move", {"move": state["legal_moves"][0], "ply": ply}
        answers = race(clients_of(servers, token), game, [(kind, fields)] * CLIENTS)
        got = Counter(outcome for outcome, _ in answers)
        outcomes.update(got)
        assert got["applied"] == 1, got
        assert set(got) <= {"applied", "duplicate", "stale_ply", "409 stale_ply"}, got
        state = next(s for outcome, s in answers if outcome == "applied")
        assert state["ply"] == ply + 1
        log.append(fields.get("move", "undo"))

    status, moves = rest(servers[1], token, "GET", f"/api/v1/games/{game}/moves/?limit=1000")
    assert status == 200
    assert [(m["ply"], m["move"]) for m in moves["results"]] == list(enumerate(log))
    assert games_verified(e2e_env, game) == {game: None}
    print(f"\nsame move x{CLIENTS}, 6 rounds: {dict(outcomes)}")


def test_different_moves_at_the_same_ply_one_wins_and_the_others_get_409(
    servers: list[str], e2e_env: dict[str, str], e2e_player: Callable[[], tuple[str, str]]
) -> None:
    _, token = e2e_player()
    state = start_practice(servers[1], token, seed=1)
    game = state["id"]
    outcomes: Counter = Counter()
    for _ in range(3):
        ply, legal = state["ply"], state["legal_moves"][:CLIENTS]
        assert len(legal) >= 2
        requests = [("move", {"move": m, "ply": ply}) for m in legal]
        answers = race(clients_of(servers, token, len(legal)), game, requests)
        got = Counter(outcome for outcome, _ in answers)
        outcomes.update(got)
        assert got["applied"] == 1, got
        assert got["stale_ply"] + got["409 stale_ply"] == len(legal) - 1, got
        winner = next(i for i, (outcome, _) in enumerate(answers) if outcome == "applied")
        state = answers[winner][1]
        stored = logged_moves(e2e_env["DATABASE_URL"], game)
        assert stored[game, ply] == legal[winner] and len(stored) == ply + 1
        for outcome, answer in answers:
            if outcome != "applied":  # the current ply comes with the refusal
                ply_now = answer["ply"] if "ply" in answer else answer["error"]["details"]["ply"]
                assert ply_now == ply + 1
    assert games_verified(e2e_env, game) == {game: None}
    print(f"\ndifferent moves at one ply, 3 rounds: {dict(outcomes)}")


def test_a_ranked_daily_resigned_sixteen_times_at_once_has_one_result(
    servers: list[str], e2e_env: dict[str, str], e2e_player: Callable[[], tuple[str, str]]
) -> None:
    _, token = e2e_player()
    variant = "royal-parade"
    status, state = rest(servers[0], token, "POST", f"/api/v1/daily/{variant}/{today()}/play/")
    assert status == 201 and state["ranked"], state
    game = state["id"]
    # Read the board first, so that its Redis mirror exists and takes the result.
    assert rest(servers[1], token, "GET", f"/api/v1/daily/{variant}/{today()}/board/")[0] == 200

    answers = race(clients_of(servers, token), game, [("resign", {})] * CLIENTS)
    got = Counter(outcome for outcome, _ in answers)
    assert got["applied"] == 1, got
    assert got["game_finished"] + got["409 game_finished"] == CLIENTS - 1, got

    board_checks(e2e_env, servers[0], token, game, variant)
    assert games_verified(e2e_env, game) == {game: None}
    print(f"\nresign x{CLIENTS} on a ranked daily: {dict(got)}")


def finishing_line(variant: str, seed: int) -> list[str]:
    """A line of random legal moves (home first) that ends the game, found with the engine."""
    from games.engine import Status, new_position

    for attempt in range(500):
        rng = random.Random(attempt)
        pos, line = new_position(variant, seed=seed), []
        for _ in range(400):
            legal = [str(m) for m in pos.legal_moves]
            home = [m for m in legal if m.endswith("-f")]
            line.append(rng.choice(home or legal))
            pos = pos.apply(line[-1])
            if pos.status != Status.PLAYING:
                return line
    raise AssertionError("no random line ends this deal")


def test_the_last_move_of_a_ranked_daily_sent_sixteen_times_at_once_ends_it_once(
    servers: list[str], e2e_env: dict[str, str], e2e_player: Callable[[], tuple[str, str]]
) -> None:
    _, token = e2e_player()
    variant = "belvedere"
    status, state = rest(servers[1], token, "POST", f"/api/v1/daily/{variant}/{today()}/play/")
    assert status == 201 and state["ranked"], state
    game = state["id"]
    [(seed,)] = sql(
        e2e_env,
        "SELECT d.seed FROM games_deal d JOIN games_game g ON g.deal_id = d.id WHERE g.id = %s",
        game,
    )
    line = finishing_line(variant, int(seed))

    async def play_all_but_the_last() -> dict[str, Any]:
        http = Http(servers[0], token, TIMEOUT)
        try:
            data: dict[str, Any] = {}
            for ply, move in enumerate(line[:-1]):
                status, data = await http.request(
                    "POST", f"/api/v1/games/{game}/moves/", {"move": move, "ply": ply}
                )
                assert status == 200 and not data["duplicate"], data
            return data
        finally:
            await http.close()

    state = asyncio.run(play_all_but_the_last())
    assert state["status"] == "playing" and line[-1] in state["legal_moves"]
    assert rest(servers[1], token, "GET", f"/api/v1/daily/{variant}/{today()}/board/")[0] == 200

    last = ("move", {"move": line[-1], "ply": len(line) - 1})
    answers = race(clients_of(servers, token), game, [last] * CLIENTS)
    got = Counter(outcome for outcome, _ in answers)
    assert got["applied"] == 1, got
    assert set(got) <= {"applied", "duplicate", "stale_ply", "409 stale_ply"}, got
    for _, answer in answers:  # every answer shows the ended game
        assert answer.get("status", "?") != "playing"

    board_checks(e2e_env, servers[0], token, game, variant)
    assert len(logged_moves(e2e_env["DATABASE_URL"], game)) == len(line)
    assert games_verified(e2e_env, game) == {game: None}
    print(f"\nlast move x{CLIENTS} on a ranked daily ({len(line)} moves): {dict(got)}")


def test_todays_daily_started_sixteen_times_at_once_is_one_ranked_game(
    servers: list[str], e2e_env: dict[str, str], e2e_player: Callable[[], tuple[str, str]]
) -> None:
    _, token = e2e_player()
    variant = "mod3"
    path = f"/api/v1/daily/{variant}/{today()}/play/"
    answers = at_once(
        [asyncio.to_thread(rest, servers[i % 2], token, "POST", path) for i in range(CLIENTS)]
    )
    got = Counter(status for status, _ in answers)
    assert got == Counter({201: 1, 200: CLIENTS - 1}), got
    games = {data["id"] for _, data in answers}
    assert len(games) == 1 and all(data["ranked"] for _, data in answers)
    [game] = games
    ranked = sql(
        e2e_env,
        "SELECT count(*) FROM games_game g JOIN games_deal d ON d.id = g.deal_id "
        "WHERE g.player_id = (SELECT player_id FROM games_game WHERE id = %s) "
        "AND d.kind = 'daily' AND d.variant = %s",
        game,
        variant,
    )
    assert ranked == [(1,)]
    print(f"\ndaily play x{CLIENTS}: {dict(got)}")


def test_one_practice_deal_started_sixteen_times_at_once_is_one_deal(
    servers: list[str], e2e_env: dict[str, str], e2e_player: Callable[[], tuple[str, str]]
) -> None:
    tokens = [e2e_player()[1] for _ in range(4)]
    seed = random.randrange(2**63, 2**64)  # a deal nobody has started yet
    body = {"variant": "picture-gallery", "seed": seed}
    answers = at_once(
        [
            asyncio.to_thread(rest, servers[i % 2], tokens[i % 4], "POST", "/api/v1/games/", body)
            for i in range(CLIENTS)
        ]
    )
    assert [status for status, _ in answers] == [201] * CLIENTS, answers
    assert len({data["id"] for _, data in answers}) == CLIENTS
    deals = sql(
        e2e_env,
        "SELECT count(*) FROM games_deal WHERE kind = 'practice' AND variant = %s AND seed = %s",
        "picture-gallery",
        seed,
    )
    assert deals == [(1,)]


def test_one_name_registered_in_four_cases_at_once_is_one_account(
    servers: list[str], e2e_env: dict[str, str]
) -> None:
    """Names that differ only in case are one name: "Ann" is refused once "ann" exists.

    The check ran before the password was hashed (a second, on purpose), so
    registrations of the same name in several cases at once all passed it.
    """
    stem = f"Race{uuid.uuid4().hex[:8]}"
    names = [stem, stem.lower(), stem.upper(), stem.swapcase()]

    def attempt(i: int) -> str:
        try:
            register(servers[i % 2], names[i])
        except RuntimeError as exc:
            return "taken" if "HTTP 400" in str(exc) and "taken" in str(exc) else str(exc)
        return "created"

    got = Counter(at_once([asyncio.to_thread(attempt, i) for i in range(len(names))]))
    assert got == Counter({"created": 1, "taken": len(names) - 1}), got
    accounts = sql(
        e2e_env, "SELECT count(*) FROM auth_user WHERE upper(username) = %s", stem.upper()
    )
    assert accounts == [(1,)]
