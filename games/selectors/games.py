"""Reads: a game's public view, its log and replay, a player's games, tokens.

Everything a player sees of a position comes from the engine's public form,
where the stock is only a count. The full deal is shown only once a game has
ended.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from games import clock
from games.engine import EngineError, Position, Status, deck_order, get_variant, new_position
from games.errors import NotFound
from games.models import SERVER_ENDS, UNDO, Deal, Game, Move


@dataclass(frozen=True)
class Replay:
    """The result of replaying a move log: the stack of positions on the board.

    ``undo`` pops the stack, so ``stack[-1]`` is the current position and
    ``stack[-1].ply`` counts the moves still on the board.
    """

    stack: tuple[Position, ...]
    #: Moves on the board when the stock last revealed a card (see ``Game.undo_floor``).
    undo_floor: int = 0

    @property
    def position(self) -> Position:
        return self.stack[-1]


def deal_start(deal: Deal) -> Position:
    """Starting position of a deal."""
    return new_position(deal.variant, seed=int(deal.seed))


def replay_steps(deal: Deal, notations: Sequence[str]) -> Iterator[tuple[list[Position], int]]:
    """After each entry of a log: the positions on the board (one list, updated) and undo floor.

    Raises EngineError on a bad entry.
    """
    stack = [deal_start(deal)]
    floor = 0
    for notation in notations:
        if notation == UNDO:
            if len(stack) < 2:
                raise EngineError("undo with no move to undo")
            stack.pop()
            floor = min(floor, len(stack) - 1)
        else:
            stack.append(stack[-1].apply(notation))
            if stack[-1].stock_count < stack[-2].stock_count:
                floor = stack[-1].ply
        yield stack, floor


def replay_log(deal: Deal, notations: Sequence[str]) -> Replay:
    """Replay a log of moves and undos from the deal; raises EngineError on a bad entry."""
    stack, floor = [deal_start(deal)], 0
    for stack, floor in replay_steps(deal, notations):  # noqa: B007 (the last step is wanted)
        pass
    return Replay(tuple(stack), floor)


def game_log(game: Game) -> list[str]:
    """The notations of a game's log in order."""
    return list(game.moves.order_by("ply").values_list("notation", flat=True))


def game_replay(game: Game) -> Replay:
    """Replay a game's stored log."""
    return replay_log(game.deal, game_log(game))


def game_position(game: Game) -> Position:
    """The current position from the stored snapshot."""
    return position_from_json(game.position)


def position_from_json(data: dict[str, Any]) -> Position:
    """A position stored as engine JSON (a game's snapshot, a log entry's position).

    PostgreSQL's jsonb does not keep the order of keys, but the engine reads the
    piles in its own pile order: put them back in that order first.
    """
    piles = data.get("piles")
    if isinstance(piles, dict):
        ids = Position.class_for(data.get("variant", "")).PILE_IDS
        data = {**data, "piles": {p: piles[p] for p in ids if p in piles} | piles}
    return Position.from_json(data)


def game_position_after(game: Game, entries: int) -> Position:
    """The position after the first ``entries`` log entries: stored, not replayed."""
    if entries == 0:
        return deal_start(game.deal)
    return position_from_json(game.moves.only("position").get(ply=entries - 1).position)


def game_verify(game: Game) -> str | None:
    """None if the snapshot, the counters and every log entry's stored position equal the
    replay of the log, else why not."""
    entries = list(game.moves.order_by("ply").values_list("notation", "position", "depth"))
    stack, floor = [deal_start(game.deal)], 0
    try:
        steps = replay_steps(game.deal, [notation for notation, _, _ in entries])
        for ply, (entry, step) in enumerate(zip(entries, steps, strict=True)):
            (_, stored, depth), (stack, floor) = entry, step
            if stored != stack[-1].to_json() or depth != stack[-1].ply:
                return f"log entry {ply}: its stored position differs from the replay"
    except EngineError as exc:
        return f"log does not replay: {exc}"
    pos = stack[-1]
    if pos.to_json() != game.position:
        return "snapshot differs from the replay of the log"
    if game.ply != len(entries):
        return f"ply {game.ply} but the log has {len(entries)} entries"
    if game.undo_floor != floor:
        return f"undo floor {game.undo_floor} but the replay gives {floor}"
    if game.score != pos.score:
        return f"score {game.score} but the replay scores {pos.score}"
    if game.status not in SERVER_ENDS and game.status != pos.status.value:
        return f"status {game.status} but the replay is {pos.status.value}"
    return None


