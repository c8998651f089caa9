"""Games over REST: variants, start, read, list, moves, undo, resign, log, and the envelope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.engine import SEED_LIMIT, VARIANTS, deck_order, new_position, safe_moves
from games.engine.solver import solve_seed
from games.models import Game
from tests.helpers import PAGE_KEYS, rows, stored_log

pytestmark = pytest.mark.django_db

GAMES = "/api/v1/games/"

STATE_KEYS = {
    "id",
    "variant",
    "kind",
    "date",
    "status",
    "score",
    "max_score",
    "ply",
    "moves_on_board",
    "ranked",
    "assisted",
    "started_at",
    "finished_at",
    "elapsed_ms",
    "position",
    "legal_moves",
    "safe_moves",
    "finish",
    "can_undo",
    "deal",
}


def error_of(response: Any, status: int) -> dict[str, Any]:
    """The error envelope of a response, after checking its status and shape."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


def start(client: Any, variant: str = "bristol", seed: int | str | None = 3) -> dict[str, Any]:
    data = {"variant": variant} if seed is None else {"variant": variant, "seed": seed}
    response = client.post(GAMES, data, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def move(client: Any, game: dict[str, Any], notation: str, ply: int | None = None) -> Any:
    ply = game["ply"] if ply is None else ply
    return client.post(f"{GAMES}{game['id']}/moves/", {"move": notation, "ply": ply}, format="json")


def first_non_deal(state: dict) -> str:
    return next(m for m in state["legal_moves"] if m != "deal")


# -- variants ---------------------------------------------------------------------------------


def test_variants_are_listed_without_login(db: None) -> None:
    response = APIClient().get("/api/v1/variants/")
    assert response.status_code == 200
    body = response.json()
    assert [v["key"] for v in body] == list(VARIANTS)
    bristol = body[0]
    assert bristol == {
        "key": "bristol",
        "name": "Bristol",
        "family": "bristol",
        "decks": 1,
        "cards": 52,
        "aces_removed": False,
        "first_ace_on_foundation": False,
        "refill_reserves": False,
        "reserves_open_anytime": False,
        "reversible_last_row": False,
    }
    parade = next(v for v in body if v["key"] == "royal-parade")
    assert (parade["cards"], parade["aces_removed"], parade["decks"]) == (96, True, 2)


# -- start ------------------------------------------------------------------------------------


def test_start_with_a_seed_deals_that_seed(api: Any, user: Any) -> None:
    state = start(api, "bristol", seed=42)
    assert set(state) == STATE_KEYS
    expected = new_position("bristol", seed=42)
    assert state["position"]["piles"] == expected.public_json()["piles"]
    assert state["position"]["stock"] == expected.stock_count == 25
    assert state["legal_moves"] == [str(m) for m in expected.legal_moves]
    assert state["status"] == "playing"
    assert (state["ply"], state["moves_on_board"], state["score"]) == (0, 0, 0)
    assert state["max_score"] == 52
    assert state["kind"] == "practice"
    assert state["date"] is None
    assert state["ranked"] is False
    assert state["can_undo"] is False
    assert state["safe_moves"] == [str(m) for m in safe_moves(expected)]
    assert state["finish"] == []
    assert state["deal"] is None
    assert state["finished_at"] is None
    assert Game.objects.get(pk=state["id"]).player == user


def test_start_accepts_a_seed_as_a_decimal_string(api: Any) -> None:
    state = start(api, "picture-gallery", seed="7")
    assert (
        state["position"]["piles"] == new_position("picture-gallery", seed=7).public_json()["piles"]
    )
    assert state["max_score"] == 104


def test_start_without_a_seed_deals_a_random_deal(api: Any) -> None:
    one = start(api, "bristol", seed=None)
    two = start(api, "bristol", seed=None)
    assert one["position"] != two["position"]
    seeds = {int(g.deal.seed) for g in Game.objects.filter(pk__in=[one["id"], two["id"]])}
    assert len(seeds) == 2
    assert all(0 <= s < SEED_LIMIT for s in seeds)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"variant": "klondike"}, "variant"),
        ({}, "variant"),
        ({"variant": "bristol", "seed": -1}, "seed"),
        ({"variant": "bristol", "seed": SEED_LIMIT}, "seed"),
        ({"variant": "bristol", "seed": "abc"}, "seed"),
        ({"variant": "bristol", "seed": 1.5}, "seed"),
    ],
)
def test_start_with_bad_input_is_a_validation_error(
    api: Any, data: dict[str, str | int | float], field: str
) -> None:
    error = error_of(api.post(GAMES, data, format="json"), 400)
    assert error["code"] == "validation_error"
    assert field in error["details"]
    assert not Game.objects.exists()


