"""Moves: small immutable values with a text form both ways.

The forms are ``SRC-DST`` (``t3-t5``, ``r1-f``, ``g4-a``), ``deal`` and
``deal-reverse``. :meth:`Move.parse` checks only the syntax; whether the piles
exist in a game and the move is legal is the position's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import BadNotationError

_PILE = r"[a-z][0-9]{0,2}"
_SYNTAX = re.compile(rf"({_PILE})-({_PILE})")

DEAL_TEXT = "deal"
DEAL_REVERSE_TEXT = "deal-reverse"


@dataclass(frozen=True, slots=True)
class Move:
    """One move. ``src``/``dst`` are pile ids; both are empty for a deal.

    >>> Move.parse("t3-f")
    Move(src='t3', dst='f', reverse=False)
    >>> str(Move.parse("deal-reverse"))
    'deal-reverse'
    """

    src: str = ""
    dst: str = ""
    reverse: bool = False

    @classmethod
    def parse(cls, text: str) -> Move:
        """Move from its text; raises :class:`BadNotationError` on bad syntax."""
        if not isinstance(text, str):
            raise BadNotationError(f"a move is a text such as 't3-f' or 'deal', not {text!r}")
        if text == DEAL_TEXT:
            return DEAL
        if text == DEAL_REVERSE_TEXT:
            return DEAL_REVERSE
        m = _SYNTAX.fullmatch(text)
        if m is None:
            raise BadNotationError(
                f"{text[:40]!r} is not a move: write SRC-DST (e.g. 't3-f', 'g4-a'), "
                "'deal' or 'deal-reverse'"
            )
        return cls(m.group(1), m.group(2))

    @property
    def is_deal(self) -> bool:
        """True for ``deal`` and ``deal-reverse``."""
        return not self.src

    def __str__(self) -> str:
        if not self.src:
            return DEAL_REVERSE_TEXT if self.reverse else DEAL_TEXT
        return f"{self.src}-{self.dst}"


DEAL = Move()
DEAL_REVERSE = Move(reverse=True)
