"""The terminal front end: ``python -m games.engine deal|play``."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from games.engine import new_position
from tests.engine.helpers import ALL_VARIANTS, REPO_ROOT


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "games.engine", *args],
        cwd=REPO_ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_deal_json_prints_the_full_position(variant: str) -> None:
    out = run("deal", variant, "--seed", "7", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == new_position(variant, seed=7).to_json()


def test_deal_without_json_is_readable() -> None:
    out = run("deal", "bristol", "--seed", "7")
    assert out.returncode == 0
    assert "t1:" in out.stdout and "s: 25 card(s)" in out.stdout and "legal:" in out.stdout


def test_deal_with_the_largest_seed() -> None:
    out = run("deal", "mod3", "--seed", str(2**64 - 1), "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout) == new_position("mod3", seed=2**64 - 1).to_json()


@pytest.mark.parametrize(
    "args",
    [
        ("deal", "klondike", "--seed", "1"),
        ("deal", "bristol", "--seed", "-1"),
        ("deal", "bristol", "--seed", str(2**64)),
        ("deal", "bristol", "--seed", "seven"),
        ("shuffle", "bristol"),
        (),
    ],
)
def test_bad_arguments_exit_with_usage(args: tuple[str, ...]) -> None:
    out = run(*args)
    assert out.returncode == 2
    assert "usage:" in out.stderr


def test_play_handles_good_and_bad_input() -> None:
    lines = ["help", "moves", "", "t9-t1", "t1-r1", "deal", "json", "quit"]
    out = run("play", "bristol", "--seed", "7", stdin="\n".join(lines) + "\n")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("seed 7\n")
    assert "Bristol - move 0 - playing" in text
    assert "error [bad_notation]" in text
    assert "error [illegal_move]" in text
    assert "Bristol - move 1 - playing" in text  # after the deal
    after = new_position("bristol", seed=7).apply("deal")
    assert json.dumps(after.public_json()) in text
    assert "game playing with score 0 after 1 moves" in text
    assert after.pile("s")[-1] not in text.split("move 1")[1].split("legal:")[0].split("s:")[-1]


def test_play_stops_at_end_of_input() -> None:
    out = run("play", "picture-gallery", "--seed", "3", stdin="deal\n")
    assert out.returncode == 0
    assert "game playing" in out.stdout and "after 1 moves" in out.stdout


def test_play_a_game_to_its_end() -> None:
    # Random play may cycle between fans: take the first random game that ends.
    for attempt in range(100):
        rng = random.Random(attempt)
        pos = new_position("bristol", seed=12)
        moves: list[str] = []
        while not pos.is_over and len(moves) < 400:
            move = str(rng.choice(pos.legal_moves))
            moves.append(move)
            pos = pos.apply(move)
        if pos.is_over:
            break
    assert pos.is_over
    out = run("play", "bristol", "--seed", "12", stdin="\n".join([*moves, "deal"]) + "\n")
    assert out.returncode == 0
    assert f"game {pos.status.value} with score {pos.score} after {len(moves)} moves" in out.stdout
    assert "error" not in out.stdout  # input after the end is not read