def test_games_need_authentication(db: None) -> None:
    client = APIClient()
    assert error_of(client.get(GAMES), 401)["code"] == "not_authenticated"
    error = error_of(client.post(GAMES, {"variant": "bristol"}, format="json"), 401)
    assert error["code"] == "not_authenticated"
    assert error_of(client.get(f"{GAMES}1/"), 401)["code"] == "not_authenticated"
    assert error_of(client.post(f"{GAMES}1/moves/", {}, format="json"), 401)["code"] == (
        "not_authenticated"
    )


# -- read and list ----------------------------------------------------------------------------


def test_read_my_game(api: Any) -> None:
    state = start(api)
    response = api.get(f"{GAMES}{state['id']}/")
    assert response.status_code == 200
    read = response.json()
    assert {k: v for k, v in read.items() if k != "elapsed_ms"} == {
        k: v for k, v in state.items() if k != "elapsed_ms"
    }
    assert read["elapsed_ms"] >= state["elapsed_ms"]


def test_someone_elses_or_an_unknown_game_is_not_found(
    api: Any, other_user: Any, token_client: Callable[..., Any]
) -> None:
    theirs = start(token_client(other_user))
    for path in (f"{GAMES}{theirs['id']}/", f"{GAMES}{theirs['id'] + 100}/"):
        error = error_of(api.get(path), 404)
        assert error["code"] == "not_found"
        assert error_of(api.get(f"{path}moves/"), 404)["code"] == "not_found"
    assert "position" not in api.get(f"{GAMES}{theirs['id']}/").json()


def test_list_my_games_with_paging(
    api: Any, other_user: Any, token_client: Callable[..., Any]
) -> None:
    ids = [start(api, seed=i)["id"] for i in range(5)]
    start(token_client(other_user))
    response = api.get(GAMES, {"limit": 2})
    assert response.status_code == 200
    page = response.json()
    assert set(page) == PAGE_KEYS
    assert [g["id"] for g in page["results"]] == ids[::-1][:2]
    assert set(page["results"][0]) == STATE_KEYS
    assert page["previous"] is None
    assert "cursor=" in page["next"] and "limit=2" in page["next"]

    assert [g["id"] for g in rows(api, GAMES, {"limit": 2})] == ids[::-1]
    second = api.get(page["next"]).json()
    assert [g["id"] for g in api.get(second["previous"]).json()["results"]] == ids[::-1][:2]

    default = api.get(GAMES).json()
    assert default["next"] is None
    assert len(default["results"]) == 5


def test_list_only_the_games_to_resume(api: Any) -> None:
    ids = [start(api, seed=i)["id"] for i in range(3)]
    api.post(f"{GAMES}{ids[1]}/resign/")
    playing = api.get(GAMES, {"status": "playing"}).json()
    assert [g["id"] for g in playing["results"]] == [ids[2], ids[0]]
    resigned = api.get(GAMES, {"status": "resigned"}).json()["results"]
    assert [g["id"] for g in resigned] == [ids[1]]
    error = error_of(api.get(GAMES, {"status": "paused"}), 400)
    assert error["code"] == "validation_error" and "status" in error["details"]


# -- moves ------------------------------------------------------------------------------------


def test_a_move_answers_with_the_new_public_state(api: Any) -> None:
    state = start(api)
    response = move(api, state, "deal")
    assert response.status_code == 200
    after = response.json()
    assert set(after) == STATE_KEYS | {"duplicate"}
    assert after["duplicate"] is False
    assert after["ply"] == 1
    assert after["moves_on_board"] == 1
    assert after["position"]["stock"] == 22
    expected = new_position("bristol", seed=3).apply("deal")
    assert after["position"]["piles"] == expected.public_json()["piles"]
    assert after["legal_moves"] == [str(m) for m in expected.legal_moves]
    assert after["can_undo"] is True
    assert stored_log(state["id"]) == [(0, "deal")]


