"""The races pages: the lobby and a race's page, in English and German, for players and
spectators; a player's board is mounted once the race has dealt their game, and the page
never carries a card of another player's game."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
import time_machine

from core import clock
from games.engine import new_position
from games.selectors import races as race_selectors
from tests.race_fixtures import ends, game_of, starts

pytestmark = pytest.mark.django_db

DE = {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en-US,en;q=0.9"}


@pytest.fixture(autouse=True)
def race_pool(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few race deals of Bristol, dealt without the solver (the job's work in production)."""
    from core import jobs
    from games.services.race_pool import race_pool_fill

    settings.RACE_SOLVER_NODES = 0
    settings.RACE_POOL_SIZE = 4
    monkeypatch.setattr(jobs, "race_pool_job_start", lambda: None)
    race_pool_fill(variants=["bristol"])


def page(client: Any, url: str, **headers: Any) -> str:
    response = client.get(url, **headers)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def json_script(html: str, node_id: str) -> dict:
    found = re.search(rf'<script id="{node_id}" type="application/json">(.*?)</script>', html, re.S)
    assert found, f"the page carries {node_id}"
    return json.loads(found.group(1))


def initial_race(html: str) -> dict:
    return json_script(html, "initial-race")


def countdown_race(player: Any, rival: Any) -> Any:
    """A private Bristol race of ``player`` and ``rival``, counting down."""
    from games.services.races import race_create, race_join, race_start

    race = race_create(user=player, variant="bristol")
    race_join(user=rival, code=race.code)
    return race_start(user=player, code=race.code)


# -- the lobby -----------------------------------------------------------------------------------


def test_the_lobby_offers_a_quick_race_of_every_variant(logged_in: Any) -> None:
    from games.engine import VARIANTS

    html = page(logged_in, "/races/", **EN)
    assert '<h1 id="races-title">Races</h1>' in html
    for key in VARIANTS:
        assert f'data-quick data-variant="{key}"' in html
    assert 'id="create-form"' in html and 'id="join-form"' in html
    assert 'id="open-races"' in html
    # The time limits come from the races' rules: 5 minutes for Bristol, 10 for the gallery.
    bristol = html.split('data-variant="bristol"')[1].split("</li>")[0]
    gallery = html.split('data-variant="picture-gallery"')[1].split("</li>")[0]
    assert f"Time limit: {race_selectors.time_limit('bristol') // 60} minutes." in bristol
    assert f"Time limit: {race_selectors.time_limit('picture-gallery') // 60} minutes." in gallery
    assert f"{race_selectors.QUICK_START_SECONDS} seconds after a second player joins" in html


def test_the_lobby_in_german_asks_visitors_to_log_in(client: Any) -> None:
    html = page(client, "/races/", **DE)
    assert '<html lang="de">' in html
    assert "Schnelles Rennen" in html and "Privates Rennen erstellen" in html
    assert "Zum Mitspielen anmelden" in html
    assert "Quick race" not in html
    # Nobody logged in: the buttons that would start a race wait for a login.
    assert html.count("data-quick") == html.count("data-quick data-variant") > 0
    assert re.search(r"data-quick [^>]*disabled", html)


def test_the_lobby_leads_a_player_back_to_their_unfinished_race(
    logged_in: Any, player: Any
) -> None:
    from games.services.races import race_create

    assert "Go to your race" not in page(logged_in, "/races/", **EN)
    race = race_create(user=player, variant="bristol")
    html = page(logged_in, "/races/", **EN)
    assert "You are in a Bristol race that has not finished." in html
    assert f'href="/races/{race.code}/">Go to your race</a>' in html


def test_every_page_links_to_the_races(client: Any) -> None:
    html = page(client, "/", **EN)
    nav = html.split('<nav class="site-nav"')[1].split("</nav>")[0]
    assert '<a href="/races/">Races</a>' in nav
    assert '<a href="/races/">Rennen</a>' in page(client, "/rules/", **DE)


# -- a race's page --------------------------------------------------------------------------------


