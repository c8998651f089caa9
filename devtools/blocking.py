"""The self-blocking attack on race ratings: a player who wants a race over fast deals the
whole stock, then searches the cards now all visible for a position with no legal move
(``lost``). ``tests/games/test_race_ratings.py`` and ``bench/fairplay.py`` replay it."""

from __future__ import annotations

from collections import deque

from games.engine import UNDO, Position, Status, new_position

#: Moves searched after the stock is dealt (the attack found dead ends within 8).
MOST_MOVES = 8
#: Positions the search looks at, at most, per deal.
MOST_NODES = 50_000


def blocking_line(variant: str, seed: int) -> list[str] | None:
    """The stock dealt, then the fewest moves (up to ``MOST_MOVES``) to a lost position:
    breadth first over distinct positions. None if the search finds no dead end."""
    pos: Position = new_position(variant, seed=seed)
    dealt: list[str] = []
    while "deal" in [str(m) for m in pos.legal_moves]:
        pos = pos.apply("deal")
        dealt.append("deal")
    seen, nodes = {pos}, 0
    queue: deque[tuple[Position, tuple[str, ...]]] = deque([(pos, ())])
    while queue and nodes < MOST_NODES:
        here, line = queue.popleft()
        for move in (str(m) for m in here.legal_moves if str(m) != UNDO):
            after, nodes = here.apply(move), nodes + 1
            if after.status is Status.LOST:
                return [*dealt, *line, move]
            if len(line) + 1 < MOST_MOVES and after not in seen:
                seen.add(after)
                queue.append((after, (*line, move)))
    return None
