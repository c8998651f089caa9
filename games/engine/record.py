"""Compact stored forms: a position in bytes, and a move log packed a few bytes an entry.

A server keeps every move of every game, so the stored form decides the disk and the
write-ahead log a move costs. A move carries about a byte of information (one choice
among some twenty legal moves); the named JSON of the position after it is a
thousand. These forms keep the information and drop the rest.

**A position** (:func:`position_bytes`): a format byte, the variant's index in
:data:`~games.engine.variants.VARIANTS`, the moves on the board (a varint), then each
pile in the spec's order as its length and its cards, a byte a card. A Bristol
position is 71 bytes, a Picture Gallery one 141 (490 and 960 as JSON text).

>>> from games.engine import new_position
>>> pos = new_position("bristol", seed=7).apply("deal")
>>> data = position_bytes(pos)
>>> len(data), position_from_bytes(data) == pos
(71, True)

**A log** (:func:`pack`): each entry is its move's code (a varint: the index of its
notation in the variant family's fixed table, :func:`notations`) and its time in
milliseconds: since the entry before it, the first since the Unix epoch (a zigzag
varint: a clock set back stays exact). A game's first entry so costs a few bytes
more, and no later change of the game's row can shift its entries' times. Entries
are appended, never rewritten, so a new entry's bytes go after the stored ones
(:func:`pack_entry`).

>>> log = pack("bristol", [Entry("deal", 1500), Entry("r1-t4", 800), Entry(UNDO, 90)])
>>> len(log), unpack("bristol", log) == [Entry("deal", 1500), Entry("r1-t4", 800), Entry(UNDO, 90)]
(9, True)

The codes are part of the stored format: a table only ever grows at its end.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from .errors import BadNotationError, BadPositionError
from .log import UNDO
from .position import Position
from .variants import VARIANTS, Variant, get_variant

#: The time the first entry of a log counts from.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: The first byte of a stored position: its format.
POSITION_FORMAT = 1

_VARIANT_KEYS = tuple(VARIANTS)


@dataclass(frozen=True, slots=True)
class Entry:
    """A log entry: its notation (a move or ``undo``) and the milliseconds since the entry
    before it (the first: since the Unix epoch, :data:`EPOCH`)."""

    notation: str
    ms: int


# -- varints ------------------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    """``n`` >= 0 in seven-bit groups, low first, the high bit set on all but the last."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at ``at`` and the offset after it; raises ``IndexError`` when cut short."""
    n = shift = 0
    while True:
        byte = data[at]
        at += 1
        n |= (byte & 0x7F) << shift
        if byte < 0x80:
            return n, at
        shift += 7


def _zigzag(n: int) -> int:
    return n * 2 if n >= 0 else -n * 2 - 1


def _unzigzag(n: int) -> int:
    return n >> 1 if n % 2 == 0 else -(n >> 1) - 1


# -- positions ----------------------------------------------------------------------------------


def position_bytes(pos: Position) -> bytes:
    """The stored form of ``pos``: every pile, the stock included."""
    out = bytearray((POSITION_FORMAT, _VARIANT_KEYS.index(pos.variant.key)))
    out += _varint(pos.ply)
    for pile in pos.piles:
        out.append(len(pile))
        out += bytes(pile)
    return bytes(out)


def position_from_bytes(data: bytes | memoryview) -> Position:
    """A position read back from :func:`position_bytes`, checked as
    :meth:`Position.from_json` checks; raises :class:`BadPositionError`."""
    data = bytes(data)  # a database driver may hand a memoryview
    try:
        if data[0] != POSITION_FORMAT:
            raise BadPositionError(f"not a stored position of format {POSITION_FORMAT}")
        variant = get_variant(_VARIANT_KEYS[data[1]])
        ply, at = _read_varint(data, 2)
        sub = Position.class_for(variant)
        piles = []
        for _ in sub.PILE_IDS:
            size = data[at]
            pile = tuple(data[at + 1 : at + 1 + size])
            if len(pile) != size:
                raise IndexError(at)
            piles.append(pile)
            at += 1 + size
    except IndexError:
        raise BadPositionError("a stored position cut short") from None
    if at != len(data):
        raise BadPositionError("a stored position with bytes after its piles")
    return _checked(variant, sub, tuple(piles), ply)


def _checked(
    variant: Variant, sub: type[Position], piles: tuple[tuple[int, ...], ...], ply: int
) -> Position:
    """The position of these piles, once they hold the variant's deck in a legal layout."""
    if sorted(c for p in piles for c in p) != sorted(variant.deck()):
        raise BadPositionError(f"the piles do not hold exactly the {variant.key} deck")
    pos = sub(variant, piles, ply)
    pos._validate()
    return pos


# -- logs ---------------------------------------------------------------------------------------


@cache
def notations(variant: Variant | str) -> tuple[str, ...]:
    """The variant family's log codes: ``undo`` first, then the notations of its move
    table in the table's order (made from the spec's pile order)."""
    return (UNDO, *Position.class_for(get_variant(variant))._TABLE)


@cache
def _codes(variant: Variant | str) -> dict[str, int]:
    return {notation: code for code, notation in enumerate(notations(variant))}


def pack_entry(variant: Variant | str, notation: str, ms: int) -> bytes:
    """One entry's bytes, to append to a packed log; raises :class:`BadNotationError` for
    a notation the variant has no code for."""
    code = _codes(variant).get(notation)
    if code is None:
        raise BadNotationError(f"no log code for {notation!r} in {get_variant(variant).key}")
    return _varint(code) + _varint(_zigzag(ms))


def pack(variant: Variant | str, entries: Iterable[Entry]) -> bytes:
    """A whole log's bytes."""
    return b"".join(pack_entry(variant, e.notation, e.ms) for e in entries)


def unpack(variant: Variant | str, data: bytes | memoryview) -> list[Entry]:
    """A packed log's entries in order; raises :class:`BadPositionError` for bytes that
    are not one."""
    table, data = notations(variant), bytes(data)  # a database driver may hand a memoryview
    entries, at = [], 0
    try:
        while at < len(data):
            code, at = _read_varint(data, at)
            ms, at = _read_varint(data, at)
            entries.append(Entry(table[code], _unzigzag(ms)))
    except IndexError:
        raise BadPositionError("a packed log cut short or with an unknown code") from None
    return entries
