"""Writes: accounts, tokens, starting games, moves, undo, resign.

One function applies a move for every door (REST and WebSocket): it locks the
game row, lets the engine decide, appends the log entry and updates the
snapshot in one transaction. Events (added by later features) go out only after
commit, through ``transaction.on_commit``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model, logout
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import HttpRequest

from games import clock, events
from games.engine import SEED_LIMIT, Position, Status, get_variant, new_position
from games.engine.solver import Verdict, solve
from games.errors import (
    DayOver,
    GameFinished,
    HintNotAllowed,
    InvalidInput,
    NotFound,
    StalePly,
    UndoNotAllowed,
)
from games.models import UNDO, ApiToken, Deal, Game, Move
from games.results import result_record
from games.selectors import (
    can_undo,
    game_for_player,
    game_log,
    game_position,
    replay_log,
    token_hash,
)

#: How often a token's last-use time is written at most.
TOKEN_TOUCH_INTERVAL = timedelta(minutes=1)


@dataclass(frozen=True)
class MoveOutcome:
    """A game after a move request; ``duplicate`` marks a safe retry that applied nothing."""

    game: Game
    position: Position
    duplicate: bool = False


def user_register(*, username: str, password: str, email: str = "") -> AbstractBaseUser:
    """Create an account after Django's password validation."""
    User = get_user_model()
    if User.objects.filter(username__iexact=username).exists():
        raise InvalidInput("that username is taken", details={"username": ["taken"]})
    candidate = User(username=username, email=email)
    try:
        validate_password(password, user=candidate)
    except ValidationError as exc:
        raise InvalidInput("the password is too weak", details={"password": exc.messages}) from None
    try:
        return User.objects.create_user(username=username, email=email, password=password)
    except IntegrityError:
        raise InvalidInput("that username is taken", details={"username": ["taken"]}) from None


def user_logout(request: HttpRequest) -> None:
    """End the browser session; the game sockets it opened are closed too."""
    session_key = request.session.session_key
    logout(request)
    if session_key:
        events.session_ended(session_key=session_key)


def token_create(*, user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """Create a personal API token; the key is returned once and stored only hashed."""
    key = "pt_" + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, prefix=key[:10], key_hash=token_hash(key))
    return token, key


def token_revoke(*, user: AbstractBaseUser, token_id: int) -> None:
    """Revoke one of the user's tokens."""
    updated = ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
        revoked_at=clock.now()
    )
    if not updated:
        raise NotFound(f"no active token {token_id} of yours")
    events.token_revoked(token_id=token_id)


def token_touch(token: ApiToken) -> None:
    """Record use of a token, at most once per interval to spare the database."""
    now = clock.now()
    if token.last_used_at is None or now - token.last_used_at > TOKEN_TOUCH_INTERVAL:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)


def _check_seed(seed: int | None) -> int:
    if seed is None:
        return secrets.randbelow(SEED_LIMIT)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise InvalidInput("seed must be an integer with 0 <= seed < 2**64")
    return seed


def game_create(*, user: AbstractBaseUser, deal: Deal, ranked: bool = False) -> Game:
    """A new game of a deal for a player, timed from now."""
    start = new_position(deal.variant, seed=int(deal.seed))
    return Game.objects.create(
        player=user,
        deal=deal,
        ranked=ranked,
        started_at=clock.now(),
        position=start.to_json(),
        score=start.score,
        status=start.status.value,
        finished_at=None if start.status == Status.PLAYING else clock.now(),
    )


@transaction.atomic
def practice_game_start(*, user: AbstractBaseUser, variant: str, seed: int | None = None) -> Game:
    """Start a practice game of a variant; a random seed when none is given."""
    v = get_variant(variant)
    deal, _ = Deal.objects.get_or_create(
        kind=Deal.Kind.PRACTICE, variant=v.key, seed=_check_seed(seed)
    )
    return game_create(user=user, deal=deal)


