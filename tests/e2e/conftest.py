"""Real server processes for the end-to-end tests: daphne x 2 on one PostgreSQL and Redis.

The servers need a real (not pytest-django's) database that both processes see:
a fresh PostgreSQL database named after this process is created, migrated in a
subprocess and dropped at the end. Without PostgreSQL (``DATABASE_URL``) and
Redis (``REDIS_URL``) the tests are skipped: several processes share state only
through them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _admin(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(with_database(url, "postgres"), autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture(scope="session")
def e2e_env() -> Iterator[dict[str, str]]:
    """Environment of the server processes, on a fresh migrated PostgreSQL database."""
    base = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("REDIS_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        pytest.skip("end-to-end tests need DATABASE_URL to name a PostgreSQL server (CI sets it)")
    if not redis_url:
        pytest.skip("end-to-end tests need REDIS_URL: processes share events through Redis")
    name = f"patience_e2e_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    _admin(base, f'CREATE DATABASE "{name}"')
    env = {
        **os.environ,
        "DATABASE_URL": with_database(base, name),
        "REDIS_URL": redis_url,
        "DEBUG": "True",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "THROTTLE_RATE_USER": "100000/min",
        "THROTTLE_RATE_IP": "100000/min",
        "THROTTLE_RATE_AUTH": "100000/min",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    try:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=REPO,
            env=env,
            check=True,
            timeout=300,
        )
        yield env
    finally:
        _admin(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daphne exited with {proc.returncode}")
        try:
            if requests.get(f"{url}/api/v1/health/", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"daphne did not answer at {url}")


@pytest.fixture(scope="session")
def servers(
    e2e_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    """Base URLs of two daphne processes (A, B) sharing the database and Redis."""
    logs = tmp_path_factory.mktemp("daphne")
    procs: list[tuple[subprocess.Popen, Any]] = []
    urls = []
    try:
        for label in ("a", "b"):
            port = free_port()
            log = open(logs / f"{label}.log", "wb")  # noqa: SIM115 (closed below)
            cmd = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
            proc = subprocess.Popen(
                [*cmd, "patience_site.asgi:application"],
                cwd=REPO,
                env=e2e_env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            procs.append((proc, log))
            urls.append(f"http://127.0.0.1:{port}")
        for (proc, _), url in zip(procs, urls, strict=True):
            _wait_until_up(url, proc)
        yield urls
    finally:
        for proc, _ in procs:
            proc.terminate()
        for proc, log in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
