"""Three players race to the end on two server processes (PostgreSQL and Redis).

Ann (server A) wins by the deal's certified line over REST; Bob (server B) plays
a few moves over his game socket and resigns; Cid (server B) plays one move over
REST and resigns. Every player's race socket, on either process, sees the
others' progress as it happens and the same final standings, and no message of
any race socket holds a card.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import requests
from websockets.sync.client import ClientConnection, connect

from games.engine import GameLog, new_position
from games.standings import reach_of

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 15
CARD = re.compile(r"\b(?:[2-9]|10|[AJQK])[CDHS]\b")


def shell(env: dict[str, str], code: str) -> str:
    """The last line printed by ``code`` run in ``manage.py shell`` on the servers' database."""
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def session(key: str) -> requests.Session:
    s = requests.Session()
    s.trust_env = False
    s.headers["Authorization"] = f"Token {key}"
    return s


def socket(base: str, path: str, key: str) -> ClientConnection:
    return connect(
        base.replace("http://", "ws://", 1) + path,
        additional_headers={"Authorization": f"Token {key}"},
        proxy=None,
        open_timeout=TIMEOUT,
        max_queue=None,
    )


def ok(response: requests.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return response.json()


def until_finished(ws: ClientConnection, texts: list[str]) -> list[dict[str, Any]]:
    """Every message of a race socket up to and with ``race.finished``."""
    messages: list[dict[str, Any]] = []
    while not messages or messages[-1]["type"] != "race.finished":
        text = ws.recv(timeout=TIMEOUT)
        assert isinstance(text, str), "a race socket sends text frames"
        texts.append(text)
        messages.append(json.loads(text))
    return messages


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    """Sockets opened in a test, closed at its end."""
    with ExitStack() as sockets:
        yield sockets


def reach_in(base: str, code: str, player: str) -> int:
    """Entries after which a finished race game's score last rose to its final value."""
    replay = ok(requests.get(f"{base}/api/v1/races/{code}/players/{player}/replay/"))
    start = new_position("bristol", seed=int(replay["deal"]["seed"]))
    steps = GameLog.replay_steps(start, replay["moves"])
    return reach_of([step.position.score for step in steps], start.score)


def test_three_players_on_two_processes_race_to_the_end(
    servers: list[str],
    e2e_env: dict[str, str],
    e2e_player: Callable[[], tuple[str, str]],
    stack: ExitStack,
    e2e_redis_url: str,
) -> None:
    a, b = servers
    fill = (
        "from django.test import override_settings\n"
        "from games.services.race_pool import race_pool_fill\n"
        "with override_settings(RACE_POOL_SIZE=1):\n"
        "    print(race_pool_fill(variants=['bristol']))"
    )
    shell(e2e_env, fill)  # a certified deal, with its winning line
    (ann, ann_key), (bob, bob_key), (cid, cid_key) = e2e_player(), e2e_player(), e2e_player()
    s_ann, s_bob, s_cid = session(ann_key), session(bob_key), session(cid_key)
    race = ok(s_ann.post(f"{a}/api/v1/races/", json={"variant": "bristol"}), 201)
    code = race["code"]
    ok(s_bob.post(f"{b}/api/v1/races/{code}/join/"))
    ok(s_cid.post(f"{a}/api/v1/races/{code}/join/"))
    path = f"/ws/v1/races/{code}/"
    sockets = {
        ann: stack.enter_context(socket(a, path, ann_key)),
        bob: stack.enter_context(socket(b, path, bob_key)),
        cid: stack.enter_context(socket(b, path, cid_key)),
    }
    texts: list[str] = []
    for ws in sockets.values():
        first = json.loads(ws.recv(timeout=TIMEOUT))
        texts.append(json.dumps(first))
        assert first["type"] == "race.state"
        assert [p["username"] for p in first["race"]["players"]] == [ann, bob, cid]
    started = ok(s_ann.post(f"{b}/api/v1/races/{code}/start/"))
    wait = datetime.fromisoformat(started["starts_at"]) - datetime.fromisoformat(
        started["server_time"]
    )
    time.sleep(wait.total_seconds() + 0.2)

    line = json.loads(
        shell(
            e2e_env,
            "import json; from games.models import Race; "
            f"print(json.dumps(Race.objects.get(code={code!r}).deal.par_line))",
        )
    )
    games = {
        name: ok(s.get(f"{base}/api/v1/races/{code}/"))["you"]["game"]
        for name, s, base in ((ann, s_ann, a), (bob, s_bob, b), (cid, s_cid, b))
    }
    # Bob: three moves over his game socket on B.
    with socket(b, f"/ws/v1/games/{games[bob]}/", bob_key) as play:
        state = json.loads(play.recv(timeout=TIMEOUT))["state"]
        for _ in range(3):
            # A card move while there is one (some deals leave only the deal after two).
            move = next((m for m in state["legal_moves"] if m != "deal"), "deal")
            play.send(json.dumps({"type": "move", "move": move, "ply": state["ply"]}))
            answer = json.loads(play.recv(timeout=TIMEOUT))
            assert answer["type"] == "state", answer
            state = answer["state"]
    # Cid: one move over REST on B.
    state = ok(s_cid.get(f"{b}/api/v1/games/{games[cid]}/"))
    move = next((m for m in state["legal_moves"] if m != "deal"), "deal")
    ok(s_cid.post(f"{b}/api/v1/games/{games[cid]}/moves/", json={"move": move, "ply": 0}))
    # Ann: the certified winning line over REST on A.
    for ply, move in enumerate(line):
        state = ok(
            s_ann.post(f"{a}/api/v1/games/{games[ann]}/moves/", json={"move": move, "ply": ply})
        )
    assert state["status"] == "won"
    ok(s_bob.post(f"{b}/api/v1/games/{games[bob]}/resign/"))
    ok(s_cid.post(f"{a}/api/v1/games/{games[cid]}/resign/"))

    seen = {name: until_finished(ws, texts) for name, ws in sockets.items()}
    for name, messages in seen.items():
        progress = [m["player"] for m in messages if m["type"] == "race.progress"]
        others = {p["username"] for p in progress} - {name}
        assert others == {ann, bob, cid} - {name}, f"{name} missed the others' progress"
        ann_moves = [p["moves"] for p in progress if p["username"] == ann]
        assert ann_moves == list(range(1, len(line) + 1))  # every move, in order
    final = seen[ann][-1]["race"]
    assert all(m[-1]["race"]["standings"] == final["standings"] for m in seen.values())
    standings = final["standings"]
    assert standings[0]["username"] == ann and standings[0]["status"] == "won"
    assert standings[0]["time_ms"] > 0
    # Games not won (games.standings): more cards home, fewer entries to reach them (from
    # the public replays), more entries, the later finish.
    reach = {s["username"]: reach_in(b, code, s["username"]) for s in standings[1:]}
    losers = sorted(
        standings[1:],
        key=lambda s: (
            -s["cards_home"],
            reach[s["username"]],
            -s["moves"],
            -datetime.fromisoformat(s["finished_at"]).timestamp(),
        ),
    )
    assert standings[1:] == losers
    assert [s["place"] for s in standings] == [1, 2, 3]
    assert all(s["rating"] is None for s in standings)  # a private race is not rated
    assert not [t for t in texts if CARD.search(t)]
    replay = ok(requests.get(f"{b}/api/v1/races/{code}/players/{ann}/replay/"))
    assert replay["moves"] == line and replay["won"]
