"""Analyses of a day's finished games: throughput, solver work, unknowns, and the cost to
the players' moves while the backlog runs.

    python bench/analysis.py                        # 30 players a variant (180 games)
    python bench/analysis.py --players 84           # a day of 504 games
    python bench/analysis.py --workers 2 --moves 300

The day: one deal per variant (as a daily), played by ``--players`` greedy players
(``bench/_greedy.py``) each, so the games of a variant share their early positions as a
daily's players do. Its analyses (``games.analysis.search.analyse`` with the service's
budget, ``ANALYSIS_*``) run in ``--workers`` worker processes at the idle CPU priority,
as ``manage.py analyse_games`` runs them; each worker takes whole variants and keeps
one verdict cache for them (the database's ``PositionVerdict`` in the service).

Meanwhile the main process plays practice games through the move service
(``game_apply_move``, a throwaway SQLite database): ``--moves`` moves before the
workers start, then as many while they run. Printed: per variant the games, their
summaries, the share of lost games whose fatal move was pinned exactly, solver calls,
states and CPU seconds per game (cache counted), the share of positions left unknown;
analyses a minute per worker; and the move p50 and p90 alone and beside the backlog.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._greedy import greedy_log  # noqa: E402
from bench._server import percentile  # noqa: E402
from games.analysis.search import Cached, Limits, analyse  # noqa: E402
from games.engine import VARIANTS, new_position  # noqa: E402

#: The seed of each variant's deal of the day (fixed, so runs compare; ``--day``).
DAY_SEED = 20261204


def limits_from_settings() -> Limits:
    """The service's budget (``ANALYSIS_*`` of ``patience_site.settings``, as the
    environment sets them)."""
    from patience_site import settings

    return Limits(
        first_nodes=settings.ANALYSIS_FIRST_NODES,
        max_nodes=settings.ANALYSIS_MAX_NODES,
        game_nodes=settings.ANALYSIS_GAME_NODES,
        game_seconds=settings.ANALYSIS_GAME_SECONDS,
    )


_started: Any = None  # a worker's event: set once it solves (its start-up is over)


def worker_start(started: Any, nice: bool) -> None:
    """A worker process's start: the idle CPU priority, as ``manage.py analyse_games``
    (``nice``: ``nice 19`` instead, which still yields to the moves but gets a share of a
    machine busy with other work, so the run ends)."""
    global _started
    from games.workers import lowest_priority

    if nice:
        os.nice(19)
    else:
        lowest_priority()
    _started = started


def analyse_variants(job: tuple[list[str], int, int, Limits]) -> list[dict[str, Any]]:
    """A worker's share: every game of these variants, one verdict cache per variant."""
    variants, day, players, limits = job
    _started.set()
    out = []
    for variant in variants:
        cache: dict[str, Cached] = {}
        start = new_position(variant, seed=day)
        for player in range(players):
            log = greedy_log(variant, day, player)
            cpu, wall = time.process_time(), time.perf_counter()
            report = analyse(start, log, limits, cache)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            cache.update(report.learned)
            out.append(
                {
                    "variant": variant,
                    "summary": report.summary,
                    "calls": report.calls,
                    "nodes": report.nodes,
                    "unknown": report.verdicts.count("unknown"),
                    "positions": len(report.verdicts),
                    "cpu": cpu,
                    "wall": wall,
                }
            )
    return out


def setup_django(tmp: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="patience_site.settings",
        DATABASE_URL=f"sqlite:///{tmp}/bench.sqlite3",
        REDIS_URL="",
        LOG_LEVEL="WARNING",
    )
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def play_moves(count: int, seed: int, stop: Any = None) -> list[float]:
    """Milliseconds of each of ``count`` moves through the move service (fewer if ``stop()``
    turns true first), over as many practice games as it takes."""
    from django.contrib.auth.models import User

    from games.play import move as play_move
    from games.services import games as game_services

    user, _ = User.objects.get_or_create(username=f"mover{seed}")
    times: list[float] = []
    deal = seed
    while len(times) < count and not (stop and stop()):
        deal += 1
        game = game_services.practice_game_start(user=user, variant="bristol", seed=deal)
        for ply, move in enumerate(greedy_log("bristol", deal, 0)):
            t0 = time.perf_counter()
            play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
            times.append((time.perf_counter() - t0) * 1000)
            if len(times) >= count or (stop and stop()):
                break
    return times


