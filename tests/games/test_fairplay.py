"""Fair-play signals, flags and the review (games.services.fairplay, issue 32, part 4)."""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.core.management import call_command
from django.urls import reverse

from accounts import services as account_services
from core import clock
from games.engine import new_position
from games.engine.solver import Verdict, solve
from games.models import Deal, Game, PlayerStats, PlaySignal, Result, ResultFlag
from games.play import finish
from games.play import move as play_move
from games.selectors.games import game_position
from games.services import fairplay
from games.services import guests as guest_services
from games.services.dailies import daily_game_start
from games.services.fairplay import ClientSignal
from games.services.results import result_review
from tests.daily_fixtures import DAY, board_order, daily
from tests.race_fixtures import quiet_moves

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]

pytest_plugins = ["tests.daily_fixtures"]

HOME = ClientSignal(address="203.0.113.7", user_agent="Firefox/140")
SAME_HOME = ClientSignal(address="203.0.113.99", user_agent="Firefox/140")
ELSEWHERE = ClientSignal(address="198.51.100.4", user_agent="Safari/18")


@pytest.fixture
def certified() -> Deal:
    """Today's Bristol daily with the solver's winning line as its par (``par_line`` set)."""
    deal = daily("bristol", DAY)
    found = solve(new_position("bristol", seed=int(deal.seed)), max_nodes=200_000)
    assert found.verdict is Verdict.WON
    deal.par_line = list(found.line)
    deal.save(update_fields=["par_line"])
    return deal


def start(user: Any, client: ClientSignal) -> Game:
    game, created = daily_game_start(user=user, variant="bristol", day=DAY, client=client)
    assert created and game.ranked
    return game


def par_line(deal: Deal) -> list[str]:
    """The winning line ``certified`` set as the deal's par."""
    assert deal.par_line is not None
    return list(deal.par_line)


def play(game: Game, moves: list[str], *, seconds_apart: float = 0.0) -> Game:
    """Make the moves as fast as the test runs, or ``seconds_apart`` apart."""
    for i, (ply, move) in enumerate(enumerate(moves, start=game.ply), start=1):
        with time_machine.travel(clock.now() + timedelta(seconds=seconds_apart * i)):
            play_move.apply_move(game_id=game.pk, user=game.player, move=move, ply=ply)
    game.refresh_from_db()
    return game


def scout(user: Any, client: ClientSignal) -> Game:
    """Deal a ranked game's whole stock: every card of the deck has been shown."""
    game = start(user, client)
    while "deal" in [str(m) for m in game_position(game).legal_moves]:
        game = play(game, ["deal"])
    return game


def flags(game: Game) -> set[str]:
    return set(ResultFlag.objects.filter(result__game=game).values_list("reason", flat=True))


def test_a_win_on_a_scouted_deck_is_flagged_and_queued_but_stays_on_the_board(
    certified: Deal, make_user: Callable[..., Any]
) -> None:
    scout(make_user("scout"), HOME)
    main = play(start(make_user("main"), SAME_HOME), par_line(certified))
    result = Result.objects.get(game=main)
    assert result.won and result.review == Result.Review.PENDING
    assert flags(main) == {"par_line", "linked_account", "fast_moves", "new_account"}
    linked = ResultFlag.objects.get(result=result, reason="linked_account")
    assert "scout" in linked.detail and "same browser" in linked.detail
    assert board_order(certified) == [result.pk]  # on the board until an admin decides


def test_an_honest_result_raises_no_flag(certified: Deal, make_user: Callable[..., Any]) -> None:
    scout(make_user("neighbour"), HOME)  # another player, on another network
    honest = make_user("honest")
    honest.date_joined -= timedelta(days=30)
    honest.save(update_fields=["date_joined"])
    game = play(start(honest, ELSEWHERE), quiet_moves(certified, 25), seconds_apart=2)
    finish.resign(game_id=game.pk, user=honest)
    result = Result.objects.get(game=game)
    assert not flags(game) and result.review == ""


