"""games.services.analysis: the queue in the database (claimed once, survives a restart),
the shared verdict cache, the daily job's backlog and the ready event."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from core import clock
from games.event_types import AnalysisReady
from games.models import Analysis, PositionVerdict
from games.services import analysis as analysis_services
from games.services.games import practice_game_start
from tests.analysis_fixtures import LOST_GAME, finished_practice_game, play_log
from tests.daily_fixtures import DAY, daily, finished_result

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.daily_fixtures"]


@pytest.fixture(autouse=True)
def analysis_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from core import jobs

    started: list[int] = []
    monkeypatch.setattr(jobs, "analysis_job_start", lambda: started.append(1))
    return started


def report_of(row: Analysis) -> dict[str, Any]:
    assert row.report is not None, "a done analysis has its report"
    return row.report


def test_asking_twice_queues_once(user: Any) -> None:
    game = finished_practice_game(user, *LOST_GAME)
    first = analysis_services.analysis_ask(game)
    again = analysis_services.analysis_ask(game)
    assert first.pk == again.pk and Analysis.objects.count() == 1
    assert first.state == "queued"


def test_a_claim_takes_a_row_once_and_the_server_budget_holds(user: Any, settings: Any) -> None:
    games = [finished_practice_game(user, "bristol", seed, 0) for seed in (3, 8)]
    for game in games:
        analysis_services.analysis_ask(game)
    settings.ANALYSIS_WORKERS = 1
    claimed = analysis_services.analysis_claim()
    assert claimed is not None and (claimed.state, claimed.attempts) == ("running", 1)
    assert analysis_services.analysis_claim() is None  # one worker's share is taken
    settings.ANALYSIS_WORKERS = 2
    second = analysis_services.analysis_claim()
    assert second is not None and second.pk != claimed.pk
    assert analysis_services.analysis_claim() is None  # nothing else waits


def test_the_queue_survives_a_restart(user: Any, settings: Any) -> None:
    game = finished_practice_game(user, *LOST_GAME)
    analysis_services.analysis_ask(game)
    claimed = analysis_services.analysis_claim()
    assert claimed is not None
    # Its worker died: the row stays running, and is claimed again once stale.
    assert analysis_services.analysis_claim() is None
    Analysis.objects.filter(pk=claimed.pk).update(
        started_at=clock.now() - timedelta(seconds=settings.ANALYSIS_STALE_SECONDS + 1)
    )
    again = analysis_services.analysis_claim()
    assert again is not None and (again.pk, again.attempts) == (claimed.pk, 2)
    done = analysis_services.analysis_run(again)
    assert done.state == "done" and report_of(done)["summary"] == "fatal"


def test_a_second_game_of_the_same_positions_reads_the_cache(user: Any, emitted: list[Any]) -> None:
    game = finished_practice_game(user, *LOST_GAME)
    analysis_services.analysis_ask(game)
    assert analysis_services.analyses_work(idle_seconds=0) == 1
    first = report_of(Analysis.objects.get(game=game))
    assert first["solver"]["calls"] > 0
    decided = PositionVerdict.objects.filter(variant=LOST_GAME[0]).count()
    assert decided == first["solver"]["calls"]
    assert [type(e) for e in emitted if isinstance(e, AnalysisReady)] == [AnalysisReady]
    # Another player plays the same moves on the same deal: no solve at all.
    twin = practice_game_start(user=user, variant=LOST_GAME[0], seed=LOST_GAME[1])
    moves = first["moves"]
    twin = play_log(twin, user, moves)
    analysis_services.analysis_ask(twin)
    analysis_services.analyses_work(idle_seconds=0)
    second = report_of(Analysis.objects.get(game=twin))
    assert second["solver"]["calls"] == 0
    assert second["first_lost"] == first["first_lost"]


def test_the_daily_job_queues_the_games_of_finished_days(daily_clock: Any, user: Any) -> None:
    deal = daily("bristol", DAY)
    finished_result(deal, user)
    call_command("create_dailies", "--days", "1", stdout=StringIO())
    assert not Analysis.objects.exists()  # the day is not over
    daily_clock.next_day()
    call_command("create_dailies", "--days", "1", stdout=StringIO())
    row = Analysis.objects.get()
    assert (row.state, row.priority) == ("queued", analysis_services.BACKLOG)
    assert analysis_services.analyses_queue_days() == 0  # never queued twice


def test_the_worker_command_runs_the_queue_at_the_lowest_priority(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from games.management.commands import analyse_games

    lowered: list[int] = []
    monkeypatch.setattr(analyse_games, "lowest_priority", lambda: lowered.append(1))
    game = finished_practice_game(user, *LOST_GAME)
    analysis_services.analysis_ask(game)
    out = StringIO()
    call_command("analyse_games", "--idle", "0", stdout=out)
    assert lowered == [1] and "1 analysis(es) run" in out.getvalue()
    assert Analysis.objects.get(game=game).state == "done"
