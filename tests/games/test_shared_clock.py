"""One clock for the day's end: PostgreSQL's ``now()``, whatever a server's own clock says.

A server process whose clock runs a day ahead (time-machine, in a subprocess of
its own) still sees today as today: it neither reveals today's seed, deck and
par, nor refuses today's ranked result, nor gives hints in today's daily.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from core import clock
from devtools.servers import subprocess_json
from games.models import Result
from games.services import dailies as daily_services
from games.services import games as game_services

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the shared clock is PostgreSQL's"
    ),
    pytest.mark.database_clock,
]

SKEWED = """
import json, os, sys
from datetime import datetime, timedelta, UTC
import time_machine

ahead = datetime.now(UTC) + timedelta(days=1, hours=1)
with time_machine.travel(ahead, tick=True):
    import django
    django.setup()
    from core import clock
    from games.selectors import dailies as daily_selectors
    from games.selectors import games as game_selectors
    from games.models import Deal, Game
    from games.play import finish
    from api import shapes
    deal = Deal.objects.get(pk=int(sys.argv[1]))
    ranked = Game.objects.get(pk=int(sys.argv[2]))
    practice = Game.objects.select_related("deal").get(pk=int(sys.argv[3]))
    public = shapes.daily(deal)
    ended = finish.resign(game_id=ranked.pk, user=ranked.player).game
    print(json.dumps({
        "process_day": clock.now().date().isoformat(),
        "today": clock.today().isoformat(),
        "seed": public["seed"],
        "par_line": public["par_line"],
        "ranked_result": hasattr(ended, "result"),
        "hints": game_selectors.hints_allowed(practice),
    }))
"""


def _database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def test_the_shared_clock_is_the_databases(db: None) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        before = cursor.fetchone()[0]
    assert abs(clock.shared_now() - before) < timedelta(seconds=5)


@pytest.mark.django_db(transaction=True)
def test_a_server_whose_clock_is_a_day_ahead_reveals_nothing_early(user: Any) -> None:
    if clock.day_end(clock.today()) - clock.shared_now() < timedelta(minutes=5):
        pytest.skip("too close to midnight to tell the clocks apart")
    today = clock.today()
    deal = daily_services.daily_create("bristol", today)
    ranked, _ = daily_services.daily_game_start(user=user, variant="bristol", day=today)
    practice = game_services.game_create(user=user, deal=deal)  # as a "play again" is
    assert ranked.ranked and not practice.ranked
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_SETTINGS_MODULE": "patience_site.settings",
        "DAILY_SECRET": settings.DAILY_SECRET,
    }
    seen = subprocess_json("-c", SKEWED, str(deal.pk), str(ranked.pk), str(practice.pk), env=env)
    assert seen["process_day"] > today.isoformat()  # its own clock says tomorrow
    assert seen["today"] == today.isoformat()  # the shared clock says today
    assert seen["seed"] is None and seen["par_line"] is None
    assert seen["ranked_result"] is True  # resigned before midnight: it counts
    assert seen["hints"] is False
    assert Result.objects.filter(game=ranked).count() == 1
