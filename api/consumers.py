"""WebSocket consumers: live play of one game, and a day's board as it changes.

Thin doors, like the REST views: parse a frame, call the same service function
as REST (``games.services``), render the public state or the same error
envelope (``api.errors.error_payload``), so both doors speak the same codes.

``ws/v1/games/<id>/`` (authenticated; see ``api.ws_auth``)
    Close codes: 4401 not authenticated (no session and no token, or a bad or
    revoked token); 4404 no game with that id *of yours*: another player's
    game is refused exactly like an unknown one, as REST answers 404 for both,
    so ids of other players' games cannot be probed; 4429 the player already
    has ``WS_GAME_SOCKETS_PER_PLAYER`` game sockets open on this server process
    (settings; it bounds what one account can hold open).

    Server -> client, every message with ``ply`` (log entries of the game):
    ``{"type": "state", "cause": c, "ply": n, "state": {...}}`` where ``state``
    is the REST game state and ``cause`` is ``connect``, ``move``, ``undo``,
    ``resign``, ``resync`` (the answer to that request) or ``changed`` (pushed
    because the game moved on elsewhere: another tab, REST, another server
    process); answers to ``move`` and ``undo`` add ``"duplicate": bool`` (true
    for a safe retry of the entry already stored at that ply: nothing applied).
    ``{"type": "error", "cause": c, "ply": n, "error": {"code", "message",
    "details"}}``: the REST envelope and codes (``stale_ply`` and ``bad_ply``
    with the current ply in ``details.ply``, ``illegal_move``, ``bad_notation``,
    ``game_finished``, ``undo_not_allowed``, ``hint_not_allowed``, ...), or
    ``bad_message`` for a frame that is not a valid request (``cause`` is then
    ``message`` when the frame has no valid ``type``), or ``throttled`` (below);
    ``ply`` is the game's current ply (the last one this socket sent, for
    ``bad_message`` and ``throttled``). The socket stays open. The session or
    token is checked once, at the handshake; when the token a socket opened
    with is revoked, or the session it opened with signs out
    (``POST /api/v1/auth/logout/``), the socket is closed with 4401.

    Client -> server: ``{"type": "move", "move": "t3-f", "ply": n}``,
    ``{"type": "undo", "ply": n}``, ``{"type": "resign"}``, ``{"type": "resync"}``,
    ``{"type": "hint"}`` (practice games; answered by ``{"type": "hint", "ply": n,
    "hint": {"ply", "verdict", "move", "nodes"}}``, as ``POST .../hint/``);
    ``ply`` is the number of log entries the client has seen, as for REST.
    A race's game shows no card before the race starts (``position`` null, no
    legal moves): the socket wakes at the start (``started_at``, moved by the race's
    ``race.changed``) and pushes the dealt state, cause ``changed``; ``resync``
    works too. Its socket also joins the race's group, to which its game's
    ``GameMoved`` goes.

    Every change of a game emits one ``games.event_types.GameMoved`` after commit,
    carrying the game's public state: a socket forwards it as it is (no read), unless
    it already showed that ply and status: the mover's own socket has the answer,
    sent before it handles the event, and skips its echo by ply.

``ws/v1/daily/<variant>/<YYYY-MM-DD or today>/`` (anyone; ``?limit=`` 1..100, default 10)
    ``today`` is the current UTC day when the socket opens (it stays on that day).
    Close codes: 4400 a date that is not YYYY-MM-DD or today, or a bad limit; 4404 an
    unknown variant, a day that is not out yet or a past day never dealt; 4503
    today's daily is being dealt (``daily_not_ready``): connect again in a few seconds.
    On connect:
    ``{"type": "board", "variant", "date", "board": {...}}`` (the top of the
    REST board, with ``me`` and ``around`` for a signed-in listener); then
    ``{"type": "board.result", "variant", "date", "result": {rank, result_id,
    player, won, cards_home, moves, time_ms, finished_at}}`` for every result
    entered, sent only after its transaction commits. ``{"type": "resync"}``
    asks for the board again.

``ws/v1/races/<code>/`` (anyone: players and spectators; see the races part of ``docs/api.md``)
    Close code 4404: no such race. Server -> client: ``{"type": "race.state",
    "race": {...}}`` on connect and whenever the roster or status changes (the REST
    race, ``you`` for the listener), the start and the time limit included: the
    socket wakes at ``starts_at`` and ``ends_at`` itself and reads the race, which
    shows it running, or finishes it when overdue (no job needed);
    ``{"type": "race.progress", "player": {...}}`` after each committed move of a
    player's game (counts and times only, never a card); ``{"type": "race.finished",
    "race": {...}}`` with the standings; ``{"type": "race.rematch", "code": c}``.
    Client -> server: ``{"type": "ping"}``
    (answered ``{"type": "pong"}``); moves go through the game socket or REST.

Limits on every socket: a text frame of at most ``MAX_FRAME`` characters (a
longer one is a ``bad_message``, unread; daphne closes with 1009 above 1 MiB);
per socket a token bucket of ``WS_MESSAGE_BURST`` frames refilled at
``WS_MESSAGE_RATE`` a second (settings), and per account the REST budget
(``THROTTLE_RATE_USER``): each frame of a signed-in socket counts as one
request of its account, on the same counter as REST, across all its sockets
and server processes. A frame beyond either is not acted on and gets the error
``throttled`` (``cause`` ``message``) with ``details.retry_after``, the
seconds until a frame is accepted again; a socket refused more than
``WS_MESSAGE_BURST`` frames since its bucket was last full is closed with 4429.

Database work runs the way Channels documents it, through
``database_sync_to_async`` (connections tidied before and after each call), with
``thread_sensitive=False``: the calls of all sockets share the event loop's pool of
worker threads instead of Channels' one shared thread, so a slow call of one
socket never holds up another's. A socket handles one frame at a time, so its own
calls still run in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import orjson
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.contrib.auth.models import User
from django.db import close_old_connections
from rest_framework.utils.encoders import JSONEncoder

from accounts.events import session_group, token_group
from api import events, shapes
from api.daily import board_top
from api.errors import envelope, error_payload
from api.socket_faults import Resyncing
from api.throttling import account_wait
from core import clock
from core.errors import DailyNotReady, InvalidInput, NotFound, StalePly
from games import hints
from games.events import daily_group, game_group, race_group
from games.inputs import day_parse, move_parse, ply_parse, variant_parse
from games.models import UNDO
from games.play import finish
from games.play import move as play_move
from games.selectors import dailies as daily_selectors
from games.selectors import games as game_selectors
from games.selectors import hints as hint_selectors
from games.selectors import races as race_selectors
from games.selectors.hints import HintPending
from games.services import hints as hint_services
from games.services import races as race_services

logger = logging.getLogger(__name__)

CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_TOO_MANY = 4429
CLOSE_NOT_READY = 4503

#: Seconds between looks at a hint solved in another server process.
HINT_LOOK_EVERY = 0.25

#: Longest text frame read; anything longer is a ``bad_message`` unread.
MAX_FRAME = 4096
BOARD_LIMIT = 10

T = TypeVar("T")


#: What orjson leaves to DRF's encoder: the types REST renders its own way (dates and times
#: as DRF formats them, dataclasses refused); ``dict`` keys that are not text made text, as
#: the json module does.
_JSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_JSON_OPTIONS |= orjson.OPT_NON_STR_KEYS
_drf_encoder = JSONEncoder()


def _dumps(message: dict[str, Any]) -> str:
    """JSON text as REST renders it (DRF's encoder for dates, decimals, ...), by orjson: a
    game state's frame in a tenth of the json module's time (bench/README.md)."""
    return orjson.dumps(message, default=_drf_encoder.default, option=_JSON_OPTIONS).decode()


def _tidy(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` with the thread's connections tidied in the call's own context.

    asgiref (3.13) runs the call in a copy of the caller's context, where Django's
    connection handler keeps the connection it opens; ``database_sync_to_async``
    tidies outside that context and would leave the connection checked out.
    """
    close_old_connections()
    try:
        return func(*args)
    finally:
        close_old_connections()


#: ``_tidy`` in the event loop's worker threads: made once, not per call (building a
#: ``SyncToAsync`` inspects the function each time).
_in_worker = database_sync_to_async(_tidy, thread_sensitive=False)


def _bad(message: str) -> dict[str, Any]:
    return envelope("bad_message", message)


#: A socket woken at a race's start or time limit reads again this many times, this many
#: seconds apart, while the shared clock (PostgreSQL's) has not reached it yet.
WAKE_TRIES = 10
WAKE_RETRY = 0.2


def _instant(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


class _Consumer(Resyncing):
    """Shared plumbing: database calls, the frame budget, JSON frames (faults and resyncs:
    ``api.socket_faults``)."""

    async def db(self, func: Callable[..., T], *args: Any) -> T:
        """Run ``func`` in a worker thread (see the module docstring)."""
        return await _in_worker(func, *args)

    async def flooded(self) -> bool:
        """Count a frame against this socket's bucket and its account's budget; True if refused.

        A refused frame is not acted on, and is answered ``throttled`` (see ``refused``).
        """
        wait = self.bucket_wait()
        if wait is None:
            wait = await self._account_wait()
        if wait is None:
            self.admitted()
            return False
        await self.refused(wait)
        return True

    def bucket_wait(self) -> float | None:
        """None if this socket's bucket holds a frame (it is taken by ``admitted``), else the
        seconds until it does."""
        rate, burst = settings.WS_MESSAGE_RATE, settings.WS_MESSAGE_BURST
        now = time.monotonic()
        tokens = getattr(self, "_tokens", burst) + (now - getattr(self, "_stamp", now)) * rate
        self._tokens, self._stamp = min(burst, tokens), now
        return None if self._tokens >= 1 else (1 - self._tokens) / rate

    def admitted(self) -> None:
        """A frame passed both limits: it takes its place in the bucket."""
        self._tokens -= 1
        if self._tokens >= settings.WS_MESSAGE_BURST - 1:  # it was full: the client is calm
            self._refused = 0

    async def refused(self, wait: float) -> None:
        """Answer a refused frame ``throttled``, or hang up on a client that ignores that.

        Refusals are forgiven only once the bucket is full again, so a flood that is let
        through a frame now and then is still closed.
        """
        self._refused = getattr(self, "_refused", 0) + 1
        if self._refused > settings.WS_MESSAGE_BURST:  # it ignores the answers: hang up
            self.ready = False
            await self.close(code=CLOSE_TOO_MANY, reason="too many messages")
            return
        wait = round(wait, 3)
        message = f"too many messages: wait {wait} s"
        await self.refuse(envelope("throttled", message, {"retry_after": wait}))

    async def _account_wait(self) -> float | None:
        """None if the account's budget (shared with REST) allows a frame, else the wait."""
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return None
        return await self.db(account_wait, user.pk)

    def wake_at(self, moments: list[datetime | None]) -> None:
        """Call ``woken`` at each of ``moments`` still ahead on this process's clock (a race's
        start and time limit: nothing else marks them); replaces the last schedule."""
        if (alarm := getattr(self, "_alarm", None)) is not None:
            alarm.cancel()
        now = clock.now()
        ahead = sorted((m - now).total_seconds() for m in moments if m is not None and m > now)
        self._alarm = asyncio.create_task(self._ring(ahead)) if ahead else None

    async def _ring(self, delays: list[float]) -> None:
        """Sleep until each delay (seconds from the schedule) has passed, then wake."""
        start = time.monotonic()
        try:
            for delay in delays:
                await asyncio.sleep(delay - (time.monotonic() - start))
                for _ in range(WAKE_TRIES):
                    if await self.woken():
                        break
                    await asyncio.sleep(WAKE_RETRY)
        except Exception:  # a database fault: the client still has resync
            logger.exception("a socket's wake-up failed")

    async def woken(self) -> bool:
        """At a moment of ``wake_at``: send what it changed; False while nothing has yet."""
        raise NotImplementedError

    async def disconnect(self, code: int) -> None:
        self.wake_at([])
        self.unwatch()

    async def join(self, group: str) -> None:
        await self.channel_layer.group_add(group, self.channel_name)
        self.groups.append(group)  # left again on disconnect

    def read_frame(self, text_data: str | None) -> dict[str, Any]:
        """The request in a text frame; raises ``_BadMessage``."""
        if text_data is None:
            raise _BadMessage("send JSON in text frames")
        if len(text_data) > MAX_FRAME:
            raise _BadMessage(f"a message has at most {MAX_FRAME} characters")
        try:
            data = json.loads(text_data)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            raise _BadMessage("the message is not JSON") from None
        if not isinstance(data, dict):
            raise _BadMessage("the message must be a JSON object")
        return data


class _BadMessage(Exception):
    pass


# -- a game -------------------------------------------------------------------------------

#: What a frame was: (text to send, ply and status of the state it carries or None).
Frame = tuple[str, tuple[int, str] | None]


#: Open game sockets of each player in this process (``WS_GAME_SOCKETS_PER_PLAYER``).
_open_game_sockets: Counter[int] = Counter()


class GameConsumer(_Consumer):
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
                raise _BadMessage(f"'type' must be one of {', '.join(self.REQUESTS)}")
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
        except (_BadMessage, InvalidInput) as exc:  # a frame's shape: always bad_message
            if (wait := await self._account_wait()) is not None:
                await self.refused(wait)
                return
            self.admitted()
            await self._send((self._error_text(cause, self.sent_ply, _bad(str(exc))), None))
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
            await self._send((_dumps(frame), (message["ply"], message["status"])))

    async def race_changed(self, message: dict[str, Any]) -> None:
        """Group event of a race game's race: its start may have moved (a full race starts
        sooner, a race left by all but one waits again): wake at the start it has now."""
        if self.ready and self.sent == (0, "playing"):
            self.wake_at([_instant(message["starts_at"])])

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
            await self._send((_dumps(events.analysis_frame(message)), None))

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
        return _dumps(events.state_frame(cause, ply, state, **extra)), (ply, status)

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
                game_id=self.game_id, user=self.user, move=move, ply=ply, transport="ws"
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
        return _dumps({"type": "hint", "ply": hint.ply, "hint": shapes.hint(hint)}), None

    def _hint_solved(self, cause: str, ply: int) -> Frame | None:
        """The hint frame (or error) of a hint asked at ``ply``; None while it is solved."""
        try:
            hint = hint_selectors.game_hint_result(game_id=self.game_id, user=self.user, ply=ply)
        except Exception as exc:
            return self._error(cause, exc)
        if isinstance(hint, HintPending):
            return None
        return _dumps({"type": "hint", "ply": hint.ply, "hint": shapes.hint(hint)}), None

    async def _hint_later(self, cause: str, pending: HintPending) -> None:
        """Answer a hint when its solve is done, holding no thread meanwhile: this process's
        solve is awaited in the event loop, another process's is looked up now and then
        (until its deadline, when the look answers ``hint_timeout``)."""
        solve = pending.solve.future if pending.solve is not None else None
        try:
            if solve is not None:
                with contextlib.suppress(Exception):  # its error is read below
                    await asyncio.wait_for(
                        asyncio.wrap_future(solve), settings.HINT_DEADLINE_SECONDS
                    )
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
        return _dumps({"type": "error", "cause": cause, "ply": ply, **body})


# -- a day's board ------------------------------------------------------------------------


class DailyBoardConsumer(_Consumer):
    """A day's board of a variant: its top on connect, then every result entered."""

    async def connect(self) -> None:
        self.ready = False
        kwargs = self.scope["url_route"]["kwargs"]
        await self.accept()
        try:
            self.variant = variant_parse(kwargs["variant"])
            self.day = day_parse(kwargs["day"])
            self.limit = self._limit()
        except NotFound as exc:
            await self.close(code=CLOSE_NOT_FOUND, reason=str(exc)[:100])
            return
        except InvalidInput as exc:
            await self.close(code=CLOSE_BAD_REQUEST, reason=str(exc)[:100])
            return
        # Join before reading, so no result between the read and the join is missed.
        await self.join(daily_group(self.variant, self.day))
        try:
            text = await self.db(self._board)
        except NotFound as exc:
            await self.close(code=CLOSE_NOT_FOUND, reason=str(exc)[:100])
            return
        except DailyNotReady as exc:
            await self.close(code=CLOSE_NOT_READY, reason=str(exc)[:100])
            return
        self.ready = True
        self.watch()
        await self.send(text_data=text)

    def _limit(self) -> int:
        query = self.scope.get("query_string", b"").decode("latin1")
        for part in query.split("&"):
            name, _, value = part.partition("=")
            if name == "limit":
                # ASCII digits ("²".isdigit() is true), few of them (int() refuses 4300).
                ok = value.isascii() and value.isdigit() and len(value) <= 3
                if not ok or not 1 <= int(value) <= 100:
                    raise InvalidInput("limit must be a whole number from 1 to 100")
                return int(value)
        return BOARD_LIMIT

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self.ready or await self.flooded():
            return
        try:
            data = self.read_frame(text_data)
            if data.get("type") != "resync":
                raise _BadMessage("'type' must be resync")
        except _BadMessage as exc:
            await self.send(text_data=_dumps({"type": "error", **_bad(str(exc))}))
            return
        await self.resync()

    async def resync(self) -> None:
        await self.send(text_data=await self.db(self._board))

    async def refuse(self, body: dict[str, Any]) -> None:
        await self.send(text_data=_dumps({"type": "error", **body}))

    async def board_result(self, message: dict[str, Any]) -> None:
        """Group event: a result entered the board (sent after its commit); its frame alone
        (the message's other keys, as the request id that caused it, are the servers')."""
        if self.ready:
            await self.send(text_data=_dumps(events.board_frame(message)))

    def _board(self) -> str:
        deal = daily_selectors.published_deal(self.variant, self.day)
        user = self.scope.get("user")
        board = board_top(deal=deal, user=user, limit=self.limit)
        return _dumps({"type": "board", "variant": self.variant, "date": self.day, "board": board})


# -- a race -------------------------------------------------------------------------------


class RaceConsumer(_Consumer):
    """A race as it runs: roster, countdown, everyone's progress, the end and standings."""

    async def connect(self) -> None:
        self.ready = False
        self.code = self.scope["url_route"]["kwargs"]["code"]
        #: The status a wake-up just showed, which the change event it caused would repeat.
        self.woke_to: str | None = None
        await self.accept()
        # Join before reading, so no change between the read and the join is missed.
        await self.join(race_group(self.code))
        try:
            text, self.status, moments = await self.db(self._race)
        except NotFound as exc:
            await self.close(code=CLOSE_NOT_FOUND, reason=str(exc)[:100])
            return
        self.ready = True
        self.watch()
        await self.send(text_data=text)
        self.wake_at(moments)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self.ready or await self.flooded():
            return
        try:
            if self.read_frame(text_data).get("type") != "ping":
                raise _BadMessage("'type' must be ping")
        except _BadMessage as exc:
            await self.refuse(_bad(str(exc)))
            return
        await self.send(text_data=_dumps({"type": "pong"}))

    async def refuse(self, body: dict[str, Any]) -> None:
        await self.send(text_data=_dumps({"type": "error", **body}))

    async def race_changed(self, message: dict[str, Any]) -> None:
        """Group event: the roster or status changed (maybe in another process); not sent
        again when this socket's wake-up just showed it (a race it finished at its limit)."""
        if self.ready:
            frame = events.race_frame(message, self._you(message["games"]))
            text, self.status, moments = self._sent(frame)
            if self.status != self.woke_to:
                await self.send(text_data=text)
            self.woke_to = None
            self.wake_at(moments)

    def _you(self, games: list[list[int | None]]) -> dict[str, int | None] | None:
        """The listener's own game in a race's ``games`` (player, game) pairs, if any."""
        user = self.scope.get("user")
        viewer = user.pk if user is not None and user.is_authenticated else None
        return next(({"game": game} for player, game in games if player == viewer), None)

    async def woken(self) -> bool:
        """At the race's start or time limit: the race, once its status shows it (running;
        finished, which this socket's timer stores when overdue, as the job would)."""
        text, status, _ = await self.db(self._settled)
        if status == self.status:
            return False
        self.status = self.woke_to = status
        await self.send(text_data=text)
        return True

    async def resync(self) -> None:
        text, self.status, moments = await self.db(self._race)
        await self.send(text_data=text)
        self.wake_at(moments)

    async def game_moved(self, message: dict[str, Any]) -> None:
        """Group event: a player's game moved on; its progress (counts only, never a card)."""
        frame = events.progress_frame(message)
        if self.ready and frame is not None:
            await self.send(text_data=_dumps(frame))

    async def race_rematch(self, message: dict[str, Any]) -> None:
        """Group event: the race's players are offered a rematch."""
        if self.ready:
            await self.send(text_data=_dumps(events.rematch_frame(message)))

    def _settled(self) -> tuple[str, str, list[datetime | None]]:
        """At a moment of the race's: finish it if it is overdue (a write of this socket's
        timer, not of a read), then its frame."""
        race = race_selectors.race_by_code(self.code)
        if race_selectors.race_overdue(race, clock.shared_now()):
            race_services.race_finish(race_id=race.pk)
        return self._race()

    def _race(self) -> tuple[str, str, list[datetime | None]]:
        """The race as read now: its frame's text, status and moments (``_sent``)."""
        view = shapes.race(race_selectors.race_by_code(self.code), self.scope.get("user"))
        kind = "race.finished" if view["status"] == "finished" else "race.state"
        return self._sent({"type": kind, "race": view})

    @staticmethod
    def _sent(frame: dict[str, Any]) -> tuple[str, str, list[datetime | None]]:
        """A race frame's text, its status, and the moments to wake at (its start and
        time limit, while it is not finished)."""
        race = frame["race"]
        status = race["status"]
        moments = [] if status == "finished" else [race["starts_at"], race["ends_at"]]
        return _dumps(frame), status, [_instant(m) for m in moments]


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any other WebSocket path: accepted, then closed with 4404."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND, reason="no WebSocket endpoint here")
