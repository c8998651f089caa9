"""The pages. Thin: check the URL, read through games' selectors, render a template.

Everything that writes (moves, starting games, logging in, tokens) is done by
the page's script through the REST and WebSocket APIs, the same doors programs use.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from functools import wraps
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from accounts import selectors as account_selectors
from api import shapes
from api.daily import board_top
from api.pagination import CursorPage
from core import clock
from core.errors import DailyNotReady, InvalidInput, NotFound
from games.engine import VARIANTS, new_position
from games.inputs import day_parse, variant_parse
from games.selectors import boards as board_selectors
from games.selectors import dailies as daily_selectors
from games.selectors import games as game_selectors
from games.selectors import races as race_selectors
from web.variants import FAMILIES, all_variants, variant_info


class AuthenticatedHttpRequest(HttpRequest):
    """For the type checker only: the request of a ``login_required`` view has a User."""

    user: User


def _signed_in(*, guests: bool) -> Any:
    """Like Django's ``login_required``, but sends people to this site's login page, and a
    guest (``accounts.models.Guest``) to the register page unless ``guests`` lets them in."""

    def decorator(view: Any) -> Any:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path(), reverse("web:login"))
            if not guests and account_selectors.is_guest(request.user):
                return redirect_to_login(request.get_full_path(), reverse("web:register"))
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


#: A page of registered accounts only.
login_required = _signed_in(guests=False)
#: A page of a game's player: an account, or a guest with practice games.
player_required = _signed_in(guests=True)


def _variant(key: str) -> dict[str, Any]:
    try:
        return variant_info(variant_parse(key))
    except NotFound:
        raise Http404("no such variant") from None


def _day(text: str) -> date:
    """A day of a page's path, parsed as the API parses it, that has dailies."""
    try:
        day = day_parse(text)
        daily_selectors.check_day(day)
    except (InvalidInput, NotFound):
        raise Http404("no daily that day") from None
    return day


def _next_url(request: HttpRequest) -> str:
    target = request.GET.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return reverse("web:home")


#: Weeks of past days in the Today page's calendar.
CALENDAR_WEEKS = 5


def _calendar(user: Any, variant: str, today: date) -> dict[str, Any]:
    """The player's past days of a variant, Monday-first weeks ending with today's week."""
    first = today - timedelta(days=today.weekday() + 7 * (CALENDAR_WEEKS - 1))
    games = game_selectors.ranked_days_of_player(
        user=user, variant=variant, first=first, last=today
    )
    weeks = []
    for w in range(CALENDAR_WEEKS):
        days = []
        for d in range(7):
            day = first + timedelta(days=7 * w + d)
            game = games.get(day)
            days.append(
                {
                    "date": day,
                    "past": day < today,
                    "game": game,
                    "result": getattr(game, "result", None) if game else None,
                }
            )
        weeks.append(days)
    stats = next(
        (s for s in board_selectors.stats_of_player(user=user) if s.variant == variant), None
    )
    return {
        "variant": variant_info(variant),
        "weeks": weeks,
        "streak": board_selectors.current_streak(stats) if stats else 0,
    }


def home(request: HttpRequest) -> HttpResponse:
    today = clock.today()
    try:
        dailies = shapes.daily_overview(
            daily_selectors.dailies_of_day(user=request.user, day=today)
        )
    except DailyNotReady:  # the job is dealing them: the page says so
        dailies = []
    for item in dailies:
        item["info"] = variant_info(item["variant"])
    calendar = first_deal = None
    if not request.user.is_authenticated or account_selectors.is_guest(request.user):
        first_deal = _first_deal(today)
    else:
        chosen = request.GET.get("variant", "bristol")
        calendar = _calendar(request.user, chosen if chosen in VARIANTS else "bristol", today)
    return render(
        request,
        "web/home.html",
        {
            "today": today,
            "dailies": dailies,
            "seconds_left": clock.seconds_left(today),
            "variants": all_variants(),
            "calendar": calendar,
            "first_deal": first_deal,
        },
    )


#: The variant of the landing page's deal: the simplest to learn.
FIRST_DEAL_VARIANT = "bristol"


def _first_deal(today: date) -> dict[str, Any]:
    """Today's practice deal for a first visit: its start as the player will see it.

    A practice deal (seed ``YYYYMMDD``), never a daily's: the public position only, so
    no card of the stock is shown; anyone may play the same deal as practice.
    """
    seed = int(today.strftime("%Y%m%d"))
    start = new_position(FIRST_DEAL_VARIANT, seed=seed).public_json()
    return {
        "variant": variant_info(FIRST_DEAL_VARIANT),
        "seed": seed,
        "position": {"piles": start["piles"], "stock": start["stock"]},
    }


