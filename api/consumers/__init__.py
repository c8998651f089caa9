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
    it already showed that ply and status. A move or undo of a socket names that
    socket's channel as its origin, and the channel layer (``core.fanout``) delivers
    the event to every other socket of the game and race, never to the mover's, which
    has its answer.

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

from api.consumers.base import (
    CLOSE_BAD_REQUEST,
    CLOSE_NOT_FOUND,
    CLOSE_NOT_READY,
    CLOSE_TOO_MANY,
    CLOSE_UNAUTHENTICATED,
    MAX_FRAME,
    NotFoundConsumer,
)
from api.consumers.board import DailyBoardConsumer
from api.consumers.game import GameConsumer
from api.consumers.race import RaceConsumer

__all__ = [
    "CLOSE_BAD_REQUEST",
    "CLOSE_NOT_FOUND",
    "CLOSE_NOT_READY",
    "CLOSE_TOO_MANY",
    "CLOSE_UNAUTHENTICATED",
    "MAX_FRAME",
    "DailyBoardConsumer",
    "GameConsumer",
    "NotFoundConsumer",
    "RaceConsumer",
]
