"""Every date a URL can name, for every variant, on pages, REST and sockets: 400 or 404, no 500.

The calendar's ends (0001-01-01, 9999-12-31) once overflowed in date
arithmetic (the page's "previous day" link, the end of the day); days before
``DAILY_FIRST_DAY`` have no dailies, days after today are not out yet.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client

from api import consumers
from core import clock
from devtools.accounts import PASSWORD
from games.engine import VARIANTS
from games.models import Deal, Game
from patience_site.asgi import application
from tests.security.helpers import assert_envelope

#: Dates that parse but name no daily: the calendar's ends, the day before the first, tomorrow.
NO_DAILY = ["0001-01-01", "0001-01-02", "9999-12-30", "9999-12-31", "first-1", "tomorrow"]
#: Texts that are no date at all.
NOT_DATES = ["0000-01-01", "10000-01-01", "2021-02-29", "2020-13-01", "-0001-01-01"]


def day_text(text: str) -> str:
    if text == "tomorrow":
        return (clock.today() + timedelta(days=1)).isoformat()
    if text == "first-1":
        return (django_settings.DAILY_FIRST_DAY - timedelta(days=1)).isoformat()
    return text


def rest_urls(variant: str, day: str) -> list[tuple[str, str]]:
    base = f"/api/v1/daily/{variant}/{day}/"
    return [
        ("get", base),
        ("get", base + "board/"),
        ("get", base + "results/1/replay/?step=1"),
        ("post", base + "play/"),
    ]


def page_urls(variant: str, day: str) -> list[str]:
    return [f"/leaderboards/{variant}/{day}/", f"/leaderboards/{variant}/{day}/replay/1/"]


@pytest.mark.django_db
@pytest.mark.usefixtures("no_rate_limits")
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_edge_dates_answer_400_or_404_on_rest_and_pages(variant: str) -> None:
    user = get_user_model().objects.create_user(username="ann", password=PASSWORD)
    api = Client(raise_request_exception=False)
    api.force_login(user)
    pages = Client(raise_request_exception=False)
    pages.force_login(user)
    for text in NO_DAILY + NOT_DATES:
        day = day_text(text)
        for method, url in rest_urls(variant, day):
            response = getattr(api, method)(url)
            want = (404,) if text in NO_DAILY else (400, 404)
            assert response.status_code in want, (url, response.status_code)
            assert_envelope(response.json())
        for url in page_urls(variant, day):
            assert pages.get(url).status_code == 404, url
    # Nothing was dealt or played for any of them.
    assert not Deal.objects.exists() and not Game.objects.exists()


@pytest.mark.django_db
def test_the_first_day_has_a_board_page_without_a_link_to_the_day_before(client: Client) -> None:
    first = django_settings.DAILY_FIRST_DAY
    page = client.get(f"/leaderboards/bristol/{first.isoformat()}/").content.decode()
    before = (first - timedelta(days=1)).isoformat()
    after = (first + timedelta(days=1)).isoformat()
    assert before not in page and after in page
    day_after = client.get(f"/leaderboards/bristol/{after}/").content.decode()
    assert first.isoformat() in day_after


async def board_close(path: str) -> int:
    comm = WebsocketCommunicator(application, path)
    connected, _ = await comm.connect()
    assert connected
    out = await comm.receive_output(5)
    assert out["type"] == "websocket.close", json.dumps(out)[:200]
    await comm.disconnect()
    return out["code"]


@pytest.mark.asyncio
@pytest.mark.usefixtures("channel_layers")
@pytest.mark.parametrize("variant", sorted(VARIANTS))
async def test_edge_dates_close_the_board_socket_with_4400_or_4404(variant: str) -> None:
    for text in NO_DAILY + NOT_DATES:
        code = await board_close(f"/ws/v1/daily/{variant}/{day_text(text)}/")
        want: Any = {consumers.CLOSE_NOT_FOUND}
        if text in NOT_DATES:
            want = {consumers.CLOSE_NOT_FOUND, consumers.CLOSE_BAD_REQUEST}
        assert code in want, (text, code)
