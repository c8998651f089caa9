"""The served OpenAPI schema and the rendered shapes cannot drift apart.

Every shape of ``api.shapes`` is rendered from real objects, in the cases
where its fields change (a game in play and ended, a daily before and after its
day, a board line with and without a player, a replay with and without a step),
and validated against its component of the schema ``/api/v1/schema/`` serves,
with every object closed: a field the schema does not name fails, and so does
a documented field that is not rendered (every field is required).
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from jsonschema import Draft202012Validator
from rest_framework import serializers

from api import shapes
from games.engine import new_position
from games.models import Deal, Race, RaceRating
from games.play import finish, state
from games.play import move as play_move
from games.selectors import boards as board_selectors
from games.selectors import dailies as daily_selectors
from games.selectors import races as race_selectors
from games.selectors.hints import Hint, HintPending
from games.services import dailies as daily_services
from games.services import games as game_services
from games.services import races as race_services
from tests.daily_fixtures import DAY, NOON, FakeClock, finished_result
from tests.race_fixtures import game_of, pool, starts
from tests.schemas import FORMATS, json_schema

pytest_plugins = ["tests.daily_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    """The component schemas as the server serves them."""
    response = Client().get("/api/v1/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()["components"]["schemas"]


def shape_names() -> set[str]:
    """The component names of every serializer of ``api.shapes``'s modules."""
    modules = [
        importlib.import_module(f"{shapes.__name__}.{info.name}")
        for info in pkgutil.iter_modules(shapes.__path__)
    ]
    return {
        cls.__name__.removesuffix("Serializer")
        for module in modules
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, serializers.Serializer) and cls.__module__ == module.__name__
    }


def _finished_race(clock: FakeClock, players: list[Any], *, quick: bool) -> Race:
    """A Bristol race of ``players`` that ended with every game resigned."""
    if quick:
        race = [race_services.race_quick_join(user=p, variant="bristol")[0] for p in players][-1]
    else:
        race = race_services.race_create(user=players[0], variant="bristol")
        for p in players[1:]:
            race_services.race_join(user=p, code=race.code)
        race = race_services.race_start(user=players[0], code=race.code)
    race.refresh_from_db()
    clock.set(starts(race) + timedelta(seconds=1))
    for p in players:
        finish.resign(game_id=game_of(race, p).pk, user=p)
    return race_services.race_finish(race_id=race.pk)


def race_shapes(clock: FakeClock, settings: Any, ann: Any, bob: Any) -> dict[str, list[Any]]:
    """The race shapes: open, counting down, running and finished (quick and private)."""
    pool(settings, size=4)
    cy = get_user_model().objects.create_user(username="cy", password="x" * 12)
    quick = _finished_race(clock, [ann, bob], quick=True)
    private = _finished_race(clock, [ann, bob], quick=False)
    rematch, _ = race_services.race_rematch(user=ann, code=private.code)
    counting = [race_services.race_quick_join(user=p, variant="bristol")[0] for p in (bob, cy)][-1]
    counting.refresh_from_db()
    views = [shapes.race(r, ann) for r in (quick, race_selectors.race_by_code(private.code))]
    views += [shapes.race(rematch, None), shapes.race(counting, bob)]
    clock.set(starts(counting) + timedelta(seconds=1))
    moved = play_move.apply_move(game_id=game_of(counting, cy).pk, user=cy, move="deal", ply=0).game
    views += shapes.races([counting], None)
    replays = [race_selectors.race_replay(race=quick, username="ann", step=s) for s in (None, 0)]
    ratings = race_selectors.race_leaderboard(family="bristol")
    return {
        "Race": views,
        "Progress": [
            state.progress(cy, moved).as_json(),
            *(p for v in views for p in v["players"]),
        ],
        "Standing": [s for v in views for s in v["standings"] or ()],
        "RatingChange": [s["rating"] for v in views for s in v["standings"] or () if s["rating"]],
        "You": [v["you"] for v in views if v["you"]],
        "RaceReplay": [shapes.race_replay(r) for r in replays],
        "RatingLine": shapes.race_leaderboard(
            race_selectors.race_board_ranked(ratings, list(ratings), first=True)
        ),
    }


