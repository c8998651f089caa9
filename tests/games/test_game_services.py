"""Services on the real database: starting games, moves, undo, resign, whole games.

After every kind of write the snapshot must equal the replay of the log
(``assert_consistent``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from api import shapes
from core.errors import BadPly, GameFinished, InvalidInput, NotFound, StalePly, UndoNotAllowed
from games.engine import (
    SEED_LIMIT,
    BadNotationError,
    IllegalMoveError,
    UnknownVariantError,
    deck_order,
    new_position,
)
from games.models import UNDO, Deal, Game
from games.play import finish
from games.play import move as play_move
from games.selectors import games as game_selectors
from games.services import games as game_services
from tests.helpers import stored_log

pytestmark = pytest.mark.django_db


def fresh(game: Game) -> Game:
    return Game.objects.select_related("deal").get(pk=game.pk)


def seed_where(variant: str, test: Callable[[Any], bool], limit: int = 500) -> int:
    """The first seed whose starting position passes ``test``."""
    for seed in range(limit):
        if test(new_position(variant, seed=seed)):
            return seed
    raise AssertionError(f"no {variant} seed below {limit} fits")


def moves_of(pos: Any) -> list[str]:
    return [str(m) for m in pos.legal_moves]


def home_first(legal: list[str], rng: random.Random) -> str:
    """A random legal move, a move home (foundation / ace pile) when there is one."""
    home = [m for m in legal if m.endswith("-f") or m.endswith("-a")]
    return rng.choice(home or legal)


def ending_seed(variant: str, outcome: str, cap: int = 400) -> int:
    """A seed whose game, played by ``home_first`` with ``Random(seed)``, ends ``outcome``."""
    for seed in range(300):
        rng = random.Random(seed)
        pos = new_position(variant, seed=seed)
        for _ in range(cap):
            if pos.is_over:
                break
            pos = pos.apply(home_first(moves_of(pos), rng))
        if pos.status.value == outcome:
            return seed
    raise AssertionError(f"no {variant} seed ends {outcome}")


def snapshot_of(game: Game) -> tuple[Any, ...]:
    g = fresh(game)
    return (bytes(g.position), g.ply, g.score, g.status, g.finished_at, bytes(g.log))


# -- starting practice games -------------------------------------------------------------


def test_practice_game_without_seed_gets_a_random_seed_in_range(user: Any) -> None:
    seeds = set()
    for _ in range(5):
        game = game_services.practice_game_start(user=user, variant="bristol")
        seed = int(game.deal.seed)
        assert 0 <= seed < SEED_LIMIT
        assert game.deal.kind == Deal.Kind.PRACTICE
        assert game.deal.date is None
        seeds.add(seed)
    assert len(seeds) == 5  # 2**64 possible seeds: a repeat means no randomness


def test_random_seed_game_replays_to_its_snapshot(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    """Random seeds use the whole range 0..2**64-1 and must survive the database exactly."""
    for _ in range(3):
        game = game_services.practice_game_start(user=user, variant="bristol")
        assert int(fresh(game).deal.seed) == int(game.deal.seed)
        assert_consistent(game)


@pytest.mark.parametrize("variant", ["bristol", "belvedere", "picture-gallery", "royal-parade"])
def test_explicit_seed_deals_the_engines_position(
    user: Any, variant: str, assert_consistent: Callable[[Any], None]
) -> None:
    game = game_services.practice_game_start(user=user, variant=variant, seed=123)
    start = new_position(variant, seed=123)
    game = fresh(game)
    assert game_selectors.game_position(game) == start
    assert game_selectors.game_position(game) == start
    assert (game.ply, game.score, game.status) == (0, start.score, "playing")
    assert game.player == user
    assert not game.ranked and not game.assisted
    assert game.started_at <= timezone.now()
    assert game.finished_at is None
    assert len(game_selectors.game_log(game)) == 0
    assert_consistent(game)


def test_the_largest_seed_is_accepted(user: Any, assert_consistent: Callable[[Any], None]) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=SEED_LIMIT - 1)
    assert game_selectors.game_position(game) == new_position("bristol", seed=SEED_LIMIT - 1)
    assert int(fresh(game).deal.seed) == SEED_LIMIT - 1
    assert_consistent(game)


def test_same_variant_and_seed_share_one_deal(user: Any, other_user: Any) -> None:
    a = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    b = game_services.practice_game_start(user=other_user, variant="bristol", seed=7)
    c = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    d = game_services.practice_game_start(user=user, variant="picture-gallery", seed=7)
    assert a.deal_id == b.deal_id == c.deal_id
    assert d.deal_id != a.deal_id
    assert len({a.pk, b.pk, c.pk}) == 3
    assert Deal.objects.count() == 2


@pytest.mark.parametrize("seed", [-1, SEED_LIMIT, True, 1.5, "7"])
def test_seed_out_of_range_or_not_an_integer_is_refused(user: Any, seed: Any) -> None:
    with pytest.raises(InvalidInput):
        game_services.practice_game_start(user=user, variant="bristol", seed=seed)
    assert not Game.objects.exists()
    assert not Deal.objects.exists()


def test_unknown_variant_is_refused(user: Any) -> None:
    with pytest.raises(UnknownVariantError):
        game_services.practice_game_start(user=user, variant="klondike")
    assert not Game.objects.exists()


# -- moves ---------------------------------------------------------------------------------


def test_a_move_is_applied_logged_and_snapshotted(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    seed = seed_where("bristol", lambda p: any(m.endswith("-f") for m in moves_of(p)))
    game = game_services.practice_game_start(user=user, variant="bristol", seed=seed)
    start = new_position("bristol", seed=seed)
    move = next(m for m in moves_of(start) if m.endswith("-f"))

    out = play_move.apply_move(game_id=game.pk, user=user, move=move, ply=0)

    expected = start.apply(move)
    assert out.duplicate is False
    assert out.position == expected
    stored = fresh(game)
    assert stored.ply == 1
    assert stored.score == expected.score == 1
    assert stored.status == "playing"
    assert game_selectors.game_position(stored) == expected
    assert stored_log(stored.pk) == [(0, move)]
    assert_consistent(game)


def test_the_log_stores_the_clients_ply_for_each_entry(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    pos = new_position("bristol", seed=3)
    sent = []
    for ply in range(4):
        move = moves_of(pos)[0]
        play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
        pos = pos.apply(move)
        sent.append((ply, move))
    assert stored_log(fresh(game).pk) == sent
    assert game_selectors.game_position(fresh(game)) == pos
    assert_consistent(game)


def test_stale_ply_is_refused_with_the_current_ply(user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    before = snapshot_of(game)
    other = next(m for m in moves_of(game_selectors.game_position(fresh(game))) if m != "deal")
    with pytest.raises(StalePly) as behind:
        play_move.apply_move(game_id=game.pk, user=user, move=other, ply=0)
    assert behind.value.details == {"ply": 1}
    assert behind.value.code == "stale_ply"
    with pytest.raises(BadPly) as ahead:
        play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=5)
    assert ahead.value.details == {"ply": 1}
    assert ahead.value.code == "bad_ply"
    assert snapshot_of(game) == before


def test_resending_the_stored_move_is_a_duplicate_that_applies_nothing(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    first = play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=1)
    before = snapshot_of(game)

    again = play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)

    assert again.duplicate is True
    assert again.game.ply == 2
    assert again.position == game_selectors.game_position(fresh(game))
    assert again.position != first.position
    assert snapshot_of(game) == before
    assert_consistent(game)


def test_resending_the_current_move_again_is_a_duplicate(user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    before = snapshot_of(game)
    out = play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    assert out.duplicate is True
    assert snapshot_of(game) == before


def test_illegal_move_raises_the_engine_error_and_changes_nothing(user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    before = snapshot_of(game)
    with pytest.raises(IllegalMoveError) as exc:
        play_move.apply_move(game_id=game.pk, user=user, move="t1-r1", ply=1)
    assert exc.value.code == "illegal_move"
    with pytest.raises(BadNotationError):
        play_move.apply_move(game_id=game.pk, user=user, move="x9-t1", ply=1)
    with pytest.raises(BadNotationError):
        play_move.apply_move(game_id=game.pk, user=user, move="g1-a", ply=1)
    assert snapshot_of(game) == before


def test_a_move_in_a_finished_game_raises_game_finished(user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    finish.resign(game_id=game.pk, user=user)
    before = snapshot_of(game)
    with pytest.raises(GameFinished) as exc:
        play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    assert exc.value.code == "game_finished"
    with pytest.raises(GameFinished):
        play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=0)
    for ply in (1, 9):  # whatever the ply
        with pytest.raises(GameFinished):
            play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=ply)
    assert snapshot_of(game) == before


def test_resending_the_move_that_ended_a_game_is_still_a_duplicate(user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    finish.resign(game_id=game.pk, user=user)
    out = play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    assert out.duplicate is True and out.game.status == "resigned"


def test_another_players_game_or_an_unknown_one_is_not_found(user: Any, other_user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    with pytest.raises(NotFound):
        play_move.apply_move(game_id=game.pk, user=other_user, move="deal", ply=0)
    with pytest.raises(NotFound):
        play_move.apply_move(game_id=game.pk, user=other_user, move=UNDO, ply=0)
    with pytest.raises(NotFound):
        finish.resign(game_id=game.pk, user=other_user)
    with pytest.raises(NotFound):
        play_move.apply_move(game_id=game.pk + 1000, user=user, move="deal", ply=0)
    assert fresh(game).ply == 0
    assert fresh(game).status == "playing"


# -- undo ------------------------------------------------------------------------------------


def test_undo_pops_the_last_move_still_on_the_board(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    start = new_position("bristol", seed=3)
    one = start.apply("deal")
    move = moves_of(one)[0]
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    play_move.apply_move(game_id=game.pk, user=user, move=move, ply=1)

    out = play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=2)
    assert out.position == one
    assert out.game.ply == 3
    assert_consistent(game)

    out = play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=3)
    assert out.position == start
    assert game_selectors.game_position(fresh(game)) == start
    assert fresh(game).ply == 4
    assert game_selectors.game_log(fresh(game)) == [
        "deal",
        move,
        UNDO,
        UNDO,
    ]
    assert shapes.game_state(fresh(game))["moves_on_board"] == 0
    assert_consistent(game)

    with pytest.raises(UndoNotAllowed):
        play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=4)
    assert fresh(game).ply == 4


def test_undo_restores_the_score(user: Any, assert_consistent: Callable[[Any], None]) -> None:
    seed = seed_where("bristol", lambda p: any(m.endswith("-f") for m in moves_of(p)))
    game = game_services.practice_game_start(user=user, variant="bristol", seed=seed)
    move = next(m for m in moves_of(new_position("bristol", seed=seed)) if m.endswith("-f"))
    play_move.apply_move(game_id=game.pk, user=user, move=move, ply=0)
    assert fresh(game).score == 1
    play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=1)
    assert fresh(game).score == 0
    assert_consistent(game)


def test_undo_with_nothing_to_undo_is_refused(user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    with pytest.raises(UndoNotAllowed) as exc:
        play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=0)
    assert exc.value.code == "undo_not_allowed"
    assert snapshot_of(game)[1:] == (0, 0, "playing", None, b"")


def test_undo_after_a_move_is_replayed_in_a_gallery_game(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    game = game_services.practice_game_start(user=user, variant="picture-gallery", seed=8)
    pos = new_position("picture-gallery", seed=8)
    ply = 0
    for _ in range(3):
        move = moves_of(pos)[-1]
        play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
        pos, ply = pos.apply(move), ply + 1
        assert_consistent(game)
    play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=ply)
    assert_consistent(game)


def test_resending_an_undo_is_a_duplicate(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=1)
    before = snapshot_of(game)
    out = play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=1)
    assert out.duplicate is True
    assert snapshot_of(game) == before
    assert_consistent(game)


def ranked_game(user: Any, seed: int = 3) -> Game:
    deal = Deal.objects.create(kind=Deal.Kind.PRACTICE, variant="bristol", seed=seed)
    return game_services.game_create(user=user, deal=deal, ranked=True)


def test_undo_in_a_ranked_game_is_refused(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    game = ranked_game(user)
    with pytest.raises(UndoNotAllowed):
        play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=0)
    # A deal reveals stock cards: taking it back would show the stock for free.
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    with pytest.raises(UndoNotAllowed):
        play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=1)
    assert fresh(game).ply == 1
    assert not shapes.game_state(fresh(game))["can_undo"]
    assert_consistent(game)


# -- resign ----------------------------------------------------------------------------------


def test_resign_ends_the_game_and_keeps_the_log(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    before = snapshot_of(game)

    resigned = finish.resign(game_id=game.pk, user=user).game

    assert resigned.status == "resigned"
    stored = fresh(game)
    assert stored.status == "resigned"
    assert stored.finished_at is not None
    assert (bytes(stored.position), stored.ply, stored.score) == before[:3]
    assert len(game_selectors.game_log(stored)) == 1
    assert shapes.game_state(stored)["deal"] == {"seed": "3", "deck": deck_order("bristol", 3)}
    assert_consistent(game)
    with pytest.raises(GameFinished):
        finish.resign(game_id=game.pk, user=user)


# -- consistency after every kind of write ---------------------------------------------------


@pytest.mark.parametrize("variant", ["bristol", "picture-gallery", "mod3"])
def test_snapshot_equals_replay_after_every_kind_of_write(
    user: Any, variant: str, assert_consistent: Callable[[Any], None]
) -> None:
    rng = random.Random(5)
    game = game_services.practice_game_start(user=user, variant=variant, seed=11)
    assert_consistent(game)
    kinds = set()
    for step in range(40):
        g = fresh(game)
        state = shapes.game_state(g)
        undo = state["can_undo"] and step % 4 == 3
        move = UNDO if undo else rng.choice(state["legal_moves"])
        play_move.apply_move(game_id=game.pk, user=user, move=move, ply=g.ply)
        kinds.add("deal" if move.startswith("deal") else move if move == UNDO else "move")
        assert_consistent(game)
        if fresh(game).status != "playing":
            break
    assert kinds == {"deal", UNDO, "move"}
    if fresh(game).status == "playing":
        finish.resign(game_id=game.pk, user=user)
        assert_consistent(game)


def test_refused_writes_leave_the_game_consistent(
    user: Any, assert_consistent: Callable[[Any], None]
) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    for move, ply in [("t1-r1", 0), ("nonsense", 0), ("deal", 4), (UNDO, 0)]:
        with pytest.raises(Exception):  # noqa: B017 - each kind of refusal, all checked above
            play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
        assert_consistent(game)
    assert fresh(game).ply == 0


# -- whole games -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "outcome"),
    [("bristol", "lost"), ("bristol", "won"), ("picture-gallery", "lost")],
)
def test_a_whole_game_played_to_its_end(
    user: Any, variant: str, outcome: str, assert_consistent: Callable[[Any], None]
) -> None:
    seed = ending_seed(variant, outcome)
    rng = random.Random(seed)
    game = game_services.practice_game_start(user=user, variant=variant, seed=seed)
    for ply in range(400):
        g = fresh(game)
        state = shapes.game_state(g)
        if state["status"] != "playing":
            break
        assert state["deal"] is None
        assert state["finished_at"] is None
        assert g.finished_at is None
        out = play_move.apply_move(
            game_id=game.pk, user=user, move=home_first(state["legal_moves"], rng), ply=ply
        )
        assert out.game.score == out.position.score
        if ply % 10 == 0:
            assert_consistent(game)

    end = fresh(game)
    assert end.status == outcome
    assert end.finished_at is not None
    assert end.started_at <= end.finished_at <= timezone.now()
    replayed = game_selectors.game_replay(end).position
    assert end.score == replayed.score
    if outcome == "won":
        assert end.score == 52
        assert replayed.is_won
    else:
        assert end.score < replayed.variant.card_count
        assert replayed.legal_moves == ()
        assert replayed.stock_count == 0
    state = shapes.game_state(end)
    assert state["legal_moves"] == []
    assert state["can_undo"] is False
    assert state["deal"] == {"seed": str(seed), "deck": deck_order(variant, seed)}
    assert state["elapsed_ms"] == game_selectors.elapsed_ms(end)
    assert_consistent(game)

    with pytest.raises(GameFinished):
        play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=end.ply)
    with pytest.raises(GameFinished):
        play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=end.ply)
    with pytest.raises(GameFinished):
        finish.resign(game_id=game.pk, user=user)
    assert fresh(game).status == outcome
    assert len(game_selectors.game_log(fresh(game))) == end.ply
