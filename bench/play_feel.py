"""How play feels: clicks to finish a won-out game, and click-to-paint time of a move.

    .venv/bin/python bench/play_feel.py clicks   # engine only, a few seconds
    .venv/bin/python bench/play_feel.py paint    # own daphne + Debian's Chromium, ~2 minutes
    .venv/bin/python bench/play_feel.py layout   # the same, ~1 minute
    .venv/bin/python bench/play_feel.py events   # the same, 4x CPU slowdown, ~2 minutes
    .venv/bin/python bench/play_feel.py finish   # the same, +300 ms, ~1 minute
    .venv/bin/python bench/play_feel.py fit      # the same, ~2 minutes

``clicks``: for the first seeds the solver wins, play its line up to the first
won-out position (``games.engine.finish_line``) and count the clicks that end the
game: before, one double click (two clicks) per card left to send home; after,
one click on Finish, and none at all when "cards home automatically" plays each
of them as a safe move.

``paint``: in Chromium, the time from the click that drops a card on its destination
to the first frame that shows it there (p50 and p90 of card moves in Bristol practice
games), with the page drawing moves only on the server's answer (before: the
"Show my moves at once" setting off) and at once (after), straight to the server and
through a proxy that holds every byte from the server for 300 ms more.

``layout``: for each variant, a game with its whole stock dealt (the reserves at their
fullest) at 1280x720, 1366x768, 1920x1080 and 390x844: the card width and the smallest
visible height of a card's corner index (rank and suit), as a share of the index's
height (1.00: no index is covered anywhere on the board).

``events``: a mid-range phone (Chromium's CPU slowed down ``--cpu`` times, CDP's
``Emulation.setCPUThrottlingRate``) plays card moves in Bristol and Picture Gallery
games; for each click (picking a card up, and putting it down) the time from the
event to the frame after it (p50 and p90).

``finish``: a Bristol game one Finish from a win (11 cards left), through the proxy
that adds ``--latency`` ms: the time from the click on Finish to the server's won state
on the page, and to the last card drawn home.

``fit``: the share of corner indexes shown whole in a 14-card Bristol fan at 1280x720
and 390x844; the width of the pages (play with Finish showing, home, day board,
replay, races, rules) at 360 and 390 px in English and German (wider than the window:
the page scrolls sideways); the layout shift (CLS) of each page as it loads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._server import percentile, server_arguments, servers_for  # noqa: E402
from devtools.accounts import PASSWORD  # noqa: E402
from devtools.layout import (  # noqa: E402
    CLS,
    GAME_AT,
    INDEX_SHOWN,
    SIZES,
    VARIANTS,
    long_fans,
    near_win,
)

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu"]

#: The player's settings: no safe moves played for them (the page plays what it is told).
MANUAL = "localStorage.setItem('patience.settings', JSON.stringify({autoHome: false}))"

CHROMIUM = "/usr/bin/chromium"


def won_out(variant: str, seed: int) -> tuple[int, int] | None:
    """(cards left to send home, of them not safe when their turn comes) at the first
    won-out position of the solver's line, or None if the solver does not win."""
    from games.engine import finish_line, new_position, safe_moves
    from games.engine.solver import solve_seed

    line = solve_seed(variant, seed).line
    if not line:
        return None
    pos = new_position(variant, seed=seed)
    for move in line:
        finish = finish_line(pos)
        if finish:
            unsafe = 0
            for step in finish:
                unsafe += step not in safe_moves(pos)
                pos = pos.apply(step)
            return len(finish), unsafe
        pos = pos.apply(move)
    return None


def clicks(seeds: int) -> None:
    print(f"{'variant':<18}{'games':>6}{'cards left':>12}{'before':>9}{'after':>7}{'auto':>6}")
    for variant in ("bristol", "belvedere", "picture-gallery", "mod3"):
        found = [r for s in range(1, 1 + seeds) if (r := won_out(variant, s))]
        if not found:
            continue
        left = statistics.median(n for n, _ in found)
        auto = statistics.median(1 if unsafe else 0 for _, unsafe in found)
        print(f"{variant:<18}{len(found):>6}{left:>12}{2 * left:>9}{1:>7}{auto:>6}")
    print("before: a double click per card; after: one click on Finish; auto: with the setting")