def _locked_game(game_id: int, user: AbstractBaseUser) -> Game:
    try:
        # Lock the game row only: a bare FOR UPDATE would also lock the joined deal, which
        # every player of a daily shares, and serialize all their moves.
        return (
            Game.objects.select_for_update(of=("self",))
            .select_related("deal")
            .get(pk=game_id, player=user)
        )
    except Game.DoesNotExist:
        raise NotFound(f"no game {game_id} of yours") from None


def _next_position(game: Game, pos: Position, move: str) -> Position:
    """The position after ``move`` (a move or ``undo``); raises when not allowed."""
    if move != UNDO:
        return pos.apply(move)
    if not can_undo(game, pos):
        if pos.ply > 0:
            raise UndoNotAllowed(
                "a ranked game cannot undo a move that revealed a card of the stock"
            )
        raise UndoNotAllowed("there is no move to undo")
    return replay_log(game.deal, [*game_log(game), UNDO]).position


@transaction.atomic
def game_apply_move(*, game_id: int, user: AbstractBaseUser, move: str, ply: int) -> MoveOutcome:
    """Apply a move (or ``undo``) sent by a client that has seen ``ply`` log entries.

    A stale ply is refused with the current ply; resending the entry already
    stored at that ply is answered without applying anything (safe retries).
    """
    game = _locked_game(game_id, user)
    if ply != game.ply:
        if 0 <= ply < game.ply and game.moves.filter(ply=ply, notation=move).exists():
            return MoveOutcome(game, game_position(game), duplicate=True)
        raise StalePly(
            f"you sent ply {ply} but the game is at ply {game.ply}", details={"ply": game.ply}
        )
    if game.status != Status.PLAYING:
        raise GameFinished(f"the game is {game.status}")
    if game.ranked and game.deal.date and clock.now() >= clock.day_end(game.deal.date):
        raise DayOver("the day of this daily is over: the game no longer counts")
    before = game_position(game)
    pos = _next_position(game, before, move)
    Move.objects.create(game=game, ply=game.ply, notation=move)
    game.ply += 1
    if pos.stock_count < before.stock_count:
        game.undo_floor = pos.ply
    game.undo_floor = min(game.undo_floor, pos.ply)
    game.position = pos.to_json()
    game.score = pos.score
    game.status = pos.status.value
    if game.status != Status.PLAYING:
        game.finished_at = clock.now()
    game.save(update_fields=["ply", "undo_floor", "position", "score", "status", "finished_at"])
    result_record(game)
    events.game_changed(game_id=game.pk, ply=game.ply, status=game.status)
    return MoveOutcome(game, pos)


@dataclass(frozen=True)
class Hint:
    """A hint at ``ply``: the solver's verdict and, if winnable, the next move of a win."""

    ply: int
    verdict: str
    move: str | None
    nodes: int


def game_hint(*, game_id: int, user: AbstractBaseUser) -> Hint:
    """The next move of a winning line in a practice game; the game becomes assisted.

    The solver knows the stock, so a hint carries hidden information: ranked
    games refuse hints, and a hinted practice game is marked assisted. The
    solver runs outside any transaction, on the snapshot at the ply returned.
    """
    game = game_for_player(game_id=game_id, user=user)
    if game.ranked:
        raise HintNotAllowed("hints use the hidden stock: a ranked game gets none")
    if game.status != Status.PLAYING:
        raise GameFinished(f"the game is {game.status}")
    result = solve(game_position(game), max_nodes=settings.HINT_SOLVER_NODES)
    Game.objects.filter(pk=game.pk, assisted=False).update(assisted=True)
    move = result.line[0] if result.verdict is Verdict.WON else None
    return Hint(ply=game.ply, verdict=result.verdict.value, move=move, nodes=result.nodes)


@transaction.atomic
def game_resign(*, game_id: int, user: AbstractBaseUser) -> Game:
    """End a game by resignation."""
    game = _locked_game(game_id, user)
    if game.status != Status.PLAYING:
        raise GameFinished(f"the game is {game.status}")
    game.status = Status.RESIGNED.value
    game.finished_at = clock.now()
    game.save(update_fields=["status", "finished_at"])
    result_record(game)
    events.game_changed(game_id=game.pk, ply=game.ply, status=game.status)
    return game
