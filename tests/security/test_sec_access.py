"""Access: nobody acts in another's game, tokens act only for their owner, admin for staff only,
CSRF on every session write (REST and forms), password rules, address-based limits.

Single cases of several of these are in tests/api (one endpoint each); here every
operation that names a game, every socket message, and every write is covered.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings as django_settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.urls import reverse
from pytest_django import Settings
from rest_framework.test import APIClient

from accounts import services as account_services
from accounts.models import ApiToken
from devtools.accounts import PASSWORD
from games.models import Game
from games.play import move as play_move
from games.selectors.games import game_log
from games.services import games as game_services
from tests.helpers import token_headers
from tests.security.helpers import Socket, assert_envelope

GAMES = "/api/v1/games/"
ME = "/api/v1/auth/me/"


def make(name: str, **extra: Any) -> Any:
    return get_user_model().objects.create_user(username=name, password=PASSWORD, **extra)


def token_client(user: Any) -> APIClient:
    client: Any = APIClient()  # plus the token's key, for the tests
    key = account_services.token_create(user=user, name="t")[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    client.key = key
    return client


def state_of(game: Game) -> tuple:
    g = Game.objects.get(pk=game.pk)
    return g.ply, g.status, g.assisted, len(game_log(g))


# -- another player's game ------------------------------------------------------------------


@pytest.fixture
def two_players(db: None) -> dict[str, Any]:
    ann, bob = make("ann"), make("bob")
    game = game_services.practice_game_start(user=ann, variant="bristol", seed=1)
    play_move.apply_move(game_id=game.pk, user=ann, move="deal", ply=0)
    return {"ann": ann, "bob": bob, "game": game, "a": token_client(ann), "b": token_client(bob)}


GAME_REQUESTS = [
    ("get", "{}/", None),
    ("get", "{}/moves/", None),
    ("post", "{}/moves/", {"move": "deal", "ply": 1}),
    ("post", "{}/moves/", {"move": "deal", "ply": 0}),  # a "retry" of ann's stored move
    ("post", "{}/undo/", {"ply": 1}),
    ("post", "{}/hint/", None),
    ("post", "{}/resign/", None),
]


@pytest.mark.parametrize("method, path, data", GAME_REQUESTS)
def test_another_players_game_is_not_found_like_a_missing_one(
    two_players: dict[str, Any], method: str, path: str, data: dict[str, str | int] | None
) -> None:
    game, b = two_players["game"], two_players["b"]
    before = state_of(game)
    theirs = getattr(b, method)(GAMES + path.format(game.pk), data, format="json")
    missing = getattr(b, method)(GAMES + path.format(game.pk + 1000), data, format="json")
    assert theirs.status_code == missing.status_code == 404, theirs.content
    error = assert_envelope(theirs.json())
    assert error["code"] == "not_found"
    # The same answer as for no game at all: nothing tells that the id exists.
    assert theirs.content.replace(str(game.pk).encode(), b"N") == missing.content.replace(
        str(game.pk + 1000).encode(), b"N"
    )
    assert state_of(game) == before


def test_lists_and_the_web_pages_show_only_my_games(
    two_players: dict[str, Any], client: Client
) -> None:
    game, b = two_players["game"], two_players["b"]
    assert b.get(GAMES).json()["results"] == []
    assert [g["id"] for g in two_players["a"].get(GAMES).json()["results"]] == [game.pk]
    client.force_login(two_players["bob"])
    assert client.get(f"/play/{game.pk}/").status_code == 404
    assert f"/play/{game.pk}/" not in client.get("/games/").content.decode()


def test_a_token_acts_for_its_owner_only(two_players: dict[str, Any]) -> None:
    a, b = two_players["a"], two_players["b"]
    assert a.get(ME).json()["username"] == "ann"
    assert b.get(ME).json()["username"] == "bob"
    # A session of bob and a token of ann: the token decides, for everything.
    client = APIClient()
    client.force_login(two_players["bob"])
    client.credentials(HTTP_AUTHORIZATION=f"Token {a.key}")
    assert client.get(ME).json()["username"] == "ann"
    # Bob cannot revoke or even see ann's tokens.
    token = ApiToken.objects.filter(user=two_players["ann"]).first()
    assert token is not None
    assert token.pk not in [t["id"] for t in b.get("/api/v1/auth/tokens/").json()["results"]]
    assert b.delete(f"/api/v1/auth/tokens/{token.pk}/").status_code == 404
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None


def test_a_revoked_token_fails_everywhere_at_once(two_players: dict[str, Any]) -> None:
    a = two_players["a"]
    token = ApiToken.objects.get(user=two_players["ann"], revoked_at__isnull=True)
    assert a.delete(f"/api/v1/auth/tokens/{token.pk}/").status_code == 204
    for method, path, data in [("get", ME, None), ("get", GAMES, None)] + [
        (m, GAMES + p.format(two_players["game"].pk), d) for m, p, d in GAME_REQUESTS
    ]:
        response = getattr(a, method)(path, data, format="json")
        assert response.status_code == 401, (method, path)
        assert assert_envelope(response.json())["code"] == "authentication_failed"
    # Public endpoints refuse it too (a bad token is never taken for no token).
    assert a.get("/api/v1/variants/").status_code == 401


def test_an_inactive_accounts_token_and_session_fail(two_players: dict[str, Any]) -> None:
    a = two_players["a"]
    session = Client()
    session.force_login(two_players["ann"])
    get_user_model().objects.filter(username="ann").update(is_active=False)
    assert a.get(ME).status_code == 401
    assert session.get(ME).status_code in (401, 403)


# -- sockets ----------------------------------------------------------------------------------


def session_headers(user: Any) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    name = django_settings.SESSION_COOKIE_NAME
    cookie = client.cookies[name].value
    return [(b"cookie", f"{name}={cookie}".encode()), (b"origin", b"http://testserver")]


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("channel_layers")
async def test_sockets_of_another_player_are_refused_and_cannot_act() -> None:
    def setup() -> tuple:
        ann, bob = make("ann"), make("bob")
        game = game_services.practice_game_start(user=ann, variant="bristol", seed=1)
        a_key = account_services.token_create(user=ann, name="a")[1]
        b_key = account_services.token_create(user=bob, name="b")[1]
        return ann, bob, game, a_key, b_key, session_headers(bob)

    ann, bob, game, a_key, b_key, bob_session = await database_sync_to_async(setup)()
    path = f"/ws/v1/games/{game.pk}/"
    for headers in (token_headers(b_key), bob_session, []):
        code = await Socket(path, headers).close_code()
        assert code == (4401 if not headers else 4404)
    assert await Socket(f"{path}?token={b_key}").close_code() == 4404
    # Ann's token with Bob's session cookie: the token decides, it is Ann's game.
    mine = Socket(path, [*bob_session, *token_headers(a_key)])
    assert (await mine.open())["state"]["id"] == game.pk
    await mine.close()
    # Bob listening on Ann's game group learns nothing: his own socket is closed.
    assert (await database_sync_to_async(state_of)(game))[0] == 0


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("channel_layers")
async def test_revoking_a_token_closes_its_open_sockets_with_4401() -> None:
    def setup() -> tuple:
        ann = make("ann")
        game = game_services.practice_game_start(user=ann, variant="bristol", seed=1)
        token, key = account_services.token_create(user=ann, name="a")
        other_key = account_services.token_create(user=ann, name="b")[1]
        return ann, game, token, key, other_key

    ann, game, token, key, other_key = await database_sync_to_async(setup)()
    path = f"/ws/v1/games/{game.pk}/"
    doomed, spared = Socket(path, token_headers(key)), Socket(path, token_headers(other_key))
    await doomed.open()
    await spared.open()
    await database_sync_to_async(account_services.token_revoke)(user=ann, token_id=token.pk)
    out = await doomed.comm.receive_output(5)
    assert out["type"] == "websocket.close" and out["code"] == 4401, out
    # The socket of another token of the same player goes on.
    assert (await spared.ask({"type": "resync"}))["type"] == "state"
    assert await Socket(path, token_headers(key)).close_code() == 4401
    await spared.close()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("channel_layers")
async def test_logging_out_closes_the_sockets_of_that_session_with_4401() -> None:
    def setup() -> tuple:
        ann = make("ann")
        game = game_services.practice_game_start(user=ann, variant="bristol", seed=1)
        leaving, staying = Client(), Client()
        leaving.force_login(ann)
        staying.force_login(ann)
        return game, leaving, staying

    def headers(client: Client) -> list[tuple[bytes, bytes]]:
        cookie = client.cookies[django_settings.SESSION_COOKIE_NAME]
        return [
            (b"cookie", f"{cookie.key}={cookie.value}".encode()),
            (b"origin", b"http://testserver"),
        ]

    game, leaving, staying = await database_sync_to_async(setup)()
    path = f"/ws/v1/games/{game.pk}/"
    doomed, spared = Socket(path, headers(leaving)), Socket(path, headers(staying))
    await doomed.open()
    await spared.open()
    doomed_headers = headers(leaving)
    response = await database_sync_to_async(leaving.post)("/api/v1/auth/logout/")
    assert response.status_code == 204
    out = await doomed.comm.receive_output(5)
    assert out["type"] == "websocket.close" and out["code"] == 4401, out
    # The same player's socket of another browser session goes on.
    assert (await spared.ask({"type": "resync"}))["type"] == "state"
    # The old cookie opens nothing any more.
    assert await Socket(path, doomed_headers).close_code() == 4401
    await spared.close()


# -- admin ------------------------------------------------------------------------------------


def admin_urls() -> list[str]:
    urls = [reverse("admin:index")]
    for model in admin.site._registry:
        meta = model._meta
        urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_add"))
    return urls


@pytest.mark.django_db
def test_the_admin_is_for_staff_only() -> None:
    urls = admin_urls()
    assert len(urls) > 8
    anonymous = Client()
    player = Client()
    player.force_login(make("ann"))
    boss = Client()
    boss.force_login(make("boss", is_staff=True, is_superuser=True))
    for url in urls:
        for client in (anonymous, player):
            response = client.get(url)
            assert response.status_code == 302, url
            assert response["Location"].startswith("/admin/login/"), url
        assert boss.get(url).status_code in (200, 403), url  # 403: models with no add page
    assert boss.get(reverse("admin:index")).status_code == 200
    # A player posting an admin form changes nothing.
    ann = get_user_model().objects.get(username="ann")
    game = game_services.practice_game_start(user=ann, variant="bristol")
    response = player.post(
        reverse("admin:games_game_changelist"),
        {"action": "delete_selected", "_selected_action": [game.pk], "post": "yes"},
    )
    assert response.status_code == 302 and Game.objects.filter(pk=game.pk).exists()


@pytest.mark.django_db
def test_staff_without_permissions_sees_no_model() -> None:
    clerk = Client()
    clerk.force_login(make("clerk", is_staff=True))
    assert clerk.get(reverse("admin:index")).status_code == 200
    assert clerk.get(reverse("admin:games_game_changelist")).status_code == 403
    assert clerk.get(reverse("admin:auth_user_changelist")).status_code == 403


@pytest.mark.django_db
def test_the_admin_login_form_needs_the_csrf_token() -> None:
    make("boss", is_staff=True, is_superuser=True)
    client = Client(enforce_csrf_checks=True)
    data = {"username": "boss", "password": PASSWORD}
    assert client.post("/admin/login/", data).status_code == 403
    page = client.get("/admin/login/")
    data["csrfmiddlewaretoken"] = page.context["csrf_token"]
    assert client.post("/admin/login/", data).status_code == 302


# -- CSRF -------------------------------------------------------------------------------------


def csrf_session(user: Any) -> tuple[APIClient, str]:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    token = client.get("/api/v1/auth/csrf/").json()["csrf_token"]
    return client, token


WRITES = [
    ("post", "/api/v1/games/", {"variant": "bristol"}),
    ("post", "/api/v1/games/{game}/moves/", {"move": "deal", "ply": 1}),
    ("post", "/api/v1/games/{game}/undo/", {"ply": 1}),
    ("post", "/api/v1/games/{game}/hint/", None),
    ("post", "/api/v1/games/{game}/resign/", None),
    ("post", "/api/v1/daily/bristol/{today}/play/", None),
    ("post", "/api/v1/auth/tokens/", {"name": "x"}),
    ("delete", "/api/v1/auth/tokens/{token}/", None),
    ("post", "/api/v1/auth/logout/", None),
]


@pytest.mark.django_db
@pytest.mark.parametrize("method, path, data", WRITES)
def test_every_session_write_needs_the_csrf_token(
    settings: Settings, method: str, path: str, data: dict[str, str | int] | None
) -> None:
    from core import clock

    settings.HINT_SOLVER_NODES = 200
    ann = make("ann")
    game = game_services.practice_game_start(user=ann, variant="bristol", seed=1)
    play_move.apply_move(game_id=game.pk, user=ann, move="deal", ply=0)
    token = account_services.token_create(user=ann, name="spare")[0]
    url = path.format(game=game.pk, token=token.pk, today=clock.today().isoformat())
    client, csrf = csrf_session(ann)

    def snapshot() -> tuple:
        tokens = ApiToken.objects.filter(revoked_at=None).count()
        return state_of(game), tokens, Game.objects.count()

    before = snapshot()

    refused = getattr(client, method)(url, data, format="json")
    assert refused.status_code == 403, url
    assert "CSRF" in assert_envelope(refused.json())["message"]
    foreign = getattr(client, method)(
        url, data, format="json", HTTP_X_CSRFTOKEN=csrf, HTTP_ORIGIN="http://evil.example"
    )
    assert foreign.status_code == 403, url  # the right token from another site's page
    wrong = getattr(client, method)(url, data, format="json", HTTP_X_CSRFTOKEN="x" * 32)
    assert wrong.status_code == 403, url
    assert snapshot() == before

    accepted = getattr(client, method)(url, data, format="json", HTTP_X_CSRFTOKEN=csrf)
    assert accepted.status_code in (200, 201, 202, 204), (url, accepted.content)


@pytest.mark.django_db
def test_the_language_form_needs_the_csrf_token() -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post("/i18n/setlang/", {"language": "de"}).status_code == 403
    client.get("/login/")  # any page sets the cookie
    token = client.cookies["csrftoken"].value
    response = client.post("/i18n/setlang/", {"language": "de", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert client.cookies[django_settings.LANGUAGE_COOKIE_NAME].value == "de"


@pytest.mark.django_db
def test_pages_with_forms_carry_the_token_and_are_not_framed(client: Client) -> None:
    client.force_login(make("ann"))
    for path in ("/login/", "/register/", "/account/tokens/", "/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response["X-Frame-Options"] in ("DENY", "SAMEORIGIN"), path
        assert "csrftoken" in response.cookies or client.cookies.get("csrftoken"), path


# -- passwords --------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "password, says",
    [
        ("Xq3!", "too short"),
        ("password123", "too common"),
        ("48151623429813", "entirely numeric"),
        ("margaret-thatcher", "too similar"),
        ("", "blank"),
        ("p" * 129, "128"),
    ],
)
def test_register_refuses_weak_passwords_with_the_validators_messages(
    password: str, says: str
) -> None:
    response = APIClient().post(
        "/api/v1/auth/register/",
        {"username": "margaret-thatcher", "password": password, "email": "m@example.com"},
        format="json",
    )
    assert response.status_code == 400
    error = assert_envelope(response.json())
    assert error["code"] == "validation_error"
    messages = " ".join(error["details"]["password"])
    assert says in messages, messages
    if password:
        assert password not in response.content.decode()  # never echoed back
    assert not get_user_model().objects.filter(username="margaret-thatcher").exists()


@pytest.mark.django_db
def test_every_validator_is_on() -> None:
    names = {v["NAME"].rsplit(".", 1)[1] for v in django_settings.AUTH_PASSWORD_VALIDATORS}
    assert names == {
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    }


@pytest.mark.django_db
def test_passwords_are_stored_hashed_and_never_returned(password: str) -> None:
    client = APIClient()
    response = client.post(
        "/api/v1/auth/register/", {"username": "carol", "password": password}, format="json"
    )
    assert response.status_code == 201
    user = get_user_model().objects.get(username="carol")
    assert user.password != password and user.check_password(password)
    for path in (ME, "/api/v1/players/carol/stats/"):
        assert password not in client.get(path).content.decode()
    key = client.post("/api/v1/auth/tokens/", {"name": "x"}, format="json").json()["token"]
    stored = ApiToken.objects.get(user=user)
    assert key not in json.dumps(list(ApiToken.objects.values()), default=str)
    assert stored.key_hash != key and stored.prefix == key[:10]


# -- rate limits by address --------------------------------------------------------------------


def rates(**lowered: str) -> dict:
    conf = dict(django_settings.REST_FRAMEWORK)
    conf["DEFAULT_THROTTLE_RATES"] = {**conf["DEFAULT_THROTTLE_RATES"], **lowered}
    return conf


@pytest.mark.django_db
def test_a_forged_forwarded_for_does_not_reset_the_login_limit() -> None:
    """Without a proxy in front (NUM_PROXIES=0), X-Forwarded-For is the client's own word."""
    assert django_settings.REST_FRAMEWORK["NUM_PROXIES"] == 0
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(auth="3/min")):
        for i in range(3):
            response = client.post(
                "/api/v1/auth/login/",
                {"username": "ann", "password": "guess"},
                format="json",
                HTTP_X_FORWARDED_FOR=f"10.1.0.{i}",
            )
            assert response.status_code == 401
        response = client.post(
            "/api/v1/auth/login/",
            {"username": "ann", "password": "guess"},
            format="json",
            HTTP_X_FORWARDED_FOR="10.1.0.99",
        )
        assert response.status_code == 429


