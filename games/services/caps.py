"""Caps that hold under bursts: per-address and per-account limits on costly actions.

Each cap is one row (``CapCount``) counting the uses of a key in a window that starts at
its first use and lasts ``window``. A use is one guarded ``UPDATE`` (``used < limit`` and
the window still open): the database applies the updates of one row one after another and
each checks the count the one before it left, so a burst of parallel requests takes
exactly ``limit`` uses, where counting the rows the requests had made let each of them
count before any had written. The database, not Redis: a cap must hold while Redis is
down, and one store keeps one count. A use inside a transaction that rolls back is given
back with it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import F

from core import clock
from games.models import CapCount

#: How long a count is kept after its window started: longer than any cap's window.
KEEP = timedelta(days=1)


def cap_take(*, key: str, limit: int, window: timedelta) -> float | None:
    """Take one use of ``key``'s cap: None if taken, else the seconds until its window ends
    (nothing is taken then)."""
    now = clock.now()
    counts = CapCount.objects.filter(key=key)
    if not counts.exists():
        CapCount.objects.get_or_create(key=key, defaults={"window_start": now})
    for _ in range(2):  # a parallel request may open the new window between the two
        if counts.filter(window_start__gt=now - window, used__lt=limit).update(used=F("used") + 1):
            return None
        if counts.filter(window_start__lte=now - window).update(window_start=now, used=1):
            return None
    start: datetime = counts.values_list("window_start", flat=True).get()
    return max(0.0, (start + window - now).total_seconds())


def caps_purge() -> int:
    """Delete the counts past their window (hourly, ``create_dailies``): a key's next use
    starts a new window anyway, and one row per address ever seen would pile up."""
    deleted, _ = CapCount.objects.filter(window_start__lt=clock.now() - KEEP).delete()
    return deleted
