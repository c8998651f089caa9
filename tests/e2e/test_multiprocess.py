"""Two daphne processes, one database and one Redis: the service works as several processes.

- A listener of a day's board on process A sees the result of a ranked daily
  game finished through process B (events cross processes through Redis, after
  commit).
- The same move sent through both processes at the same moment is applied once
  (the row lock and the unique ply of the log), and a change made through one
  process is pushed to a game socket on the other.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import pytest
import requests
from websockets.sync.client import ClientConnection, connect

from devtools.accounts import register
from tests.e2e.helpers import games_verified
from tests.pinned_clock import PINNED_DAY

pytestmark = pytest.mark.e2e

TIMEOUT = 15


def ws_url(base: str, path: str) -> str:
    return base.replace("http://", "ws://", 1) + path


def open_socket(base: str, path: str, key: str | None = None) -> ClientConnection:
    headers = {"Authorization": f"Token {key}"} if key else None
    return connect(ws_url(base, path), additional_headers=headers, proxy=None, open_timeout=TIMEOUT)


def recv(ws: ClientConnection) -> dict[str, Any]:
    return json.loads(ws.recv(timeout=TIMEOUT))


def token_session(key: str) -> requests.Session:
    s = requests.Session()
    s.trust_env = False
    s.headers["Authorization"] = f"Token {key}"
    return s


def answer_to(ws: ClientConnection, cause: str) -> dict[str, Any]:
    """The answer to our request, skipping state pushed because of others' changes."""
    while True:
        message = recv(ws)
        if message.get("cause") == cause:
            return message
        assert message["cause"] == "changed", message


def test_a_board_listener_on_one_process_sees_a_result_finished_through_the_other(
    servers: list[str], e2e_redis_url: str
) -> None:
    a, b = servers
    today = PINNED_DAY.isoformat()
    with open_socket(a, f"/ws/v1/daily/bristol/{today}/") as listener:
        first = recv(listener)
        assert first["type"] == "board"

        name = f"e2e-{uuid.uuid4().hex[:10]}"
        key = register(b, name)
        api = token_session(key)
        r = api.post(f"{b}/api/v1/daily/bristol/{today}/play/", timeout=TIMEOUT)
        assert r.status_code == 201, r.text
        game = r.json()
        assert game["ranked"] is True
        r = api.post(f"{b}/api/v1/games/{game['id']}/resign/", timeout=TIMEOUT)
        assert r.status_code == 200, r.text

        # Other processes sharing this Redis may finish dailies too: wait for ours.
        while True:
            event = recv(listener)
            if event["type"] == "board.result" and event["result"]["player"] == name:
                break
        result = event["result"]
        assert (event["variant"], event["date"]) == ("bristol", today)
        assert result["won"] is False
        assert result["moves"] == 0
        assert result["rank"] >= 1
        board = api.get(f"{a}/api/v1/daily/bristol/{today}/board/", timeout=TIMEOUT).json()
        assert board["me"]["result_id"] == result["result_id"]


def test_a_socket_move_reaches_the_games_socket_on_the_other_process(
    servers: list[str], e2e_redis_url: str
) -> None:
    """The sockets of a game greet each other across processes: a move on either is
    pushed to the other, and each mover gets just its answer."""
    a, b = servers
    key = register(a, f"e2e-{uuid.uuid4().hex[:10]}")
    api = token_session(key)
    r = api.post(f"{a}/api/v1/games/", json={"variant": "bristol", "seed": 1}, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    path = f"/ws/v1/games/{r.json()['id']}/"
    with open_socket(a, path, key) as on_a, open_socket(b, path, key) as on_b:
        state = [recv(ws) for ws in (on_a, on_b)][1]["state"]
        for ply, (mover, other) in enumerate([(on_a, on_b), (on_b, on_a), (on_a, on_b)]):
            move = state["legal_moves"][0]
            mover.send(json.dumps({"type": "move", "move": move, "ply": ply}))
            answer = recv(mover)
            assert (answer["cause"], answer["ply"]) == ("move", ply + 1), answer
            pushed = recv(other)
            assert (pushed["cause"], pushed["ply"]) == ("changed", ply + 1), pushed
            state = answer["state"]


ROUNDS = 6


def test_the_same_move_through_both_processes_at_once_is_applied_once(
    servers: list[str], e2e_env: dict[str, str]
) -> None:
    a, b = servers
    key = register(a, f"e2e-{uuid.uuid4().hex[:10]}")
    api = token_session(key)
    r = api.post(f"{a}/api/v1/games/", json={"variant": "bristol", "seed": 1}, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    game_id = r.json()["id"]
    path = f"/ws/v1/games/{game_id}/"
    with open_socket(a, path, key) as on_a, open_socket(b, path, key) as on_b:
        sockets = [on_a, on_b]
        state = [recv(ws) for ws in sockets][0]["state"]
        for ply in range(ROUNDS):
            assert state["status"] == "playing"
            move = state["legal_moves"][ply % len(state["legal_moves"])]
            barrier = threading.Barrier(2)
            answers: list[dict[str, Any] | None] = [None, None]

            def play(
                i: int,
                move: str = move,
                ply: int = ply,
                barrier: threading.Barrier = barrier,
                answers: list[dict[str, Any] | None] = answers,
            ) -> None:
                barrier.wait(TIMEOUT)
                sockets[i].send(json.dumps({"type": "move", "move": move, "ply": ply}))
                answers[i] = answer_to(sockets[i], "move")

            threads = [threading.Thread(target=play, args=(i,)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(TIMEOUT * 2)
            got = [x for x in answers if x is not None]
            assert len(got) == 2, answers
            applied = [x for x in got if x["type"] == "state" and not x["duplicate"]]
            others = [x for x in got if x not in applied]
            assert len(applied) == 1, answers
            other = others[0]
            assert (other["type"] == "state" and other["duplicate"] is True) or (
                other["type"] == "error" and other["error"]["code"] == "stale_ply"
            ), other
            assert applied[0]["ply"] == ply + 1 == other["ply"]
            state = applied[0]["state"]

        log = api.get(f"{b}/api/v1/games/{game_id}/moves/", timeout=TIMEOUT).json()["results"]
        assert [entry["ply"] for entry in log] == list(range(ROUNDS))

        # A change through REST on B is pushed to the socket on A.
        move = state["legal_moves"][0]
        r = api.post(
            f"{b}/api/v1/games/{game_id}/moves/",
            json={"move": move, "ply": ROUNDS},
            timeout=TIMEOUT,
        )
        assert r.status_code == 200, r.text
        pushed = answer_to(sockets[0], "changed")
        assert pushed["ply"] == ROUNDS + 1
    assert games_verified(e2e_env, game_id) == {game_id: None}


def test_a_token_revoked_through_one_process_is_refused_at_once_by_the_other(
    servers: list[str],
) -> None:
    a, b = servers
    key = register(b, f"e2e-{uuid.uuid4().hex[:10]}")
    api = token_session(key)
    for base in (a, b, a):  # both processes use the token; its entry is in Redis
        assert api.get(f"{base}/api/v1/auth/me/", timeout=TIMEOUT).status_code == 200
    (token,) = api.get(f"{b}/api/v1/auth/tokens/", timeout=TIMEOUT).json()["results"]
    r = api.delete(f"{b}/api/v1/auth/tokens/{token['id']}/", timeout=TIMEOUT)
    assert r.status_code == 204, r.text
    r = api.get(f"{a}/api/v1/auth/me/", timeout=TIMEOUT)
    assert r.status_code == 401, r.text
    assert r.json()["error"]["code"] == "authentication_failed"
