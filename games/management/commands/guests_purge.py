"""``manage.py guests_purge``: delete guest accounts unused for ``GUEST_KEEP_DAYS``.

Each new guest deletes a few stale ones already (``games.services.guests.guest_start``); this
clears the rest, for a deployment that wants them gone on a schedule (idempotent).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from games.services.guests import guests_purge


class Command(BaseCommand):
    help = "Delete guest accounts (and their practice games) unused for GUEST_KEEP_DAYS days."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"deleted {guests_purge()} stale guest accounts")
