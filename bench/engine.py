"""Rules engine benchmark: list legal moves, apply a move, replay a 300-move game.

    python bench/engine.py            # full run (under a minute)
    python bench/engine.py --quick    # short run (a few seconds)
    python -m bench.engine            # the same, as a module

For every variant it plays fixed-seed random games (a deal is preferred one time in
five when offered, so the games reach the empty stock) and measures, over the
positions of those games:

- list: the median time to compute ``legal_moves`` of a position. The list is cached
  on the position object, so every timed call runs on a fresh, uncached object built
  from the same piles;
- apply: the median time of ``pos.apply(text)`` for a legal move given as text,
  parsing and validation included;
- replay: the median time of ``replay(variant, moves, seed=...)`` over 300 text moves,
  the shuffle and the deal included. A game that ends (won or lost) before 300 moves
  is chained with the next seeds' games until the moves add up to exactly 300, each
  game replayed from its own deal; the table says how many games a replay held on
  average (Bristol-family games end after about 100 moves; Gallery games run longer).

Times come from ``time.perf_counter_ns`` with the garbage collector off, each figure
the mean of several back-to-back repetitions of one position, then the median over
all positions. The exit status is 1 if any figure misses its target (bench/README.md).
"""

from __future__ import annotations

import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from games.engine import VARIANTS, Family, Position, new_position, replay  # noqa: E402

#: Targets in microseconds (listing by family), and for 300 replayed moves.
#: One replayed move list: (seed, moves) per game, chained until 300 moves.
Chain = list[tuple[int, list[str]]]

LIST_TARGET_US = {Family.BRISTOL: 30.0, Family.GALLERY: 60.0}
APPLY_TARGET_US = 10.0
REPLAY_TARGET_MS = 5.0
REPLAY_MOVES = 300
DEAL_PREFERENCE = 0.2


@dataclass(frozen=True)
class Config:
    games: int  # random games per variant for the listing/apply positions
    max_ply: int  # moves per game at most
    reps: int  # back-to-back repetitions per position
    replays: int  # 300-move replays per variant
    replay_reps: int  # repetitions per replay


FULL = Config(games=40, max_ply=300, reps=20, replays=20, replay_reps=5)
QUICK = Config(games=6, max_ply=150, reps=5, replays=4, replay_reps=2)


def random_game(variant: str, seed: int, max_ply: int) -> tuple[list[Position], list[str]]:
    """A fixed-seed random game: positions (start included, the final one only if still
    playing) and the moves. Moves back to a position already seen are avoided while there
    is another choice, so the games make progress instead of shuttling a card to and fro."""
    rng = random.Random(seed)
    pos = new_position(variant, seed=seed)
    seen = {pos.piles}
    positions: list[Position] = []
    moves: list[str] = []
    while len(moves) < max_ply and not pos.is_over:
        positions.append(pos)
        legal = [str(m) for m in pos.legal_moves]
        deals = [m for m in legal if m.startswith("deal")]
        if deals and rng.random() < DEAL_PREFERENCE:
            move = rng.choice(deals)
        else:
            fresh = [m for m in legal if pos.apply(m).piles not in seen]
            move = rng.choice(fresh or legal)
        moves.append(move)
        pos = pos.apply(move)
        seen.add(pos.piles)
    return positions, moves


