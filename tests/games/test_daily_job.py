"""A daily that was not dealt: requests never run the solver nor create a row.

Past days never dealt are not found; today's missing daily starts the
``create_dailies`` job and answers ``daily_not_ready`` (503, Retry-After) until
the job has dealt it; the job deals each daily under a PostgreSQL advisory lock,
so one process certifies it and the others find it.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from core import jobs
from games.models import Deal
from games.selectors import dailies as daily_selectors
from games.services import dailies as daily_services
from patience_site.asgi import application
from tests.daily_fixtures import DAY, FakeClock

pytest_plugins = ["tests.daily_fixtures"]


class Job:
    """Starts of the job, recorded instead of starting processes; ``run`` does its work."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.running = False

    def run(self, variant: str, day: Any) -> Deal:
        self.running = True
        try:
            return daily_services.daily_create(variant, day)
        finally:
            self.running = False


@pytest.fixture
def job(monkeypatch: pytest.MonkeyPatch) -> Job:
    """The job, recorded; the solver may run only inside ``Job.run``, never in a request."""
    recorded = Job()
    monkeypatch.setattr(jobs, "dailies_job_start", lambda: recorded.started.append(1))
    certify = daily_services.daily_candidate_certify

    def job_only(*args: Any, **kwargs: Any) -> daily_services.Candidate:
        assert recorded.running, "a request ran the solver"
        return certify(*args, **kwargs)

    monkeypatch.setattr(daily_services, "daily_candidate_certify", job_only)
    return recorded


def api() -> APIClient:
    return APIClient()


@pytest.mark.daily_job
@pytest.mark.django_db
def test_a_past_day_never_dealt_is_not_found_and_stays_so(job: Job, daily_clock: FakeClock) -> None:
    past = DAY - timedelta(days=3)
    response = api().get(f"/api/v1/daily/bristol/{past}/")
    assert response.status_code == 404, response.content
    assert response.json()["error"]["code"] == "not_found"
    assert "no bristol daily was dealt" in response.json()["error"]["message"]
    assert not Deal.objects.filter(kind=Deal.Kind.DAILY).exists() and not job.started


@pytest.mark.daily_job
@pytest.mark.django_db
def test_todays_missing_daily_starts_the_job_and_is_not_ready(
    job: Job, daily_clock: FakeClock
) -> None:
    for path in (f"/api/v1/daily/bristol/{DAY}/", "/api/v1/daily/"):
        response = api().get(path)
        assert response.status_code == 503, response.content
        assert response.json()["error"]["code"] == "daily_not_ready"
        assert response["Retry-After"] == str(daily_selectors.NOT_READY_RETRY_S)
    assert not Deal.objects.exists() and len(job.started) == 2
    # The job has run: the same request is answered.
    job.run("bristol", DAY)
    assert api().get(f"/api/v1/daily/bristol/{DAY}/").status_code == 200


@pytest.mark.daily_job
@pytest.mark.django_db
def test_tomorrow_is_not_out_and_starts_nothing(job: Job, daily_clock: FakeClock) -> None:
    response = api().get(f"/api/v1/daily/bristol/{DAY + timedelta(days=1)}/")
    assert response.status_code == 404 and not job.started and not Deal.objects.exists()


@pytest.mark.daily_job
@pytest.mark.django_db
def test_the_home_page_says_the_dailies_are_being_dealt(
    job: Job, daily_clock: FakeClock, client: Client
) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "being dealt" in page.content.decode() and job.started


@pytest.mark.daily_job
@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_board_socket_of_a_missing_daily_closes_with_not_ready(
    job: Job, daily_clock: FakeClock
) -> None:
    communicator = WebsocketCommunicator(application, f"/ws/v1/daily/bristol/{DAY}/")
    connected, _ = await communicator.connect()
    assert connected
    out = await communicator.receive_output(5)
    assert out == {"type": "websocket.close", "code": 4503, "reason": out["reason"]}
    assert job.started


def test_the_job_is_started_once_while_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []
    running: list[Running] = []

    class Running:
        def __init__(self, args: list[str], **kwargs: Any) -> None:
            started.append(args)
            running.append(self)
            self.code: int | None = None

        def poll(self) -> int | None:
            return self.code

    monkeypatch.setattr(jobs, "_jobs", {})
    monkeypatch.setattr(jobs.subprocess, "Popen", Running)
    jobs.dailies_job_start()
    jobs.dailies_job_start()
    assert len(started) == 1 and started[0][-3:] == ["create_dailies", "--days", "2"]
    # It runs under a lifeline: it ends with this server process (core.lifeline).
    assert started[0][1:4] == ["-m", "core.lifeline", str(os.getpid())]
    running[0].code = 0  # it ended
    jobs.dailies_job_start()
    assert len(started) == 2


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="advisory locks are PostgreSQL's",
)
@pytest.mark.django_db(transaction=True)
def test_two_jobs_at_once_certify_a_daily_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    certify = daily_services.daily_candidate_certify

    def slow_certify(variant: str, day: Any, **kwargs: Any) -> daily_services.Candidate:
        calls.append(1)
        time.sleep(0.5)  # the other job arrives meanwhile
        return certify(variant, day, **kwargs)

    monkeypatch.setattr(daily_services, "daily_candidate_certify", slow_certify)
    found: list[int] = []

    def job() -> None:
        try:
            found.append(daily_services.daily_create("bristol", DAY).pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=job) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(calls) == 1 and len(set(found)) == 1 and len(found) == 2
    assert Deal.objects.filter(kind=Deal.Kind.DAILY, variant="bristol", date=DAY).count() == 1
