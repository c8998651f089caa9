"""Positions: immutable snapshots of a game, with legal moves and move application.

A position never changes; :meth:`Position.apply` returns a new one. Piles are
tuples of integer cards, bottom to top, in the spec's pile order, so a position
is cheap to copy, hash and compare (the solver relies on that).
Each family (Bristol, Gallery) is a subclass that supplies the layout and rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, ClassVar

from .cards import Card, card_text, cards_text, parse_card
from .errors import (
    BadNotationError,
    BadPositionError,
    EngineError,
    GameOverError,
    IllegalMoveError,
    ReplayError,
)
from .moves import DEAL, DEAL_REVERSE, Move
from .shuffle import shuffled
from .variants import Family, Variant, get_variant

Piles = tuple[tuple[Card, ...], ...]

#: Pseudo destination indices used in the move tables.
TO_FOUNDATION = -1
DEAL_INDEX = -2
DEAL_REVERSE_INDEX = -3


class Status(StrEnum):
    """Game status. The engine derives the first three; ``resigned`` is set by a server."""

    PLAYING = "playing"
    WON = "won"
    LOST = "lost"
    RESIGNED = "resigned"


class Position:
    """A position of one variant: its piles (bottom to top) and the number of moves played."""

    __slots__ = ("variant", "piles", "ply", "_legal")

    #: Pile ids in the spec's order; the stock ``s`` is always last.
    PILE_IDS: ClassVar[tuple[str, ...]]
    #: Destination ids that are written differently from pile ids (Bristol's ``f``).
    EXTRA_DESTINATIONS: ClassVar[dict[str, int]] = {}
    #: Pile ids that are never a destination in the notation.
    NOT_DESTINATIONS: ClassVar[frozenset[str]] = frozenset()
    FAMILY: ClassVar[Family]

    _INDEX: ClassVar[dict[str, int]]
    _TABLE: ClassVar[dict[str, tuple[Move, int, int]]]
    _BY_MOVE: ClassVar[dict[Move, tuple[int, int]]]
    _CLASSES: ClassVar[dict[Family, type[Position]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._INDEX = {pid: i for i, pid in enumerate(cls.PILE_IDS)}
        dests = {p: i for p, i in cls._INDEX.items() if p not in cls.NOT_DESTINATIONS}
        dests.update(cls.EXTRA_DESTINATIONS)
        table: dict[str, tuple[Move, int, int]] = {
            "deal": (DEAL, DEAL_INDEX, DEAL_INDEX),
            "deal-reverse": (DEAL_REVERSE, DEAL_REVERSE_INDEX, DEAL_REVERSE_INDEX),
        }
        for src, si in cls._INDEX.items():
            for dst, di in dests.items():
                move = Move(src, dst)
                table[str(move)] = (move, si, di)
        cls._TABLE = table
        cls._BY_MOVE = {m: (si, di) for m, si, di in table.values()}
        Position._CLASSES[cls.FAMILY] = cls

    def __init__(self, variant: Variant, piles: Piles, ply: int = 0) -> None:
        """Trusted constructor: no checks. Use the ``from_*`` constructors for outside data."""
        self.variant = variant
        self.piles = piles
        self.ply = ply
        self._legal: tuple[Move, ...] | None = None

    # -- construction ---------------------------------------------------------------------

    @staticmethod
    def class_for(variant: Variant | str) -> type[Position]:
        """The position class of a variant's family."""
        return Position._CLASSES[get_variant(variant).family]

    @classmethod
    def from_deck(cls, variant: Variant | str, deck: Sequence[str | Card]) -> Position:
        """Deal from an explicit deck order (card codes or ints), first card dealt first."""
        v = get_variant(variant)
        cards = [parse_card(c) if isinstance(c, str) else c for c in deck]
        expected = Counter(v.deck())
        if Counter(cards) != expected:
            raise BadPositionError(
                f"a {v.key} deck has {v.card_count} cards "
                f"({v.decks} deck(s){', no Aces' if v.aces_removed else ''}); "
                f"got {len(cards)} cards that are not that set"
            )
        sub = Position.class_for(v)
        return sub(v, sub._deal(v, cards), 0)

    @classmethod
    def from_seed(cls, variant: Variant | str, seed: int) -> Position:
        """Deal the deck order that the project's shuffle makes from ``seed``."""
        v = get_variant(variant)
        return cls.from_deck(v, deck_order(v, seed))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Position:
        """Read a position back from :meth:`to_json`; raises :class:`BadPositionError`."""
        if not isinstance(data, Mapping):
            raise BadPositionError("a position is a JSON object")
        v = get_variant(data.get("variant", ""))
        sub = Position.class_for(v)
        ply = data.get("ply")
        if isinstance(ply, bool) or not isinstance(ply, int) or ply < 0:
            raise BadPositionError("'ply' must be an integer >= 0")
        raw = data.get("piles")
        # JSON objects are unordered (PostgreSQL's jsonb, for one, reorders keys): compare sets.
        if not isinstance(raw, Mapping) or set(raw) != set(sub.PILE_IDS):
            raise BadPositionError(f"'piles' must have exactly the keys {', '.join(sub.PILE_IDS)}")
        piles = []
        for pid in sub.PILE_IDS:
            codes = raw[pid]
            if not isinstance(codes, list):
                raise BadPositionError(f"pile {pid} must be a list of card codes")
            try:
                piles.append(tuple(parse_card(c) for c in codes))
            except BadNotationError as exc:
                raise BadPositionError(f"pile {pid}: {exc}") from None
        if Counter(c for p in piles for c in p) != Counter(v.deck()):
            raise BadPositionError(f"the piles do not hold exactly the {v.key} deck")
        pos = sub(v, tuple(piles), ply)
        pos._validate()
        return pos

    # -- family hooks ---------------------------------------------------------------------

    @classmethod
    def _deal(cls, variant: Variant, deck: list[Card]) -> Piles:
        raise NotImplementedError

    def _generate(self) -> list[Move]:
        raise NotImplementedError

    def _why_illegal(self, si: int, di: int) -> str | None:
        raise NotImplementedError

    def _after(self, si: int, di: int) -> Piles:
        raise NotImplementedError

    def _validate(self) -> None:
        raise NotImplementedError

    @property
    def score(self) -> int:
        """Cards home; equals ``variant.card_count`` exactly when the game is won."""
        raise NotImplementedError

    # -- reading --------------------------------------------------------------------------

    @property
    def stock_count(self) -> int:
        """Cards left in the stock."""
        return len(self.piles[-1])

    @property
    def legal_moves(self) -> tuple[Move, ...]:
        """Every legal move, each once, in pile order; empty once the game is over."""
        if self._legal is None:
            self._legal = () if self.is_won else tuple(self._generate())
        return self._legal

    @property
    def is_won(self) -> bool:
        """All cards home."""
        return self.score == self.variant.card_count

    @property
    def status(self) -> Status:
        """``won``, ``lost`` (no legal move and the stock empty) or ``playing``."""
        if self.is_won:
            return Status.WON
        return Status.PLAYING if self.legal_moves else Status.LOST

    @property
    def is_over(self) -> bool:
        """True once the game is won or lost."""
        return self.status is not Status.PLAYING

    def pile(self, pile_id: str) -> list[str]:
        """Card codes of one pile, bottom to top."""
        try:
            return cards_text(self.piles[self._INDEX[pile_id]])
        except KeyError:
            raise BadNotationError(f"no pile {pile_id!r} in {self.variant.key}") from None

    def top(self, pile_id: str) -> str | None:
        """Code of a pile's top card, or None if the pile is empty."""
        cards = self.pile(pile_id)
        return cards[-1] if cards else None

    def to_json(self) -> dict[str, Any]:
        """Full form: every pile, the stock included, in the spec's pile order."""
        return {
            "variant": self.variant.key,
            "ply": self.ply,
            "piles": {pid: cards_text(p) for pid, p in zip(self.PILE_IDS, self.piles, strict=True)},
        }

    def public_json(self) -> dict[str, Any]:
        """What a player may see: every pile but the stock, which is only counted."""
        return {
            "variant": self.variant.key,
            "ply": self.ply,
            "piles": {
                pid: cards_text(p) for pid, p in zip(self.PILE_IDS[:-1], self.piles, strict=False)
            },
            "stock": self.stock_count,
        }

    # -- moving ---------------------------------------------------------------------------

    def parse_move(self, move: Move | str) -> Move:
        """A move of this game's notation; raises :class:`BadNotationError` otherwise."""
        text = move if isinstance(move, str) else str(move)
        entry = self._TABLE.get(text)
        if entry is None:
            raise self._bad_notation(text)
        return entry[0]

    def parse_legal(self, text: str) -> Move:
        """The move that ``text`` writes, if it is legal here (as python-chess's
        ``Board.parse_uci``): one call for a server that takes moves as text.

        Raises :class:`BadNotationError` for text that is not a move of this game,
        :class:`IllegalMoveError` for a move the rules refuse here, and
        :class:`GameOverError` once the game is over.

        >>> pos = new_position("bristol", seed=7)
        >>> pos.parse_legal("deal")
        Move(src='', dst='', reverse=False)
        >>> for text in ("t1-r1", "t9-f", 7):
        ...     try:
        ...         pos.parse_legal(text)
        ...     except EngineError as exc:
        ...         print(exc.code)
        illegal_move
        bad_notation
        bad_notation
        """
        return self._check(text)[0]

    def _bad_notation(self, text: str) -> BadNotationError:
        """The error for text that is not a move of this game, saying why."""
        parsed = Move.parse(text)  # raises on bad syntax
        return BadNotationError(
            f"{text!r}: {self._notation_hint(parsed)} in {self.variant.key}; "
            f"piles are {', '.join(self.PILE_IDS)}"
        )

    def _notation_hint(self, move: Move) -> str:
        if move.src not in self._INDEX:
            if move.src in self.EXTRA_DESTINATIONS:
                return f"{move.src!r} is only a destination"
            return f"there is no pile {move.src!r}"
        if move.dst not in self._INDEX and move.dst not in self.EXTRA_DESTINATIONS:
            return f"there is no pile {move.dst!r}"
        return f"{move.dst!r} is not written as a destination"

    def is_legal(self, move: Move | str) -> bool:
        """True if the move parses and is legal here."""
        try:
            self._check(move)
        except EngineError:
            return False
        return True

    def _check(self, move: Move | str) -> tuple[Move, int, int]:
        """The move, its source and its destination index, if the move is legal here."""
        text = move if isinstance(move, str) else str(move)
        entry = self._TABLE.get(text)
        if entry is None:
            raise self._bad_notation(text)
        _, si, di = entry
        why = self._why_illegal(si, di)
        if why is None and not self.is_won:
            return entry
        if self.is_over:
            raise GameOverError(f"{text}: the game is over ({self.status.value})")
        raise IllegalMoveError(f"{text}: {why}")

    def apply(self, move: Move | str) -> Position:
        """The position after a legal move; raises an :class:`EngineError` otherwise.

        The position itself never changes, so a refused move changes nothing.
        """
        _, si, di = self._check(move)
        return type(self)(self.variant, self._after(si, di), self.ply + 1)

    def play(self, moves: Iterable[Move | str]) -> Position:
        """Apply several moves in order; raises :class:`ReplayError` at the first bad one."""
        pos = self
        for i, m in enumerate(moves):
            try:
                pos = pos.apply(m)
            except EngineError as exc:
                raise ReplayError(i, str(m), exc) from exc
        return pos

    # -- values ---------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return (self.variant, self.ply, self.piles) == (other.variant, other.ply, other.piles)

    def __hash__(self) -> int:
        return hash((self.variant.key, self.ply, self.piles))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.variant.key} ply={self.ply} {self.status.value}>"

    def __str__(self) -> str:
        lines = []
        for pid, p in zip(self.PILE_IDS[:-1], self.piles, strict=False):
            lines.append(f"{pid:>3}: {' '.join(card_text(c) for c in p) or '--'}")
        lines.append(f"  s: {self.stock_count} card(s)")
        return "\n".join(lines)


def deck_order(variant: Variant | str, seed: int) -> list[str]:
    """The deck order (card codes, first dealt first) that ``seed`` gives a variant."""
    v = get_variant(variant)
    return cards_text(shuffled(v.deck(), seed))


def new_position(
    variant: Variant | str, *, seed: int | None = None, deck: Sequence[str] | None = None
) -> Position:
    """Starting position from exactly one of ``seed`` or ``deck``."""
    if deck is not None and seed is None:
        return Position.from_deck(variant, deck)
    if seed is not None and deck is None:
        return Position.from_seed(variant, seed)
    raise BadPositionError("give exactly one of seed or deck")


def replay(
    variant: Variant | str,
    moves: Iterable[Move | str],
    *,
    seed: int | None = None,
    deck: Sequence[str] | None = None,
) -> Position:
    """Deal from ``seed`` or ``deck`` and play ``moves``; raises :class:`ReplayError`."""
    return new_position(variant, seed=seed, deck=deck).play(moves)
