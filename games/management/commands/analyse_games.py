"""``manage.py analyse_games``: the analysis worker. Runs the queue of finished games'
analyses (``games.services.analysis``) at the idle CPU priority, then ends.

A server process starts it when an analysis is asked for (``core.jobs``); run it from
cron or as a service (``--idle``) to work through a day's backlog after the daily job
queued it.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from games.services.analysis import analyses_queue_days, analyses_work
from games.workers import lowest_priority


class Command(BaseCommand):
    help = "Run the queued analyses of finished games, at the lowest CPU priority."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--idle", type=float, default=5.0, help="seconds to wait for more work before ending"
        )
        parser.add_argument("--max-games", type=int, default=None, help="stop after this many")
        parser.add_argument(
            "--queue-days", action="store_true", help="first queue the finished days' games"
        )

    def handle(
        self, *args: Any, idle: float, max_games: int | None, queue_days: bool, **options: Any
    ) -> None:
        lowest_priority()
        if queue_days:
            self.stdout.write(f"{analyses_queue_days()} game(s) of finished days queued")
        ran = analyses_work(idle_seconds=idle, max_games=max_games)
        self.stdout.write(f"{ran} analysis(es) run")
