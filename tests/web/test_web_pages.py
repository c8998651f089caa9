"""Every page answers, in English and German, and private pages need a login."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse

from core import clock
from games.engine import VARIANTS
from games.models import Result

pytestmark = pytest.mark.django_db

DE = {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en-US,en;q=0.9"}


def text(response: Any) -> str:
    return response.content.decode()


def get_ok(client: Any, url: str, **headers: Any) -> str:
    response = client.get(url, **headers)
    assert response.status_code == 200, (url, response.status_code)
    return text(response)


def today() -> str:
    return clock.today().isoformat()


# -- home ---------------------------------------------------------------------------------


def test_home_lists_every_variant_in_english(client: Any) -> None:
    html = get_ok(client, "/", **EN)
    assert '<html lang="en">' in html
    assert "Today&#x27;s daily challenges" in html or "Today's daily challenges" in html
    for name in ["Bristol", "Belvedere", "Picture Gallery", "Royal Parade", "Mod3"]:
        assert name in html
    assert "Log in or register to play the daily challenge." in html
    assert "data-countdown=" in html


def test_home_in_german_by_accept_language(client: Any) -> None:
    html = get_ok(client, "/", **DE)
    assert '<html lang="de">' in html
    assert "Die Tagesaufgaben von heute" in html
    assert "Bildergalerie" in html
    assert "Bildergalerie, letzte Reihe rückwärts" in html
    assert "Melde dich an oder registriere dich, um die Tagesaufgabe zu spielen." in html
    assert "Today's daily challenges" not in html


def test_home_offers_todays_daily_to_a_player(logged_in: Any) -> None:
    html = get_ok(logged_in, "/", **EN)
    dailies, calendar = html.split('<section class="calendar"')
    assert dailies.count("data-daily-play") == len(VARIANTS)
    assert f'data-date="{today()}"' in dailies
    # The calendar of past days offers each past day of its weeks as practice.
    assert calendar.count("data-daily-play") == 7 * 4 + clock.today().weekday()
    assert "Not played yet." in html
    assert 'id="practice-form"' in html


def test_home_shows_a_daily_in_progress_with_resume_link(logged_in: Any, player: Any) -> None:
    from games.services.dailies import daily_game_start

    game, _ = daily_game_start(user=player, variant="bristol", day=clock.today())
    html = get_ok(logged_in, "/", **EN)
    assert f'href="/play/{game.id}/"' in html
    assert "In progress: 0 moves, 0 cards home." in html


def test_the_calendar_marks_today_once_played_with_german_dates(
    logged_in: Any, player: Any
) -> None:
    from games.play.finish import resign as game_resign
    from games.services.dailies import daily_game_start

    game, _ = daily_game_start(user=player, variant="bristol", day=clock.today())
    game_resign(game_id=game.id, user=player)
    html = get_ok(logged_in, "/", **DE)
    calendar = html.split('<section class="calendar"')[1]
    cell = re.search(rf'<td data-date="{clock.today()}" class="([^"]*)">(.*?)</td>', calendar, re.S)
    assert cell is not None
    assert cell.group(1).split() == ["played", "today"]
    assert '<span class="day-mark" aria-hidden="true">●</span>' in cell.group(2)
    day = clock.today()
    assert f'<span class="day-num">{day.day}. ' in cell.group(2)  # "10. März", not "10 Mär"
    english = get_ok(logged_in, "/", **EN).split('<section class="calendar"')[1]
    assert f'<span class="day-num">{day.day} ' in english


def test_home_shows_a_finished_daily_with_its_rank(logged_in: Any, player: Any) -> None:
    from games.play.finish import resign as game_resign
    from games.services.dailies import daily_game_start

    game, _ = daily_game_start(user=player, variant="bristol", day=clock.today())
    game_resign(game_id=game.id, user=player)
    html = get_ok(logged_in, "/", **DE)
    assert "Aufgegeben" in html
    assert "Platz 1" in html
    assert "Noch einmal spielen (ohne Wertung)" in html


# -- language switch and catalog ---------------------------------------------------------


def test_language_switch_posts_to_set_language_and_sticks(client: Any) -> None:
    html = get_ok(client, "/rules/", **EN)
    assert 'action="/i18n/setlang/"' in html
    assert 'name="language" value="de"' in html
    response = client.post("/i18n/setlang/", {"language": "de", "next": "/rules/"}, **EN)
    assert response.status_code == 302
    assert response["Location"] == "/rules/"
    # The cookie now wins over the browser's Accept-Language.
    html = get_ok(client, "/rules/", **EN)
    assert "Familie Bildergalerie" in html
    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert "Picture Gallery family" in get_ok(client, "/rules/", **DE)


def test_javascript_catalog_is_german_for_german_pages(client: Any) -> None:
    german = get_ok(client, "/jsi18n/", **DE)
    assert "Herz" in german and "Ausgangslage" in german
    english = get_ok(client, "/jsi18n/", **EN)
    assert "Herz" not in english


# -- play -----------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/play/1/", "/games/", "/account/tokens/"])
def test_private_pages_redirect_to_login(client: Any, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next={url}"


def test_play_page_draws_a_bristol_game(logged_in: Any, practice: Any) -> None:
    html = get_ok(logged_in, f"/play/{practice.id}/", **EN)
    assert 'data-family="bristol"' in html
    assert "Practice game" in html
    assert "Move cards to the foundations automatically when it is safe" in html
    assert 'id="btn-finish"' in html
    assert "fans 1 to 8" in html
    found = re.search(r'id="initial-state"[^>]*>(.*?)</script>', html, re.S)
    assert found is not None
    state = json.loads(found.group(1))
    assert state["id"] == practice.id
    assert state["position"]["stock"] == 25
    assert "deal" in state["legal_moves"]
    assert "web/play.js" in html


def test_play_page_in_german(logged_in: Any, gallery_game: Any) -> None:
    html = get_ok(logged_in, f"/play/{gallery_game.id}/", **DE)
    assert 'data-family="gallery"' in html
    assert "Bildergalerie" in html
    assert "Übungsspiel" in html
    assert "Austeilen" in html and "Zurücknehmen" in html and "Aufgeben" in html
    assert "Asse automatisch auf den Ass-Stapel legen" in html
    assert "obere Reihe, Plätze 1 bis 8 (Start 2)" in html


def test_play_page_of_a_ranked_daily(logged_in: Any, player: Any) -> None:
    from games.services.dailies import daily_game_start

    game, _ = daily_game_start(user=player, variant="picture-gallery-reversed", day=clock.today())
    html = get_ok(logged_in, f"/play/{game.id}/", **EN)
    assert "Daily challenge of" in html and "ranked" in html
    assert f"/leaderboards/picture-gallery-reversed/{today()}/" in html
    assert "deal the last row right to left" in html


def test_someone_elses_game_is_not_found(client: Any, rival: Any, practice: Any) -> None:
    client.force_login(rival)
    assert client.get(f"/play/{practice.id}/").status_code == 404


def test_my_games_lists_my_games(logged_in: Any, practice: Any) -> None:
    html = get_ok(logged_in, "/games/", **DE)
    assert f'href="/play/{practice.id}/"' in html
    assert "Meine Spiele" in html and "Übung" in html


def links(html: str, label: str) -> list[str]:
    """The addresses of a page's pager links named ``label``."""
    return [
        m.group(1).replace("&amp;", "&")
        for m in re.finditer(rf'<a href="([^"]+)">{label}</a>', html)
    ]


