"""Play in a real browser: register, a Bristol daily by click and keys, the day's board,
German, a Picture Gallery practice game (click, keys, drag, double-click, auto-Aces),
and the WebSocket falling back to REST without losing or doubling a move.

Screenshots of the play pages go to test-artifacts/ (not committed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.accounts import PASSWORD

pytestmark = pytest.mark.browser


BRISTOL_KEYS = {f"t{i}": str(i) for i in range(1, 9)} | {"r1": "q", "r2": "w", "r3": "e", "f": "f"}
GALLERY_KEYS = (
    {f"g{i + 1}": k for i, k in enumerate("qwertyui")}
    | {f"g{i + 9}": k for i, k in enumerate("asdfghjk")}
    | {f"g{i + 17}": k for i, k in enumerate("zxcvbnm,")}
    | {f"r{i}": str(i) for i in range(1, 9)}
    | {"a": "p"}
)
#: The German rank names of an accessible card label. A pattern with ``\w`` would fail in
#: the browser, where Playwright evaluates it and ``\w`` matches ASCII only ("König").
GERMAN_RANKS = "|".join(
    ["Ass", "Zwei", "Drei", "Vier", "Fünf", "Sechs", "Sieben", "Acht", "Neun", "Zehn"]
    + ["Bube", "Dame", "König"]
)


#: A card's name in English, as the pages say it.
CARD = (
    r"(Ace|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Jack|Queen|King)"
    r" of (Clubs|Diamonds|Hearts|Spades)"
)
#: And in German.
KARTE = rf"(Kreuz|Karo|Herz|Pik) ({GERMAN_RANKS})"


def register(page: Any, base: str, username: str) -> None:
    page.goto(base + "/register/?next=/")
    page.fill("#register-form input[name=username]", username)
    page.fill("#register-form input[name=password]", PASSWORD)
    page.click("#register-form button[type=submit]")
    page.wait_for_url(base + "/")
    expect(page.locator(".site-nav .username")).to_have_text(username)


def state(page: Any) -> dict:
    return page.evaluate("window.patienceGame.state")


def wait_ply(page: Any, ply: int) -> None:
    expect(page.locator("#moves")).to_have_text(str(ply))
    page.wait_for_function(
        "n => window.patienceGame.state.ply === n && !window.patienceGame.busy", arg=ply
    )


def card_moves(st: dict) -> list[str]:
    return [m for m in st["legal_moves"] if not m.startswith("deal")]


def handle(page: Any, pile: str) -> Any:
    if pile == "f":
        pile = "f1"
    return page.locator(f'[data-pile="{pile}"] .handle')


def deal_until_a_card_moves(page: Any) -> list[str]:
    for _ in range(10):
        st = state(page)
        if card_moves(st):
            return card_moves(st)
        page.click("#btn-deal")
        wait_ply(page, st["ply"] + 1)
    raise AssertionError("no card move after dealing the whole stock")


def play_by_click(page: Any, move: str) -> None:
    src, dst = move.split("-")
    ply = state(page)["ply"]
    handle(page, src).click()
    expect(page.locator(f'[data-pile="{src}"]')).to_have_class(re.compile(r"\bselected\b"))
    target = page.locator('[data-zone="f"]') if dst == "f" else page.locator(f'[data-pile="{dst}"]')
    expect(target).to_have_class(re.compile(r"\btarget\b"))
    handle(page, dst).click()
    wait_ply(page, ply + 1)


def play_by_keys(page: Any, move: str, keys: dict[str, str]) -> None:
    src, dst = move.split("-")
    ply = state(page)["ply"]
    page.locator("body").focus()
    page.keyboard.press(keys[src])
    expect(page.locator(f'[data-pile="{src}"]')).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press(keys[dst])
    wait_ply(page, ply + 1)


def move_log(page: Any, game_id: int) -> list[str]:
    response = page.request.get(f"/api/v1/games/{game_id}/moves/?limit=1000")
    assert response.ok
    return [entry["move"] for entry in response.json()["results"]]


def shoot(page: Any, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


# -- Bristol daily ------------------------------------------------------------------------


def test_bristol_daily_by_click_and_keys_then_board_and_german(
    live_server_url: str, context: Any, page: Any, username: str, artifacts: Path
) -> None:
    base = live_server_url
    register(page, base, username)
    card = page.locator('.daily-card[data-variant="bristol"]')
    expect(card).to_contain_text("Not played yet.")
    day = card.locator("[data-daily-play]").get_attribute("data-date")

    # The day's board, open in another tab while we play.
    board = context.new_page()
    board.goto(f"{base}/leaderboards/bristol/{day}/")
    expect(board.locator("#board-total")).to_contain_text("on this board")
    expect(board.locator("#live-state")).to_have_text("Live updates on.")
    before = board.locator("#board-rows tr").count()

    card.locator("[data-daily-play]").click()
    page.wait_for_url(re.compile(r"/play/\d+/$"))
    game_id = int(page.url.rstrip("/").split("/")[-1])
    expect(page.locator("#game-title")).to_contain_text("Bristol")
    expect(page.locator("#game-title")).to_contain_text("ranked")
    expect(page.locator('[data-pile="t1"] .card').first).to_be_visible()
    expect(page.locator('[data-pile="t3"] .card').first).to_have_attribute(
        "aria-label", re.compile(r" of (Clubs|Diamonds|Hearts|Spades) on fan 3$")
    )
    expect(page.locator("#moves")).to_have_text("0")
    shoot(page, artifacts / "bristol-play-start.png")

    # A move by click (dealing first if no card can move yet).
    moves = deal_until_a_card_moves(page)
    play_by_click(page, moves[0])

    # A move by keys.
    moves = deal_until_a_card_moves(page)
    play_by_keys(page, moves[0], BRISTOL_KEYS)

    # Deal with the button: three cards leave the stock.
    st = state(page)
    if "deal" in st["legal_moves"]:
        stock = st["position"]["stock"]
        page.click("#btn-deal")
        wait_ply(page, st["ply"] + 1)
        assert state(page)["position"]["stock"] == max(0, stock - 3)
        expect(page.locator("#btn-deal .count")).to_have_text(str(max(0, stock - 3)))

    # The server's timer ticks locally.
    first = page.locator("#timer").inner_text()
    page.wait_for_timeout(1300)
    assert page.locator("#timer").inner_text() != first

    shoot(page, artifacts / "bristol-play.png")
    log = move_log(page, game_id)
    assert len(log) == state(page)["ply"] >= 2

    # Finish fast: resign; the end dialog shows the result and the rank.
    page.click("#btn-resign")
    page.click("#confirm-resign")
    dialog = page.locator("#end-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#end-title")).to_have_text("You resigned this game.")
    expect(dialog.locator("#end-rank")).to_have_text(
        re.compile(r"^\d+ of (1|\d+ · better than \d+% of the day's players)$")
    )
    shoot(page, artifacts / "bristol-end-dialog.png")
    page.click("#end-close")

    # The day's board shows the new result.
    row = board.locator("#board-rows tr", has_text=username)
    expect(row).to_have_count(1)
    assert board.locator("#board-rows tr").count() == before + 1
    expect(board.locator("#my-place")).to_be_visible()

    # German: the switch posts to set_language and comes back to the same page.
    page.click('.lang-switch button[value="de"]')
    page.wait_for_url(re.compile(rf"/play/{game_id}/$"))
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.get_by_role("button", name="Zurücknehmen")).to_be_visible()
    expect(page.locator("#btn-hint")).to_have_count(0)  # no hints in a ranked daily
    expect(page.locator("#game-status")).to_have_text("Aufgegeben")
    expect(page.locator('[data-pile="t3"] .card').first).to_have_attribute(
        "aria-label", re.compile(rf"^(Kreuz|Karo|Herz|Pik) ({GERMAN_RANKS}) auf Fächer 3$")
    )
    page.goto(base + "/")
    expect(page.locator("h1")).to_have_text("Die Tagesaufgaben von heute")
    expect(page.locator('.daily-card[data-variant="bristol"]')).to_contain_text("Aufgegeben")


# -- Picture Gallery practice -------------------------------------------------------------


#: A Bristol practice game of a player, played along the solver's line until it is won out.
WON_OUT = """
from django.contrib.auth import get_user_model
from api import shapes
from games.engine.solver import solve_seed
from games.services import games as game_services
from games.play import move as play_move

