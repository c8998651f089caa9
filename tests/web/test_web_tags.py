"""The template filters that format times: milliseconds for play, seconds for the day's end."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.daily_fixtures import FakeClock, morning
from web.templatetags.web_tags import countdown, duration

pytest_plugins = ["tests.daily_fixtures"]


@pytest.mark.parametrize(
    ("ms", "shown"), [(None, ""), (0, "0:00"), (65_999, "1:05"), (5_700_000, "1:35:00")]
)
def test_duration_formats_milliseconds(ms: int | None, shown: str) -> None:
    assert duration(ms) == shown


@pytest.mark.parametrize(
    ("seconds", "shown"), [(None, ""), (0, "0:00"), (65, "1:05"), (5_700, "1:35:00")]
)
def test_countdown_formats_seconds(seconds: int | None, shown: str) -> None:
    assert countdown(seconds) == shown


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/leaderboards/bristol/today/"])
def test_the_pages_render_the_time_left_in_the_day(
    client: Any, daily_clock: FakeClock, path: str
) -> None:
    """Before any script runs, the page says how long the day still has (here 1:35:00)."""
    day = daily_clock.t.date()
    daily_clock.set(morning(day) + timedelta(hours=14, minutes=25))
    html = client.get(path, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'data-countdown="5700">1:35:00</strong>' in html
