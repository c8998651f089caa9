"""Daily deals: HMAC seeds, commitments, secrecy until the day ends, ranked attempts,
server time, the ranked undo rule, create_dailies and replacing a future daily."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from pytest_django import Settings

from api import shapes
from core import clock
from core.errors import GameFinished, InvalidInput, NotFound, UndoNotAllowed
from games.engine import SEED_LIMIT, VARIANTS, Position, deck_order, new_position
from games.models import UNDO, Deal, Game, Result
from games.play import finish
from games.play import move as play_move
from games.selectors import dailies as daily_selectors
from games.selectors import games as game_selectors
from games.selectors.games import game_log
from games.services import dailies as daily_services
from games.services import games as game_services
from tests.daily_fixtures import (
    DAY,
    SECRET,
    FakeClock,
    committed,
    daily,
    day_board,
    day_where,
    morning,
    quiet_move,
    refill_move,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]
pytest_plugins = ["tests.daily_fixtures"]


def hmac_seed(secret: str, variant: str, day: date, index: int = 0) -> int:
    """The documented derivation, written out independently of games.services.dailies."""
    mac = hmac.new(
        secret.encode(), f"{variant}|{day:%Y-%m-%d}|{index}".encode(), hashlib.sha256
    ).digest()
    return int.from_bytes(mac[:8], "big")


@pytest.fixture
def ann(db: None) -> Any:
    return get_user_model().objects.create_user("ann", password="pw-ann-12345")


@pytest.fixture
def bob(db: None) -> Any:
    return get_user_model().objects.create_user("bob", password="pw-bob-12345")


def fresh(game: Game) -> Game:
    return Game.objects.select_related("deal").get(pk=game.pk)


def play(game: Game, move: str | None) -> Game:
    assert move is not None, "the deal has no such move"
    out = committed(
        play_move.apply_move, game_id=game.pk, user=game.player, move=move, ply=game.ply
    )
    return out.game


def resign(game: Game) -> Game:
    return committed(finish.resign, game_id=game.pk, user=game.player).game


def start(user: Any, variant: str = "bristol", day: date | None = None) -> tuple[Game, bool]:
    """Start or resume the player's game of a daily (today's by default)."""
    day = clock.today() if day is None else day
    return committed(daily_services.daily_game_start, user=user, variant=variant, day=day)


def play_day(
    daily_clock: FakeClock,
    variant: str = "bristol",
    test: Callable[[Position], bool] = lambda pos: True,
) -> date:
    """Make today a day whose daily fits ``test``."""
    day = day_where(variant, test)
    daily_clock.set(morning(day))
    return day


def start_position(game: Game) -> Position:
    return new_position(game.deal.variant, seed=int(fresh(game).deal.seed))


# -- seeds and commitments ----------------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_daily_seed_is_hmac_sha256_of_variant_date_and_index(
    daily_secret: str, variant: str
) -> None:
    for index in range(3):
        assert daily_services.daily_seed_derive(variant, DAY, index) == hmac_seed(
            SECRET, variant, DAY, index
        )


def test_daily_deal_uses_candidate_zero_and_commits_to_its_seed(
    daily_secret: str, daily_clock: FakeClock
) -> None:
    deal = daily("picture-gallery", DAY)
    assert deal.kind == Deal.Kind.DAILY and deal.date == DAY and deal.seed_index == 0
    assert int(deal.seed) == hmac_seed(SECRET, "picture-gallery", DAY)
    assert 0 <= int(deal.seed) < SEED_LIMIT
    assert deal.commitment == hashlib.sha256(str(int(deal.seed)).encode()).hexdigest()
    assert daily_services.commitment_derive(int(deal.seed)) == deal.commitment
    # Found again, not created twice.
    assert daily("picture-gallery", DAY).pk == deal.pk
    assert Deal.objects.filter(kind="daily").count() == 1


def test_seeds_differ_per_variant_day_index_and_secret(daily_secret: str) -> None:
    seeds = {
        daily_services.daily_seed_derive(v, DAY + timedelta(days=d), i)
        for v in VARIANTS
        for d in range(5)
        for i in range(2)
    }
    assert len(seeds) == len(VARIANTS) * 5 * 2
    assert daily_services.daily_seed_derive("bristol", DAY) != daily_services.daily_seed_derive(
        "bristol", DAY, secret="another secret"
    )


def test_the_seed_cannot_be_computed_without_the_secret(
    settings: Settings, daily_clock: FakeClock
) -> None:
    settings.DAILY_SECRET = SECRET
    with_secret = daily("bristol", DAY + timedelta(days=3))
    Deal.objects.all().delete()
    settings.DAILY_SECRET = "a different secret"
    other = daily("bristol", DAY + timedelta(days=3))
    assert int(other.seed) != int(with_secret.seed)
    assert int(other.seed) == hmac_seed("a different secret", "bristol", DAY + timedelta(days=3))
    # Nothing public (variant, date, index) gives it away: a guessed secret does not.
    assert int(with_secret.seed) not in {
        hmac_seed(guess, "bristol", DAY + timedelta(days=3)) for guess in ("", "secret", "patience")
    }


# -- secrecy until the day is over ---------------------------------------------------------


def test_seed_and_deck_stay_hidden_today_and_are_published_after(
    daily_secret: str, daily_clock: FakeClock, ann: Any, settings: Settings
) -> None:
    day = play_day(daily_clock)
    game, _ = start(ann, "bristol")
    seen = game_selectors.game_position(game).to_json()  # what the player was dealt
    deal = Deal.objects.get(pk=game.deal_id)
    public = shapes.daily(deal)
    assert public["seed"] is None and public["deck"] is None
    assert public["commitment"] == deal.commitment
    assert public["seconds_left"] == 16 * 3600
    overview = {
        d["variant"]: d
        for d in shapes.daily_overview(daily_selectors.dailies_of_day(user=ann, day=day))
    }
    assert overview["bristol"]["seed"] is None and overview["bristol"]["deck"] is None
    assert overview["bristol"]["commitment"] == deal.commitment

    # Even the player's own finished ranked game does not reveal it while the day lasts.
    game = resign(game)
    assert shapes.game_state(fresh(game))["deal"] is None
    end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    daily_clock.set(end - timedelta(milliseconds=1))
    assert shapes.daily(deal)["seed"] is None
    assert shapes.game_state(fresh(game))["deal"] is None

    daily_clock.set(end)  # ended: no more ranked results, but the reveal waits the grace
    assert shapes.daily(deal)["seed"] is None
    daily_clock.advance(seconds=settings.DAILY_REVEAL_GRACE_SECONDS)
    public = shapes.daily(deal)
    assert public["seconds_left"] == 0
    assert hashlib.sha256(public["seed"].encode()).hexdigest() == public["commitment"]
    assert public["deck"] == deck_order("bristol", int(public["seed"]))
    # The published deck deals exactly the cards the player was given.
    assert new_position("bristol", deck=public["deck"]).to_json() == seen
    reveal = shapes.game_state(fresh(game))["deal"]
    assert reveal == {"seed": public["seed"], "deck": public["deck"]}
    overview = {
        d["variant"]: d
        for d in shapes.daily_overview(daily_selectors.dailies_of_day(user=ann, day=day))
    }
    assert overview["bristol"]["seed"] == public["seed"]


@pytest.mark.parametrize("variant", ["bristol", "picture-gallery"])
def test_a_daily_seed_read_back_from_the_database_matches_its_commitment(
    daily_secret: str, daily_clock: FakeClock, variant: str
) -> None:
    deal = daily(variant, DAY)
    stored = Deal.objects.get(pk=deal.pk)
    assert int(stored.seed) == hmac_seed(SECRET, variant, DAY)
    assert hashlib.sha256(str(int(stored.seed)).encode()).hexdigest() == stored.commitment


def test_a_future_daily_is_not_found(daily_secret: str, daily_clock: FakeClock, ann: Any) -> None:
    tomorrow = DAY + timedelta(days=1)
    with pytest.raises(NotFound):
        daily_selectors.published_deal("bristol", tomorrow)
    with pytest.raises(NotFound):
        daily_services.daily_game_start(user=ann, variant="bristol", day=tomorrow)
    assert not Game.objects.exists()
    assert daily_selectors.published_deal("bristol", DAY).date == DAY


# -- create_dailies -----------------------------------------------------------------------


def test_create_dailies_makes_n_days_of_every_variant_idempotently(
    daily_secret: str, daily_clock: FakeClock
) -> None:
    call_command("create_dailies", "--days", "3", stdout=_Sink())
    deals = Deal.objects.filter(kind="daily")
    assert deals.count() == 3 * len(VARIANTS) == 18
    assert {(d.variant, d.date) for d in deals} == {
        (v, DAY + timedelta(days=i)) for v in VARIANTS for i in range(3)
    }
    before = {d.pk: (d.seed, d.commitment) for d in deals}
    for d in deals:
        assert d.date is not None
        seed = hmac_seed(SECRET, d.variant, d.date)
        assert d.commitment == hashlib.sha256(str(seed).encode()).hexdigest()
    out = _Sink()
    call_command("create_dailies", "--days", "4", stdout=out)
    assert "24 daily deal(s) ready" in out.text
    after = {d.pk: (d.seed, d.commitment) for d in Deal.objects.filter(kind="daily")}
    assert len(after) == 24
    assert {pk: after[pk] for pk in before} == before


def test_create_dailies_refuses_fewer_than_one_day(daily_clock: FakeClock) -> None:
    with pytest.raises(SystemExit):
        call_command("create_dailies", "--days", "0", stdout=_Sink(), stderr=_Sink())
    assert not Deal.objects.exists()


class _Sink:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        pass


# -- ranked attempts ----------------------------------------------------------------------


def test_first_game_of_todays_daily_is_ranked_and_resumes_while_playing(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:
    game, created = start(ann)
    assert created and game.ranked and game.deal.kind == "daily" and game.deal.date == DAY
    again, created = start(ann)
    assert not created and again.pk == game.pk
    daily_clock.advance(minutes=5)
    again, created = start(ann)
    assert not created and again.pk == game.pk and again.ranked


def test_a_second_attempt_after_the_ranked_game_ended_is_practice_and_off_the_board(
    daily_secret: str, daily_clock: FakeClock, ann: Any, bob: Any
) -> None:

    play_day(daily_clock)
    ranked, _ = start(ann)
    ranked = resign(ranked)
    assert Result.objects.filter(game=ranked).exists()

    second, created = start(ann)
    assert created and not second.ranked and second.pk != ranked.pk
    assert second.deal_id == ranked.deal_id
    third, created = start(ann)
    assert created and not third.ranked
    move = quiet_move(start_position(second))
    second = play(second, move)
    resign(second)
    resign(third)
    assert Result.objects.filter(player=ann).count() == 1
    board = day_board(deal=ranked.deal, user=ann)
    assert board["total"] == 1
    assert [e["result_id"] for e in board["results"]] == [ranked.result.pk]
    assert board["me"]["result_id"] == ranked.result.pk
    # Another player's first game is still ranked.
    bobs, _ = start(bob)
    assert bobs.ranked


def test_a_past_days_daily_gives_a_practice_game(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:
    yesterday = DAY - timedelta(days=1)
    game, created = start(ann, "mod3", yesterday)
    assert created and not game.ranked and game.deal.date == yesterday
    again, created = start(ann, "mod3", yesterday)
    assert created and again.pk != game.pk and not again.ranked
    resign(game)
    assert not Result.objects.exists()


def test_yesterdays_unfinished_ranked_game_cannot_be_played_once_the_seed_is_out(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:
    game, _ = start(ann)
    daily_clock.next_day()  # the seed and other players' replays are now public
    assert shapes.daily(game.deal)["seed"] is not None
    with pytest.raises(GameFinished):
        resign(game)
    # It ended at the day's end as it stood, not won (tests/games/test_expired_dailies.py).
    result = Result.objects.get()
    assert result.game_id == game.pk and not result.won
    assert game.deal.date is not None
    assert result.finished_at == clock.day_end(game.deal.date)


def test_an_assisted_game_is_not_ranked(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:
    game, _ = start(ann)
    Game.objects.filter(pk=game.pk).update(assisted=True)
    resign(fresh(game))
    assert not Result.objects.exists()


# -- time is measured on the server ---------------------------------------------------------


def test_time_runs_from_the_deal_to_the_final_move_on_the_server_clock(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:
    day = play_day(daily_clock)
    t0 = daily_clock.set(morning(day) + timedelta(hours=1, milliseconds=250))
    game, _ = start(ann)
    assert game.started_at == t0
    daily_clock.advance(seconds=7)
    resumed, _ = start(ann)  # resuming does not restart the clock
    assert resumed.started_at == t0
    game = play(game, quiet_move(start_position(game)))
    t1 = daily_clock.advance(seconds=76, milliseconds=1)
    game = resign(game)
    result = Result.objects.get(game=game)
    assert game.finished_at == t1
    assert result.time_ms == (t1 - t0) // timedelta(milliseconds=1) == 83_001
    assert shapes.game_state(fresh(game))["elapsed_ms"] == 83_001


@pytest.mark.parametrize("ms", [1, 999, 1001, 4001, 60_003, 3_599_999])
def test_time_ms_is_exact_to_the_millisecond(
    daily_secret: str, daily_clock: FakeClock, ann: Any, ms: int
) -> None:
    game, _ = start(ann)
    daily_clock.advance(milliseconds=ms)
    resign(game)
    assert Result.objects.get(game=game).time_ms == ms


# -- the ranked undo rule -----------------------------------------------------------------


def test_ranked_undo_never_crosses_a_bristol_deal(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:
    play_day(daily_clock, "bristol", lambda p: quiet_move(p.apply("deal")) is not None)
    game, _ = start(ann)
    assert game.ranked
    game = play(game, "deal")
    assert not shapes.game_state(fresh(game))["can_undo"]
    with pytest.raises(UndoNotAllowed) as exc:
        play(game, UNDO)
    assert exc.value.code == "undo_not_allowed"
    game = fresh(game)
    assert game.ply == 1 and len(game_log(game)) == 1

    # A move that reveals nothing can be undone, and the undo counts as a move.
    after_deal = start_position(game).apply("deal")
    game = play(game, quiet_move(after_deal))
    assert shapes.game_state(fresh(game))["can_undo"]
    game = play(game, UNDO)
    assert game.ply == 3 and game_selectors.game_replay(game).position == after_deal
    with pytest.raises(UndoNotAllowed):
        play(game, UNDO)

    game = resign(fresh(game))
    result = Result.objects.get(game=game)
    assert result.moves == 3 == len(game_log(game))


def test_a_practice_game_may_undo_a_deal(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:
    play_day(daily_clock)
    ranked, _ = start(ann)
    resign(ranked)
    practice, _ = start(ann)
    practice = play(practice, "deal")
    practice = play(practice, UNDO)
    assert game_selectors.game_replay(practice).position.stock_count == 25


@pytest.mark.parametrize("variant", ["picture-gallery", "picture-gallery-reversed"])
def test_ranked_undo_never_crosses_a_reserve_refill(
    daily_secret: str, daily_clock: FakeClock, ann: Any, variant: str
) -> None:
    def fits(p: Position) -> bool:
        move = refill_move(p)
        return move is not None and quiet_move(p.apply(move)) is not None

    play_day(daily_clock, variant, fits)
    game, _ = start(ann, variant)
    pos = start_position(game)
    refill = refill_move(pos)
    assert refill is not None
    game = play(game, refill)
    assert fresh(game).undo_floor == 1
    with pytest.raises(UndoNotAllowed):
        play(game, UNDO)

    quiet = quiet_move(pos.apply(refill))
    game = play(fresh(game), quiet)
    game = play(game, UNDO)
    with pytest.raises(UndoNotAllowed):
        play(game, UNDO)
    game = play(fresh(game), quiet)
    game = play(game, "deal")
    with pytest.raises(UndoNotAllowed):
        play(game, UNDO)
    game = resign(fresh(game))
    assert Result.objects.get(game=game).moves == 5 == len(game_log(game))


def test_undo_counts_in_the_result_and_on_the_board(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:

    play_day(daily_clock, "bristol", lambda p: quiet_move(p) is not None)
    game, _ = start(ann)
    move = quiet_move(start_position(game))
    for _ in range(3):
        game = play(game, move)
        game = play(game, UNDO)
    game = resign(game)
    result = Result.objects.get(game=game)
    assert result.moves == 6 == len(game_selectors.game_log(game))
    assert day_board(deal=game.deal)["results"][0]["moves"] == 6


# -- replacing a future daily ----------------------------------------------------------------


def test_replace_moves_a_future_unplayed_daily_to_the_next_candidate(
    daily_secret: str, daily_clock: FakeClock
) -> None:
    future = DAY + timedelta(days=2)
    deal = daily("royal-parade", future)
    old = deal.commitment
    deal = daily_services.daily_replace(deal)
    seed = hmac_seed(SECRET, "royal-parade", future, 1)
    assert deal.seed_index == 1 and int(deal.seed) == seed
    stored = Deal.objects.get(pk=deal.pk)
    assert stored.seed_index == 1
    assert stored.commitment == hashlib.sha256(str(seed).encode()).hexdigest() != old
    deal = daily_services.daily_replace(deal)
    seed = hmac_seed(SECRET, "royal-parade", future, 2)
    assert deal.seed_index == 2 and int(deal.seed) == seed
    # The replaced deal is the daily from now on.
    daily_clock.set(datetime.combine(future, datetime.min.time(), tzinfo=UTC))
    published = daily_selectors.published_deal("royal-parade", future)
    assert published.pk == deal.pk
    assert published.commitment == hashlib.sha256(str(seed).encode()).hexdigest()


def test_replace_is_refused_for_today_the_past_and_a_played_daily(
    daily_secret: str, daily_clock: FakeClock, ann: Any
) -> None:
    for day in (DAY, DAY - timedelta(days=1)):
        deal = daily("bristol", day)
        with pytest.raises(InvalidInput):
            daily_services.daily_replace(deal)
        deal.refresh_from_db()
        assert deal.seed_index == 0
    future = daily("bristol", DAY + timedelta(days=1))
    game_services.game_create(user=ann, deal=future)
    with pytest.raises(InvalidInput, match="played"):
        daily_services.daily_replace(future)
    future.refresh_from_db()
    assert future.seed_index == 0
    assert future.date is not None
    assert future.commitment == daily_services.commitment_derive(
        hmac_seed(SECRET, "bristol", future.date)
    )


def test_clock_today_follows_the_server_clock(daily_clock: FakeClock, settings: Settings) -> None:
    daily_clock.set(datetime(2026, 3, 10, 23, 59, tzinfo=UTC))
    assert clock.today() == DAY and clock.seconds_left(DAY) == 60
    daily_clock.set(datetime(2026, 3, 11, 0, 0, tzinfo=UTC))
    assert clock.today() == DAY + timedelta(days=1) and clock.day_ended(DAY)
    assert not clock.day_over(DAY)  # revealed only after the grace period
    daily_clock.advance(seconds=settings.DAILY_REVEAL_GRACE_SECONDS)
    assert clock.day_over(DAY)
