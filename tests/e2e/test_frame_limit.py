"""A socket frame over daphne's limit (1 MiB) is closed with 1009, as docs/api.md says.

daphne refuses such a frame before any consumer sees it; the close code comes from
the protocol options ``patience_site.asgi`` sets, so only a real daphne process
shows it (here the shared server A, on the pinned day, whose dailies are dealt).
"""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.pinned_clock import PINNED_DAY

pytestmark = pytest.mark.e2e

MIB = 1024 * 1024


def test_a_frame_over_one_mib_closes_the_socket_with_1009(servers: list[str]) -> None:
    url = f"{servers[0].replace('http', 'ws', 1)}/ws/v1/daily/bristol/{PINNED_DAY}/"
    with connect(url, max_size=None, proxy=None, open_timeout=15) as socket:
        assert json.loads(socket.recv(timeout=15))["type"] == "board"
        socket.send(json.dumps({"type": "resync", "pad": "x" * MIB}))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=15)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