@player_required
def play(request: AuthenticatedHttpRequest, game_id: int) -> HttpResponse:
    try:
        game = game_selectors.game_shown(game_id=game_id, user=request.user)
    except NotFound:
        raise Http404("no such game of yours") from None
    state = shapes.game_state(game)
    day = game.deal.date
    counting = game.ranked and day is not None and game.status == "playing"
    return render(
        request,
        "web/play.html",
        {
            "game": state,
            "variant": variant_info(state["variant"]),
            "state": state,
            "hints": game_selectors.hints_allowed(game),
            # A ranked daily still open: the page tells the player when its day ends.
            "seconds_left": clock.seconds_left(day) if counting and day is not None else None,
        },
    )


#: Rows on a page of a list the web pages show (the API's lists take ``?limit=``).
WEB_PAGE_ROWS = 50


def cursor_page(request: HttpRequest, rows: QuerySet[Any], ordering: tuple[str, ...]) -> Any:
    """A page of a list as the API pages it (``api.pagination.CursorPage``): its rows, and
    in ``next``/``previous`` the links to this page's neighbours (None at an end).

    A cursor that is not one of this list's is 400, as in the API.
    """
    paginator = CursorPage()
    paginator.ordering = ordering
    paginator.page_size = WEB_PAGE_ROWS
    try:
        page = paginator.paginate_queryset(rows, Request(request))
    except ValidationError as exc:
        raise BadRequest(paginator.invalid_cursor_message) from exc
    assert page is not None  # None only without a page size, and the paginator has one
    return PageOfRows(
        rows=page,
        first=not paginator.has_previous,
        next=paginator.get_next_link(),
        previous=paginator.get_previous_link(),
    )


@dataclass(frozen=True)
class PageOfRows:
    """A page of a list for a template (``cursor_page``)."""

    rows: list[Any]
    first: bool
    next: str | None
    previous: str | None


@player_required
def my_games(request: AuthenticatedHttpRequest) -> HttpResponse:
    page = cursor_page(
        request,
        game_selectors.games_of_player(user=request.user),
        game_selectors.GAMES_ORDER,
    )
    return render(
        request,
        "web/games.html",
        {
            "page": page,
            "games": shapes.game_states(page.rows),
            "variants": all_variants(),
        },
    )


def rules_index(request: HttpRequest) -> HttpResponse:
    return render(request, "web/rules_index.html", {"variants": all_variants()})


def rules(request: HttpRequest, variant: str) -> HttpResponse:
    info = _variant(variant)
    return render(
        request,
        "web/rules.html",
        {"variant": info, "v": VARIANTS[variant], "variants": all_variants()},
    )


def leaderboards(request: HttpRequest) -> HttpResponse:
    return render(
        request, "web/leaderboards.html", {"variants": all_variants(), "today": clock.today()}
    )


#: Lines of a day's board drawn on the server: dayboard.js's first page, so the page
#: keeps its layout when the script draws the same lines again.
DAY_BOARD_FIRST = 50


def day_board(request: HttpRequest, variant: str, day: str) -> HttpResponse:
    info = _variant(variant)
    the_day = _day(day)
    try:
        deal = daily_selectors.published_deal(info["key"], the_day)
        first = board_top(deal=deal, user=request.user, limit=DAY_BOARD_FIRST)
    except (NotFound, DailyNotReady):
        first = None  # the script says why
    return render(
        request,
        "web/day_board.html",
        {
            "variant": info,
            "day": the_day,
            "first": first,
            "over": clock.day_over(the_day),
            "today": clock.today(),
            "first_day": settings.DAILY_FIRST_DAY,
            "seconds_left": clock.seconds_left(the_day),
        },
    )


def alltime(request: HttpRequest, variant: str) -> HttpResponse:
    info = _variant(variant)
    order = request.GET.get("order", "days_won")
    if order not in board_selectors.ALLTIME_ORDERS:
        order = "days_won"
    board = board_selectors.alltime_board(variant=variant, order=order)
    page = cursor_page(request, board, board_selectors.ALLTIME_ORDER)
    return render(
        request,
        "web/alltime.html",
        {
            "variant": info,
            "order": order,
            "orders": board_selectors.ALLTIME_ORDERS,
            "columns": [
                (_("Days won"), "days_won"),
                (_("Days played"), "played"),
                (_("Best streak"), "best_streak"),
                (_("Current streak"), "current_streak"),
            ],
            "board": shapes.alltime_lines(
                board_selectors.alltime_ranked(board, page.rows, first=page.first)
            ),
            "page": page,
        },
    )


