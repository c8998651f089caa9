"""Fixtures of the security tests (helpers are in ``tests.security.helpers``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.security.helpers import raise_rates


@pytest.fixture
def no_rate_limits(settings: Any) -> None:
    """REST rate limits out of the way (the fuzzers send thousands of requests)."""
    raise_rates(settings)


@pytest.fixture
def raw_wsgi() -> Iterator[None]:
    """Requests straight into the WSGI handler inside the test's transaction.

    Django's handler closes the database connection at the start and end of every
    request (``close_old_connections``), which inside the test's transaction would
    break it; Django's own test client switches that off the same way.
    """
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
