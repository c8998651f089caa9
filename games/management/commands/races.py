"""``manage.py races [--loop SECONDS]``: the races' background job.

Finishes races past their time limit, marks started ones as running, and deals
certified deals into the pool of each variant (the solver runs only here, never
on a request). Without ``--loop`` it does that once (what a server process starts
when the pool runs low); with it, it keeps at it (the compose ``races`` service),
dealing one deal per beat so that overdue races never wait for the solver.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from games.services.races import race_pool_fill, races_tick


class Command(BaseCommand):
    help = "Finish overdue races and fill the pool of certified race deals."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--loop", type=float, default=0, metavar="SECONDS", help="repeat every SECONDS"
        )

    def handle(self, *args: Any, loop: float, **options: Any) -> None:
        while True:
            started, finished = races_tick()
            dealt = race_pool_fill(most=1 if loop else None)
            if started or finished or dealt:
                self.stdout.write(f"{started} started, {finished} finished, {dealt} dealt")
            if not loop:
                return
            if not dealt:
                time.sleep(loop)