def test_my_games_page_as_the_api_pages(logged_in: Any, player: Any, monkeypatch: Any) -> None:
    from games.services.games import practice_game_start

    monkeypatch.setattr("web.views.WEB_PAGE_ROWS", 2)
    games = [practice_game_start(user=player, variant="bristol", seed=i).id for i in range(5)]
    seen: list[int] = []
    url: str | None = "/games/"
    pages = 0
    while url:
        html = get_ok(logged_in, url, **EN)
        seen += [int(n) for n in re.findall(r'href="/play/(\d+)/"', html)]
        older = links(html, "Older")
        url, pages = (older[0] if older else None), pages + 1
    assert seen == games[::-1] and pages == 3
    assert "cursor=" in links(get_ok(logged_in, url or "/games/", **EN), "Older")[0]
    assert logged_in.get("/games/", {"cursor": "made-up"}).status_code == 400


def test_alltime_board_pages_keep_the_order(client: Any, make_user: Any, monkeypatch: Any) -> None:
    from games.models import PlayerStats

    monkeypatch.setattr("web.views.WEB_PAGE_ROWS", 2)
    for i in range(3):
        PlayerStats.objects.create(
            player=make_user(f"w{i}"), variant="bristol", played=3, won=3 - i, best_streak=1
        )
    first = get_ok(client, "/leaderboards/bristol/?order=best_streak", **EN)
    assert links(first, "Previous") == []
    (following,) = links(first, "Next")
    assert "order=best_streak" in following
    second = get_ok(client, following, **EN)
    assert ">w2<" in second and ">w0<" not in second and links(second, "Next") == []
    assert get_ok(client, links(second, "Previous")[0], **EN).count("/players/w") == 2