class DelayProxy:
    """A TCP proxy (HTTP and WebSocket alike) that holds what the server sends for
    ``delay`` seconds, in order: a slow network's answer time, on one machine."""

    def __init__(self, target: str, delay: float) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.delay = delay
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.port = 0

        async def start() -> None:
            server = await asyncio.start_server(self.client, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()

        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(start(), self.loop)
        ready.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, hold: float) -> None:
            try:
                while data := await src.read(65536):
                    if hold:
                        await asyncio.sleep(hold)
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer, 0), pipe(up_reader, writer, self.delay))


#: Click a card and its destination, and resolve with the time to the first frame that
#: shows the card there.
CLICK_TO_PAINT = """([src, dst, card]) => new Promise((resolve) => {
  const board = document.getElementById("board");
  const piles = dst === "f" ? ["f1", "f2", "f3", "f4"] : [dst];
  const there = () => piles.some((id) => {
    const top = [...board.querySelectorAll(`[data-pile="${id}"] .card`)].pop();
    return top && top.dataset.card === card;
  });
  const t0 = performance.now();
  const painted = () => requestAnimationFrame(() => resolve(performance.now() - t0));
  const seen = new MutationObserver(() => {
    if (there()) { seen.disconnect(); painted(); }
  });
  seen.observe(board, {childList: true, subtree: true});
  const handle = (id) => board.querySelector(`[data-pile="${id}"] .handle`);
  handle(src).click();
  handle(dst === "f" ? "f1" : dst).click();
})"""


def _post(request: Any, url: str, body: dict) -> Any:
    token = request.get("/api/v1/auth/csrf/").json()["csrf_token"]
    headers = {"X-CSRFToken": token, "Content-Type": "application/json"}
    response = request.post(url, data=json.dumps(body), headers=headers)
    assert response.ok, response.text()
    return response.json()


def measure(browser: Any, base: str, instant: bool, moves: int) -> list[float]:
    """Click-to-paint times (ms) of ``moves`` card moves on the play page at ``base``."""
    ctx = browser.new_context(viewport={"width": 1366, "height": 768}, base_url=base)
    settings = json.dumps(json.dumps({"instant": instant}))
    ctx.add_init_script(f"localStorage.setItem('patience.settings', {settings})")
    page = ctx.new_page()
    name = f"feel{'i' if instant else 'w'}{threading.get_ident() % 10**6}{int(base[-5:]) % 1000}"
    _post(page.request, "/api/v1/auth/register/", {"username": name, "password": PASSWORD})
    _post(page.request, "/api/v1/auth/login/", {"username": name, "password": PASSWORD})
    times: list[float] = []
    seed = 1
    while len(times) < moves:
        game = _post(page.request, "/api/v1/games/", {"variant": "bristol", "seed": seed})
        seed += 1
        page.goto(f"/play/{game['id']}/")
        page.wait_for_function("document.getElementById('conn').dataset.state === 'live'")
        while len(times) < moves:
            st = page.evaluate("window.patienceGame.state")
            if st["status"] != "playing":
                break
            cards = [m for m in st["legal_moves"] if m != "deal" and not m.endswith("-f")]
            if not cards:
                cards = [m for m in st["legal_moves"] if m != "deal"]
            if cards:
                src, dst = cards[0].split("-")
                card = st["position"]["piles"][src][-1]
                times.append(page.evaluate(CLICK_TO_PAINT, [src, dst, card]))
            elif "deal" in st["legal_moves"]:
                page.click("#btn-deal")
            else:
                break
            page.wait_for_function(
                "n => window.patienceGame.state.ply === n && !window.patienceGame.busy",
                arg=st["ply"] + 1,
            )
            page.wait_for_function("document.getAnimations().length === 0")
    ctx.close()
    return times


