"""The project's own portable shuffle: SplitMix64 driving a Fisher-Yates shuffle.

Why not :func:`random.shuffle`: its output is not promised across Python
versions. This algorithm is fully specified here, uses only 64-bit integer
arithmetic, and therefore yields the same deck on every platform and version:

1. State ``x`` starts as the seed (``0 <= seed < 2**64``).
2. Each draw: ``x = (x + 0x9E3779B97F4A7C15) mod 2**64``; then
   ``z = x``; ``z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 mod 2**64``;
   ``z = (z ^ (z >> 27)) * 0x94D049BB133111EB mod 2**64``; the draw is ``z ^ (z >> 31)``.
3. A uniform integer in ``[0, n)``: draw ``d`` until ``d < 2**64 - (2**64 mod n)``
   (rejection removes modulo bias), then take ``d mod n``.
4. Fisher-Yates: for ``i`` from ``len - 1`` down to ``1``, swap item ``i`` with
   item ``j``, ``j`` uniform in ``[0, i]``.

The input is the variant's canonical deck (:func:`games.engine.cards.standard_deck`),
the output is the deck order, first card dealt first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

from .errors import BadPositionError

T = TypeVar("T")

MASK64 = (1 << 64) - 1
SEED_LIMIT = 1 << 64


def splitmix64(seed: int) -> Iterator[int]:
    """Endless stream of 64-bit draws from ``seed``."""
    x = seed
    while True:
        x = (x + 0x9E3779B97F4A7C15) & MASK64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def check_seed(seed: int) -> int:
    """Return ``seed`` if it is a valid deal seed, else raise :class:`BadPositionError`."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise BadPositionError(f"seed must be an integer with 0 <= seed < 2**64, got {seed!r}")
    return seed


def shuffled(items: list[T], seed: int) -> list[T]:
    """A new list with ``items`` in the seed's order (the original is untouched)."""
    draws = splitmix64(check_seed(seed))
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        limit = SEED_LIMIT - (SEED_LIMIT % n)
        d = next(draws)
        while d >= limit:
            d = next(draws)
        j = d % n
        out[i], out[j] = out[j], out[i]
    return out