# -- rules ----------------------------------------------------------------------------------


def test_rules_index_links_every_variant(client: Any) -> None:
    html = get_ok(client, "/rules/", **EN)
    for key in VARIANTS:
        assert f'href="/rules/{key}/"' in html


@pytest.mark.parametrize("key", list(VARIANTS))
def test_rules_of_every_variant_in_both_languages(client: Any, key: str) -> None:
    english = get_ok(client, f"/rules/{key}/", **EN)
    german = get_ok(client, f"/rules/{key}/", **DE)
    assert "Points settled on this site" in english
    assert "So ist es hier geregelt" in german
    assert "Notation for programs" in english
    assert "Schreibweise für Programme" in german


def test_rules_state_what_sets_each_variant_apart(client: Any) -> None:
    assert "24 cards" in get_ok(client, "/rules/belvedere/", **EN)
    assert "eight deals of three cards and a ninth" in get_ok(client, "/rules/bristol/", **EN)
    royal = get_ok(client, "/rules/royal-parade/", **EN)
    assert "96 cards" in royal and "stays empty until the next deal" in royal
    assert "deal-reverse" in get_ok(client, "/rules/picture-gallery-reversed/", **EN)
    assert "at any time" in get_ok(client, "/rules/mod3/", **EN)
    gallery = get_ok(client, "/rules/picture-gallery/", **DE)
    assert "als Teil desselben Zugs" in gallery


def test_unknown_variant_is_not_found(client: Any) -> None:
    assert client.get("/rules/spider/").status_code == 404
    assert client.get("/leaderboards/spider/").status_code == 404


# -- leaderboards, statistics, replay -----------------------------------------------------


def test_leaderboards_index(client: Any) -> None:
    html = get_ok(client, "/leaderboards/", **DE)
    assert "Bestenlisten" in html
    assert f"/leaderboards/mod3/{today()}/" in html
    assert 'href="/leaderboards/mod3/"' in html


def test_day_board_page_today_is_live(client: Any) -> None:
    html = get_ok(client, f"/leaderboards/bristol/{today()}/", **EN)
    assert 'data-over="0"' in html
    assert "New results appear here as players finish." in html
    assert "web/dayboard.js" in html


def test_day_board_page_of_a_past_day(client: Any) -> None:
    day = (clock.today() - timedelta(days=3)).isoformat()
    html = get_ok(client, f"/leaderboards/mod3/{day}/", **DE)
    assert 'data-over="1"' in html
    assert "Dieser Tag ist vorbei" in html


@pytest.mark.parametrize("day", ["tomorrow", "2020-13-01", "20260310", "Today"])
def test_day_board_of_a_bad_or_future_day_is_not_found(client: Any, day: str) -> None:
    if day == "tomorrow":
        day = (clock.today() + timedelta(days=1)).isoformat()
    assert client.get(f"/leaderboards/bristol/{day}/").status_code == 404