def test_an_open_private_race_shows_its_link_and_roster(logged_in: Any, player: Any) -> None:
    from games.services.races import race_create

    race = race_create(user=player, variant="bristol")
    html = page(logged_in, f"/races/{race.code}/", **EN)
    data = initial_race(html)
    assert data["code"] == race.code and data["status"] == "open"
    assert [p["username"] for p in data["players"]] == [player.username]
    assert data["you"] == {"game": None}
    assert 'id="game"' not in html  # no game before the countdown deals it
    assert "Race: Bristol" in html
    assert f'value="http://testserver/races/{race.code}/"' in html
    assert 'id="btn-race-start"' in html and 'id="btn-race-copy"' in html
    assert 'role="log" aria-live="polite"' in html
    assert 'role="timer"' in html


def test_a_spectator_sees_the_race_and_is_asked_to_log_in(client: Any, player: Any) -> None:
    from games.services.races import race_create

    race = race_create(user=player, variant="bristol")
    html = page(client, f"/races/{race.code}/", **DE)
    assert initial_race(html)["you"] is None
    assert "Rennen: Bristol" in html
    assert "Zum Beitreten anmelden" in html
    assert 'id="btn-race-join"' not in html


def test_an_unknown_race_is_not_found(client: Any) -> None:
    assert client.get("/races/nosuchrace/").status_code == 404
    assert client.get("/races/nosuchrace/replay/ada/").status_code == 404


def test_the_countdown_mounts_the_players_board_held_until_the_start(
    logged_in: Any, player: Any, rival: Any
) -> None:
    race = countdown_race(player, rival)
    html = page(logged_in, f"/races/{race.code}/", **EN)
    data = initial_race(html)
    assert data["status"] == "countdown"
    mine = data["you"]["game"]
    assert mine
    # The play page's own game section, with the race's game in it.
    assert f'<section id="game" class="game family-bristol" data-game-id="{mine}"' in html
    assert 'id="initial-state"' in html
    assert "/static/web/play.js" in html and "/static/web/race.js" in html
    assert 'id="btn-hint"' not in html  # a race is ranked: no hints
    # Before the start the board and its buttons take nothing.
    assert re.search(r'id="board"[^>]* inert>', html)
    assert re.search(r'class="game-controls"[^>]* inert>', html)
    # The server's clock, and when the race starts and ends by it.
    assert data["starts_at"] and data["ends_at"] and data["server_time"]
    # No card of the deal before the start: the state is counts only (race.js asks again then).
    state = json_script(html, "initial-state")
    assert state["position"] is None and state["legal_moves"] == [] and state["ply"] == 0
    dealt = new_position("bristol", seed=int(race.deal.seed)).public_json()["piles"]
    assert not [card for pile in dealt.values() for card in pile if f'"{card}"' in html]


def test_a_running_race_lets_the_board_play(logged_in: Any, player: Any, rival: Any) -> None:
    race = countdown_race(player, rival)
    with time_machine.travel(starts(race) + timedelta(seconds=1), tick=False):
        html = page(logged_in, f"/races/{race.code}/", **EN)
    assert initial_race(html)["status"] == "running"
    assert json_script(html, "initial-state")["position"]["piles"]  # the deal, from the start
    assert not re.search(r'id="board"[^>]* inert', html)
    assert not re.search(r'class="game-controls"[^>]* inert', html)


def test_the_page_never_carries_an_opponents_cards(client: Any, player: Any, rival: Any) -> None:

    race = countdown_race(player, rival)
    theirs = game_of(race, rival)
    client.force_login(player)
    with time_machine.travel(starts(race) + timedelta(seconds=1), tick=False):
        html = page(client, f"/races/{race.code}/", **EN)
    data = initial_race(html)
    assert data["you"]["game"] != theirs.pk
    assert f'data-game-id="{theirs.pk}"' not in html
    for p in data["players"]:
        assert set(p) == {"username", "status", "cards_home", "moves", "finished_at", "time_ms"}
    # Only one game's state on the page: the player's own.
    assert html.count('id="initial-state"') == 1
    mine = json_script(html, "initial-state")
    assert mine["id"] == data["you"]["game"]
    assert re.findall(r'data-game-id="(\d+)"', html) == [str(mine["id"])]


