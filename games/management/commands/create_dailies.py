"""``manage.py create_dailies --days N``: deal and certify the coming days' dailies ahead.

The only place the solver certifies dailies (see ``games.daily``).
``--replace ID [ID ...]`` moves future dailies nobody has played to their next
certified seed instead (the admin's "replace" action starts it).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core import clock
from core.errors import ServiceError
from core.redis_guard import RedisUnavailable
from games.boards import boards_reconcile
from games.models import Deal
from games.play.finish import dailies_expire
from games.services.analysis import analyses_queue_days
from games.services.caps import caps_purge
from games.services.dailies import dailies_create, daily_replace
from games.services.fairplay import play_signals_purge


class Command(BaseCommand):
    help = (
        "Create every variant's daily deal for today and the next days (idempotent); "
        "end ranked dailies left unfinished when their day ended (expired, not won); "
        "queue the analyses of finished days' games; "
        "delete fair-play signals past their keeping, and caps' counts past their window; "
        "drop board mirrors that differ from PostgreSQL."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=7, help="how many days from today")
        parser.add_argument(
            "--replace", type=int, nargs="+", metavar="ID", help="replace these future dailies"
        )

    def handle(self, *args: Any, days: int, replace: list[int] | None, **options: Any) -> None:
        if replace:
            for deal in Deal.objects.filter(pk__in=replace, kind=Deal.Kind.DAILY):
                try:
                    deal = daily_replace(deal)
                except ServiceError as exc:
                    self.stderr.write(f"{deal.date} {deal.variant}: {exc}")
                else:
                    self.stdout.write(
                        f"{deal.date} {deal.variant:26} replaced, seed {deal.seed_index}"
                    )
            return
        if days < 1:
            self.stderr.write("--days must be at least 1")
            raise SystemExit(2)
        deals = dailies_create(first=clock.today(), days=days)
        for deal in deals:
            self.stdout.write(f"{deal.date} {deal.variant:26} commitment {deal.commitment}")
        self.stdout.write(self.style.SUCCESS(f"{len(deals)} daily deal(s) ready"))
        ended = dailies_expire()
        self.stdout.write(f"{ended} ranked daily game(s) left unfinished ended as expired")
        queued = analyses_queue_days()
        self.stdout.write(f"{queued} game(s) of finished days queued for analysis")
        purged = play_signals_purge()
        self.stdout.write(f"{purged} fair-play signal(s) past their keeping deleted")
        self.stdout.write(f"{caps_purge()} cap count(s) past their window deleted")
        try:
            dropped = boards_reconcile()
        except RedisUnavailable as exc:
            self.stderr.write(f"board mirrors not checked, Redis unavailable: {exc}")
        else:
            self.stdout.write(f"{len(dropped)} board mirror(s) out of step, dropped")