def test_day_board_takes_today_as_the_api_does(client: Any) -> None:
    html = get_ok(client, "/leaderboards/bristol/today/", **EN)
    assert f'data-day="{clock.today().isoformat()}" data-over="0"' in html


def test_alltime_board_in_three_orders(client: Any, player: Any) -> None:
    from games.play.finish import resign as game_resign
    from games.services.dailies import daily_game_start

    game, _ = daily_game_start(user=player, variant="bristol", day=clock.today())
    game_resign(game_id=game.id, user=player)
    for order in ["days_won", "best_streak", "streak"]:
        html = get_ok(client, f"/leaderboards/bristol/?order={order}", **EN)
        assert f'href="?order={order}" aria-current="page"' in html
    assert "Gewonnene Tage" in get_ok(client, "/leaderboards/bristol/?order=bogus", **DE)


def test_player_statistics(client: Any, player: Any) -> None:
    from games.play.finish import resign as game_resign
    from games.services.dailies import daily_game_start

    game, _ = daily_game_start(user=player, variant="mod3", day=clock.today())
    game_resign(game_id=game.id, user=player)
    html = get_ok(client, "/players/ada/", **EN)
    assert "Statistics of ada" in html
    assert "Mod3" in html
    home = Result.objects.get(game=game).cards_home  # Mod3 may start with a card home
    assert (f"{home} card home" if home == 1 else f"{home} cards home") in html
    assert "Statistik von ada" in get_ok(client, "/players/ada/", **DE)
    assert client.get("/players/nobody/").status_code == 404


def test_replay_page_waits_for_the_end_of_the_day(client: Any) -> None:
    html = get_ok(client, f"/leaderboards/bristol/{today()}/replay/1/", **EN)
    assert "once its day is over" in html
    assert "replay.js" not in html
    past = (clock.today() - timedelta(days=1)).isoformat()
    html = get_ok(client, f"/leaderboards/bristol/{past}/replay/1/", **DE)
    assert "replay.js" in html
    assert "Anfang" in html and "Zurück" in html and "Weiter" in html and "Ende" in html
    assert 'type="range"' in html


# -- accounts -------------------------------------------------------------------------------


def test_login_and_register_pages(client: Any) -> None:
    html = get_ok(client, "/login/?next=/games/", **EN)
    assert 'id="login-form"' in html and 'data-next="/games/"' in html
    assert "Benutzername" in get_ok(client, "/login/", **DE)
    html = get_ok(client, "/register/", **DE)
    assert "Konto anlegen" in html and 'id="register-form"' in html


def test_login_page_ignores_a_foreign_next(client: Any) -> None:
    html = get_ok(client, "/login/?next=https://evil.example/", **EN)
    assert 'data-next="/"' in html


def test_tokens_page(logged_in: Any) -> None:
    html = get_ok(logged_in, "/account/tokens/", **EN)
    assert "it is shown only this once" in html
    assert "web/tokens.js" in html
    assert "Token erzeugen" in get_ok(logged_in, "/account/tokens/", **DE)


def test_navigation_for_a_logged_in_player(logged_in: Any) -> None:
    html = get_ok(logged_in, "/", **EN)
    assert "data-logout" in html
    assert 'href="/players/ada/"' in html
    assert reverse("web:tokens") in html


def test_static_files_are_found() -> None:
    from django.contrib.staticfiles import finders

    for name in [
        "app.css",
        "common.js",
        "cards.js",
        "board.js",
        "game.js",
        "play.js",
        "home.js",
        "auth.js",
        "tokens.js",
        "dayboard.js",
        "replay.js",
        "site.js",
    ]:
        assert finders.find(f"web/{name}"), name


def test_royal_parade_has_no_ace_pile_controls(logged_in: Any, player: Any) -> None:
    from games.services.games import practice_game_start

    game = practice_game_start(user=player, variant="royal-parade", seed=3)
    html = get_ok(logged_in, f"/play/{game.id}/", **EN)
    assert "the ace pile (as destination)" not in html
    assert re.search(r'<p hidden><label><input type="checkbox" id="set-auto-home">', html)