user = get_user_model().objects.get(username={username!r})
game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
for move in solve_seed("bristol", 1).line:
    if shapes.game_state(game)["finish"]:
        break
    game = play_move.apply_move(game_id=game.id, user=user, move=move, ply=game.ply).game
print(game.id, len(shapes.game_state(game)["finish"]))
"""


def test_a_won_out_game_finishes_with_one_click(
    live_server_url: str, page: Any, username: str, django_shell: Any, artifacts: Path
) -> None:
    register(page, live_server_url, username)
    game_id, left = django_shell(WON_OUT.format(username=username)).split()[-2:]
    page.goto(f"/play/{game_id}/")
    expect(page.locator("#conn")).to_have_text("Live")
    finish = page.locator("#btn-finish")
    expect(finish).to_be_visible()
    assert len(state(page)["finish"]) == int(left) > 1
    finish.click()  # the one click: before, each card left needed a double click of its own
    expect(page.locator("#end-dialog #end-title")).to_have_text("You won!")
    assert state(page)["status"] == "won"
    assert all(m.endswith("-f") for m in move_log(page, int(game_id))[-int(left) :])
    expect(finish).to_be_hidden()
    shoot(page, artifacts / "bristol-finished.png")


def test_picture_gallery_practice_click_keys_drag_double_click_auto_aces(
    live_server_url: str, browser: Any, page: Any, username: str, artifacts: Path
) -> None:
    base = live_server_url
    register(page, base, username)
    page.select_option("#practice-variant", "picture-gallery")
    page.fill("#practice-seed", "9")
    page.click("#practice-form button[type=submit]")
    page.wait_for_url(re.compile(r"/play/\d+/$"))
    game_id = int(page.url.rstrip("/").split("/")[-1])
    # Beside each row its start cards, one above the other; its name says them in words.
    labels = page.locator(".gallery-row .row-label")
    assert labels.first.locator("span").all_inner_texts() == ["2", "5", "8", "J"]
    assert labels.nth(2).locator("span").all_inner_texts() == ["4", "7", "10", "K"]
    expect(page.locator(".gallery-row").first).to_have_attribute(
        "aria-label", "Top row: 2 – 5 – 8 – J"
    )
    expect(page.locator('[data-pile="g1"] .pile-key')).to_have_text("Q")
    st = state(page)
    # Seed 9 starts with three free Aces: g9, r7, r8.
    assert {"g9-a", "r7-a", "r8-a", "g16-g4", "r5-g2"} <= set(st["legal_moves"])
    shoot(page, artifacts / "gallery-play-start.png")

    play_by_click(page, "g16-g4")

    keyed = next(m for m in card_moves(state(page)) if not m.endswith("-a"))
    play_by_keys(page, keyed, GALLERY_KEYS)

    # Drag a reserve card onto its gallery place (pointer events).
    dragged = next(m for m in card_moves(state(page)) if m.startswith("r") and "-g" in m)
    src, dst = dragged.split("-")
    ply = state(page)["ply"]
    page.wait_for_function("document.getAnimations().length === 0")  # the cards have landed
    start = page.locator(f'[data-pile="{src}"] .card').last.bounding_box()
    end = page.locator(f'[data-pile="{dst}"] .handle').bounding_box()
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + 10)
    page.mouse.down()
    page.mouse.move(start["x"] + 40, start["y"] + 40, steps=4)
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=8)
    page.mouse.up()
    wait_ply(page, ply + 1)
    assert move_log(page, game_id)[-1] == dragged

    # Double-click sends the Ace in the gallery home.
    ply = state(page)["ply"]
    page.locator('[data-pile="g9"] .handle').dblclick()
    wait_ply(page, ply + 1)
    assert state(page)["position"]["piles"]["a"] == ["A" + st["position"]["piles"]["g9"][0][1]]

    # Undo takes it back (and counts as a log entry).
    page.click("#btn-undo")
    wait_ply(page, ply + 2)
    assert state(page)["position"]["piles"]["a"] == []

    # The setting moves the safe Aces out by itself, as ordinary server moves: g9's, not
    # those alone on r7 and r8, whose moves would refill the reserve from the stock.
    page.click("#settings summary")
    page.check("#set-auto-home")
    page.wait_for_function("window.patienceGame.state.position.piles.a.length === 1")
    page.wait_for_function("!window.patienceGame.busy")
    assert move_log(page, game_id)[-1] == "g9-a"
    assert {"r7-a", "r8-a"} <= set(state(page)["legal_moves"])
    assert state(page)["safe_moves"] == []
    assert json.loads(page.evaluate("localStorage.getItem('patience.settings')"))["autoHome"]

    shoot(page, artifacts / "gallery-play.png")

    # A hint names the next move of a winning line, selects its card, marks the game assisted.
    page.click("#btn-hint")
    expect(page.locator("#status-line")).to_contain_text("Hint: ", timeout=20_000)
    hinted = page.locator("#status-line").inner_text().split("Hint: ")[1].strip()
    if hinted != "deal":  # in words on the cards; its card selected, both cards marked
        assert re.match(rf"^{CARD} (onto the {CARD}|to .+)$", hinted), hinted
        expect(page.locator("#board .pile.selected")).to_have_count(1)
        expect(page.locator("#board .pile.marked")).to_have_count(2)
    page.keyboard.press("Escape")
    assert page.evaluate(f"fetch('/api/v1/games/{game_id}/').then(r => r.json())")["assisted"]

    # Tab reaches the piles, focus is visible, Enter chooses, Esc cancels.
    source = next(m for m in card_moves(state(page))).split("-")[0]
    page.locator(f'[data-pile="{source}"] .handle').focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.closest('[data-pile]').dataset.pile")
    assert focused == source
    # The ring is drawn inside the card: it covers no index of the card beside or below.
    ring = page.evaluate(
        "(s => [s.outlineColor, s.outlineStyle, parseFloat(s.outlineOffset)])"
        "(getComputedStyle(document.activeElement))"
    )
    assert ring[:2] == ["rgb(11, 61, 145)", "solid"] and ring[2] < 0, f"no focus ring: {ring}"
    page.keyboard.press("Enter")
    expect(page.locator(f'[data-pile="{source}"]')).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator("#status-line")).to_contain_text("selected: choose where it goes")
    page.keyboard.press("Escape")
    expect(page.locator(f'[data-pile="{source}"]')).not_to_have_class(re.compile(r"\bselected\b"))

    # The same game at phone width.
    phone = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        storage_state=page.context.storage_state(),
        base_url=base,
    )
    try:
        small = phone.new_page()
        small.goto(f"{base}/play/{game_id}/")
        expect(small.locator('[data-pile="g24"] .handle')).to_be_visible()
        width = small.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways at phone width ({width}px)"
        shoot(small, artifacts / "gallery-play-phone.png")
        # A tap, then a tap on the destination, plays a move on a touch screen too.
        move = next((m for m in card_moves(state(small)) if "-g" in m), None)
        if move:
            src, dst = move.split("-")
            ply = state(small)["ply"]
            small.locator(f'[data-pile="{src}"] .handle').tap()
            small.locator(f'[data-pile="{dst}"] .handle').tap()
            wait_ply(small, ply + 1)
    finally:
        phone.close()


def test_bristol_at_phone_width(live_server_url: str, browser: Any, artifacts: Path) -> None:
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        base_url=live_server_url,
    )
    try:
        page = ctx.new_page()
        register(page, live_server_url, "phone" + str(id(ctx))[-6:])
        page.select_option("#practice-variant", "bristol")
        page.fill("#practice-seed", "7")
        page.click("#practice-form button[type=submit]")
        page.wait_for_url(re.compile(r"/play/\d+/$"))
        expect(page.locator("#conn")).to_have_text("Live")
        expect(page.locator('[data-pile="t8"] .handle')).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box = page.locator('[data-pile="t8"] .handle').bounding_box()
        assert box["x"] + box["width"] <= 390
        assert box["width"] >= 36, "cards must stay big enough to read and tap"
        shoot(page, artifacts / "bristol-play-phone.png")
    finally:
        ctx.close()


# -- the socket drops ---------------------------------------------------------------------


def csrf_post(page: Any, url: str, body: dict) -> Any:
    token = page.request.get("/api/v1/auth/csrf/").json()["csrf_token"]
    headers = {"X-CSRFToken": token, "Content-Type": "application/json"}
    return page.request.post(url, data=json.dumps(body), headers=headers)


def test_socket_drops_fall_back_to_rest_without_losing_or_doubling_moves(
    live_server_url: str, page: Any, username: str
) -> None:
    base = live_server_url
    register(page, base, username)
    created = csrf_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 7})
    game_id = created.json()["id"]

    mode = {"offline": False, "swallow_next_move": False}
    sockets: list[Any] = []

    def route(ws: Any) -> None:
        if mode["offline"]:
            ws.close()
            return
        server = ws.connect_to_server()
        sockets.append(ws)
        swallowing = {"on": False}

        def from_page(message: str) -> None:
            data = json.loads(message)
            server.send(message)
            if data.get("type") == "move" and mode["swallow_next_move"]:
                # The server gets the move, the page never hears back, the socket dies.
                mode["swallow_next_move"] = False
                swallowing["on"] = True
                ws.close()

        def from_server(message: str) -> None:
            if not swallowing["on"]:
                ws.send(message)

        ws.on_message(from_page)
        server.on_message(from_server)

    page.route_web_socket(re.compile(r"/ws/v1/games/"), route)
    # The page sends a REST request again, same move and ply, while the server is
    # unreachable (a network error or 5xx from a loaded machine): such retries count once.
    rest_requests: list[tuple[str, int]] = []
    page.on(
        "request",
        lambda r: (
            rest_requests.append((json.loads(r.post_data)["move"], json.loads(r.post_data)["ply"]))
            if r.method == "POST" and r.url.endswith(f"/games/{game_id}/moves/")
            else None
        ),
    )

    def rest_moves() -> list[str]:
        return [move for move, _ in dict.fromkeys(rest_requests)]

    page.goto(f"{base}/play/{game_id}/")
    conn = page.locator("#conn")
    expect(conn).to_have_text("Live")

    # 1. A move whose answer is lost with the socket: resent over REST with the same ply,
    #    the server recognises the retry, and the move is on the log exactly once.
    mode["swallow_next_move"] = True
    play_by_click(page, "t1-t8")
    assert move_log(page, game_id) == ["t1-t8"]
    assert rest_moves() == ["t1-t8"], "the lost answer should have made the page retry over REST"

    # 2. While the socket is down, moves go over REST.
    mode["offline"] = True
    for ws in sockets:
        ws.close()
    expect(conn).to_contain_text("Offline")
    move = card_moves(state(page))[0]
    play_by_keys(page, move, BRISTOL_KEYS)
    assert move_log(page, game_id) == ["t1-t8", move]
    assert rest_moves() == ["t1-t8", move]

    # 3. Another tab plays meanwhile; the reconnected socket brings the board up to date.
    st = state(page)
    assert csrf_post(page, f"/api/v1/games/{game_id}/moves/", {"move": "deal", "ply": st["ply"]}).ok
    mode["offline"] = False
    expect(conn).to_have_text("Live", timeout=40_000)
    wait_ply(page, st["ply"] + 1)
    assert state(page)["position"]["stock"] == st["position"]["stock"] - 3

    # 4. A move from another tab while live arrives over the socket by itself.
    st = state(page)
    assert csrf_post(page, f"/api/v1/games/{game_id}/moves/", {"move": "deal", "ply": st["ply"]}).ok
    wait_ply(page, st["ply"] + 1)

    # 5. And a click after all that is still one move.
    moves = deal_until_a_card_moves(page)
    play_by_click(page, moves[0])
    log = move_log(page, game_id)
    assert len(log) == state(page)["ply"]
    assert rest_moves() == ["t1-t8", move], "live again: moves go over the socket"
    assert log[:2] == ["t1-t8", move] and log[-1] == moves[0]


# -- replay, tokens, log out and in -------------------------------------------------------


def test_replay_viewer_steps_through_yesterdays_game(
    live_server_url: str, page: Any, username: str, past_result: Any, artifacts: Path
) -> None:
    base = live_server_url
    register(page, base, username)
    day, _, _ = past_result(username)

    page.goto(f"{base}/leaderboards/bristol/{day}/")
    row = page.locator("#board-rows tr", has_text=username)
    expect(row).to_have_count(1)
    row.get_by_role("link", name=f"Replay the game of {username}").click()
    page.wait_for_url(re.compile(r"/replay/\d+/$"))

    step = page.locator("#rp-step")
    expect(step).to_have_text("Deal (0 of 5)")
    expect(page.locator('#board [data-pile="t1"] .card').first).to_be_visible()
    expect(page.locator("#rp-moves li")).to_have_count(5)
    page.click("#rp-next")
    # The move in words on its cards, and the card that moved marked on the board.
    expect(step).to_have_text(re.compile(rf"^Move 1 of 5: {CARD} (onto the {CARD}|to .+)$"))
    expect(page.locator("#board .pile.marked")).to_have_count(1)
    expect(page.locator("#rp-moves li").first).to_have_class(re.compile("current"))
    page.keyboard.press("End")
    expect(step).to_have_text(re.compile(r"^Move 5 of 5: "))
    expect(page.locator("#rp-next")).to_be_disabled()
    page.keyboard.press("Home")
    expect(step).to_have_text("Deal (0 of 5)")
    # Quick presses: each one is a step, even before the positions are in.
    page.evaluate(
        "() => { for (let i = 0; i < 4; i++) document.dispatchEvent("
        "new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true})); }"
    )
    expect(step).to_have_text(re.compile(r"^Move 4 of 5: "))
    # Autoplay steps to the end by itself.
    page.keyboard.press("Home")
    page.click("#rp-auto")
    expect(page.locator("#rp-auto")).to_have_attribute("aria-pressed", "true")
    expect(step).to_have_text(re.compile(r"^Move 5 of 5: "), timeout=10_000)
    expect(page.locator("#rp-auto")).to_have_attribute("aria-pressed", "false")
    page.keyboard.press("Home")
    expect(step).to_have_text("Deal (0 of 5)")
    page.locator("#rp-slider").fill("3")
    expect(step).to_have_text(re.compile(r"^Move 3 of 5: "))
    shoot(page, artifacts / "replay.png")
    page.keyboard.press("ArrowLeft")
    expect(step).to_have_text(re.compile(r"^Move 2 of 5: "))
    page.click("#rp-last")
    expect(step).to_have_text(re.compile(r"^Move 5 of 5: "))

    # The player's statistics show the day.
    page.goto(f"{base}/players/{username}/")
    expect(page.locator("h1")).to_have_text(f"Statistics of {username}")
    expect(page.locator("table.data")).to_contain_text("Bristol")


def test_tokens_log_out_and_log_in(live_server_url: str, page: Any, username: str) -> None:
    base = live_server_url
    register(page, base, username)
    page.click("text=API tokens")
    page.wait_for_url(f"{base}/account/tokens/")
    expect(page.locator("#no-tokens")).to_be_visible()
    page.fill("#token-name", "my solver")
    page.click("#token-form button[type=submit]")
    key = page.locator("#new-token-key")
    expect(key).to_have_text(re.compile(r"^pt_\S{20,}$"))
    rows = page.locator("#token-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("my solver")
    # The key works for a program, once.
    token = key.inner_text()
    me = page.request.get("/api/v1/auth/me/", headers={"Authorization": f"Token {token}"})
    assert me.ok and me.json()["username"] == username
    # It is never shown again.
    page.reload()
    expect(page.locator("#new-token")).to_be_hidden()
    assert token not in page.content()

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke my solver").click()
    expect(rows).to_have_count(0)
    revoked = page.request.get("/api/v1/auth/me/", headers={"Authorization": f"Token {token}"})
    assert revoked.status == 401

    page.click("[data-logout]")
    page.wait_for_url(base + "/")
    expect(page.locator(".site-nav")).to_contain_text("Log in")
    page.goto(f"{base}/account/tokens/")
    page.wait_for_url(re.compile(r"/login/\?next="))
    page.fill("#login-form input[name=username]", username)
    page.fill("#login-form input[name=password]", "wrong password!")
    page.click("#login-form button[type=submit]")
    expect(page.locator('#login-form [data-error-for="form"]')).to_have_text(
        "Wrong username or password."
    )
    page.fill("#login-form input[name=password]", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(f"{base}/account/tokens/")
    expect(page.locator(".site-nav .username")).to_have_text(username)


def test_a_hint_names_the_cards_and_marks_them(
    live_server_url: str, page: Any, username: str
) -> None:
    base = live_server_url
    register(page, base, username)
    game = csrf_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 7}).json()
    page.goto(f"{base}/play/{game['id']}/")
    expect(page.locator("#conn")).to_have_text("Live")
    page.click("#btn-hint")
    status = page.locator("#status-line")
    expect(status).to_have_text(re.compile(rf"^Hint: ({CARD} (onto the {CARD}|to .+)|deal)$"))
    marked = 0 if status.inner_text() == "Hint: deal" else 2
    expect(page.locator("#board .pile.marked")).to_have_count(marked)

    page.click('.lang-switch button[value="de"]')
    page.wait_for_url(re.compile(rf"/play/{game['id']}/$"))
    page.click("#btn-hint")
    expect(status).to_have_text(re.compile(rf"^Tipp: ({KARTE} auf .+|austeilen)$"))
