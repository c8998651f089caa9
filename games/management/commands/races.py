"""``manage.py races [--loop SECONDS]``: the races' background job.

Finishes races past their time limit, marks started ones as running, and deals
certified deals into the pool of each variant (the solver runs only here, never
on a request). Without ``--loop`` it does that once (what a server process starts
when the pool runs low); with it, it keeps at it (the compose ``races`` service),
dealing one deal per beat so that overdue races never wait for the solver; ``--for``
ends that loop after a while (the Kubernetes CronJob starts it again each minute).

It runs at low priority (``os.nice(NICENESS)``): the solver shares the machine with the
server processes, and a burst of joins that started it in every process once took
another player's moves from 94 to 268 ms at the 90th percentile. Only one process of
the cluster deals at a time (``games.services.race_pool.race_pool_fill``); the others find
its lock taken and only finish overdue races.
"""

from __future__ import annotations

import os
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from games.services.race_pool import race_pool_fill
from games.services.races import races_tick

#: How much lower than the server processes the job runs (added to its nice value).
NICENESS = 10


class Command(BaseCommand):
    help = "Finish overdue races and fill the pool of certified race deals."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--loop", type=float, default=0, metavar="SECONDS", help="repeat every SECONDS"
        )
        parser.add_argument(
            "--for",
            dest="duration",
            type=float,
            default=0,
            metavar="SECONDS",
            help="with --loop: stop after SECONDS (a Kubernetes CronJob's run; 0: never)",
        )

    def handle(self, *args: Any, loop: float, duration: float, **options: Any) -> None:
        os.nice(NICENESS)
        until = time.monotonic() + duration if duration else None
        while True:
            started, finished = races_tick()
            dealt = race_pool_fill(most=1 if loop else None)
            if started or finished or dealt:
                self.stdout.write(f"{started} started, {finished} finished, {dealt} dealt")
            if not loop or (until is not None and time.monotonic() >= until):
                return
            if not dealt:
                time.sleep(loop)
