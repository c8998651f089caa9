"""The fan-out of a move's event over two daphne processes sharing Redis: every other
socket of the game, on either process, gets each move in order; the mover's socket gets
its answers and nothing else; a REST move reaches every socket."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import requests
from websockets.sync.client import ClientConnection

from devtools.accounts import register
from tests.e2e.test_multiprocess import TIMEOUT, open_socket, recv, token_session

pytestmark = pytest.mark.e2e

#: Seconds the mover's socket must stay quiet after its answers.
QUIET = 0.5


def quiet(ws: ClientConnection) -> bool:
    try:
        frame = ws.recv(timeout=QUIET)
    except TimeoutError:
        return True
    pytest.fail(f"unexpected frame {frame!r}")


def started(base: str) -> tuple[str, requests.Session, dict[str, Any]]:
    key = register(base, f"e2e-{uuid.uuid4().hex[:10]}")
    api = token_session(key)
    r = api.post(f"{base}/api/v1/games/", json={"variant": "bristol", "seed": 1}, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    return key, api, r.json()


def test_a_socket_move_reaches_the_other_tabs_on_both_processes_never_its_own(
    servers: list[str],
) -> None:
    a, b = servers
    key, _, game = started(a)
    path = f"/ws/v1/games/{game['id']}/"
    with (
        open_socket(a, path, key) as mover,
        open_socket(a, path, key) as tab_a,
        open_socket(b, path, key) as tab_b,
    ):
        state = [recv(ws) for ws in (mover, tab_a, tab_b)][0]["state"]
        for ply in range(5):
            mover.send(json.dumps({"type": "move", "move": state["legal_moves"][0], "ply": ply}))
            answer = recv(mover)
            assert (answer["cause"], answer["ply"]) == ("move", ply + 1), answer
            state = answer["state"]
        for tab in (tab_a, tab_b):
            pushed = [recv(tab) for _ in range(5)]
            assert [(p["cause"], p["ply"]) for p in pushed] == [("changed", n) for n in range(1, 6)]
            assert pushed[-1]["state"]["position"] == state["position"]
        assert quiet(mover) and quiet(tab_a) and quiet(tab_b)


def test_a_rest_move_reaches_every_socket_on_both_processes(servers: list[str]) -> None:
    a, b = servers
    key, api, game = started(b)
    path = f"/ws/v1/games/{game['id']}/"
    with open_socket(a, path, key) as on_a, open_socket(b, path, key) as on_b:
        for ws in (on_a, on_b):
            recv(ws)
        state = game
        for ply, base in enumerate((a, b)):
            move = {"move": state["legal_moves"][0], "ply": ply}
            r = api.post(f"{base}/api/v1/games/{game['id']}/moves/", json=move, timeout=TIMEOUT)
            assert r.status_code == 200, r.text
            state = r.json()
            for ws in (on_a, on_b):
                pushed = recv(ws)
                assert (pushed["cause"], pushed["ply"]) == ("changed", ply + 1), pushed
        assert quiet(on_a) and quiet(on_b)
