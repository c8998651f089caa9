"""A socket frame over daphne's limit (1 MiB) is closed with 1009, as docs/api.md says.

daphne refuses such a frame before any consumer sees it; the close code comes from
the protocol options ``patience_site.asgi`` sets, so only a real daphne process
shows it. The server runs on a SQLite file of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from devtools.servers import deal_dailies, migrate, server_env
from tests.pinned_clock import PINNED_DAY, pinned_clock_env

pytestmark = pytest.mark.e2e

MIB = 1024 * 1024


def test_a_frame_over_one_mib_closes_the_socket_with_1009(tmp_path: Path, daphne) -> None:
    env = server_env(
        database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        redis_url=None,
        extra={**pinned_clock_env(), "DAILY_SOLVER_NODES": "0"},
    )
    migrate(env)
    deal_dailies(env)
    server = daphne(env).start()
    url = f"{server.url.replace('http', 'ws', 1)}/ws/v1/daily/bristol/{PINNED_DAY}/"
    with connect(url, max_size=None, proxy=None, open_timeout=15) as socket:
        assert json.loads(socket.recv(timeout=15))["type"] == "board"
        socket.send(json.dumps({"type": "resync", "pad": "x" * MIB}))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=15)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