def test_an_aged_guest_that_registers_is_a_new_account_like_a_fresh_one(
    certified: Deal, make_user: Callable[..., Any]
) -> None:
    guest = guest_services.guest_start(address="192.0.2.1")
    guest.date_joined -= timedelta(days=30)
    guest.save(update_fields=["date_joined"])
    registered = account_services.user_register(
        username="aged", password="a long pass phrase", guest=guest
    )
    assert registered.pk == guest.pk
    aged = play(start(registered, HOME), par_line(certified))
    fresh = play(start(make_user("fresh"), ELSEWHERE), par_line(certified))
    assert "new_account" in flags(aged) and "new_account" in flags(fresh)
    assert flags(aged) == flags(fresh)


def test_signals_are_hashed_networks_that_link_one_day_only(
    certified: Deal, make_user: Callable[..., Any]
) -> None:
    a, b, c = (start(make_user(n), s) for n, s in (("a", HOME), ("b", SAME_HOME), ("c", ELSEWHERE)))
    sig = {g.pk: PlaySignal.objects.get(game=g) for g in (a, b, c)}
    assert sig[a.pk].network == sig[b.pk].network != sig[c.pk].network
    assert sig[a.pk].device == sig[b.pk].device != sig[c.pk].device
    stored = " ".join(f"{s.network} {s.device}" for s in sig.values())
    assert "203.0.113" not in stored and "Firefox" not in stored
    tomorrow = fairplay._hashed("network", DAY + timedelta(days=1), "203.0.113.0/24")
    assert tomorrow != sig[a.pk].network


def test_a_review_clears_or_disqualifies(certified: Deal, make_user: Callable[..., Any]) -> None:
    scout(make_user("scout"), HOME)
    kept = play(start(make_user("kept"), SAME_HOME), par_line(certified))
    gone = play(start(make_user("gone"), SAME_HOME), par_line(certified))
    kept_result, gone_result = (Result.objects.get(game=g) for g in (kept, gone))
    result_review(result_id=kept_result.pk, verdict="cleared")
    result_review(result_id=gone_result.pk, verdict="disqualified")
    kept_result.refresh_from_db()
    gone_result.refresh_from_db()
    assert kept_result.review == "cleared" and not kept_result.disqualified
    assert gone_result.review == "disqualified" and gone_result.disqualified
    assert board_order(certified) == [kept_result.pk]
    record = PlayerStats.objects.get(player=gone.player, variant="bristol")
    assert record.played == 0 and record.won == 0 and record.best_result is None


def test_the_review_queue_lists_flagged_results_and_disqualifies_them(
    certified: Deal, make_user: Callable[..., Any], staff_client: Any
) -> None:
    scout(make_user("scout"), HOME)
    cheat = Result.objects.get(game=play(start(make_user("cheat"), SAME_HOME), par_line(certified)))
    queue = reverse("admin:games_reviewqueue_changelist")
    page = staff_client.get(queue).content.decode()
    assert "cheat" in page and "linked_account" in page and "par_line" in page
    response = staff_client.post(
        queue, {"action": "disqualify", "_selected_action": [cheat.pk]}, follow=True
    )
    assert response.status_code == 200
    cheat.refresh_from_db()
    assert cheat.disqualified and cheat.review == "disqualified"
    assert "cheat" not in staff_client.get(queue).content.decode()
    assert board_order(certified) == []
    detail = staff_client.get(reverse("admin:games_result_change", args=[cheat.pk]))
    assert "linked_account" in detail.content.decode()


def test_signals_are_deleted_after_their_keeping_and_their_flags_stay(
    certified: Deal, make_user: Callable[..., Any]
) -> None:
    scout(make_user("scout"), HOME)
    main = play(start(make_user("main"), SAME_HOME), par_line(certified))
    assert fairplay.play_signals_purge() == 0  # today's are kept
    later = clock.now() + fairplay.SIGNAL_KEEP + timedelta(days=2)
    with time_machine.travel(later):
        call_command("create_dailies", days=1, stdout=io.StringIO())
    assert not PlaySignal.objects.exists()
    assert "linked_account" in flags(main)