def player(request: HttpRequest, username: str) -> HttpResponse:
    try:
        user = account_selectors.player_by_name(username)
    except NotFound:
        raise Http404("no such player") from None
    record = shapes.player_record(
        user,
        board_selectors.stats_of_player(user=user),
        race_ratings=race_selectors.player_race_ratings(user=user),
    )
    for item in record["variants"]:
        item["info"] = variant_info(item["variant"])
    for item in record["race_ratings"]:
        item["name"] = str(FAMILIES[item["family"]])
    return render(request, "web/player.html", {"record": record})


def replay(request: HttpRequest, variant: str, day: str, result_id: int) -> HttpResponse:
    info = _variant(variant)
    the_day = _day(day)
    return render(
        request,
        "web/replay.html",
        {
            "variant": info,
            "day": the_day,
            "result_id": result_id,
            "over": clock.day_over(the_day),
            "api_url": f"/api/v1/daily/{variant}/{the_day.isoformat()}/results/{result_id}/replay/",
        },
    )


def _race_variants() -> list[dict[str, Any]]:
    """Every variant with the time limit of its races."""
    return [
        {**v, "time_limit_minutes": race_selectors.time_limit(v["key"]) // 60}
        for v in all_variants()
    ]


def races(request: HttpRequest) -> HttpResponse:
    entry = (
        race_selectors.player_live_entry(request.user) if request.user.is_authenticated else None
    )
    return render(
        request,
        "web/races.html",
        {
            "current": entry.race if entry else None,  # one race at a time: the player's
            "variants": _race_variants(),
            "min_players": race_selectors.MIN_PLAYERS,
            "max_players": race_selectors.MAX_PLAYERS,
            "quick_start_seconds": race_selectors.QUICK_START_SECONDS,
        },
    )


@never_cache  # going back to it shows the race as it is now, not as it was
def race(request: HttpRequest, code: str) -> HttpResponse:
    """A race for players and spectators; a player who has a game gets its board."""
    try:
        the_race = race_selectors.race_by_code(code)  # one past its time shows finished
    except NotFound:
        raise Http404("no such race") from None
    view = shapes.race(the_race, request.user)
    state = None
    if request.user.is_authenticated and view["you"] and view["you"]["game"]:
        state = shapes.game_state(
            game_selectors.game_shown(game_id=view["you"]["game"], user=request.user)
        )
    return render(
        request,
        "web/race.html",
        {
            "race": view,
            "variant": variant_info(view["variant"]),
            "game": state,
            "state": state,
            "hints": False,
            # The board takes moves only while the race runs (race.js keeps it so).
            "held": view["status"] != "running",
            "quick_start_seconds": race_selectors.QUICK_START_SECONDS,
            "time_limit_minutes": view["time_limit_seconds"] // 60,
        },
    )


def race_replay(request: HttpRequest, code: str, username: str) -> HttpResponse:
    try:
        the_race = race_selectors.race_by_code(code)
    except NotFound:
        raise Http404("no such race") from None
    info = variant_info(the_race.variant)
    return render(
        request,
        "web/replay.html",
        {
            "variant": info,
            "over": the_race.status == "finished",
            "api_url": f"/api/v1/races/{quote(code)}/players/{quote(username)}/replay/",
            "back_url": reverse("web:race", args=[code]),
            "race_player": username,
        },
    )


def race_board(request: HttpRequest, family: str) -> HttpResponse:
    """The quick-race ratings of a variant family, best first."""
    if family not in FAMILIES:
        raise Http404("no such family")
    board = race_selectors.race_leaderboard(family=family)
    page = cursor_page(request, board, race_selectors.RACE_BOARD_ORDER)
    return render(
        request,
        "web/race_board.html",
        {
            "family": family,
            "families": [{"key": k, "name": str(v)} for k, v in FAMILIES.items()],
            "family_name": str(FAMILIES[family]),
            "columns": [(_("Rating"), "rating"), (_("Races"), "races")],
            "board": shapes.race_leaderboard(
                race_selectors.race_board_ranked(board, page.rows, first=page.first)
            ),
            "page": page,
        },
    )


def login_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/login.html", {"next": _next_url(request)})


def register_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/register.html", {"next": _next_url(request)})


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    return render(request, "web/tokens.html")
