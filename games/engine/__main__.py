"""Command line: play a game in the terminal, or print a deal as JSON.

python -m games.engine play bristol --seed 7
python -m games.engine deal picture-gallery --seed 7 --json
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import Sequence
from typing import TextIO

from .errors import EngineError
from .position import Position, new_position
from .shuffle import SEED_LIMIT
from .variants import VARIANTS

HELP = "Type a move (e.g. t3-f, r1-t5, g4-a, deal), 'moves', 'json', 'help' or 'quit'."


def _seed(text: str) -> int:
    value = int(text)
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError("the seed must satisfy 0 <= seed < 2**64")
    return value


def render(pos: Position) -> str:
    """A readable view: piles by id, the stock as a count, status, score and legal moves."""
    moves = " ".join(str(m) for m in pos.legal_moves) or "(none)"
    return (
        f"{pos.variant.name} - move {pos.ply} - {pos.status.value} - "
        f"score {pos.score}/{pos.variant.card_count}\n{pos}\nlegal: {moves}"
    )


def play(pos: Position, stdin: TextIO, stdout: TextIO) -> Position:
    """Read moves from ``stdin`` until the game ends or input runs out."""
    print(render(pos), file=stdout)
    print(HELP, file=stdout)
    while not pos.is_over:
        print("> ", end="", file=stdout, flush=True)
        line = stdin.readline()
        if not line:
            break
        text = line.strip()
        if not text:
            continue
        if text in ("quit", "exit", "q"):
            break
        if text == "help":
            print(HELP, file=stdout)
        elif text == "moves":
            print(" ".join(str(m) for m in pos.legal_moves), file=stdout)
        elif text == "json":
            print(json.dumps(pos.public_json()), file=stdout)
        else:
            try:
                pos = pos.apply(text)
            except EngineError as exc:
                print(f"error [{exc.code}]: {exc}", file=stdout)
                continue
            print(render(pos), file=stdout)
    print(f"game {pos.status.value} with score {pos.score} after {pos.ply} moves", file=stdout)
    return pos


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m games.engine``."""
    parser = argparse.ArgumentParser(prog="python -m games.engine", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("play", "play in the terminal"), ("deal", "print a starting position")):
        p = sub.add_parser(name, help=text)
        p.add_argument("variant", choices=sorted(VARIANTS))
        p.add_argument("--seed", type=_seed, help="0 <= seed < 2**64 (random if absent)")
        if name == "deal":
            p.add_argument("--json", action="store_true", help="full JSON, stock included")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else secrets.randbelow(SEED_LIMIT)
    pos = new_position(args.variant, seed=seed)
    if args.command == "deal":
        print(json.dumps(pos.to_json(), indent=2) if args.json else render(pos))
        return 0
    print(f"seed {seed}")
    play(pos, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