def layout(args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright

    own = servers_for(args, db_prefix="bench_feel", extra_env={"DEBUG": "True"})
    with own as (bases, info), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ctx = browser.new_context(base_url=bases[0])
        page = ctx.new_page()
        _post(page.request, "/api/v1/auth/register/", {"username": "feel", "password": PASSWORD})
        _post(page.request, "/api/v1/auth/login/", {"username": "feel", "password": PASSWORD})
        games = {}
        early = {}
        for variant, seed in VARIANTS:
            early[variant] = _post(
                page.request, "/api/v1/games/", {"variant": variant, "seed": seed}
            )["id"]
            game = _post(page.request, "/api/v1/games/", {"variant": variant, "seed": seed})
            while "deal" in game["legal_moves"]:
                url = f"/api/v1/games/{game['id']}/moves/"
                game = _post(page.request, url, {"move": "deal", "ply": game["ply"]})
            games[variant] = game["id"]
        state = ctx.storage_state()
        print(f"{'variant':<26}{'size':<11}{'card px':>8}{'index shown':>13}{'least px':>10}")
        for variant, _ in VARIANTS:
            for width, height in SIZES:
                phone = width < 600
                view = browser.new_context(
                    viewport={"width": width, "height": height},
                    base_url=bases[0],
                    storage_state=state,
                    is_mobile=phone,
                    has_touch=phone,
                    device_scale_factor=2 if phone else 1,
                    reduced_motion="reduce",
                )
                shown = view.new_page()
                shown.goto(f"/play/{games[variant]}/")
                shown.wait_for_selector('#board [data-pile="r1"] .card')
                m = shown.evaluate(INDEX_SHOWN)
                if args.shots:
                    shots = Path(args.shots)
                    shots.mkdir(parents=True, exist_ok=True)
                    shown.screenshot(path=str(shots / f"{variant}-{width}x{height}-late.png"))
                    shown.goto(f"/play/{early[variant]}/")
                    shown.wait_for_selector('#board [data-pile="r1"] .card')
                    shown.screenshot(path=str(shots / f"{variant}-{width}x{height}-early.png"))
                size = f"{width}x{height}"
                print(
                    f"{variant:<26}{size:<11}{m['width']:>8.0f}{m['least']:>13.2f}"
                    f"{m['px']:>7.1f}/{m['index']:.0f}"
                )
                view.close()
        browser.close()


def paint(args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright

    # DEBUG serves the static files as they are (no collectstatic), as the browser tests do.
    own = servers_for(args, db_prefix="bench_feel", extra_env={"DEBUG": "True"})
    with own as (bases, info), sync_playwright() as pw:
        print(f"server: {info['server']}; {args.moves} card moves per row")
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        proxy = DelayProxy(bases[0], args.latency / 1000)
        print(f"{'network':<22}{'page':<18}{'p50 ms':>8}{'p90 ms':>8}")
        for network, base in (("direct", bases[0]), (f"+{args.latency} ms", proxy.url)):
            for instant in (False, True):
                times = sorted(measure(browser, base, instant, args.moves))
                page = "at once (after)" if instant else "on answer (before)"
                p50, p90 = percentile(times, 0.5), percentile(times, 0.9)
                print(f"{network:<22}{page:<18}{p50:>8.1f}{p90:>8.1f}")
        browser.close()


#: Dispatch a click on a pile's handle and resolve with the time from the event to the
#: frame after it (the next animation frame, then a task after its paint).
CLICK_FRAME = """(id) => new Promise((resolve) => {
  const board = document.getElementById("board");
  const handle = board.querySelector(`[data-pile="${id}"] .handle`);
  const t0 = performance.now();
  handle.click();
  requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t0), 0));
})"""


def login(page: Any, name: str) -> None:
    _post(page.request, "/api/v1/auth/register/", {"username": name, "password": PASSWORD})
    _post(page.request, "/api/v1/auth/login/", {"username": name, "password": PASSWORD})


def shell(args: argparse.Namespace, info: dict[str, Any], code: str) -> str:
    """Run Python in a Django shell on the own servers' database; its stdout."""
    import subprocess

    from devtools.servers import REPO_ROOT, server_env

    env = server_env(
        database_url=f"{args.pg_url}/{info['database']}",
        redis_url=None,
        settings=args.settings,
        extra={"DEBUG": "True"},
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout


def event_times(browser: Any, base: str, variant: str, seed: int, clicks: int, cpu: float) -> list:
    """Event-to-frame times (ms) of ``clicks`` clicks on piles (a card picked up, then put
    down) in games of ``variant``, with the CPU slowed down ``cpu`` times."""
    ctx = browser.new_context(viewport={"width": 1366, "height": 768}, base_url=base)
    ctx.add_init_script(MANUAL)
    page = ctx.new_page()
    login(page, f"ev{variant[:4]}{threading.get_ident() % 10**6}")
    cdp = ctx.new_cdp_session(page)
    times: list[float] = []
    while len(times) < clicks:
        game = _post(page.request, "/api/v1/games/", {"variant": variant, "seed": seed})
        seed += 1
        page.goto(f"/play/{game['id']}/")
        page.wait_for_function("document.getElementById('conn').dataset.state === 'live'")
        page.wait_for_function("document.getAnimations().length === 0")
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu})
        while len(times) < clicks:
            st = page.evaluate("window.patienceGame.state")
            if st["status"] != "playing":
                break
            cards = [m for m in st["legal_moves"] if not m.startswith("deal")]
            if cards:
                src, dst = cards[0].split("-")
                times.append(page.evaluate(CLICK_FRAME, src))
                times.append(page.evaluate(CLICK_FRAME, "f1" if dst == "f" else dst))
            elif "deal" in st["legal_moves"]:
                page.click("#btn-deal")
            else:
                break
            page.wait_for_function(
                "n => window.patienceGame.state.ply === n && !window.patienceGame.busy",
                arg=st["ply"] + 1,
            )
            page.wait_for_function("document.getAnimations().length === 0")
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
    ctx.close()
    return times[:clicks]


def events(args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright

    own = servers_for(args, db_prefix="bench_feel", extra_env={"DEBUG": "True"})
    with own as (bases, info), sync_playwright() as pw:
        print(f"server: {info['server']}; CPU slowed down {args.cpu:g}x; {args.moves} clicks each")
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        print(f"{'variant':<18}{'p50 ms':>8}{'p90 ms':>8}")
        for variant, seed in (("bristol", 7), ("picture-gallery", 9)):
            times = sorted(event_times(browser, bases[0], variant, seed, args.moves, args.cpu))
            print(f"{variant:<18}{percentile(times, 0.5):>8.1f}{percentile(times, 0.9):>8.1f}")
        browser.close()


def finish(args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright

    own = servers_for(args, db_prefix="bench_feel", extra_env={"DEBUG": "True"})
    with own as (bases, info), sync_playwright() as pw:
        print(f"server: {info['server']}; +{args.latency} ms; Finish of 11 cards")
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        proxy = DelayProxy(bases[0], args.latency / 1000)
        ctx = browser.new_context(viewport={"width": 1366, "height": 768}, base_url=proxy.url)
        ctx.add_init_script(MANUAL)
        page = ctx.new_page()
        login(page, "finish")
        won, drawn = [], []
        for _ in range(args.runs):
            game = shell(args, info, GAME_AT.format(position=near_win(), username="finish"))
            page.goto(f"/play/{game.split()[-1]}/")
            page.wait_for_function("document.getElementById('conn').dataset.state === 'live'")
            took = page.evaluate(
                """() => new Promise((resolve) => {
                  const t0 = performance.now();
                  let home = null;
                  const kings = () => document.querySelectorAll(
                    '.foundations .card[data-card^="K"]').length === 4;
                  const poll = () => {
                    if (home === null && kings()) home = performance.now() - t0;
                    if (window.patienceGame.state.status === "won") {
                      return resolve([performance.now() - t0, home]);
                    }
                    requestAnimationFrame(poll);
                  };
                  document.getElementById("btn-finish").click();
                  poll();
                })"""
            )
            won.append(took[0])
            drawn.append(took[1])
        print(f"{'':<34}{'p50 ms':>8}{'max ms':>8}")
        for label, values in (("click to the won state", won), ("click to all 11 drawn", drawn)):
            values.sort()
            print(f"{label:<34}{percentile(values, 0.5):>8.0f}{values[-1]:>8.0f}")
        browser.close()


def fit(args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import PAST_RESULT

    own = servers_for(args, db_prefix="bench_feel", extra_env={"DEBUG": "True"})
    with own as (bases, info), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ctx = browser.new_context(base_url=bases[0])
        page = ctx.new_page()
        login(page, "fit")
        fans = shell(args, info, GAME_AT.format(position=long_fans(), username="fit")).split()[-1]
        near = shell(args, info, GAME_AT.format(position=near_win(), username="fit")).split()[-1]
        day, _, _ = shell(args, info, PAST_RESULT.format(username="fit")).split()[-3:]
        board = page.request.get(f"/api/v1/daily/bristol/{day}/board/").json()
        state = ctx.storage_state()
        ctx.close()
        pages = {
            "play (long fans)": f"/play/{fans}/",
            "play (Finish)": f"/play/{near}/",
            "home": "/",
            "day board": f"/leaderboards/bristol/{day}/",
            "races": "/races/",
            "rules": "/rules/bristol/",
        }
        # A past day's replay, where the database's clock lets the shell deal yesterday.
        for r in board.get("results", [])[:1]:
            pages["replay"] = f"/leaderboards/bristol/{day}/replay/{r['result_id']}/"

        def open_page(width: int, height: int, lang: str, url: str) -> Any:
            phone = width < 600
            view = browser.new_context(
                viewport={"width": width, "height": height},
                base_url=bases[0],
                storage_state=state,
                is_mobile=phone,
                has_touch=phone,
                device_scale_factor=2 if phone else 1,
                locale="de-DE" if lang == "de" else "en-US",
            )
            view.add_cookies([{"name": "django_language", "value": lang, "url": bases[0]}])
            view.add_init_script(MANUAL)
            shown = view.new_page()
            shown.goto(url)
            shown.wait_for_load_state("networkidle")
            return view, shown

        print("indexes shown whole in the 14-card fan")
        for width, height in ((1280, 720), (390, 844)):
            view, shown = open_page(width, height, "en", pages["play (long fans)"])
            shown.wait_for_selector('#board [data-pile="t1"] .card')
            m = shown.evaluate(INDEX_SHOWN, "t1")
            print(f"  {width}x{height}: {m['full']} of {m['cards']} ({m['full'] / m['cards']:.0%})")
            if args.shots:
                Path(args.shots).mkdir(parents=True, exist_ok=True)
                shown.screenshot(path=str(Path(args.shots) / f"fans-{width}x{height}.png"))
            view.close()
        print(
            f"{'page width (px)':<20}"
            + "".join(f"{f'{lang} {w}':>9}" for lang in ("en", "de") for w in (360, 390))
        )
        for name, url in pages.items():
            row = []
            for lang in ("en", "de"):
                for width in (360, 390):
                    view, shown = open_page(width, 780, lang, url)
                    row.append(shown.evaluate("document.documentElement.scrollWidth"))
                    if args.shots and lang == "de":
                        shot = f"de-{name.split()[0]}-{width}.png"
                        shown.screenshot(path=str(Path(args.shots) / shot))
                    view.close()
            print(f"{name:<20}" + "".join(f"{w:>9}" for w in row))
        print(f"{'CLS as loaded':<20}{'en 1280':>9}{'de 1280':>9}{'en 390':>9}{'de 390':>9}")
        for name, url in pages.items():
            row = []
            for width, height in ((1280, 720), (390, 844)):
                for lang in ("en", "de"):
                    view, shown = open_page(width, height, lang, url)
                    row.append(shown.evaluate(CLS, 1500))
                    view.close()
            print(f"{name:<20}" + "".join(f"{v:>9.3f}" for v in (row[0], row[1], row[2], row[3])))
        browser.close()


def main() -> None:
    parser = _cli.parser(__doc__)
    parser.add_argument("what", choices=["clicks", "paint", "layout", "events", "finish", "fit"])
    parser.add_argument("--seeds", type=int, default=12, help="clicks: seeds per variant")
    parser.add_argument("--moves", type=int, default=30, help="paint, events: moves or clicks")
    parser.add_argument("--latency", type=int, default=300, help="paint: added ms")
    parser.add_argument("--shots", help="layout, fit: save screenshots here")
    parser.add_argument("--cpu", type=float, default=4, help="events: CPU slowdown")
    parser.add_argument("--runs", type=int, default=3, help="finish: games finished")
    server_arguments(parser, redis_db=14)
    args = parser.parse_args()
    if args.what == "clicks":
        clicks(args.seeds)
    else:
        {"paint": paint, "layout": layout, "events": events, "finish": finish, "fit": fit}[
            args.what
        ](args)


if __name__ == "__main__":
    main()