def report(rows: list[dict[str, Any]], workers: int, wall: float) -> None:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by[row["variant"]].append(row)
    print(
        f"{'variant':26} {'games':>5} {'won':>4} {'fatal':>5} {'range':>5} {'unkn':>4} "
        f"{'never':>5} {'still':>5} {'exact':>6} {'calls':>6} {'states':>8} {'cpu s':>6} "
        f"{'max s':>6} {'unknown pos':>11}"
    )
    for variant in [*VARIANTS, "all"]:
        games = rows if variant == "all" else by.get(variant, [])
        if not games:
            continue
        kinds = Counter(g["summary"] for g in games)
        lost = len(games) - kinds["won"]
        decided = kinds["fatal"] + kinds["never_winnable"] + kinds["still_winnable"]
        exact = f"{decided / lost:.0%}" if lost else "-"
        positions = sum(g["positions"] for g in games)
        print(
            f"{variant:26} {len(games):5} {kinds['won']:4} {kinds['fatal']:5} {kinds['range']:5} "
            f"{kinds['unknown']:4} {kinds['never_winnable']:5} {kinds['still_winnable']:5} "
            f"{exact:>6} {statistics.mean(g['calls'] for g in games):6.1f} "
            f"{statistics.mean(g['nodes'] for g in games):8.0f} "
            f"{statistics.mean(g['cpu'] for g in games):6.2f} {max(g['cpu'] for g in games):6.2f} "
            f"{sum(g['unknown'] for g in games) / positions:11.1%}"
        )
    cpu = statistics.mean(g["cpu"] for g in rows)
    print(
        f"\n{len(rows)} analyses in {wall:.0f} s on {workers} worker(s): {cpu:.2f} CPU s per "
        f"game on average, so {60 / cpu:.1f} analyses a minute per worker with a core "
        f"to itself ({60 * len(rows) / sum(g['wall'] for g in rows):.1f} in this run's wall time)"
    )
    print(
        "exact: lost games (not won) whose answer is exact (the fatal move, never winnable, "
        "or still winnable at the end); range and unknown are the rest"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=30, help="games per variant")
    parser.add_argument(
        "--day", type=int, default=DAY_SEED, help="the seed of every variant's deal of the day"
    )
    parser.add_argument("--workers", type=int, default=1, help="analysis worker processes")
    parser.add_argument("--moves", type=int, default=300, help="moves timed in each phase")
    parser.add_argument(
        "--game-seconds",
        type=float,
        default=None,
        help="wall-clock limit of one game's analysis (default: ANALYSIS_GAME_SECONDS; 0: "
        "none, for a machine so busy that the limit would cut the state budget short)",
    )
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma-separated variants to play"
    )
    parser.add_argument(
        "--nice",
        action="store_true",
        help="workers at nice 19, not the idle class (on a machine busy with other work)",
    )
    args = parser.parse_args(argv)
    limits = limits_from_settings()
    if args.game_seconds is not None:
        limits = dataclasses.replace(limits, game_seconds=args.game_seconds or None)
    keys = args.variants.split(",")
    print(
        f"day {args.day}: {args.players * len(keys)} games ({args.players} per variant), "
        f"budget {limits.first_nodes:,}/{limits.max_nodes:,} states a solve, "
        f"{limits.game_nodes:,} a game, {limits.game_seconds or 'no'} s a game; "
        f"{args.workers} worker(s); cpus {os.cpu_count()}"
    )
    jobs = [(keys[i :: args.workers], args.day, args.players, limits) for i in range(args.workers)]
    with tempfile.TemporaryDirectory() as tmp:
        setup_django(tmp)
        alone = play_moves(args.moves, seed=1_000)
        context = multiprocessing.get_context("spawn")
        t0 = time.perf_counter()
        started = context.Manager().Event()
        with context.Pool(args.workers, worker_start, (started, args.nice)) as pool:
            pending = pool.map_async(analyse_variants, jobs, chunksize=1)
            started.wait()
            beside = play_moves(args.moves, seed=2_000, stop=pending.ready)
            rows = [row for part in pending.get() for row in part]
        wall = time.perf_counter() - t0
    report(rows, args.workers, wall)
    a, b = sorted(alone), sorted(beside)
    p50a, p50b = percentile(a, 0.5), percentile(b, 0.5)
    print(
        f"\nplayers' moves (move service, SQLite), p50 / p90 ms: alone {p50a:.2f} / "
        f"{percentile(a, 0.9):.2f} ({len(a)} moves); beside the backlog {p50b:.2f} / "
        f"{percentile(b, 0.9):.2f} ({len(b)} moves): p50 {100 * (p50b / p50a - 1):+.0f}%"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
