"""Fair-play signals of ranked daily games and the flags they raise on results.

A ranked daily shows its stock card by card as it is dealt, so a second account can
deal the whole stock, learn the deck, and the main account can play a solver's line.
The game cannot be hidden from its player; like live services with public boards,
the service notices instead: it records a few signals, turns them into flags with
stable reason codes (``ResultFlag.Reason``) and puts the result in the review queue
of the admin, where an admin clears or disqualifies it
(``games.services.results.result_review``). The result stays on the board meanwhile.

Privacy: the network (IPv4 /24, IPv6 /64) and the browser string are kept only as
keyed hashes (``salted_hmac`` with the server's secret) whose key changes with the
daily's day: two games of the same daily can be linked, nothing can be linked across
days, and no address can be read back. What this cannot catch: docs/fair-play.md.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import pairwise
from statistics import median

from django.utils.crypto import salted_hmac

from core import clock
from games.models import UNDO, Game, PlaySignal, Result, ResultFlag
from games.selectors.games import game_entries

#: Signals are deleted this long after their daily's day (``play_signals_purge``): the
#: flags they raised stay, and by then a review has had its time.
SIGNAL_KEEP = timedelta(days=30)
#: A win from an account younger than this is flagged (``new_account``).
NEW_ACCOUNT_AGE = timedelta(days=1)
#: A won line that starts with this many moves of the par (or all of a shorter par) ...
PAR_MATCH_MOVES = 30
#: ... and a game of at least this many moves whose median time between moves is under
#: ``FAST_MEDIAN_MS`` (a person reads the cards; a script does not).
FAST_MIN_MOVES = 20
FAST_MEDIAN_MS = 250


@dataclass(frozen=True)
class ClientSignal:
    """What a request tells of its client, as received (hashed when recorded)."""

    address: str
    user_agent: str


def _network(address: str) -> str:
    """The network of an address: IPv4 /24, IPv6 /64 (a home or an office, not a device)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    prefix = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def _hashed(kind: str, day: date, value: str) -> str:
    return salted_hmac(f"games.fairplay.{kind}.{day.isoformat()}", value).hexdigest()[:16]


def play_signal_record(*, game: Game, client: ClientSignal) -> PlaySignal | None:
    """Keep the hashed signals of a ranked daily game's client (None for other games)."""
    day = game.deal.date
    if not game.ranked or day is None:
        return None
    signal, _ = PlaySignal.objects.update_or_create(
        game=game,
        defaults={
            "network": _hashed("network", day, _network(client.address)),
            "device": _hashed("device", day, client.user_agent),
        },
    )
    return signal


def play_signals_purge() -> int:
    """Delete the signals of dailies older than ``SIGNAL_KEEP``; returns how many (run by
    ``manage.py create_dailies``, hourly)."""
    oldest = clock.today() - SIGNAL_KEEP
    deleted, _ = PlaySignal.objects.filter(game__deal__date__lt=oldest).delete()
    return deleted


def _par_match(result: Result, moves: list[str]) -> str | None:
    par = result.deal.par_line
    if not result.won or not par:
        return None
    same = next((i for i, (a, b) in enumerate(zip(moves, par, strict=False)) if a != b), None)
    same = min(len(moves), len(par)) if same is None else same
    if same < min(len(par), PAR_MATCH_MOVES):
        return None
    return f"its first {same} moves are the par's (par {len(par)}, played {len(moves)})"


def _linked(game: Game) -> str | None:
    signal = PlaySignal.objects.filter(game=game).first()
    if signal is None:
        return None
    others = (
        PlaySignal.objects.filter(network=signal.network, game__deal=game.deal_id)
        .exclude(game__player=game.player_id)
        .filter(game__started_at__lt=game.finished_at)
        .select_related("game__player")
        .order_by("game__started_at")
    )
    seen = [
        f"{s.game.player.get_username()} (game {s.game_id}"
        + (", same browser" if s.device == signal.device else "")
        + ")"
        for s in others[:5]
    ]
    return "played earlier on the same network by " + ", ".join(seen) if seen else None


def _fast(times: list) -> str | None:
    gaps_ms = [(b - a) / timedelta(milliseconds=1) for a, b in pairwise(times)]
    if len(gaps_ms) < FAST_MIN_MOVES - 1:
        return None
    typical = median(gaps_ms)
    if typical >= FAST_MEDIAN_MS:
        return None
    return f"median {typical:.0f} ms between {len(times)} moves"


def _new_account(result: Result, game: Game) -> str | None:
    age = result.finished_at - game.player.date_joined
    if not result.won or age >= NEW_ACCOUNT_AGE:
        return None
    return f"account {age // timedelta(minutes=1)} minutes old"


def result_flags_record(result: Result, game: Game) -> list[ResultFlag]:
    """Flag a new result with every signal that fired, and queue it for review if any
    did (inside the transaction that entered it)."""
    log = [(entry.notation, entry.created_at) for entry in game_entries(game)]
    moves = [notation for notation, _ in log if notation != UNDO]
    seen = {
        ResultFlag.Reason.PAR_LINE: _par_match(result, moves),
        ResultFlag.Reason.LINKED_ACCOUNT: _linked(game),
        ResultFlag.Reason.FAST_MOVES: _fast([at for _, at in log]),
        ResultFlag.Reason.NEW_ACCOUNT: _new_account(result, game),
    }
    flags = [
        ResultFlag.objects.create(result=result, reason=reason, detail=detail[:200])
        for reason, detail in seen.items()
        if detail is not None
    ]
    if flags:
        result.review = Result.Review.PENDING
        result.save(update_fields=["review"])
    return flags
