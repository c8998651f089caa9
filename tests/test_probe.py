"""``python -m patience_site.probe``: exit 0 on a 200 of the probe's path, 1 otherwise."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from patience_site import probe

ANSWERS = {"/api/v1/health/live/": 200, "/api/v1/health/ready/": 503}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        allowed = self.headers["Host"] == "localhost"  # as ALLOWED_HOSTS would check
        self.send_response(ANSWERS.get(self.path, 404) if allowed else 400)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def port() -> Iterator[int]:
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def test_probe_follows_the_status(port: int) -> None:
    assert probe.main(["live", str(port)]) == 0
    assert probe.main(["ready", str(port)]) == 1


def test_probe_fails_when_nothing_listens(port: int) -> None:
    assert probe.probe("live", port + 1 if port < 65535 else port - 1) is False


def test_probe_runs_as_a_module(port: int) -> None:
    run = [sys.executable, "-m", "patience_site.probe"]
    assert subprocess.run([*run, "live", str(port)]).returncode == 0
    assert subprocess.run([*run, "bogus"], capture_output=True).returncode == 2
