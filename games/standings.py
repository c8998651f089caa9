"""The one order of standings: a day's board (``Result.sort_key``) and a race's places.

A key is a fixed-width string, smaller is better, so a board is ordered by one
ascending column and Redis orders its mirror by the key's bytes (``games.boards``).

Won games come first: on a day's board by fewer moves then less time, in a race by
less time then fewer moves (a race is about speed). Games not won are ordered the
same way everywhere, so that doing nothing or quitting first never pays:

1. more cards home;
2. fewer log entries to reach them (``reach``: the entries after which the score last
   rose to its final value; 0 with no card home beyond the deal's, so all of those tie
   here);
3. more log entries: of two players with the same cards home, the one who kept playing
   ranks above the one who never moved (a player who never moved outranked one with 65
   entries when fewer moves ranked higher);
4. the later finish: of two who quit at the same point, the one who held on longer
   (the first to resign took first place when the earlier finish ranked higher);
5. the game id, so that keys are unique and keyset paging is exact.
"""

from __future__ import annotations

MAX_MOVES = 999_999
MAX_TIME_MS = 10**11 - 1
MAX_FINISHED_MS = 10**13 - 1


def standing_key(
    *,
    won: bool,
    cards_missing: int,
    moves: int,
    time_ms: int,
    finished_ms: int,
    game_id: int,
    reach: int = 0,
    by_time: bool = False,
) -> str:
    """A game's place in the order (smaller is better); ``by_time`` for a race's winners."""
    moves = min(moves, MAX_MOVES)
    time_ms = min(time_ms, MAX_TIME_MS)
    finished_ms = min(finished_ms, MAX_FINISHED_MS)
    if won:
        speed = f"{time_ms:011d}{moves:06d}" if by_time else f"{moves:06d}{time_ms:011d}"
        return f"0{cards_missing:03d}{speed}{finished_ms:013d}{game_id:012d}"
    return (
        f"1{cards_missing:03d}{min(reach, MAX_MOVES):06d}{MAX_MOVES - moves:06d}"
        f"{MAX_FINISHED_MS - finished_ms:013d}{game_id:012d}"
    )


def reach_of(scores: list[int], start: int = 0) -> int:
    """Log entries after which the score last rose to its final value (``scores[k]``: the
    score after ``k + 1`` entries; ``start``: the deal's own, 1 in Belvedere, whose aces
    start home); 0 when it never rose above the deal's, so a player who never moved
    does not reach the cards the deal gave them "sooner" than one who played on."""
    final = scores[-1] if scores else start
    reach = 0
    before = start
    for k, score in enumerate(scores, start=1):
        if score != before and score == final:
            reach = k
        before = score
    return reach if final > start else 0
