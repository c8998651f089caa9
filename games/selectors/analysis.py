"""Reads of analyses: whose game may be analysed and shown when, a game's analysis, and
what a finished day's analyses say together (never a write, never the solver)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib.auth.models import AnonymousUser, User

from core.errors import DayNotOver, GameNotFinished, NotFound
from games.engine import Status
from games.models import Analysis, Deal, Game, RaceEntry, Result
from games.selectors.dailies import replays_public
from games.selectors.races import race_replays_check

#: Fatal moves a day's analysis lists, most common first.
COMMON_FATAL_MOVES = 5


def game_for_analysis(*, game_id: int, user: User | AnonymousUser) -> Game:
    """The game whose analysis ``user`` asks for, if it may be shown now.

    An analysis shows the deal, so it follows the replays' rules: a practice game to its
    player once it has ended; a daily's game once its day is over (to anyone, for the
    games on its board: ``replays_public``); a race's game once the race has finished
    (``race_replays_check``). Raises ``not_found`` (no such game, or another player's
    game that is no replay), ``game_not_finished``, ``day_not_over`` or
    ``race_not_finished``.
    """
    game = Game.objects.select_related("deal").filter(pk=game_id).first()
    if game is None:
        raise NotFound(f"no game {game_id}")
    mine = bool(user.is_authenticated) and game.player_id == user.pk
    playing = GameNotFinished("the game is still being played: it is analysed once it ends")
    if mine and game.status == Status.PLAYING:
        raise playing
    deal = game.deal
    if deal.kind == Deal.Kind.DAILY:
        if not mine and not Result.objects.filter(game=game).exists():
            raise NotFound(f"no game {game_id} on a day's board")
        if not replays_public(deal):
            raise DayNotOver("a daily's games are analysed once its day is over")
    elif deal.kind == Deal.Kind.RACE:
        entry = RaceEntry.objects.select_related("race").filter(game=game).first()
        if entry is None and not mine:
            raise NotFound(f"no game {game_id} in a race")
        if entry is not None:
            race_replays_check(entry.race)
    elif not mine:
        raise NotFound(f"no game {game_id} of yours")
    if game.status == Status.PLAYING:
        raise playing
    return game


def analysis_of(game: Game) -> Analysis | None:
    """The game's analysis row (queued, running or done), if it has one."""
    return Analysis.objects.filter(game=game).first()


def day_analysis(deal: Deal) -> dict[str, Any]:
    """What the analyses of a day's games on its board say together: for each move
    number, how many games were still winnable after it, lost, or unknown (a game that
    ended sooner counts with its last position), and the most common fatal moves.
    ``analysed`` and ``pending`` count the board's games done and not yet."""
    games = Game.objects.filter(result__deal=deal, result__disqualified=False)
    rows = Analysis.objects.filter(game__in=games)
    reports = [r for r in rows.values_list("report", flat=True) if r is not None]
    total = games.count()
    longest = max((len(r["verdicts"]) for r in reports), default=0)
    after: list[dict[str, int]] = []
    for k in range(longest):
        seen = Counter(r["verdicts"][min(k, len(r["verdicts"]) - 1)] for r in reports)
        after.append({"won": seen["won"], "lost": seen["lost"], "unknown": seen["unknown"]})
    fatal = Counter(
        (r["first_lost"], r["moves"][r["first_lost"] - 1])
        for r in reports
        if r["summary"] == "fatal"
    )
    return {
        "analysed": len(reports),
        "pending": total - len(reports),
        "after_move": after,
        "fatal_moves": [
            {"move": move, "notation": notation, "games": count}
            for (move, notation), count in fatal.most_common(COMMON_FATAL_MOVES)
        ],
    }
