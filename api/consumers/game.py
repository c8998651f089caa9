"""A game's socket: live play of one of the player's games (``api.consumers``)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

from accounts.events import session_group, token_group
from api import events, shapes
from api.consumers.base import (
    CLOSE_NOT_FOUND,
    CLOSE_TOO_MANY,
    CLOSE_UNAUTHENTICATED,
    HINT_LOOK_EVERY,
    BadMessage,
    Consumer,
    bad,
    dumps,
    instant,
)
from api.errors import envelope, error_payload
from api.throttling import account_wait
from core import clock
from core.errors import InvalidInput, NotFound, StalePly
from games import hints
from games.events import game_group, race_group
from games.inputs import move_parse, ply_parse
from games.models import UNDO
from games.play import finish
from games.play import move as play_move
from games.selectors import games as game_selectors
from games.selectors import hints as hint_selectors
from games.selectors import races as race_selectors
from games.selectors.hints import HintPending
from games.services import hints as hint_services

logger = logging.getLogger(__name__)


# -- a game -------------------------------------------------------------------------------

#: What a frame was: (text to send, ply and status of the state it carries or None).
Frame = tuple[str, tuple[int, str] | None]


#: Open game sockets of each player in this process (``WS_GAME_SOCKETS_PER_PLAYER``).
_open_game_sockets: Counter[int] = Counter()


def _read_error(waited: asyncio.Future[Any]) -> None:
    """Read a solve's error, so none goes unretrieved: the look-up that follows the wait
    answers from the cache (``hint_unavailable`` for a worker that died)."""
    if not waited.cancelled():
        waited.exception()


class GameConsumer(Consumer):
    """Live play of one of the player's games."""

    REQUESTS = ("move", "undo", "resign", "resync", "hint")

    async def connect(self) -> None:
        self.ready = False
        #: (ply, status) of the last state sent, to skip events already shown.
        self.sent: tuple[int, str] | None = None
        self.game_id = int(self.scope["url_route"]["kwargs"]["game_id"])
        user = self.scope.get("user")
        await self.accept()
        # Signed in: a User (Channels' lazy user stands for one, and isinstance sees through it);
        # else None or an AnonymousUser.
        if not isinstance(user, User):
            await self.close(code=CLOSE_UNAUTHENTICATED, reason="not authenticated")
            return
        self.user: User = user
        if _open_game_sockets[self.user.pk] >= settings.WS_GAME_SOCKETS_PER_PLAYER:
            await self.close(code=CLOSE_TOO_MANY, reason="too many open game sockets")
            return
        _open_game_sockets[self.user.pk] += 1
        self.counted = True
        # Closed when the token it opened with is revoked, or its session signs out.
        if isinstance(token_id := self.scope.get("token_id"), int):  # set by api.ws_auth
            await self.join(token_group(token_id))
        elif session_key := getattr(self.scope.get("session"), "session_key", None):
            await self.join(session_group(session_key))
        # Join before reading, so no change between the read and the join is missed.
        await self.join(game_group(self.game_id))
        try:
            frame, race, moments = await self.db(self._opened)
            if race is not None:  # a race's game: its moves come to the race's group
                await self.join(race_group(race))
                frame = await self.db(self._current, "connect")
        except NotFound:
            await self.close(code=CLOSE_NOT_FOUND, reason="no such game of yours")
            return
        self.ready = True
        self.watch()
        await self._send(frame)
        self.wake_at(moments)

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        if (task := getattr(self, "_hint_task", None)) is not None:
            task.cancel()
        if getattr(self, "counted", False):
            _open_game_sockets[self.user.pk] -= 1
            if _open_game_sockets[self.user.pk] <= 0:
                del _open_game_sockets[self.user.pk]

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self.ready:
            return
        if (wait := self.bucket_wait()) is not None:
            await self.refused(wait)
            return
        cause = "message"
        try:
            data = self.read_frame(text_data)
            kind = data.get("type")
            if kind not in self.REQUESTS:
                raise BadMessage(f"'type' must be one of {', '.join(self.REQUESTS)}")
            cause = kind
            if kind in ("move", "undo"):
                move = move_parse(data.get("move")) if kind == "move" else UNDO
                ply = ply_parse(data.get("ply"))
                call: tuple[Any, ...] = (self._apply, cause, move, ply)
            elif kind == "resign":
                call = (self._resign, cause)
            elif kind == "hint":
                if (busy := hints.hint_refusal()) is not None:  # a flood ends here, cheaply
                    self.admitted()
                    body = envelope(busy.code, str(busy), busy.details)
                    await self._send((self._error_text(cause, self.sent_ply, body), None))
                    return
                call = (self._hint, cause)
            else:
                call = (self._current_or_error, cause)
        except (BadMessage, InvalidInput) as exc:  # a frame's shape: always bad_message
            if (wait := await self._account_wait()) is not None:
                await self.refused(wait)
                return
            self.admitted()
            await self._send((self._error_text(cause, self.sent_ply, bad(str(exc))), None))
            return
        # The account's budget is counted in the request's own worker-thread call: one
        # thread hop per frame, not two.
        wait, frame = await self.db(self._metered, *call)
        if wait is not None:
            await self.refused(wait)
            return
        self.admitted()
        assert frame is not None  # a frame that passed
        if isinstance(frame, HintPending):  # answered once solved, by a task of its own
            self._hint_task = asyncio.create_task(self._hint_later(cause, frame))
            return
        await self._send(frame)

    async def game_moved(self, message: dict[str, Any]) -> None:
        """Group event: a game moved on (maybe in another process; a race's group carries
        its rivals' games too): its state, forwarded unless this socket showed it already
        (its own move's answer)."""
        if not self.ready or message["game_id"] != self.game_id:
            return
        if self._newer(message["ply"], message["status"]):  # the mover's echo stops here
            frame = events.game_frame(message)
            await self._send((dumps(frame), (message["ply"], message["status"])))

    async def race_changed(self, message: dict[str, Any]) -> None:
        """Group event of a race game's race: its start may have moved (a full race starts
        sooner, a race left by all but one waits again): wake at the start it has now."""
        if self.ready and self.sent == (0, "playing"):
            self.wake_at([instant(message["starts_at"])])

    async def woken(self) -> bool:
        """At a race's start: the dealt state, once the shared clock shows it. At a ranked
        daily's day's end: the game ended as expired (stored by this timer, as the job
        would; its event brings the state)."""
        frame, reached = await self.db(self._at_moment)
        if frame is not None:
            await self._send(frame)
        return reached

    async def race_rematch(self, event: dict[str, Any]) -> None:
        """Group event of a race game's race: for its race sockets only."""

    async def resync(self) -> None:
        """The game as stored, cause ``changed``, unless this socket showed it already."""
        frame = await self.db(self._current, "changed")
        assert frame[1] is not None  # a state frame
        if self.ready and self._newer(*frame[1]):
            await self._send(frame)

    async def analysis_ready(self, message: dict[str, Any]) -> None:
        """Group event: the finished game's analysis is done; the client reads it by REST."""
        if self.ready and message["game_id"] == self.game_id:
            await self._send((dumps(events.analysis_frame(message)), None))

    async def auth_revoked(self, event: dict[str, Any]) -> None:
        """Group event: the token this socket opened with was revoked, or its session ended."""
        self.ready = False
        await self.close(code=CLOSE_UNAUTHENTICATED, reason=event["reason"])

    # -- helpers --

    async def refuse(self, body: dict[str, Any]) -> None:
        await self._send((self._error_text("message", self.sent_ply, body), None))

    @property
    def sent_ply(self) -> int | None:
        return self.sent[0] if self.sent is not None else None

    def _newer(self, ply: int, status: str) -> bool:
        return (
            self.sent is None
            or ply > self.sent[0]
            or (ply == self.sent[0] and status != self.sent[1])
        )

    async def _send(self, frame: Frame) -> None:
        text, shown = frame
        if shown is not None:
            self.sent = shown
        await self.send(text_data=text)

    # -- worker thread --

    def _metered(
        self, func: Callable[..., Frame | HintPending], *args: Any
    ) -> tuple[float | None, Frame | HintPending | None]:
        """``func(*args)`` if the account's budget allows the frame: (None, its frame);
        else (the wait, None) and nothing done."""
        wait = account_wait(self.user.pk)
        return (wait, None) if wait is not None else (None, func(*args))

    def _state(self, game: Any, *, cause: str) -> Frame:
        """A state frame of a game as stored."""
        return self._frame(game.ply, game.status, shapes.game_state(game), cause)

    @staticmethod
    def _frame(ply: int, status: str, state: dict[str, Any], cause: str, **extra: Any) -> Frame:
        """A state frame showing ``state`` at ``ply`` with ``status``."""
        return dumps(events.state_frame(cause, ply, state, **extra)), (ply, status)

    def _current(self, cause: str) -> Frame:
        return self._state(self._shown(), cause=cause)

    def _shown(self) -> Any:
        return game_selectors.game_shown(game_id=self.game_id, user=self.user)

    def _opened(self) -> tuple[Frame, str | None, list[datetime | None]]:
        """The state on connect; for a race's game its race's code; the moments to wake
        at: a race's start (its game is timed from it), a ranked daily's day's end."""
        game = self._shown()
        race = race_selectors.race_code_of(game)
        moments: list[datetime | None] = []
        if game.status == "playing":
            moments.append(game.started_at if race is not None else None)
            moments.append(None if race is not None else game_selectors.game_end_due(game))
        return self._state(game, cause="connect"), race, moments

    def _at_moment(self) -> tuple[Frame | None, bool]:
        """At a moment of ``_opened``: a race's start (its state, once the shared clock
        has reached it) or a ranked daily's day's end (the game ended, if still playing)."""
        game = game_selectors.game_for_player(game_id=self.game_id, user=self.user)
        if game.deal.kind == "race":
            return self._state(game, cause="changed"), clock.shared_now() >= game.started_at
        if game.status == "playing":
            if not finish.day_over_unfinished(game):
                return None, False  # the shared clock has not reached the day's end yet
            finish.day_expire(game)
        return None, True

    def _current_or_error(self, cause: str) -> Frame:
        try:
            return self._current(cause)
        except Exception as exc:
            return self._error(cause, exc)

    def _apply(self, cause: str, move: str, ply: int) -> Frame:
        try:
            result = play_move.apply_move(
                game_id=self.game_id,
                user=self.user,
                move=move,
                ply=ply,
                transport="ws",
                origin=self.channel_name,  # its event goes to the others: this has the answer
            )
        except Exception as exc:
            return self._error(cause, exc)
        shown = result.state
        duplicate = result.duplicate
        return self._frame(shown.ply, shown.status, shown.as_json(), cause, duplicate=duplicate)

    def _resign(self, cause: str) -> Frame:
        try:
            shown = finish.resign(game_id=self.game_id, user=self.user).state
        except Exception as exc:
            return self._error(cause, exc)
        return self._frame(shown.ply, shown.status, shown.as_json(), cause)

    def _hint(self, cause: str) -> Frame | HintPending:
        try:
            hint = hint_services.game_hint(game_id=self.game_id, user=self.user)
        except Exception as exc:
            return self._error(cause, exc)
        if isinstance(hint, HintPending):
            return hint
        return dumps({"type": "hint", "ply": hint.ply, "hint": shapes.hint(hint)}), None

    def _hint_solved(self, cause: str, ply: int) -> Frame | None:
        """The hint frame (or error) of a hint asked at ``ply``; None while it is solved."""
        try:
            hint = hint_selectors.game_hint_result(game_id=self.game_id, user=self.user, ply=ply)
        except Exception as exc:
            return self._error(cause, exc)
        if isinstance(hint, HintPending):
            return None
        return dumps({"type": "hint", "ply": hint.ply, "hint": shapes.hint(hint)}), None

    async def _hint_later(self, cause: str, pending: HintPending) -> None:
        """Answer a hint when its solve is done, holding no thread meanwhile: this process's
        solve is awaited in the event loop, another process's is looked up now and then
        (until its deadline, when the look answers ``hint_timeout``)."""
        solve = pending.solve.future if pending.solve is not None else None
        try:
            if solve is not None:
                # ``asyncio.wait`` cancels nothing: a solve still queued at the deadline
                # goes on for whoever joined it, and the look-up answers ``hint_timeout``.
                waited = asyncio.wrap_future(solve)
                waited.add_done_callback(_read_error)
                await asyncio.wait((waited,), timeout=settings.HINT_DEADLINE_SECONDS)
            while (frame := await self.db(self._hint_solved, cause, pending.ply)) is None:
                await asyncio.sleep(HINT_LOOK_EVERY)
            await self._send(frame)
        except Exception:  # a database fault: the client may ask again
            logger.exception("a socket's hint was not answered")

    def _error(self, cause: str, exc: Exception) -> Frame:
        payload = error_payload(exc)
        if payload is None:
            logger.exception("unhandled error on game socket %s", self.game_id, exc_info=exc)
            body = envelope("server_error", "internal server error")
        else:
            body = payload[1]
        if isinstance(exc, StalePly):
            ply = exc.details.get("ply")
        else:
            try:
                ply = game_selectors.game_for_player(game_id=self.game_id, user=self.user).ply
            except Exception:
                ply = self.sent_ply
        return self._error_text(cause, ply, body), None

    @staticmethod
    def _error_text(cause: str, ply: int | None, body: dict[str, Any]) -> str:
        return dumps({"type": "error", "cause": cause, "ply": ply, **body})