def test_a_won_out_game_offers_the_finish_and_it_wins(api: Any) -> None:
    line = solve_seed("bristol", 1).line
    state = start(api, seed=1)
    for notation in line:
        if state["finish"]:
            break
        assert state["finish"] == []
        state = move(api, state, notation).json()
    assert state["position"]["stock"] == 0
    for notation in state["finish"]:
        assert notation in state["safe_moves"] or notation in state["legal_moves"]
        state = move(api, state, notation).json()
    assert state["status"] == "won"
    assert (state["finish"], state["safe_moves"]) == ([], [])


def test_a_stale_ply_is_a_conflict_with_the_current_ply(api: Any) -> None:
    state = start(api)
    after = move(api, state, "deal").json()
    error = error_of(move(api, state, first_non_deal(after), ply=0), 409)
    assert error["code"] == "stale_ply"
    assert error["details"] == {"ply": 1}
    error = error_of(move(api, state, "deal", ply=7), 409)
    assert error["code"] == "bad_ply"
    assert error["details"] == {"ply": 1}
    assert api.get(f"{GAMES}{state['id']}/").json()["ply"] == 1


def test_resending_the_applied_move_is_answered_as_a_duplicate(api: Any) -> None:
    state = start(api)
    first = move(api, state, "deal").json()
    again = move(api, state, "deal", ply=0)
    assert again.status_code == 200
    body = again.json()
    assert body["duplicate"] is True
    assert body["ply"] == 1
    assert body["position"] == first["position"]
    assert len(stored_log(state["id"])) == 1


def test_an_illegal_move_is_refused_with_the_engines_code(api: Any) -> None:
    state = start(api)
    error = error_of(move(api, state, "t1-r1"), 400)
    assert error["code"] == "illegal_move"
    assert "t1-r1" in error["message"]
    assert api.get(f"{GAMES}{state['id']}/").json()["ply"] == 0


@pytest.mark.parametrize(
    "notation", ["hello", "t9-t1", "g1-a", "t1-", "deal-sideways", " deal", "deal "]
)
def test_bad_notation_is_refused(api: Any, notation: str) -> None:
    state = start(api)
    error = error_of(move(api, state, notation), 400)
    assert error["code"] == "bad_notation"
    assert not Game.objects.exclude(log=b"").exists()


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({}, {"move", "ply"}),
        ({"move": "deal"}, {"ply"}),
        ({"ply": 0}, {"move"}),
        ({"move": "deal", "ply": -1}, {"ply"}),
        ({"move": "deal", "ply": "x"}, {"ply"}),
        ({"move": "x" * 21, "ply": 0}, {"move"}),
        # The game socket's parser (games.inputs): a ply is a JSON integer, a move is text.
        ({"move": "deal", "ply": "0"}, {"ply"}),
        ({"move": "deal", "ply": True}, {"ply"}),
        ({"move": 12, "ply": 0}, {"move"}),
    ],
)
def test_a_move_with_missing_or_bad_fields_is_a_validation_error(
    api: Any, data: dict[str, str | int], fields: set[str]
) -> None:
    state = start(api)
    error = error_of(api.post(f"{GAMES}{state['id']}/moves/", data, format="json"), 400)
    assert error["code"] == "validation_error"
    assert set(error["details"]) == fields


def test_a_move_in_a_finished_game_is_a_conflict(api: Any) -> None:
    state = start(api)
    api.post(f"{GAMES}{state['id']}/resign/")
    error = error_of(move(api, state, "deal"), 409)
    assert error["code"] == "game_finished"
    assert "resigned" in error["message"]


def test_a_move_in_someone_elses_game_is_not_found(
    api: Any, other_user: Any, token_client: Callable[..., Any]
) -> None:
    theirs = start(token_client(other_user))
    assert error_of(move(api, theirs, "deal"), 404)["code"] == "not_found"
    assert error_of(move(api, {"id": 987654, "ply": 0}, "deal"), 404)["code"] == "not_found"
    assert not Game.objects.exclude(log=b"").exists()


def test_the_move_log(api: Any) -> None:
    state = start(api)
    after = move(api, state, "deal").json()
    second = first_non_deal(after)
    move(api, after, second)
    api.post(f"{GAMES}{state['id']}/undo/", {"ply": 2}, format="json")
    response = api.get(f"{GAMES}{state['id']}/moves/")
    assert response.status_code == 200
    page = response.json()
    assert page["next"] is None and page["previous"] is None
    log = page["results"]
    assert [(e["ply"], e["move"]) for e in log] == [(0, "deal"), (1, second), (2, "undo")]
    assert all(set(e) == {"ply", "move", "at"} for e in log)


