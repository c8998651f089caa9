"""Instant moves (web/static/web/predict.js): the page's rules agree with the engine's in
every variant, a card move is drawn before the server answers, and a move the server
refuses rolls the board back to the server's state with a visible cue.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.layout import VARIANTS

pytestmark = pytest.mark.browser


PAGE_MOVES = "s => window.patienceGuesser.moves(s.position.piles, s.position.stock)"


def test_the_pages_legal_moves_are_the_engines(
    page: Any, sign_up: Any, api_post: Any, username: str
) -> None:
    sign_up(page, username)
    for variant, seed in VARIANTS:
        game = api_post(page, "/api/v1/games/", {"variant": variant, "seed": seed})
        page.goto(f"/play/{game['id']}/")
        rng = random.Random(seed)
        for _ in range(60):
            if game["status"] != "playing":
                break
            assert page.evaluate(PAGE_MOVES, game) == game["legal_moves"], (variant, game["ply"])
            cards = [m for m in game["legal_moves"] if not m.startswith("deal")]
            move = rng.choice(cards if cards and rng.random() < 0.8 else game["legal_moves"])
            guessed = page.evaluate("([s, m]) => window.patienceGuesser.after(s, m)", [game, move])
            game = api_post(
                page, f"/api/v1/games/{game['id']}/moves/", {"move": move, "ply": game["ply"]}
            )
            if guessed is not None:  # the server's answer is the page's guess
                assert guessed["position"] == game["position"], (variant, move)
                assert guessed["score"] == game["score"]
            else:  # only a deal or a refill from the hidden stock is not guessed
                assert move.startswith("deal") or (
                    move.startswith("r") and game["position"]["piles"][move.split("-")[0]]
                ), (variant, move)


def test_a_move_is_drawn_before_the_answer_and_a_refusal_rolls_back(
    page: Any, sign_up: Any, api_post: Any, username: str
) -> None:
    sign_up(page, username)
    game = api_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 7})
    page.goto(f"/play/{game['id']}/")
    expect(page.locator("#conn")).to_have_text("Live")
    move = next(m for m in game["legal_moves"] if m != "deal" and not m.endswith("-f"))
    src, dst = move.split("-")
    card = game["position"]["piles"][src][-1]
    # Both clicks and the look at the board in one task: no answer can have come yet.
    drawn = page.evaluate(
        """([src, dst]) => {
            const handle = (id) => document.querySelector(`[data-pile="${id}"] .handle`);
            handle(src).click();
            handle(dst).click();
            const top = [...document.querySelectorAll(`[data-pile="${dst}"] .card`)].pop();
            return [top.dataset.card, window.patienceGame.state.ply];
        }""",
        [src, dst],
    )
    assert drawn == [card, 0]
    page.wait_for_function("window.patienceGame.state.ply === 1 && !window.patienceGame.busy")
    assert page.locator(f'[data-pile="{dst}"] .card').last.get_attribute("data-card") == card

    # A page whose rules were wrong: it draws a move the server refuses, then the server's.
    st = page.evaluate("window.patienceGame.state")
    sources = {m.split("-")[0] for m in st["legal_moves"] if m != "deal"}
    wrong = next(
        f"{a}-{b}"
        for a in sorted(sources)
        for b in (f"t{i}" for i in range(1, 9))
        if a != b
        and st["position"]["piles"][a]
        and st["position"]["piles"][b]
        and f"{a}-{b}" not in st["legal_moves"]
    )
    a, b = wrong.split("-")
    page.evaluate("m => window.patienceGame.state.legal_moves.push(m)", wrong)
    page.locator(f'[data-pile="{a}"] .handle').click()
    page.locator(f'[data-pile="{b}"] .handle').click()
    expect(page.locator("#board")).to_have_class(re.compile(r"\brolled-back\b"))
    expect(page.locator("#status-line")).to_contain_text("did not take that move")
    page.wait_for_function("!window.patienceGame.busy")
    piles = page.evaluate("window.patienceGame.state.position.piles")
    assert piles == st["position"]["piles"]
    shown = [c.get_attribute("data-card") for c in page.locator(f'[data-pile="{a}"] .card').all()]
    assert shown == piles[a]