@pytest.fixture
def rendered(
    daily_clock: FakeClock, daily_secret: str, settings: Any, every_race_rated: None
) -> dict[str, list[Any]]:
    """Every shape rendered from real objects, by component name, in its edge cases (a
    race of resignations rated, so rating changes render too)."""
    users = get_user_model().objects
    ann = users.create_user(username="ann", password="x" * 12)
    bob = users.create_user(username="bob", password="x" * 12)
    yesterday = DAY - timedelta(days=1)
    daily_services.dailies_create(first=yesterday, days=2)
    past = Deal.objects.get(kind=Deal.Kind.DAILY, variant="bristol", date=yesterday)
    start = new_position("bristol", seed=int(past.seed))
    past.par_line = [str(start.legal_moves[0])]
    past.save(update_fields=["par_line"])
    today = Deal.objects.get(kind=Deal.Kind.DAILY, variant="bristol", date=DAY)

    playing = game_services.practice_game_start(user=ann, variant="bristol", seed=5)
    outcome = play_move.apply_move(game_id=playing.pk, user=ann, move="deal", ply=0)
    ended = game_services.practice_game_start(user=ann, variant="picture-gallery", seed=6)
    ended = finish.resign(game_id=ended.pk, user=ann).game
    won = finished_result(past, ann, won=True, finished_at=NOON - timedelta(days=1))
    lost_today = finished_result(today, ann)
    lines = board_selectors.ranked(past, list(board_selectors.day_board_lines(past)), first=True)
    board: dict[str, Any] = {"next": None, "previous": None, "results": lines}
    board |= board_selectors.day_board_me(deal=past, user=ann, around=2)
    no_line: dict[str, Any] = {"next": None, "previous": None, "results": []}
    no_line |= board_selectors.day_board_me(deal=past, user=bob)
    RaceRating.objects.create(player=ann, family="bristol", mu=27.123456, sigma=7.5, rating=4.6234)
    line = board_selectors.result_line(won)
    assert line is not None
    alltime = board_selectors.alltime_board(variant="bristol", order="days_won")

    out = {
        "GameState": [
            shapes.game_state(playing),
            shapes.game_state(ended),
            shapes.game_state(lost_today.game),
        ],
        "MoveResult": [  # the state its event carried, and a retry's
            shapes.move_result(outcome),
            shapes.move_result(replace(outcome, duplicate=True)),
        ],
        "Daily": [shapes.daily(today), shapes.daily(past)],
        "DailyOverview": [
            *shapes.daily_overview(daily_selectors.dailies_of_day(user=ann, day=DAY)),
            *shapes.daily_overview(daily_selectors.dailies_of_day(user=None, day=yesterday)),
        ],
        "BoardEntry": [shapes.board_line(line)],
        "Board": [shapes.day_board(board), shapes.day_board(no_line)],
        "AlltimeEntry": shapes.alltime_lines(
            board_selectors.alltime_ranked(alltime, list(alltime), first=True)
        ),
        "PlayerRecord": [
            shapes.player_record(
                ann,
                board_selectors.stats_of_player(user=ann),
                race_ratings=race_selectors.player_race_ratings(user=ann),
            ),
            shapes.player_record(bob, board_selectors.stats_of_player(user=bob), race_ratings=()),
        ],
        "Replay": [
            shapes.replay(daily_selectors.result_replay(deal=past, result_id=won.pk, step=None)),
            shapes.replay(daily_selectors.result_replay(deal=past, result_id=won.pk, step=0)),
        ],
        "Hint": [
            shapes.hint(Hint(ply=3, verdict="won", move="t1-f", nodes=40)),
            shapes.hint(Hint(ply=3, verdict="lost", move=None, nodes=900)),
        ],
        "HintPending": [
            shapes.hint_pending(HintPending(ply=4)),
        ],
    }
    # The nested shapes, as they appear inside the others.
    out["DealReveal"] = [s["deal"] for s in out["GameState"] if s["deal"] is not None]
    out["Position"] = [s["position"] for s in out["GameState"]]
    out["MyDailyGame"] = [d["my_game"] for d in out["DailyOverview"] if d["my_game"]]
    out["VariantRecord"] = out["PlayerRecord"][0]["variants"]
    out["RaceRating"] = out["PlayerRecord"][0]["race_ratings"]
    out |= race_shapes(daily_clock, settings, ann, bob)
    out["Best"] = [v["best"] for v in out["VariantRecord"] if v["best"]]
    replays = [*out["Replay"], *out["RaceReplay"]]
    out["ReplayPosition"] = [r["position"] for r in replays if r["position"]]
    return out


