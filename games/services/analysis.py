"""Writes of analyses: the queue in the database, and the run of one analysis.

A game's analysis is a row (``games.models.Analysis``): queued when first asked for
(``analysis_ask``) or when its day ended (``analyses_queue_days``, from the daily
job), claimed by one analysis worker at a time (``analysis_claim``), run there
(``analysis_run``) and kept. Rows survive restarts; a running row whose worker died
is claimed again once stale. The solver runs only in the worker (``manage.py
analyse_games``, a job process at the idle CPU priority), never on a request thread.
"""

from __future__ import annotations

import logging
import time
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q

from core import clock, jobs
from core.errors import DayNotOver
from games import events
from games.analysis.search import Cached, Limits, analyse, board_line, verdict_key
from games.engine import Status
from games.models import Analysis, Deal, Game, PositionVerdict
from games.selectors.analysis import day_analysis
from games.selectors.dailies import replays_public
from games.selectors.games import deal_start, game_log

logger = logging.getLogger(__name__)

#: Queue priorities: lower is claimed first.
ASKED, BACKLOG = 0, 1
#: Days back the daily job looks for finished days whose games are not queued yet.
QUEUE_DAYS_BACK = 3
#: Claims of one analysis before it is left alone (a game whose analysis keeps failing).
MAX_ATTEMPTS = 3


def analysis_ask(game: Game) -> Analysis:
    """The game's analysis, queued if it has none (once: one row per game), and the
    analysis job started while it waits. The caller checked that it may be shown
    (``games.selectors.analysis.game_for_analysis``)."""
    analysis = Analysis.objects.filter(game=game).first()
    if analysis is None:
        try:
            with transaction.atomic():
                analysis = Analysis.objects.create(game=game, priority=ASKED, queued_at=clock.now())
        except IntegrityError:  # another request queued it first
            analysis = Analysis.objects.get(game=game)
    if analysis.state != Analysis.State.DONE:
        transaction.on_commit(jobs.analysis_job_start)
    return analysis


def analyses_queue_days(*, today: date | None = None) -> int:
    """Queue every finished game on the boards of the dailies whose day is over (the last
    ``QUEUE_DAYS_BACK`` days), behind the analyses players asked for; returns how many
    were queued now. Run by the daily job, so a day's board can show its analyses soon
    after the day ends."""
    today = today or clock.today()
    deals = [
        d
        for d in Deal.objects.filter(
            kind=Deal.Kind.DAILY, date__gte=today - timedelta(days=QUEUE_DAYS_BACK)
        )
        if replays_public(d)
    ]
    return _queue_boards(deals)


def _queue_boards(deals: list[Deal]) -> int:
    """Queue the finished games on these dailies' boards that have no analysis yet (behind
    the asked ones); returns how many."""
    games = Game.objects.filter(
        result__deal__in=deals, result__disqualified=False, analysis__isnull=True
    ).exclude(status=Status.PLAYING)
    now = clock.now()
    rows = [
        Analysis(game_id=g, priority=BACKLOG, queued_at=now)
        for g in games.values_list("pk", flat=True)
    ]
    Analysis.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def day_analysis_ask(deal: Deal) -> dict[str, Any]:
    """What a finished day's analyses say together (``day_analysis``); the board's games
    not analysed yet are queued and the analysis job started (``day_not_over`` before
    the day is over: the analyses show the deal)."""
    if not replays_public(deal):
        raise DayNotOver("a daily's games are analysed once its day is over")
    summary = day_analysis(deal)
    if summary["pending"]:
        _queue_boards([deal])
        transaction.on_commit(jobs.analysis_job_start)
    return summary


