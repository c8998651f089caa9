"""Positions in general: errors and codes, JSON forms, from_json, replay, moves."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from games.engine import (
    DEAL,
    DEAL_REVERSE,
    BadNotationError,
    BadPositionError,
    EngineError,
    GameOverError,
    IllegalMoveError,
    Move,
    Position,
    ReplayError,
    Status,
    UnknownVariantError,
    deck_order,
    new_position,
    replay,
)
from tests.engine.helpers import ALL_VARIANTS, BRISTOL_FAMILY, crafted, pile_ids

# -- errors --------------------------------------------------------------------------------


def test_error_codes_are_stable() -> None:
    assert {
        cls.__name__: cls.code
        for cls in (
            BadNotationError,
            IllegalMoveError,
            GameOverError,
            UnknownVariantError,
            BadPositionError,
        )
    } == {
        "BadNotationError": "bad_notation",
        "IllegalMoveError": "illegal_move",
        "GameOverError": "game_over",
        "UnknownVariantError": "unknown_variant",
        "BadPositionError": "bad_position",
    }
    for cls in (BadNotationError, IllegalMoveError, GameOverError, UnknownVariantError):
        assert issubclass(cls, EngineError)
    assert issubclass(EngineError, ValueError)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
@pytest.mark.parametrize(
    ("move", "code"),
    [
        ("nonsense", "bad_notation"),
        ("", "bad_notation"),
        ("deal deal", "bad_notation"),
        ("x1-x2", "bad_notation"),
        (None, "bad_notation"),
        (42, "bad_notation"),
        ("r1-r1", "illegal_move"),
        ("s-r1", "illegal_move"),
    ],
)
def test_refused_move_has_its_code_and_changes_nothing(
    variant: str, move: object, code: str
) -> None:
    pos = new_position(variant, seed=9)
    before = pos.to_json()
    moves = pos.legal_moves
    with pytest.raises(EngineError) as exc:
        pos.apply(move)  # type: ignore[arg-type]
    assert exc.value.code == code
    assert pos.to_json() == before
    assert pos.legal_moves == moves
    assert pos.ply == 0
    assert not pos.is_legal(move)  # type: ignore[arg-type]


def test_error_messages_name_the_problem() -> None:
    pos = new_position("bristol", seed=1)
    with pytest.raises(BadNotationError, match="no pile 't9'"):
        pos.apply("t9-t1")
    with pytest.raises(BadNotationError, match="'f1' is not written as a destination"):
        pos.apply("t1-f1")
    with pytest.raises(BadNotationError, match="'f' is only a destination"):
        pos.apply("f-t1")
    with pytest.raises(IllegalMoveError, match="reserve"):
        pos.apply("t1-r1")


# -- moves ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("t3-t5", Move("t3", "t5")),
        ("t3-f", Move("t3", "f")),
        ("r2-t7", Move("r2", "t7")),
        ("g10-g2", Move("g10", "g2")),
        ("r5-g17", Move("r5", "g17")),
        ("g4-r2", Move("g4", "r2")),
        ("g5-a", Move("g5", "a")),
        ("deal", DEAL),
        ("deal-reverse", DEAL_REVERSE),
    ],
)
def test_move_text_both_ways(text: str, move: Move) -> None:
    assert Move.parse(text) == move
    assert str(move) == text
    assert move.is_deal == text.startswith("deal")


@pytest.mark.parametrize("text", ["", "t3", "t3-", "-t5", "t3_t5", "T3-T5", "t100-f", "deals", 7])
def test_move_parse_rejects_bad_syntax(text: object) -> None:
    with pytest.raises(BadNotationError):
        Move.parse(text)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_apply_takes_text_or_move(variant: str) -> None:
    pos = new_position(variant, seed=2)
    for move in pos.legal_moves:
        assert pos.apply(move) == pos.apply(str(move))
        assert pos.parse_move(str(move)) == move
        assert pos.is_legal(move) and pos.is_legal(str(move))


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_positions_are_immutable_values(variant: str) -> None:
    a = new_position(variant, seed=5)
    b = new_position(variant, seed=5)
    assert a == b and hash(a) == hash(b)
    assert a != new_position(variant, seed=6)
    after = a.apply("deal")
    assert after != a and a == b
    assert a.ply == 0 and after.ply == 1
    assert {a, b, after} == {a, after}
    assert a != "not a position"


def test_pile_and_top_readers() -> None:
    pos = Position.from_deck("bristol", deck_order("bristol", 0))
    assert pos.top("r1") == pos.pile("r1")[-1]
    assert pos.top("f1") is None
    with pytest.raises(BadNotationError):
        pos.pile("g1")


# -- JSON ----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_full_json_form(variant: str) -> None:
    pos = new_position(variant, seed=8).apply("deal")
    data = pos.to_json()
    assert set(data) == {"variant", "ply", "piles"}
    assert data["variant"] == variant and data["ply"] == 1
    assert list(data["piles"]) == list(pile_ids(variant))  # the spec's pile order, s last
    assert list(data["piles"])[-1] == "s"
    for pid, cards in data["piles"].items():
        assert cards == pos.pile(pid)
    assert len(data["piles"]["s"]) == pos.stock_count
    assert json.loads(json.dumps(data)) == data
    assert Position.from_json(json.loads(json.dumps(data))) == pos


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_public_json_form_hides_the_stock(variant: str) -> None:
    pos = new_position(variant, seed=8)
    public = pos.public_json()
    assert set(public) == {"variant", "ply", "piles", "stock"}
    assert public["stock"] == pos.stock_count and isinstance(public["stock"], int)
    assert list(public["piles"]) == list(pile_ids(variant))[:-1]
    full = pos.to_json()
    for pid, cards in public["piles"].items():
        assert cards == full["piles"][pid]
    if variant in BRISTOL_FAMILY:
        # One deck: no stock card appears anywhere in the public form.
        text = json.dumps(public)
        assert not [c for c in full["piles"]["s"] if f'"{c}"' in text]
    with pytest.raises(BadPositionError):
        Position.from_json(public)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_from_json_ignores_key_order(variant: str) -> None:
    data = new_position(variant, seed=8).to_json()
    keys = list(data["piles"])
    random.Random(1).shuffle(keys)
    shuffled = {"piles": {k: data["piles"][k] for k in keys}, "ply": 0, "variant": variant}
    # e.g. PostgreSQL jsonb returns the keys sorted by length: "a", "s", "g1", ...
    by_length = {k: data["piles"][k] for k in sorted(keys, key=lambda k: (len(k), k))}
    assert Position.from_json(shuffled) == Position.from_json({**data, "piles": by_length})
    assert Position.from_json(shuffled) == Position.from_json(data)


#: An edit of a position's JSON form that makes it invalid.
Change = Callable[[dict[str, Any]], object]


def _swap_card(pile: str, code: object) -> Change:
    def change(data: dict) -> None:
        data["piles"][pile][-1] = code

    return change


def _move_card(src: str, dst: str) -> Change:
    def change(data: dict) -> None:
        data["piles"][dst].append(data["piles"][src].pop())

    return change


def _set(**fields: object) -> Change:
    return lambda data: data.update(fields)


def _set_pile(pile: str, value: object) -> Change:
    return lambda data: data["piles"].update({pile: value})


BROKEN = [
    ("bristol", lambda d: d.pop("ply")),
    ("bristol", _set(ply=-1)),
    ("bristol", _set(ply=True)),
    ("bristol", _set(ply="3")),
    ("bristol", _set(ply=1.0)),
    ("bristol", _set(piles=[])),
    ("bristol", lambda d: d.pop("piles")),
    ("bristol", lambda d: d["piles"].pop("s")),
    ("bristol", lambda d: d["piles"].pop("f4")),
    ("bristol", _set_pile("g1", [])),  # a pile of the other family
    ("bristol", _set_pile("t1", "7D9C4D")),  # not a list
    ("bristol", _set_pile("t1", None)),
    ("bristol", _swap_card("t1", "XX")),  # not a card code
    ("bristol", _swap_card("t1", 5)),
    ("bristol", lambda d: d["piles"]["t1"].pop()),  # a card missing
    ("bristol", lambda d: d["piles"]["t1"].append(d["piles"]["t2"][0])),  # a duplicate
    ("belvedere", _move_card("f1", "t1")),  # Belvedere's f1 always holds an Ace
    ("picture-gallery", _move_card("g2", "g1")),  # two cards in g1, not a 2-5 build
    ("picture-gallery", _move_card("s", "a")),  # a non-Ace on the ace pile (3D)
    ("picture-gallery", lambda d: d["piles"]["s"].append("AC")),  # a third AC
    ("picture-gallery", _move_card("r1", "s")),  # an empty reserve that the stock refills
    ("picture-gallery-reversed", _move_card("r8", "s")),
    ("royal-parade", _swap_card("s", "AC")),  # no Aces in Royal Parade
    ("mod3", _set_pile("t1", [])),
]


@pytest.mark.parametrize(("variant", "change"), BROKEN)
def test_from_json_rejects_broken_positions(variant: str, change: Callable[..., Any]) -> None:
    data = new_position(variant, seed=8).to_json()
    change(data)
    with pytest.raises(BadPositionError) as exc:
        Position.from_json(data)
    assert exc.value.code == "bad_position"


def test_from_json_specific_rejections() -> None:
    with pytest.raises(BadPositionError):
        Position.from_json([1, 2])  # type: ignore[arg-type]
    with pytest.raises(UnknownVariantError):
        Position.from_json({"variant": "klondike", "ply": 0, "piles": {}})
    with pytest.raises(UnknownVariantError):
        Position.from_json({"ply": 0, "piles": {}})
    # A slot built with the wrong step or suit.
    with pytest.raises(BadPositionError):
        crafted("picture-gallery", {"g1": ["2H", "5D"]}, dump="s")
    with pytest.raises(BadPositionError):
        crafted("picture-gallery", {"g1": ["2H", "8H"]}, dump="s")
    with pytest.raises(BadPositionError):
        crafted("picture-gallery", {"g1": ["3H", "6H"]}, dump="s")  # wrong row
    # Foundations run from an Ace up by one rank.
    with pytest.raises(BadPositionError):
        crafted("bristol", {"f1": ["AC", "3C"]}, dump="s")
    with pytest.raises(BadPositionError):
        crafted("bristol", {"f2": ["2C"]}, dump="s")
    with pytest.raises(BadPositionError):
        crafted("belvedere", {"f2": ["AC"]}, dump="s")  # f1 empty


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_from_deck_rejects_a_wrong_deck(variant: str) -> None:
    deck = deck_order(variant, 3)
    for bad in (deck[:-1], [*deck, deck[0]], [deck[0], *deck[:-1]], []):
        with pytest.raises(BadPositionError):
            Position.from_deck(variant, bad)
    with pytest.raises(EngineError) as exc:
        Position.from_deck(variant, ["ZZ", *deck[1:]])
    assert exc.value.code in ("bad_notation", "bad_position")


def test_from_deck_accepts_card_integers() -> None:
    from games.engine import parse_card

    deck = deck_order("mod3", 3)
    assert Position.from_deck("mod3", [parse_card(c) for c in deck]) == Position.from_deck(
        "mod3", deck
    )


# -- new_position and replay ---------------------------------------------------------------


def test_new_position_needs_exactly_one_source() -> None:
    with pytest.raises(BadPositionError):
        new_position("bristol")
    with pytest.raises(BadPositionError):
        new_position("bristol", seed=1, deck=deck_order("bristol", 1))
    assert new_position("bristol", seed=1) == new_position("bristol", deck=deck_order("bristol", 1))


def random_game(variant: str, seed: int, length: int, rng_seed: int = 0) -> list[str]:
    rng = random.Random(rng_seed)
    pos = new_position(variant, seed=seed)
    moves: list[str] = []
    while len(moves) < length and not pos.is_over:
        move = str(rng.choice(pos.legal_moves))
        moves.append(move)
        pos = pos.apply(move)
    return moves


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_replay_equals_step_by_step_play(variant: str) -> None:
    moves = random_game(variant, 21, 80)
    pos = new_position(variant, seed=21)
    for m in moves:
        pos = pos.apply(m)
    assert replay(variant, moves, seed=21) == pos
    assert replay(variant, moves, deck=deck_order(variant, 21)) == pos
    assert new_position(variant, seed=21).play(moves) == pos
    assert pos.ply == len(moves)
    assert replay(variant, [], seed=21) == new_position(variant, seed=21)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
@pytest.mark.parametrize(("bad", "code"), [("zz", "bad_notation"), ("r1-r1", "illegal_move")])
def test_replay_reports_the_first_bad_move(variant: str, bad: str, code: str) -> None:
    moves = random_game(variant, 4, 12)
    for index in (0, 5, len(moves)):
        attempt = [*moves[:index], bad, *moves[index:], bad]
        with pytest.raises(ReplayError) as exc:
            replay(variant, attempt, seed=4)
        err = exc.value
        assert err.index == index
        assert err.move == bad
        assert err.code == code
        assert isinstance(err.cause, EngineError) and err.cause.code == code
        assert isinstance(err, EngineError)


def test_replay_after_the_end_is_game_over() -> None:
    pos = crafted("bristol", {"t1": ["KS"], "s": ["9C"]}, dump="t1")
    with pytest.raises(ReplayError) as exc:
        pos.play(["deal", "deal"])
    assert exc.value.index == 1 and exc.value.code == "game_over"


def test_status_values() -> None:
    assert [s.value for s in Status] == ["playing", "won", "lost", "resigned"]
    assert Status.WON == "won"


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_text_rendering(variant: str) -> None:
    pos = new_position(variant, seed=1)
    text = str(pos)
    for pid in pile_ids(variant)[:-1]:
        assert f"{pid}:" in text
    assert f"s: {pos.stock_count} card(s)" in text
    for c in pos.pile("s")[-1:]:
        assert c not in text.split("s:")[-1]
    assert variant in repr(pos)
