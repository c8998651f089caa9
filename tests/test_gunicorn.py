"""patience_site/gunicorn.py and prometheus-client's multiprocess mode: the workers' values
add up in one scrape, and a dead worker's live gauges go with it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from patience_site import gunicorn

REPO_ROOT = Path(__file__).resolve().parent.parent

WORKER = (
    "import os, sys, django; django.setup(); from core import metrics; "
    "metrics.http_response_count('api/v1/x/', 200); metrics.OPEN_SOCKETS.labels('game').inc(); "
    "print(os.getpid())"
)
SCRAPE = (
    "import django; django.setup(); from core import metrics; "
    "print(metrics.exposition()[0].decode())"
)


def _python(code: str, directory: Path) -> str:
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
        "DJANGO_SETTINGS_MODULE": "patience_site.settings",
        "DATABASE_URL": f"sqlite:///{directory / 'none.sqlite3'}",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _value(scrape: str, series: str) -> float | None:
    for line in scrape.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


def test_workers_add_up_and_a_dead_worker_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "prometheus"
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))
    directory.mkdir()
    (directory / "counter_stale.db").write_bytes(b"")
    gunicorn.on_starting(server=None)  # a restart forgets the last run's values
    assert not list(directory.glob("*.db"))
    first = int(_python(WORKER, directory))
    _python(WORKER, directory)
    scrape = _python(SCRAPE, directory)
    responses = 'patience_http_responses_total{route="api/v1/x/",status="2xx"}'
    assert _value(scrape, responses) == 2
    assert _value(scrape, 'patience_open_sockets{kind="game"}') == 2
    gunicorn.child_exit(server=None, worker=SimpleNamespace(pid=first))
    scrape = _python(SCRAPE, directory)
    assert _value(scrape, responses) == 2  # counters keep what was counted
    assert _value(scrape, 'patience_open_sockets{kind="game"}') == 1  # its sockets are gone