def analysis_claim() -> Analysis | None:
    """Take the next analysis to run (``running`` from now on), or None when none waits or
    ``ANALYSIS_WORKERS`` run already. Safe between concurrent workers: PostgreSQL skips
    the rows another worker holds (``SKIP LOCKED``), and the state change only takes
    when the row is still as read."""
    now = clock.now()
    stale = now - timedelta(seconds=settings.ANALYSIS_STALE_SECONDS)
    running = Analysis.objects.filter(state=Analysis.State.RUNNING, started_at__gte=stale)
    if running.count() >= settings.ANALYSIS_WORKERS:
        return None
    waiting = (
        Q(state=Analysis.State.QUEUED) | Q(state=Analysis.State.RUNNING, started_at__lt=stale)
    ) & Q(attempts__lt=MAX_ATTEMPTS)
    with transaction.atomic():
        row = (
            Analysis.objects.select_for_update(skip_locked=True)
            .filter(waiting)
            .order_by("priority", "id")
            .first()
        )
        if row is None:
            return None
        taken = Analysis.objects.filter(pk=row.pk, state=row.state, attempts=row.attempts).update(
            state=Analysis.State.RUNNING, started_at=now, attempts=row.attempts + 1
        )
    if not taken:  # another worker took it between the read and the update (SQLite)
        return analysis_claim()
    row.refresh_from_db()
    return row


def limits() -> Limits:
    """The solver budget of one game's analysis (settings ``ANALYSIS_*``)."""
    return Limits(
        first_nodes=settings.ANALYSIS_FIRST_NODES,
        max_nodes=settings.ANALYSIS_MAX_NODES,
        game_nodes=settings.ANALYSIS_GAME_NODES,
        game_seconds=settings.ANALYSIS_GAME_SECONDS,
    )


def _known(variant: str, keys: list[str]) -> dict[str, Cached]:
    rows = PositionVerdict.objects.filter(variant=variant, key__in=set(keys))
    return {
        key: Cached("won" if won else "lost", tuple(line))
        for key, won, line in rows.values_list("key", "won", "line")
    }


def analysis_run(analysis: Analysis) -> Analysis:
    """Run a claimed analysis (in the analysis worker: the solver runs here), store it with
    the verdicts it decided for every later game, and tell the game's sockets."""
    game = Game.objects.select_related("deal").get(pk=analysis.game_id)
    start, log = deal_start(game.deal), game_log(game)
    line = board_line(start, log)
    cache = _known(game.deal.variant, [verdict_key(p) for p in line.positions])
    cpu = time.process_time()
    report = analyse(start, log, limits(), cache)
    cpu = time.process_time() - cpu
    stored: dict[str, Any] = {
        **report.to_json(),
        "moves": list(line.moves),
        "entries": list(line.entries),
        "line_start": None
        if report.last_won is None
        else line.positions[report.last_won].to_json(),
        "par": game.deal.par,
        "status": game.status,
    }
    with transaction.atomic():
        PositionVerdict.objects.bulk_create(
            [
                PositionVerdict(
                    variant=game.deal.variant, key=key, won=c.verdict == "won", line=list(c.line)
                )
                for key, c in report.learned.items()
            ],
            ignore_conflicts=True,
        )
        Analysis.objects.filter(pk=analysis.pk).update(
            state=Analysis.State.DONE, finished_at=clock.now(), report=stored, cpu_seconds=cpu
        )
        events.analysis_ready(game_id=game.pk)
    analysis.refresh_from_db()
    return analysis


def analyses_work(*, idle_seconds: float, max_games: int | None = None) -> int:
    """Claim and run analyses until none is left for ``idle_seconds`` (or ``max_games``
    ran); returns how many ran. The loop of ``manage.py analyse_games``."""
    ran, idle_since = 0, time.monotonic()
    while max_games is None or ran < max_games:
        analysis = analysis_claim()
        if analysis is None:
            if time.monotonic() - idle_since >= idle_seconds:
                break
            time.sleep(min(1.0, idle_seconds))
            continue
        try:
            analysis_run(analysis)
        except Exception:  # one bad game must not stop the queue: it stays running, stale
            logger.exception("analysis of game %s failed", analysis.game_id)
        ran += 1
        idle_since = time.monotonic()
    return ran
