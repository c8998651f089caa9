"""Daily challenges: one deal per variant per UTC day, fixed in advance and provably so.

Seed derivation: candidate ``k`` for a variant and day is the first 8 bytes
(big-endian) of ``HMAC-SHA256(DAILY_SECRET, "<variant>|<YYYY-MM-DD>|<k>")``.
The chosen candidate's index is stored as ``Deal.seed_index``; without the
secret nobody can compute a future deal. The commitment published from the
start of the day is ``SHA-256`` of the seed's decimal text; the seed itself is
published once the day is over, so anyone can check both the commitment and
that the seed deals the cards they saw.

Dailies are dealt and certified ahead of time by ``manage.py create_dailies``
(the compose ``migrate`` job and the hourly ``dailies`` service): the solver
runs only there. A request for a daily that does not exist never runs the
solver and never creates a row: a past day that was never dealt is not found;
today's daily missing (the job has not run) starts the job in a background
process and answers ``daily_not_ready`` (503 with Retry-After) until it is
there. The job deals each daily under a PostgreSQL advisory lock, so one
process certifies it while the others wait and then find it.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from dataclasses import dataclass
from datetime import date, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction

from core import clock, jobs
from core.errors import InvalidInput, NoCertifiedDeal
from games.engine import VARIANTS, get_variant, new_position
from games.engine.solver import Verdict, solve
from games.models import Deal, Game
from games.selectors.dailies import published_deal
from games.services.fairplay import ClientSignal, play_signal_record
from games.services.games import game_create


def daily_seed_derive(variant: str, day: date, index: int = 0, *, secret: str | None = None) -> int:
    """Candidate ``index`` of the seed sequence of a variant's daily on ``day``."""
    key = (secret if secret is not None else settings.DAILY_SECRET).encode()
    msg = f"{variant}|{day.isoformat()}|{index}".encode()
    return int.from_bytes(hmac.new(key, msg, hashlib.sha256).digest()[:8], "big")


def commitment_derive(seed: int) -> str:
    """The published commitment to a seed: SHA-256 of its decimal text."""
    return hashlib.sha256(str(seed).encode()).hexdigest()


logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    """The chosen seed candidate of a daily and the solver's winning line for it."""

    index: int
    seed: int
    line: list[str] | None
    nodes: int | None


def daily_candidate_certify(variant: str, day: date, *, start: int = 0) -> Candidate:
    """The first seed candidate from ``start`` that the solver proves winnable.

    The solver's limit is a node count (``DAILY_SOLVER_NODES``), never a time, so
    the choice depends only on the secret, the variant and the day: anyone with
    the secret reproduces it. ``DAILY_SOLVER_NODES = 0`` turns certification off
    (candidate ``start`` is taken as it is).
    """
    limit = settings.DAILY_SOLVER_NODES
    for index in range(start, start + settings.DAILY_MAX_CANDIDATES):
        seed = daily_seed_derive(variant, day, index)
        if not limit:
            return Candidate(index, seed, None, None)
        result = solve(new_position(variant, seed=seed), max_nodes=limit)
        if result.verdict is Verdict.WON:
            return Candidate(index, seed, list(result.line), result.nodes)
    raise NoCertifiedDeal(
        f"no winnable {variant} deal for {day} among {settings.DAILY_MAX_CANDIDATES} "
        f"candidates from {start} within {limit} solver nodes each"
    )


def _advisory_lock(name: str) -> None:
    """Hold a PostgreSQL advisory lock on ``name`` until the transaction ends (no-op on
    SQLite, where one process serves)."""
    if connection.vendor != "postgresql":
        return
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def daily_create(variant: str, day: date) -> Deal:
    """Deal and certify the daily of a variant and day, unless it exists (the job's work).

    Runs the solver: only ``create_dailies`` (and tests) call it, never a request.
    Under an advisory lock per daily, so of several processes one certifies it and
    the others wait, then find it.
    """
    v = get_variant(variant)
    with transaction.atomic():
        _advisory_lock(f"daily|{v.key}|{day.isoformat()}")
        deal = Deal.objects.filter(kind=Deal.Kind.DAILY, variant=v.key, date=day).first()
        if deal is not None:
            return deal
        chosen = daily_candidate_certify(v.key, day)
        try:
            with transaction.atomic():
                return Deal.objects.create(
                    kind=Deal.Kind.DAILY,
                    variant=v.key,
                    date=day,
                    seed=chosen.seed,
                    seed_index=chosen.index,
                    commitment=commitment_derive(chosen.seed),
                    par_line=chosen.line,
                    solver_nodes=chosen.nodes,
                )
        except IntegrityError:  # SQLite: no advisory lock; another process was first
            return Deal.objects.get(kind=Deal.Kind.DAILY, variant=v.key, date=day)


def dailies_create(*, first: date, days: int) -> list[Deal]:
    """Create (or find) every variant's daily for ``days`` days from ``first``."""
    return [daily_create(key, first + timedelta(days=i)) for i in range(days) for key in VARIANTS]


@transaction.atomic
def daily_game_start(
    *, user: User, variant: str, day: date, client: ClientSignal | None = None
) -> tuple[Game, bool]:
    """Start or resume a player's game of a daily; returns ``(game, created)``.

    The first game of today's daily is the ranked one, and asking again resumes
    it while it lasts. After it, and for past days, every game is practice. A ranked
    game keeps its client's hashed signals for fair-play reviews (``client``).
    """
    deal = published_deal(variant, day)
    if day == clock.today():
        ranked = Game.objects.filter(player=user, deal=deal, ranked=True).first()
        if ranked is None:
            try:
                with transaction.atomic():
                    game = game_create(user=user, deal=deal, ranked=True)
                    if client is not None:
                        play_signal_record(game=game, client=client)
                    return game, True
            except IntegrityError:  # a concurrent request created it first
                ranked = Game.objects.get(player=user, deal=deal, ranked=True)
        if ranked.status == "playing":
            return ranked, False
    return game_create(user=user, deal=deal), True


def _check_replaceable(deal: Deal) -> None:
    if deal.kind != Deal.Kind.DAILY or deal.date is None or deal.date <= clock.today():
        raise InvalidInput("only a future daily can be replaced")
    if deal.games.exists():
        raise InvalidInput("somebody has played this daily already")


@transaction.atomic
def daily_replace(deal: Deal) -> Deal:
    """Move a future daily that nobody has played to the next seed candidate.

    Runs the solver: ``create_dailies --replace`` calls it (the admin action
    starts that job, ``daily_replace_start``), never a request.
    """
    deal = Deal.objects.select_for_update().get(pk=deal.pk)
    _check_replaceable(deal)
    assert deal.date is not None  # _check_replaceable saw the day
    chosen = daily_candidate_certify(deal.variant, deal.date, start=deal.seed_index + 1)
    deal.seed_index = chosen.index
    deal.seed = chosen.seed
    deal.commitment = commitment_derive(chosen.seed)
    deal.par_line = chosen.line
    deal.solver_nodes = chosen.nodes
    deal.save(update_fields=["seed_index", "seed", "commitment", "par_line", "solver_nodes"])
    return deal


def daily_replace_start(deal: Deal) -> None:
    """Check that a daily may be replaced, then start ``create_dailies --replace`` for it in
    a background process (which checks again, under a row lock, and certifies)."""
    _check_replaceable(deal)
    jobs.manage_command("create_dailies", "--replace", str(deal.pk))