def test_every_shape_is_a_served_component_and_is_tested(
    components: dict[str, Any], rendered: dict[str, list[Any]]
) -> None:
    assert shape_names() <= set(components)
    assert set(rendered) == shape_names()


def test_every_documented_field_is_required(components: dict[str, Any]) -> None:
    for name in shape_names():
        component = components[name]
        assert set(component["required"]) == set(component["properties"]), name


def test_rendered_shapes_are_their_components(
    components: dict[str, Any], rendered: dict[str, list[Any]]
) -> None:
    document = {"components": {"schemas": json_schema(components)}}
    errors = []
    for name, values in rendered.items():
        assert values, f"no {name} rendered"
        validator = Draft202012Validator(
            {**document, "$ref": f"#/components/schemas/{name}"}, format_checker=FORMATS
        )
        for value in values:
            errors += [f"{name} {list(e.path)}: {e.message}" for e in validator.iter_errors(value)]
    assert not errors, "\n".join(errors)


def test_the_cases_cover_what_is_hidden_and_what_is_shown(rendered: dict[str, list[Any]]) -> None:
    """Each nullable branch is rendered both ways, so both are checked against the schema."""
    states = rendered["GameState"]
    assert [s["deal"] is None for s in states] == [True, False, True]  # a daily: not yet
    assert all("s" not in s["position"]["piles"] for s in states)
    today, past = rendered["Daily"]
    assert today["seed"] is None and today["deck"] is None and today["par_line"] is None
    assert past["seed"] and past["deck"] and past["par"] == 1 and past["par_line"]
    board, no_line = rendered["Board"]
    assert board["me"] is not None and board["next"] is None and no_line["me"] is None
    assert [r["position"] is None for r in rendered["Replay"]] == [True, False]
    assert "s" in rendered["ReplayPosition"][0]["piles"]  # the day is over: all is shown
    assert {d["my_game"] is None for d in rendered["DailyOverview"]} == {True, False}
    assert [v["best"] is None for v in rendered["VariantRecord"]] == [False]
    assert rendered["PlayerRecord"][1]["variants"] == []


def test_the_race_cases_cover_every_status_and_show_counts_only(
    rendered: dict[str, list[Any]],
) -> None:
    races = rendered["Race"]
    assert [r["status"] for r in races] == ["finished", "finished", "open", "countdown", "running"]
    assert [r["rematch"] is None for r in races] == [True, False, True, True, True]
    assert {s["rating"] is None for s in rendered["Standing"]} == {True, False}
    assert {p["status"] for p in rendered["Progress"]} >= {"waiting", "playing", "resigned"}
    assert [r["you"] is None for r in races] == [False, False, True, False, True]
    # Counts only: no pile, position, log or deal in any race, while it runs or after.
    text = json.dumps(races)
    assert not {"piles", "position", "deal", "seed"} & set(re.findall(r'"(\w+)":', text))


def test_a_game_states_json_is_what_its_serializer_documents(user: Any) -> None:
    """``GameState.as_json`` is what every door sends; the serializer documents it (and
    renders it identically), so the schema and the served shape cannot drift apart."""
    from api.shapes.fields import render
    from games.play import state as game_state

    playing = game_services.practice_game_start(user=user, variant="picture-gallery", seed=8)
    ended = finish.resign(game_id=playing.pk, user=user).game
    for game in (playing, ended):
        value = game_state.game_state(game)
        assert render(shapes.GameStateSerializer, value) == value.as_json()
