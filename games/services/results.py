"""Results of ranked daily games and the players' records built from them.

A result is computed from the validated log alone (the server's snapshot and
clock), never from anything a client says. Records (``PlayerStats``) are
recomputed from a player's results whenever one of them changes, in the same
transaction, so they can never drift from the results.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from django.contrib.auth.models import User
from django.db import transaction

from core import clock
from core.errors import InvalidInput
from games import boards, events
from games.engine import Status, get_variant
from games.models import EXPIRED, Game, PlayerStats, Result
from games.selectors import boards as board_selectors
from games.selectors.games import game_reach
from games.services.fairplay import result_flags_record
from games.standings import standing_key


def result_record(game: Game) -> Result | None:
    """Enter the result of a ranked game that has just ended (inside its transaction)."""
    if not game.ranked or game.status == Status.PLAYING or game.finished_at is None:
        return None
    if game.deal.date is None:  # a race's game: the race keeps its standings
        return None
    if game.assisted:  # hints were used: an assisted game is never ranked
        return None
    over = game.deal.date is not None and clock.day_ended(game.deal.date)
    if over and game.status != EXPIRED:
        # Finished after its day ended on the shared clock (core.clock), when the seed
        # and the replays may be public: not ranked. A game left unfinished is ended at
        # the day's end as expired, and counts.
        return None
    won = game.status == Status.WON
    # Integer arithmetic: total_seconds() * 1000 truncates e.g. 1.001 s to 1000 ms.
    time_ms = (game.finished_at - game.started_at) // timedelta(milliseconds=1)
    result = Result.objects.create(
        game=game,
        deal=game.deal,
        player=game.player,
        won=won,
        cards_home=game.score,
        moves=game.ply,
        time_ms=time_ms,
        finished_at=game.finished_at,
        sort_key=standing_key(
            won=won,
            cards_missing=get_variant(game.deal.variant).card_count - game.score,
            moves=game.ply,
            time_ms=time_ms,
            finished_ms=int(game.finished_at.timestamp() * 1000),
            game_id=game.pk,
            reach=0 if won else game_reach(game),
        ),
    )
    result_flags_record(result, game)
    stats_recompute(player=game.player, variant=game.deal.variant)

    day = game.deal.date
    assert day is not None, "a ranked game is a daily's"

    def publish() -> None:
        boards.board_add(result.deal_id, result.sort_key)
        line = board_selectors.result_line(result)
        if line is not None:  # disqualified meanwhile: nothing to announce
            events.result_entered(variant=game.deal.variant, day=day, line=line)

    transaction.on_commit(publish)
    return result


def stats_recompute(*, player: User, variant: str) -> PlayerStats:
    """Rebuild a player's record in a variant from their counted results."""
    rows = list(
        Result.objects.filter(player=player, deal__variant=variant, disqualified=False)
        .select_related("deal")
        .order_by("deal__date")
    )
    best = min(rows, key=lambda r: r.sort_key, default=None)
    streak = best_streak = 0
    last_won = None
    for r in rows:
        if not r.won:
            streak = 0  # a day played and lost ends the run
            continue
        day = r.deal.date
        assert day is not None, "results are of dailies"
        streak = streak + 1 if last_won is not None and day - last_won == timedelta(days=1) else 1
        last_won = day
        best_streak = max(best_streak, streak)
    stats, _ = PlayerStats.objects.update_or_create(
        player=player,
        variant=variant,
        defaults={
            "played": len(rows),
            "won": sum(r.won for r in rows),
            "best_streak": best_streak,
            "streak": streak,
            "last_won": last_won,
            "best_result": best,
        },
    )
    return stats


@transaction.atomic
def result_disqualify(*, result_id: int, disqualified: bool = True) -> Result:
    """Take a result off its board (or put it back); ranks and records follow."""
    result = Result.objects.select_for_update().select_related("deal").get(pk=result_id)
    if result.disqualified != disqualified:
        result.disqualified = disqualified
        result.save(update_fields=["disqualified"])
        stats_recompute(player=result.player, variant=result.deal.variant)
        action = boards.board_remove if disqualified else boards.board_add
        transaction.on_commit(lambda: action(result.deal_id, result.sort_key))
    return result


@transaction.atomic
def result_review(*, result_id: int, verdict: str) -> Result:
    """An admin's verdict on a flagged result: ``cleared`` (it stays, unmarked) or
    ``disqualified`` (it leaves the board and the player's record)."""
    if verdict not in (Result.Review.CLEARED, Result.Review.DISQUALIFIED):
        raise InvalidInput(f"a review is cleared or disqualified, not {verdict!r}")
    result = result_disqualify(
        result_id=result_id, disqualified=verdict == Result.Review.DISQUALIFIED
    )
    result.review = verdict
    result.save(update_fields=["review"])
    return result


@transaction.atomic
def results_remove_for_player(*, player: User) -> int:
    """Delete every result of an account (its games stay); returns how many."""
    results = list(Result.objects.filter(player=player).select_related("deal"))
    for r in results:
        r.delete()
        transaction.on_commit(partial(boards.board_remove, r.deal_id, r.sort_key))
    PlayerStats.objects.filter(player=player).delete()
    return len(results)