def game_for_player(*, game_id: int, user: AbstractBaseUser) -> Game:
    """A game of this player; another player's game is reported as not found."""
    try:
        return Game.objects.select_related("deal").get(pk=game_id, player=user)
    except Game.DoesNotExist:
        raise NotFound(f"no game {game_id} of yours") from None


def ranked_days_of_player(
    *, user: AbstractBaseUser, variant: str, first: date, last: date
) -> dict[date, Game]:
    """The player's ranked daily games of a variant from ``first`` to ``last``, by day
    (with their results, for a calendar)."""
    games = Game.objects.filter(
        player=user, ranked=True, deal__variant=variant, deal__date__range=(first, last)
    ).select_related("deal", "result")
    return {g.deal.date: g for g in games}


def games_of_player(*, user: AbstractBaseUser, status: str | None = None) -> QuerySet[Game]:
    """A player's games, newest first; only those of one status if given."""
    games = Game.objects.filter(player=user)
    if status is not None:
        games = games.filter(status=status)
    return games.select_related("deal").order_by("-started_at", "-pk")


def game_moves(game: Game) -> QuerySet[Move]:
    """A game's log entries in order (without their stored positions, which hold the stock)."""
    return game.moves.order_by("ply").defer("position")


def elapsed_ms(game: Game) -> int:
    """Server-measured play time so far (or in total, once finished)."""
    end = game.finished_at or clock.now()
    return max(0, (end - game.started_at) // timedelta(milliseconds=1))


def deal_reveal(game: Game) -> dict[str, Any] | None:
    """The full deal (seed and deck order) once the game has ended, else None.

    A daily deal stays hidden until its day is over, even after one game of it
    ended: others are still playing it.
    """
    deal = game.deal
    if game.status == Status.PLAYING or (deal.date is not None and not clock.day_over(deal.date)):
        return None
    return {"seed": str(deal.seed), "deck": deck_order(deal.variant, int(deal.seed))}


def hints_allowed(game: Game) -> bool:
    """Whether hints may be given in a game: they use the hidden stock, so never in a
    ranked game, nor in any game of a daily before its day is over (and revealed)."""
    if game.ranked:
        return False
    deal = game.deal
    return deal.kind != Deal.Kind.DAILY or clock.day_over(deal.date)


def can_undo(game: Game, position: Position) -> bool:
    """Whether an undo would be accepted now.

    Practice games undo freely. A ranked game never undoes a move that revealed
    a stock card (a deal, or a reserve refilled from the stock), so an undo can
    never gain knowledge of the stock; each undo still counts as a move.
    """
    floor = game.undo_floor if game.ranked else 0
    return game.status == Status.PLAYING and position.ply > floor


def game_state(game: Game, position: Position | None = None) -> dict[str, Any]:
    """The public view of a game: what its player may see, never the stock's cards."""
    pos = position if position is not None else game_position(game)
    public = pos.public_json()
    playing = game.status == Status.PLAYING
    return {
        "id": game.pk,
        "variant": game.deal.variant,
        "kind": game.deal.kind,
        "date": game.deal.date,
        "status": game.status,
        "score": game.score,
        "max_score": get_variant(game.deal.variant).card_count,
        "ply": game.ply,
        "moves_on_board": pos.ply,
        "ranked": game.ranked,
        "assisted": game.assisted,
        "started_at": game.started_at,
        "finished_at": game.finished_at,
        "elapsed_ms": elapsed_ms(game),
        "position": {"piles": public["piles"], "stock": public["stock"]},
        "legal_moves": [str(m) for m in pos.legal_moves] if playing else [],
        "can_undo": can_undo(game, pos),
        "deal": deal_reveal(game),
    }