@pytest.mark.django_db
def test_behind_one_proxy_only_the_address_it_adds_counts() -> None:
    """NUM_PROXIES=1 (the compose stack): a client cannot pick its address by prepending one."""
    conf = rates(auth="2/min")
    conf["NUM_PROXIES"] = 1
    client = APIClient(REMOTE_ADDR="172.18.0.5")  # the proxy
    with override_settings(REST_FRAMEWORK=conf):

        def login(forwarded: str) -> int:
            return client.post(
                "/api/v1/auth/login/",
                {"username": "ann", "password": "guess"},
                format="json",
                HTTP_X_FORWARDED_FOR=forwarded,
            ).status_code

        assert login("1.1.1.1, 203.0.113.7") == 401
        assert login("2.2.2.2, 203.0.113.7") == 401
        assert login("3.3.3.3, 203.0.113.7") == 429  # still 203.0.113.7
        assert login("203.0.113.8") == 401  # another client behind the same proxy


@pytest.mark.django_db
def test_registration_is_limited_by_address_too(password: str) -> None:
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(auth="2/min")):
        for name in ("u1", "u2"):
            data = {"username": name, "password": password}
            assert client.post("/api/v1/auth/register/", data, format="json").status_code == 201
            client.logout()
        data = {"username": "u3", "password": password}
        response = client.post("/api/v1/auth/register/", data, format="json")
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert not get_user_model().objects.filter(username="u3").exists()
