"""The error answers each REST operation documents (OpenAPI), in the one envelope: their
statuses, the meaning of each conflict code, and examples."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
)

from api import serializers as s


def errors(*codes: int, conflicts: tuple[str, ...] = ()) -> dict[int, OpenApiResponse]:
    """Schema entries for error responses, all in the one envelope.

    ``conflicts`` are the codes this operation answers with 409.
    """
    assert (409 in codes) == bool(conflicts), "a 409 lists its codes"
    text = {
        400: "Invalid input, a body that is not JSON, or an illegal move (`validation_error`, "
        "`parse_error`, `bad_notation`, `illegal_move`).",
        401: "Not authenticated, a bad token, or a wrong user name or password "
        "(`not_authenticated`, `authentication_failed`).",
        403: "A session without its CSRF token (send the `csrftoken` cookie's value as the "
        "`X-CSRFToken` header; a request with a token needs none), or permission denied "
        "(`permission_denied`, `not_creator`, `guest_not_allowed`: a guest plays practice "
        "games only).",
        404: "No such object of yours (`not_found`).",
        406: "The `Accept` header allows no JSON (`not_acceptable`).",
        409: "Conflict with the game's state: "
        + ", ".join(f"`{code}`" for code in conflicts)
        + ". "
        + " ".join(CONFLICTS[code] for code in conflicts),
        413: "The request body is over 64 KiB (`request_too_large`).",
        415: "The body is not `application/json` (`unsupported_media_type`).",
        429: "Too many requests (`throttled`, `hint_in_progress`, `race_limit`, "
        "`guest_limit`); see the "
        "Retry-After header.",
        503: "Not now (`hint_busy`, `hint_timeout`, `hint_unavailable`, `daily_not_ready`, "
        "`race_pool_empty`); see "
        "the Retry-After header.",
    }
    return {c: OpenApiResponse(s.ErrorSerializer, description=text[c]) for c in codes}


#: What each 409 code means, for the operations' descriptions.
CONFLICTS = {
    "stale_ply": "`stale_ply`: `ply` is behind the game (it moved on); `details.ply` is the "
    "game's ply, read the game again. Resending the entry already stored at that ply is "
    "not an error: it answers 200 with `duplicate: true`.",
    "bad_ply": "`bad_ply`: `ply` is ahead of the game (more entries than it has); "
    "`details.ply` is the game's ply.",
    "game_finished": "`game_finished`: the game has ended, whatever the ply.",
    "undo_not_allowed": "`undo_not_allowed`: nothing to undo, or a ranked game's undo would "
    "take back a move that revealed a stock card.",
    "hint_not_allowed": "`hint_not_allowed`: a ranked game gets no hints, nor any game of a "
    "daily whose day is not over.",
    "day_over": "`day_over`: a ranked daily whose day has ended takes no more moves; it "
    "ends as expired and counts as not won, with the cards it had home.",
    "race_not_started": "`race_not_started`: a race's game takes moves from the race's start "
    "on (`details.starts_at`).",
    "race_over": "`race_over`: a race's game takes no moves after the race's time limit.",
    "already_racing": "`already_racing`: you are in another race that has not finished.",
    "race_full": "`race_full`: the race has 8 players.",
    "race_started": "`race_started`: the race has started; nobody joins or leaves it.",
    "too_few_players": "`too_few_players`: a race starts with 2 players or more.",
    "race_not_finished": "`race_not_finished`: only a finished race has replays, rematches "
    "and analyses.",
    "game_not_finished": "`game_not_finished`: the game is still being played.",
    "day_not_over": "`day_not_over`: a daily's games are analysed once its day is over.",
}

#: The 409 codes of a request that carries a ply.
PLY_CONFLICTS = (
    "stale_ply",
    "bad_ply",
    "game_finished",
    "day_over",
    "race_not_started",
    "race_over",
)


STALE_EXAMPLE = OpenApiExample(
    "stale ply",
    status_codes=["409"],
    response_only=True,
    value={
        "error": {
            "code": "stale_ply",
            "message": "you sent ply 11 but the game is at ply 12",
            "details": {"ply": 12},
        }
    },
)
ILLEGAL_EXAMPLE = OpenApiExample(
    "illegal move",
    status_codes=["400"],
    response_only=True,
    value={
        "error": {
            "code": "illegal_move",
            "message": "t1-t2: 7H goes only on a card one rank higher, not 9C",
            "details": {},
        }
    },
)
