"""Rules engine for Bristol and Picture Gallery patience, with their variants.

Pure Python, standard library only: no Django, no I/O. Positions are immutable
values; a server stores the move log and replays it.

Variants (keys): ``bristol``, ``belvedere``, ``picture-gallery``,
``royal-parade``, ``picture-gallery-reversed``, ``mod3``.

Deal a game from a seed (the project's portable shuffle, see
:mod:`games.engine.shuffle`) or from an explicit deck order, ask for the legal
moves, and apply moves written in the spec's notation:

>>> from games.engine import new_position, Move, IllegalMoveError
>>> pos = new_position("bristol", seed=7)
>>> pos.status.value, pos.score, pos.stock_count
('playing', 0, 25)
>>> Move.parse("deal") in pos.legal_moves
True
>>> after = pos.apply("deal")
>>> after.ply, after.stock_count, pos.stock_count   # pos itself is unchanged
(1, 22, 25)
>>> try:
...     pos.apply("t1-r1")
... except IllegalMoveError as exc:
...     print(exc.code)
illegal_move

Moves are small values with a text form both ways:

>>> str(Move("t3", "f")), Move.parse("g4-a")
('t3-f', Move(src='g4', dst='a', reverse=False))

A position has a full JSON form (the stock included) and a public one that
shows the stock only as a count:

>>> full = pos.to_json()
>>> len(full["piles"]["s"]), pos.public_json()["stock"], "s" in pos.public_json()["piles"]
(25, 25, False)
>>> Position.from_json(full) == pos
True

Replaying a move list reports the first bad move and its index:

>>> from games.engine import replay, ReplayError
>>> try:
...     replay("picture-gallery", ["deal", "r1-r1"], seed=1)
... except ReplayError as exc:
...     print(exc.index, exc.code)
1 illegal_move

A server stores a game as its move log (moves and ``undo`` entries);
:class:`GameLog` (:mod:`games.engine.log`) replays it and decides undos and
retries.

Errors are :class:`EngineError` (a ``ValueError``) subclasses with a stable
``code``: ``bad_notation``, ``illegal_move``, ``game_over``,
``unknown_variant``, ``bad_position``, ``undo_not_allowed``.
"""

from .bristol import BristolPosition
from .cards import Card, card_text, parse_card
from .errors import (
    BadNotationError,
    BadPositionError,
    EngineError,
    GameOverError,
    IllegalMoveError,
    ReplayError,
    UnknownVariantError,
)
from .gallery import GalleryPosition
from .log import UNDO, GameLog, UndoNotAllowedError
from .moves import DEAL, DEAL_REVERSE, Move
from .position import Position, Status, deck_order, new_position, replay
from .safe import finish_line, safe_moves
from .shuffle import SEED_LIMIT
from .variants import VARIANTS, Family, Variant, get_variant

__all__ = [
    "DEAL",
    "DEAL_REVERSE",
    "SEED_LIMIT",
    "UNDO",
    "VARIANTS",
    "BadNotationError",
    "BadPositionError",
    "BristolPosition",
    "Card",
    "EngineError",
    "Family",
    "GalleryPosition",
    "GameLog",
    "GameOverError",
    "IllegalMoveError",
    "Move",
    "Position",
    "ReplayError",
    "Status",
    "UndoNotAllowedError",
    "UnknownVariantError",
    "Variant",
    "card_text",
    "deck_order",
    "finish_line",
    "get_variant",
    "new_position",
    "parse_card",
    "replay",
    "safe_moves",
]