def test_a_finished_race_offers_standings_and_replays(
    logged_in: Any, player: Any, rival: Any
) -> None:
    from games.services.races import races_tick

    race = countdown_race(player, rival)
    # Past the time limit: the race shows finished (its games out of time) before the job
    # or its sockets store it; the replays come once it is stored.
    with time_machine.travel(ends(race) + timedelta(seconds=1), tick=False):
        html = page(logged_in, f"/races/{race.code}/", **EN)
        data = initial_race(html)
        assert data["status"] == "finished"
        assert sorted(s["place"] for s in data["standings"]) == [1, 2]
        assert 'id="race-standings"' in html and 'id="btn-race-rematch"' in html
        assert "Out of time" in html  # the player's own game, ended at the limit
        assert races_tick()[1] == 1
        replay = page(logged_in, f"/races/{race.code}/replay/{rival.username}/", **EN)
    assert f"Replay: {rival.username} in a Bristol race" in replay
    assert f'data-url="/api/v1/races/{race.code}/players/{rival.username}/replay/"' in replay
    assert f'href="/races/{race.code}/"' in replay


def test_a_race_not_over_has_no_replays_yet(client: Any, player: Any, rival: Any) -> None:
    race = countdown_race(player, rival)
    html = page(client, f"/races/{race.code}/replay/{rival.username}/", **DE)
    assert "Die Spiele eines Rennens lassen sich wiederholen, sobald es vorbei ist." in html
    assert "replay.js" not in html


def test_the_daily_replay_page_still_points_at_its_result(client: Any) -> None:
    day = (clock.today() - timedelta(days=1)).isoformat()
    html = page(client, f"/leaderboards/bristol/{day}/replay/7/", **EN)
    assert f'data-url="/api/v1/daily/bristol/{day}/results/7/replay/"' in html


# -- ratings ---------------------------------------------------------------------------------------


def rated_quick_race(player: Any, rival: Any) -> Any:
    """A quick Bristol race of two, finished at its time limit (so it is rated)."""
    from games.services.races import race_finish, race_quick_join

    race, _ = race_quick_join(user=player, variant="bristol")
    race_quick_join(user=rival, variant="bristol")
    race.refresh_from_db()
    with time_machine.travel(ends(race) + timedelta(seconds=1), tick=False):
        return race_finish(race_id=race.pk)


def test_the_race_board_of_a_family_ranks_the_rated_players(
    client: Any, player: Any, rival: Any, every_race_rated: None
) -> None:
    from games.models import RaceRating

    race = rated_quick_race(player, rival)
    assert race.status == "finished"
    ratings = {r.player.username: r.rating for r in RaceRating.objects.filter(family="bristol")}
    assert set(ratings) == {player.username, rival.username}
    html = page(client, "/races/leaderboards/bristol/", **EN)
    assert "Race ratings: Bristol family" in html
    best, second = sorted(ratings, key=lambda name: -ratings[name])
    assert html.index(f">{best}</a>") < html.index(f">{second}</a>")
    assert f"{ratings[best]:.1f}" in html
    # The other family has no rated race yet; the German page says so.
    gallery = page(client, "/races/leaderboards/gallery/", **DE)
    assert "Wertungszahlen der Rennen: Familie Bildergalerie" in gallery
    assert "Noch kein schnelles Rennen dieser Familie wurde gewertet." in gallery
    assert client.get("/races/leaderboards/klondike/").status_code == 404


def test_the_players_page_shows_their_race_rating(
    client: Any, player: Any, rival: Any, every_race_rated: None
) -> None:
    from games.models import RaceRating

    assert 'id="race-ratings"' not in page(client, f"/players/{player.username}/", **EN)
    rated_quick_race(player, rival)
    rating = RaceRating.objects.get(player=player, family="bristol")
    html = page(client, f"/players/{player.username}/", **EN)
    section = html.split('id="race-ratings"')[1]
    assert 'href="/races/leaderboards/bristol/">Bristol family</a>' in section
    assert f"{rating.rating:.1f}" in section
    assert "Picture Gallery family" not in section


def test_boards_and_lobby_link_to_the_race_ratings(client: Any) -> None:
    for url in ["/leaderboards/", "/races/"]:
        html = page(client, url, **EN)
        assert 'href="/races/leaderboards/bristol/"' in html
        assert 'href="/races/leaderboards/gallery/"' in html