# -- undo and resign --------------------------------------------------------------------------


def test_undo_takes_back_the_last_move(api: Any) -> None:
    state = start(api)
    after = move(api, state, "deal").json()
    response = api.post(f"{GAMES}{state['id']}/undo/", {"ply": 1}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["duplicate"] is False
    assert body["ply"] == 2
    assert body["moves_on_board"] == 0
    assert body["position"] == state["position"]
    assert body["position"] != after["position"]
    assert body["can_undo"] is False
    assert body["legal_moves"] == state["legal_moves"]

    error = error_of(api.post(f"{GAMES}{state['id']}/undo/", {"ply": 2}, format="json"), 409)
    assert error["code"] == "undo_not_allowed"
    again = api.post(f"{GAMES}{state['id']}/undo/", {"ply": 1}, format="json")
    assert again.status_code == 200 and again.json()["duplicate"] is True


def test_undo_errors(api: Any, other_user: Any, token_client: Callable[..., Any]) -> None:
    state = start(api)
    url = f"{GAMES}{state['id']}/undo/"
    assert error_of(api.post(url, {"ply": 0}, format="json"), 409)["code"] == "undo_not_allowed"
    assert error_of(api.post(url, {"ply": 3}, format="json"), 409)["code"] == "bad_ply"
    assert error_of(api.post(url, {}, format="json"), 400)["code"] == "validation_error"
    other = token_client(other_user)
    assert error_of(other.post(url, {"ply": 0}, format="json"), 404)["code"] == "not_found"
    api.post(f"{GAMES}{state['id']}/resign/")
    for ply in (0, 3):
        assert error_of(api.post(url, {"ply": ply}, format="json"), 409)["code"] == "game_finished"


def test_resign_reveals_the_deal_and_ends_the_game(api: Any) -> None:
    state = start(api, "bristol", seed=42)
    move(api, state, "deal")
    response = api.post(f"{GAMES}{state['id']}/resign/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "resigned"
    assert body["finished_at"] is not None
    assert body["legal_moves"] == []
    assert body["can_undo"] is False
    assert body["deal"] == {"seed": "42", "deck": deck_order("bristol", 42)}
    assert api.get(f"{GAMES}{state['id']}/").json()["deal"] == body["deal"]

    error = error_of(move(api, body, "deal"), 409)
    assert error["code"] == "game_finished"
    error = error_of(api.post(f"{GAMES}{state['id']}/resign/"), 409)
    assert error["code"] == "game_finished"


def test_resigning_someone_elses_game_is_not_found(
    api: Any, other_user: Any, token_client: Callable[..., Any]
) -> None:
    other = token_client(other_user)
    theirs = start(other)
    assert error_of(api.post(f"{GAMES}{theirs['id']}/resign/"), 404)["code"] == "not_found"
    assert other.get(f"{GAMES}{theirs['id']}/").json()["status"] == "playing"


# -- the envelope for everything else ------------------------------------------------------------


def test_unknown_api_urls_answer_with_the_envelope(api: Any) -> None:
    for path in ("/api/v1/nothing/", "/api/v1/games/abc/", "/api/v1/index/"):
        error = error_of(api.get(path), 404)
        assert error["code"] == "not_found"
    error = error_of(APIClient().post("/api/v1/no/such/thing/", {}, format="json"), 404)
    assert error["code"] == "not_found"


def test_malformed_json_is_a_parse_error(api: Any) -> None:
    state = start(api)
    response = api.generic(
        "POST", f"{GAMES}{state['id']}/moves/", '{"move": "deal", ', "application/json"
    )
    error = error_of(response, 400)
    assert error["code"] == "parse_error"


def test_a_body_that_is_not_json_is_unsupported(api: Any) -> None:
    response = api.post(GAMES, "variant=bristol", content_type="application/x-www-form-urlencoded")
    assert error_of(response, 415)["code"] == "unsupported_media_type"


def test_a_wrong_method_is_refused_with_the_envelope(api: Any) -> None:
    state = start(api)
    assert error_of(api.delete(f"{GAMES}{state['id']}/"), 405)["code"] == "method_not_allowed"
    assert error_of(api.put(GAMES, {}, format="json"), 405)["code"] == "method_not_allowed"
