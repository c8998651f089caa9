"""Fair play (issue 32): replay the attacks of one person with spare accounts; print what
each gained.

    python bench/fairplay.py                       # all attacks, a fresh PostgreSQL database
    python bench/fairplay.py --attacks farm,scout  # some of them
    python bench/fairplay.py --pg-url postgres://postgres@127.0.0.1:5432

Run it on two commits in one session for the before -> after figures (it only uses
services both have; what a commit lacks, it reports as absent):

    git worktree add /tmp/fair-before 0d0da18 && cp bench/fairplay.py /tmp/fair-before/bench/
    (cd /tmp/fair-before && python bench/fairplay.py); python bench/fairplay.py

It creates a database ``patience_fairbench_<pid>`` (dropped at the end), migrates it,
and plays through the services in this process, on the process clock moved by
``time_machine`` (no race waits its countdown). Race deals are uncertified (the solver is
not what is measured), except where the refill itself is measured. The attacks:

- **farm**: 8 accounts join quick races together and all resign 1 s after the start
  (0 moves), 4 times; then 2 accounts that each make 10 moves over 35 s, 8 times. The
  farm's best rating and its places on the rating board.
- **ties**: two racers resign with no card home, 1 s and 40 s after the start; on the
  daily board one player never moved and one made 65 entries with as many cards home.
  Who ranks first.
- **drain**: one account opens and leaves private races, 30 times; then another
  account asks for a quick race. Deals the drain took from a pool of 10, and the answer.
- **burst**: 40 accounts ask for a quick race at once (threads); races opened and their
  sizes. Then 4 ``manage.py races`` jobs started together (as 4 server processes do) on
  empty pools of target 3 per variant (certified deals, 20 000 solver nodes): deals in
  the pools after, and the jobs' highest nice value.
- **block**: two fresh spare accounts race each other 6 times, each blocking the race's
  deal on purpose (the whole stock dealt, then the fewest moves to a dead end,
  ``devtools.blocking``) 2 s after the start; then the same with the block 35 s in. How
  many races each counted as raced, and whether the 6th race was rated.
- **scout**: one account deals its ranked daily's whole stock, a second plays the
  solver's line from the same network. The second's rank, and the flags on its result.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._cli import ROOT  # noqa: E402
from devtools.servers import pg_admin, with_database  # noqa: E402

ATTACKS = ("farm", "ties", "drain", "burst", "scout", "block")


def users(prefix: str, n: int) -> list[Any]:
    from django.contrib.auth import get_user_model

    make = get_user_model().objects.create_user
    return [make(username=f"{prefix}{i:02d}", password=None) for i in range(n)]


def fill(size: int) -> None:
    """A pool of exactly ``size`` uncertified Bristol deals (what earlier attacks left goes)."""
    from django.test import override_settings

    from games.services.race_pool import _pool, race_pool_fill

    _pool("bristol").delete()
    with override_settings(RACE_POOL_SIZE=size, RACE_SOLVER_NODES=0):
        race_pool_fill(variants=["bristol"])


def race_of(accounts: list[Any]) -> Any:
    from games.services.races import race_quick_join

    for a in accounts:
        race, _ = race_quick_join(user=a, variant="bristol")
    race.refresh_from_db()
    return race


def game_of(race: Any, player: Any) -> Any:
    return race.entries.select_related("game").get(player=player).game


def resign_all(race: Any, accounts: list[Any], after: float) -> None:
    import time_machine

    from games.play.finish import resign as game_resign
    from games.services.races import race_finish

    with time_machine.travel(race.starts_at + timedelta(seconds=after), tick=False):
        for a in accounts:
            game_resign(game_id=game_of(race, a).pk, user=a)
        race_finish(race_id=race.pk)


def play_moves(race: Any, player: Any, count: int, after: float) -> None:
    import time_machine

    from games.engine import new_position
    from games.play.move import apply_move as game_apply_move

    game = game_of(race, player)
    pos = new_position("bristol", seed=int(race.deal.seed))
    with time_machine.travel(race.starts_at + timedelta(seconds=after), tick=False):
        for ply in range(count):
            move = next((str(m) for m in pos.legal_moves if str(m) != "deal"), "deal")
            game_apply_move(game_id=game.pk, user=player, move=move, ply=ply)
            pos = pos.apply(move)


def board_places(accounts: list[Any]) -> list[int]:
    from games.models import RaceRating

    top = RaceRating.objects.filter(family="bristol").order_by("-rating", "player")
    if "contested" in {f.name for f in RaceRating._meta.get_fields()}:  # the board's filter
        top = top.filter(races__gt=0)
    ids = list(top.values_list("player_id", flat=True)[:10])
    return [ids.index(a.pk) + 1 for a in accounts if a.pk in ids]


def best_rating(accounts: list[Any]) -> float:
    from games.models import RaceRating

    ratings = RaceRating.objects.filter(player__in=accounts).values_list("rating", flat=True)
    return max(ratings, default=0.0)


def farm() -> list[str]:
    fill(40)
    eight = users("farm", 8)
    started = time.perf_counter()
    for _ in range(4):
        resign_all(race_of(eight), eight, after=1)
    lines = [
        f"farm, 8 accounts x 4 races, 0 moves: best rating {best_rating(eight):+.2f}, "
        f"rating-board places {board_places(eight) or 'none'} "
        f"({time.perf_counter() - started:.1f} s of service time)"
    ]
    two = users("pair", 2)
    gains = []
    for _ in range(8):
        before = best_rating(two)
        race = race_of(two)
        for a in two:
            play_moves(race, a, 10, after=1)
        resign_all(race, two, after=35)
        gains.append(best_rating(two) - before)
    lines.append(
        "farm, 2 accounts x 8 races, 10 moves over 35 s each: best rating "
        f"{best_rating(two):+.2f}, per race " + " ".join(f"{g:+.2f}" for g in gains)
    )
    return lines


def ties() -> list[str]:
    from games.models import Game, Result
    from games.selectors.dailies import published_deal
    from games.services.dailies import daily_create
    from games.services.results import result_record

    fill(2)
    quitter, stayer = users("quit", 1)[0], users("stay", 1)[0]
    race = race_of([quitter, stayer])
    import time_machine

    from games.play.finish import resign as game_resign
    from games.services.races import race_finish

    for player, after in ((quitter, 1), (stayer, 40)):
        with time_machine.travel(race.starts_at + timedelta(seconds=after), tick=False):
            game_resign(game_id=game_of(race, player).pk, user=player)
    with time_machine.travel(race.starts_at + timedelta(seconds=41), tick=False):
        race_finish(race_id=race.pk)
    first = race.entries.get(place=1).player
    from core import clock

    day = clock.today()
    daily_create("bristol", day)
    deal = published_deal("bristol", day)
    idle, busy = users("idle", 1)[0], users("busy", 1)[0]
    for player, moves in ((idle, 0), (busy, 65)):
        now = clock.now()
        game = Game.objects.create(
            player=player,
            deal=deal,
            ranked=True,
            status="lost",
            score=0,
            ply=moves,
            started_at=now - timedelta(minutes=5),
            finished_at=now,
            position={},
        )
        result_record(game)
    top = Result.objects.filter(deal=deal).order_by("sort_key").first()
    return [
        f"ties, race: two resign at 0 cards, 1 s and 40 s in: place 1 is the "
        f"{'first to quit' if first == quitter else 'one who held on'}",
        f"ties, daily: 0 entries vs 65 entries, both 0 cards: rank 1 is the one with "
        f"{0 if top is not None and top.player == idle else 65} entries",
    ]


def drain() -> list[str]:
    from core.errors import ServiceError
    from games.services import race_pool
    from games.services import races as race_services

    fill(10)
    pool = race_pool._pool("bristol")
    before = pool.count()
    drainer, other = users("drain", 1)[0], users("other", 1)[0]
    opened, refused = 0, Counter[str]()
    for _ in range(30):
        try:
            race = race_services.race_create(user=drainer, variant="bristol")
        except ServiceError as exc:
            refused[exc.code] += 1
            continue
        opened += 1
        race_services.race_leave(user=drainer, code=race.code)
    taken = before - pool.count()
    try:
        race, _ = race_services.race_quick_join(user=other, variant="bristol")
        race_services.race_leave(user=other, code=race.code)  # not waiting in the next attack
        answer = "a race"
    except ServiceError as exc:
        answer = exc.code
    return [
        f"drain, 30 private races opened and left: {opened} opened, refused {dict(refused)}, "
        f"{taken} of {before} pool deals taken; then another player's quick race: {answer}"
    ]


def burst(env: dict[str, str]) -> list[str]:
    from django.db import connections

    from games.models import Race
    from games.services.races import race_quick_join

    fill(40)
    players = users("burst", 40)
    gate = threading.Barrier(len(players))
    errors: Counter[str] = Counter()

    def join(player: Any) -> None:
        try:
            gate.wait()
            race_quick_join(user=player, variant="bristol")
        except Exception as exc:  # noqa: BLE001 - counted and printed
            errors[getattr(exc, "code", type(exc).__name__)] += 1
        finally:
            connections.close_all()

    threads = [threading.Thread(target=join, args=(p,)) for p in players]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    mine = Race.objects.filter(entries__player__in=players).distinct()
    sizes = sorted((r.entries.count() for r in mine), reverse=True)
    lines = [f"burst, 40 quick joins at once: {len(sizes)} races of {sizes}, errors {dict(errors)}"]
    from games.engine import VARIANTS
    from games.models import Deal

    Deal.objects.filter(kind="race", race__isnull=True).delete()
    target = 3 * len(VARIANTS)
    job_env = {**env, "RACE_POOL_SIZE": "3", "RACE_SOLVER_NODES": "20000"}
    manage = str(ROOT / "manage.py")
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, manage, "races"], env=job_env, cwd=ROOT, stdout=subprocess.DEVNULL
        )
        for _ in range(4)
    ]
    nice = 0
    while any(p.poll() is None for p in procs):
        for p in procs:
            try:
                stat = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
                nice = max(nice, int(stat[16]))
            except (OSError, IndexError, ValueError):
                pass
        time.sleep(0.1)
    dealt = Deal.objects.filter(kind="race", race__isnull=True).count()
    lines.append(
        f"burst, 4 refill jobs at once on empty pools (target 3 x {len(VARIANTS)} variants = "
        f"{target}): {dealt} deals after {time.perf_counter() - started:.1f} s, "
        f"jobs' nice value {nice}"
    )
    return lines


def block() -> list[str]:
    import time_machine

    from devtools.blocking import blocking_line
    from games.models import Race, RaceRating
    from games.play.finish import resign as game_resign
    from games.play.move import apply_move as game_apply_move
    from games.services.races import race_finish

    fill(60)
    lines = []
    for after in (2, 35):
        spares = users(f"block{after}-", 2)
        raced, unblockable, last = 0, 0, None
        while raced < 6 and unblockable < 20:
            race = race_of(spares)
            line = blocking_line("bristol", int(race.deal.seed))
            with time_machine.travel(race.starts_at + timedelta(seconds=after), tick=False):
                for a in spares:
                    game = game_of(race, a)
                    if line is None:
                        game_resign(game_id=game.pk, user=a)
                        continue
                    for ply, move in enumerate(line):
                        game_apply_move(game_id=game.pk, user=a, move=move, ply=ply)
                race_finish(race_id=race.pk)
            if line is None:
                unblockable += 1
                continue
            raced, last = raced + 1, Race.objects.get(pk=race.pk)
            size = len(line)
        counted = [
            RaceRating.objects.filter(player=a, family="bristol")
            .values_list("contested", flat=True)
            .first()
            or 0
            for a in spares
        ]
        verdict = (
            "rated" if last is not None and last.rated else f"unrated ({last and last.unrated})"
        )
        lines.append(
            f"block, 2 spare accounts x {raced} races, each blocked ({size} moves) {after} s in: "
            f"races counted as raced {counted}, 6th race {verdict}, best rating "
            f"{best_rating(spares):+.2f} ({unblockable} deals could not be blocked)"
        )
    return lines


def scout() -> list[str]:
    from django.test import override_settings

    from core import clock
    from games.engine import new_position
    from games.engine.solver import solve
    from games.models import Result
    from games.play.move import apply_move as game_apply_move
    from games.selectors.games import game_position
    from games.services import dailies

    day = clock.today()
    with override_settings(DAILY_SOLVER_NODES=50_000):
        deal = dailies.daily_create("bristol", day)
    scout_user, main_user = users("scout", 1)[0], users("main", 1)[0]
    kwargs: dict[str, Any] = {}
    if "client" in inspect.signature(dailies.daily_game_start).parameters:
        from games.services.fairplay import ClientSignal

        kwargs["client"] = ClientSignal(address="203.0.113.7", user_agent="Firefox/140")
    game, _ = dailies.daily_game_start(user=scout_user, variant="bristol", day=day, **kwargs)
    while "deal" in [str(m) for m in game_position(game).legal_moves]:
        game_apply_move(game_id=game.pk, user=scout_user, move="deal", ply=game.ply)
        game.refresh_from_db()
    # What the scout saw is the whole deck; the bench takes it from the deal instead of
    # rebuilding it (tests/e2e/test_fairplay.py rebuilds it from the answers).
    line = solve(new_position("bristol", seed=int(deal.seed)), max_nodes=500_000).line
    if kwargs:
        kwargs["client"] = ClientSignal(address="203.0.113.99", user_agent="Firefox/140")
    game, _ = dailies.daily_game_start(user=main_user, variant="bristol", day=day, **kwargs)
    for ply, move in enumerate(line):
        game_apply_move(game_id=game.pk, user=main_user, move=str(move), ply=ply)
    result = Result.objects.get(game=game)
    rank = Result.objects.filter(deal=deal, sort_key__lt=result.sort_key).count() + 1
    flags = sorted(result.flags.values_list("reason", flat=True)) if kwargs else None
    review = getattr(result, "review", None)
    return [
        f"scout, main account's solver win ({len(line)} moves) on a scouted deck: "
        f"won={result.won}, rank {rank}, flags {flags if flags is not None else 'absent'}, "
        f"review {review!r}"
    ]


def main() -> None:
    parser = _cli.parser(__doc__)
    parser.add_argument("--pg-url", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    args = parser.parse_args()
    name = f"patience_fairbench_{os.getpid()}"
    pg_admin(args.pg_url, f'CREATE DATABASE "{name}"')
    env = {
        **os.environ,
        "DATABASE_URL": with_database(args.pg_url, name),
        "REDIS_URL": "",
        "SHARED_CLOCK": "process",
        "DJANGO_SETTINGS_MODULE": "patience_site.settings",
        "LOG_LEVEL": "ERROR",
        "CONN_MAX_AGE": "60",
    }
    try:
        _cli.django_setup(env)
        from django.core.management import call_command

        call_command("migrate", interactive=False, verbosity=0)
        from core import jobs

        # The bench deals its pools itself: no join starts the refill job behind its back.
        jobs.race_pool_job_start = lambda: None
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        print(f"fair play bench at {commit}")
        steps = {"farm": farm, "ties": ties, "drain": drain, "scout": scout, "block": block}
        for attack in args.attacks.split(","):
            lines = burst(env) if attack == "burst" else steps[attack]()
            for line in lines:
                print(f"  {line}", flush=True)
    finally:
        from django.db import connections

        connections.close_all()
        pg_admin(args.pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