def _mean_ns(fn: Callable[[], object], reps: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(reps):
        fn()
    return (time.perf_counter_ns() - t0) / reps


def time_listing(positions: Sequence[Position], reps: int) -> list[float]:
    """Per position: mean ns of ``legal_moves`` on fresh (uncached) position objects."""
    out = []
    for pos in positions:
        cls, variant, piles, ply = type(pos), pos.variant, pos.piles, pos.ply
        fresh = [cls(variant, piles, ply) for _ in range(reps)]
        t0 = time.perf_counter_ns()
        for q in fresh:
            q.legal_moves  # noqa: B018 - the property computes the list
        out.append((time.perf_counter_ns() - t0) / reps)
    return out


def time_apply(positions: Sequence[Position], reps: int, rng: random.Random) -> list[float]:
    """Per position: mean ns of ``apply`` with one random legal move as text."""
    out = []
    for pos in positions:
        move = str(rng.choice(pos.legal_moves))
        apply = pos.apply
        out.append(_mean_ns(partial(apply, move), reps))
    return out


def replay_chains(variant: str, count: int, first_seed: int) -> list[Chain]:
    """``count`` move lists of exactly 300 moves: one game, or games chained when one ends
    (won or lost) before 300 moves; a chain lists (seed, moves) per game."""
    chains, seed = [], first_seed
    for _ in range(count):
        chain, total = [], 0
        while total < REPLAY_MOVES:
            _, moves = random_game(variant, seed, REPLAY_MOVES - total)
            seed += 1
            if moves:
                chain.append((seed - 1, moves))
                total += len(moves)
        chains.append(chain)
    return chains


def time_replay(variant: str, chains: list[Chain], reps: int) -> list[float]:
    """Per chain: mean ns to replay all its games (each dealt from its seed)."""
    out = []
    for chain in chains:

        def run(chain: Chain = chain) -> None:
            for seed, moves in chain:
                replay(variant, moves, seed=seed)

        out.append(_mean_ns(run, reps))
    return out


@dataclass
class Row:
    variant: str
    positions: int
    list_us: float
    list_target: float
    apply_us: float
    replay_ms: float
    games_per_replay: float

    @property
    def ok(self) -> tuple[bool, bool, bool]:
        return (
            self.list_us <= self.list_target,
            self.apply_us <= APPLY_TARGET_US,
            self.replay_ms <= REPLAY_TARGET_MS,
        )


def measure(variant: str, cfg: Config) -> Row:
    v = VARIANTS[variant]
    positions: list[Position] = []
    for seed in range(cfg.games):
        positions += random_game(variant, 1000 + seed, cfg.max_ply)[0]
    chains = replay_chains(variant, cfg.replays, 5000)
    gc.collect()
    gc.disable()
    try:
        listing = time_listing(positions, cfg.reps)
        applying = time_apply(positions, cfg.reps, random.Random(7))
        replays = time_replay(variant, chains, cfg.replay_reps)
    finally:
        gc.enable()
    return Row(
        variant=variant,
        positions=len(positions),
        list_us=statistics.median(listing) / 1e3,
        list_target=LIST_TARGET_US[v.family],
        apply_us=statistics.median(applying) / 1e3,
        replay_ms=statistics.median(replays) / 1e6,
        games_per_replay=statistics.mean(len(c) for c in chains),
    )


def render(rows: Sequence[Row]) -> str:
    head = (
        f"{'variant':<26}{'positions':>10}  {'list moves us':>16}  {'apply us':>13}  "
        f"{'replay 300 ms':>15}  {'result':<6}  note"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        ok = r.ok
        flags = " ".join(("PASS" if o else "FAIL") for o in ok)
        note = (
            "replays: single 300-move games"
            if r.games_per_replay == 1
            else f"replays: {r.games_per_replay:.1f} games chained per 300 moves"
        )
        lines.append(
            f"{r.variant:<26}{r.positions:>10}  "
            f"{r.list_us:>7.1f} (<= {r.list_target:>3.0f})  "
            f"{r.apply_us:>5.1f} (<= {APPLY_TARGET_US:.0f})  "
            f"{r.replay_ms:>6.2f} (<= {REPLAY_TARGET_MS:.0f})  "
            f"{'PASS' if all(ok) else 'FAIL':<6}  {note}"
            + ("" if all(ok) else f"  [list/apply/replay: {flags}]")
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _cli.parser(__doc__, prog="python bench/engine.py")
    parser.add_argument("--quick", action="store_true", help="a short run with fewer samples")
    parser.add_argument(
        "--variant", action="append", choices=sorted(VARIANTS), help="only these variants"
    )
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    variants = args.variant or list(VARIANTS)
    print(
        f"engine benchmark ({'quick' if args.quick else 'full'}): Python "
        f"{platform.python_version()} on {platform.machine()}, medians over positions "
        f"from {cfg.games} random games per variant, {cfg.reps} repetitions each; "
        f"{cfg.replays} replays of 300 moves"
    )
    if hasattr(os, "getloadavg"):
        load = os.getloadavg()[0]
        print(f"load average {load:.2f} on {os.cpu_count()} CPU(s): other work slows the figures")
    t0 = time.perf_counter()
    rows = [measure(v, cfg) for v in variants]
    print(render(rows))
    passed = all(all(r.ok) for r in rows)
    print(f"{'all targets met' if passed else 'TARGETS MISSED'} ({time.perf_counter() - t0:.1f} s)")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
